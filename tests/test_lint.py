"""`reclass-ng lint`, driven through the command line on small inventories.

Each rule has a test that looks for its finding at the right file and line; without the rule
the finding is missing and the test fails.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import VENV_BIN


def lint(base: Path, *args: str) -> tuple[int, str, str]:
    proc = subprocess.run([str(VENV_BIN / "reclass-ng"), "lint", "-b", str(base), *args],
                          capture_output=True, text=True, cwd=base, timeout=120)
    assert "Traceback" not in proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def lint_json(base: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, err = lint(base, "-o", "json", *args)
    assert code in (0, 1), err
    return code, json.loads(out)


def of_rule(findings: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"] == rule]


MakeInventory = Callable[..., Path]


def test_duplicate_key_is_an_error_with_both_lines(make_inventory: MakeInventory) -> None:
    base = make_inventory({
        "nodes/n1.yml": "classes: [app]\n",
        "classes/app.yml": "parameters:\n  app:\n    port: 80\n    name: x\n    port: 8080\n",
    })
    code, out, _ = lint(base)
    assert code == 1
    line = next(x for x in out.splitlines() if "duplicate-key" in x)
    assert line.startswith("classes/app.yml:5: error duplicate-key: key 'port'")
    assert "line 3" in line
    assert out.splitlines()[-1].startswith("1 error(s), 0 warning(s)")


def test_clean_inventory_exits_zero(make_inventory: MakeInventory) -> None:
    base = make_inventory({
        "nodes/n1.yml": "classes: [app]\nparameters:\n  app:\n    name: y\n",
        "nodes/n2.yml": "classes: [app]\nparameters:\n  app:\n    port: 81\n",
        "classes/app.yml": "parameters:\n  app:\n    port: 80\n    name: x\n",
    })
    code, out, _ = lint(base)
    assert code == 0
    assert out.splitlines() == ["0 error(s), 0 warning(s) in 3 files, 2 nodes rendered"]


def test_yaml_syntax_error_is_a_finding_and_lint_goes_on(make_inventory: MakeInventory) -> None:
    base = make_inventory({
        "nodes/n1.yml": "classes: [broken]\n",
        "nodes/n2.yml": "classes: [app]\n",
        "classes/broken.yml": "parameters:\n  a: [1, 2\n  b: 3\n",
        "classes/app.yml": "parameters:\n  x: 1\n  x: 2\n",
    })
    code, findings = lint_json(base)
    assert code == 1
    syntax = of_rule(findings, "yaml-syntax")
    assert [(f["file"], f["severity"]) for f in syntax] == [("classes/broken.yml", "error")]
    assert syntax[0]["line"] == 3
    assert of_rule(findings, "duplicate-key")[0]["file"] == "classes/app.yml"
    # The broken file is reported once, not again as a node that fails to load it.
    assert of_rule(findings, "node-error") == []


def test_delimiter_in_key(make_inventory: MakeInventory) -> None:
    base = make_inventory({
        "nodes/n1.yml": "classes: [app]\n",
        "classes/app.yml": "parameters:\n  app:\n    'a:b': 1\n    ok: 2\n",
    })
    code, findings = lint_json(base)
    assert code == 0
    assert [(f["file"], f["line"], f["severity"]) for f in of_rule(findings, "delimiter-in-key")
            ] == [("classes/app.yml", 3, "warning")]


def test_unreachable_class_understands_templates_and_relative_names(
        make_inventory: MakeInventory) -> None:
    base = make_inventory({
        "nodes/n1.yml": "classes: [kind, app.web]\n",
        "classes/kind.yml": "parameters:\n  kind: web\n",
        "classes/app/web.yml": "classes: [.helpers, 'role.${kind}']\n",
        "classes/app/helpers.yml": "parameters: {h: 1}\n",
        "classes/role/web.yml": "parameters: {r: web}\n",
        "classes/role/db.yml": "classes: [role.dbextra]\nparameters: {r: db}\n",
        "classes/role/dbextra.yml": "parameters: {e: 1}\n",
        "classes/orphan.yml": "classes: [orphan_child]\n",
        "classes/orphan_child.yml": "parameters: {o: 1}\n",
    })
    code, findings = lint_json(base)
    assert code == 0
    # role.db could be chosen by `role.${kind}` (and brings role.dbextra): not reported.
    assert sorted(f["file"] for f in of_rule(findings, "unreachable-class")) == [
        "classes/orphan.yml", "classes/orphan_child.yml"]


def test_dead_value_only_when_every_node_overrides(make_inventory: MakeInventory) -> None:
    base = make_inventory({
        "nodes/n1.yml": "classes: [app]\nparameters:\n  app:\n    port: 81\n    user: u\n",
        "nodes/n2.yml": "classes: [app, tuned]\n",
        "classes/tuned.yml": "parameters:\n  app:\n    ~port: 82\n",
        "classes/app.yml": ("parameters:\n  app:\n    port: 80\n    user: www\n"
                            "    hosts: [a]\n"),
    })
    base.joinpath("nodes/n3.yml").write_text(
        "classes: [app]\nparameters:\n  app:\n    port: 83\n    hosts: [b]\n")
    code, findings = lint_json(base)
    assert code == 0
    dead = of_rule(findings, "dead-value")
    # port is overridden on n1, n2 (by `~port`) and n3; user only on n1; hosts lists concatenate.
    assert [(f["file"], f["line"]) for f in dead] == [("classes/app.yml", 3)]
    assert "parameters:app:port = 80" in dead[0]["message"]
    assert "(3)" in dead[0]["message"]


def test_type_change_even_when_settings_allow_it(make_inventory: MakeInventory) -> None:
    base = make_inventory({
        "reclass-config.yml": "allow_dict_over_scalar: true\n",
        "nodes/n1.yml": "classes: [a, b]\n",
        "nodes/n2.yml": "classes: [a]\n",
        "classes/a.yml": "parameters:\n  x: 1\n  y: [1]\n  z: null\n",
        "classes/b.yml": "parameters:\n  x:\n    deep: 1\n  ~y: plain\n  z: {k: 1}\n",
    })
    code, findings = lint_json(base)
    assert code == 0  # the node renders: the settings allow it
    changes = of_rule(findings, "type-change")
    # `~y` replaces on purpose and `null` is a placeholder: only x is reported.
    assert [(f["file"], f["line"], f["severity"]) for f in changes] == [
        ("classes/b.yml", 2, "warning")]
    message = changes[0]["message"]
    assert "a dict here replaces the scalar of class a (classes/a.yml:2)" in message
    assert message.endswith("on n1")


def test_constant_ignored(make_inventory: MakeInventory) -> None:
    files = {
        "nodes/n1.yml": "classes: [base, extra]\n",
        "nodes/n2.yml": "classes: [base]\n",
        "classes/base.yml": "parameters:\n  ssh:\n    =root: false\n",
        "classes/extra.yml": "parameters:\n  ssh:\n    root: true\n",
        # `~ssh` replaces the whole mapping, constant included: nothing is ignored on n3.
        "nodes/n3.yml": "classes: [base, reset]\n",
        "classes/reset.yml": "parameters:\n  ~ssh:\n    root: true\n",
    }
    base = make_inventory(files)
    code, findings = lint_json(base)
    assert code == 1
    ignored = of_rule(findings, "constant-ignored")
    assert [(f["file"], f["line"], f["severity"]) for f in ignored] == [
        ("classes/extra.yml", 3, "error")]
    assert "class base (classes/base.yml:3)" in ignored[0]["message"]
    assert "on n1" in ignored[0]["message"]
    # Not reported again as a failing node.
    assert of_rule(findings, "node-error") == []

    lenient = make_inventory({**files, "reclass-config.yml": "strict_constant_parameters: false\n"})
    code, findings = lint_json(lenient)
    assert code == 0
    assert [f["severity"] for f in of_rule(findings, "constant-ignored")] == ["warning"]


def test_failing_reference_names_the_failing_nodes(make_inventory: MakeInventory) -> None:
    base = make_inventory({
        "nodes/good.yml": "classes: [web]\nparameters:\n  site:\n    domain: example.com\n",
        "nodes/bad1.yml": "classes: [web]\n",
        "nodes/bad2.yml": "classes: [web]\n",
        "classes/web.yml": "parameters:\n  web:\n    name: www\n    host: www.${site:domain}\n",
    })
    code, out, _ = lint(base)
    assert code == 1
    line = next(x for x in out.splitlines() if "failing-reference" in x)
    assert line.startswith("classes/web.yml:4: error failing-reference: parameters:web:host: "
                           "${site:domain} cannot be resolved on 2 of 3 nodes using this file")
    assert ": bad1, bad2" in line and "good" not in line


def test_node_error_for_missing_class(make_inventory: MakeInventory) -> None:
    base = make_inventory({"nodes/n1.yml": "classes: [nothere]\n"})
    code, findings = lint_json(base)
    assert code == 1
    errors = of_rule(findings, "node-error")
    assert len(errors) == 1 and "nothere" in errors[0]["message"]
    assert errors[0]["file"] == "nodes/n1.yml"


def test_disable_on_the_command_line_and_in_the_config(make_inventory: MakeInventory) -> None:
    files = {
        "nodes/n1.yml": "classes: [app]\n",
        "classes/app.yml": "parameters:\n  x: 1\n  x: 2\n",
        "classes/unused.yml": "parameters: {}\n",
    }
    base = make_inventory(files)
    code, findings = lint_json(base, "--disable", "duplicate-key")
    assert code == 0
    assert [f["rule"] for f in findings] == ["unreachable-class"]
    code, findings = lint_json(base, "--disable", "duplicate-key,unreachable-class")
    assert (code, findings) == (0, [])

    configured = make_inventory({**files, "reclass-config.yml": "lint_disable: [duplicate-key]\n"})
    code, findings = lint_json(configured)
    assert code == 0
    assert [f["rule"] for f in findings] == ["unreachable-class"]


@pytest.mark.parametrize("config, args", [("", ["--disable", "no-such-rule"]),
                                          ("lint_disable: [no-such-rule]\n", [])])
def test_unknown_rule_is_a_usage_error(make_inventory: MakeInventory, config: str,
                                       args: list[str]) -> None:
    base = make_inventory({"nodes/n1.yml": "{}\n", "reclass-config.yml": config})
    code, out, err = lint(base, *args)
    assert code == 2
    assert "unknown lint rule(s) no-such-rule" in err and "duplicate-key" in err


def test_broken_configuration_is_a_finding(make_inventory: MakeInventory) -> None:
    base = make_inventory({"nodes/n1.yml": "{}\n", "reclass-config.yml": "delimiter: [1]\n",
                           "classes/a.yml": "parameters: {x: 1, x: 2}\n"})
    code, findings = lint_json(base)
    assert code == 1
    # The file rules still run.
    assert [(f["rule"], f["file"]) for f in findings] == [
        ("duplicate-key", "classes/a.yml"), ("load-error", "reclass-config.yml")]
    assert "Setting delimiter" in findings[1]["message"]


def test_missing_inventory_directory_is_an_error_exit(tmp_path: Path) -> None:
    code, out, err = lint(tmp_path, "-b", str(tmp_path / "absent"))
    assert code == 74 and "No such directory" in err and out == ""


# -- yaml_git and mixed inventories ---------------------------------------------------------

def mixed_inventory(tmp_path: Path) -> tuple[Path, str]:
    """Nodes in a directory, classes from the `production` branch of a git repository (whose
    default environment `base` has no branch); returns the base and the branch's commit."""
    from tests.git_repos import bare_repository, git

    url = bare_repository(tmp_path / "classes.git", {"production": {
        "classes/app.yml": "parameters:\n  app:\n    port: 80\n    name: x\n    port: 8080\n",
        "classes/unused.yml": "parameters: {}\n"}})
    base = tmp_path / "inventory"
    (base / "nodes").mkdir(parents=True)
    (base / "nodes" / "n1.yml").write_text("environment: production\nclasses:\n  - app\n"
                                           "  - ap\n")
    (base / "nodes" / "n2.yml").write_text("environment: production\nclasses:\n  - app\n")
    (base / "reclass-config.yml").write_text(
        f"storage_type: mixed\nnodes_uri:\n  storage_type: yaml_fs\n  uri: nodes\n"
        f"classes_uri:\n  storage_type: yaml_git\n  repo: {url}\n  root: classes\n"
        f"  cache_dir: {tmp_path / 'cache'}\n  lock_dir: {tmp_path / 'lock'}\n")
    commit = git("rev-parse", "production", cwd=tmp_path / "classes.git").strip()
    return base, commit


def test_lint_reads_the_branches_of_a_mixed_inventory(tmp_path: Path) -> None:
    base, commit = mixed_inventory(tmp_path)
    code, out, err = lint(base)
    assert code == 1, out + err  # findings, not "branch 'base' missing" (exit 74)
    lines = out.splitlines()
    # The branch's files are checked and shown where they are in the repository.
    assert any(line.startswith(f"{commit[:12]}:classes/app.yml:5: error duplicate-key")
               for line in lines), out
    assert any(line.startswith(f"{commit[:12]}:classes/unused.yml:1: warning unreachable-class")
               for line in lines), out
    # A missing class: the line of its entry, and the nearest class.
    [missing] = [line for line in lines if "node-error" in line]
    assert missing.startswith("nodes/n1.yml:4: error node-error:"), missing
    assert "Class ap not found" in missing and "(did you mean app?)" in missing


def test_explain_shows_where_a_value_is_in_its_repository(tmp_path: Path) -> None:
    base, commit = mixed_inventory(tmp_path)
    proc = subprocess.run([str(VENV_BIN / "reclass-ng"), "explain", "-b", str(base), "n2",
                           "app:name"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"app  {commit[:12]}:classes/app.yml:4" in proc.stdout, proc.stdout
    assert str(tmp_path / "cache") not in proc.stdout


def test_line_index_reads_a_files_lines_only_when_asked(tmp_path: Path) -> None:
    """check_files keeps no key table: a file's is made when a line of it is first asked
    (lint asks for a few files; a table of every file held every key of the inventory)."""
    from reclass_ng.lint.yaml_pass import LineIndex, check_files

    good = tmp_path / "good.yml"
    good.write_text("parameters:\n  app:\n    ~port: 80\n")
    broken = tmp_path / "broken.yml"
    broken.write_text("parameters:\n  app: [\n")
    unchecked = tmp_path / "unchecked.yml"
    unchecked.write_text("parameters:\n  app: 1\n")
    index = LineIndex(str(tmp_path))
    found = check_files([str(good), str(broken)], ":", "~=", index)
    assert [f.rule for f in found] == ["yaml-syntax"]
    assert index.tables == {}
    assert index.line(str(good), ("parameters", "app", "port")) == 3
    assert set(index.tables) == {str(good)}
    assert index.line(str(broken), ("parameters", "app")) is None
    assert index.line(str(unchecked), ("parameters", "app")) is None


def test_the_yaml_checks_compose_only_the_files_the_fast_reader_leaves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file the fast reader of block YAML reads writing no key twice holds no yaml-syntax
    or duplicate-key finding, and its keys tell whether it may hold a delimiter-in-key one:
    only the others are composed by PyYAML (composing every file was a tenth of lint)."""
    from reclass_ng.lint.yaml_pass import LineIndex, check_files
    from reclass_ng.storage import yaml_full

    composed: list[str] = []
    compose = yaml_full.compose_yaml_bytes
    monkeypatch.setattr(yaml_full, "compose_yaml_bytes", lambda data, path: (
        composed.append(os.path.basename(path)) or compose(data, path)))
    files = {"plain.yml": "parameters:\n  app:\n    ~port: 80\n    hosts: [a, b]\n",
             "twice.yml": "parameters:\n  app:\n    port: 80\n    port: 81\n",
             "delimiter.yml": "parameters:\n  app:\n    a:b: 1\n",
             "flow.yml": "parameters: {app: {port: 1}}\n",
             "broken.yml": "parameters:\n  app: [\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    index = LineIndex(str(tmp_path))
    found = check_files([str(tmp_path / name) for name in files], ":", "~=", index)
    assert sorted((os.path.basename(f.path), f.rule, f.line) for f in found) == [
        ("broken.yml", "yaml-syntax", 3), ("delimiter.yml", "delimiter-in-key", 3),
        ("twice.yml", "duplicate-key", 4)]
    assert composed == ["twice.yml", "delimiter.yml", "flow.yml", "broken.yml"]
    assert index.line(str(tmp_path / "plain.yml"), ("parameters", "app", "port")) == 3
