"""`reclass-ng explain`: where a node's value, class or application came from.

Most tests run the installed command as a user would (subprocess, text and JSON output) on small
inventories written to tmp_path; a few drive reclass_ng.explain in-process for details, and one
checks the writes of every leaf of every node of the conformance corpus against the engine's
result.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import reclass_ng
from reclass_ng.explain.report import explain_parameter
from reclass_ng.explain.trace import MISSING, NodeTrace, lookup
from reclass_ng.values import Interpolation

REPO = Path(__file__).resolve().parents[1]
COMMAND = REPO / ".venv" / "bin" / "reclass-ng"
CORPUS = REPO / "tests" / "conformance"

# A value merged through three classes (a <- b <- c): a writes a reference, b overrides it,
# c replaces it with `~` by a reference whose target is itself a reference (a chain).
THREE_CLASSES = {
    "reclass-config.yml": "strict_constant_parameters: false\n",
    "classes/a.yml": """\
parameters:
  _param:
    port: 8080
    base_port: 80
  nginx:
    server:
      port: ${_param:base_port}
      name: a
  ssh:
    =root_login: false
  pkgs:
    - curl
  old:
    before: 0
""",
    "classes/b.yml": """\
classes:
  - a
parameters:
  nginx:
    server:
      port: 81
      extra: 1
  ssh:
    root_login: true
  pkgs:
    - vim
""",
    "classes/c.yml": """\
classes:
  - b
applications:
  - web
parameters:
  _param:
    port: ${_param:real_port}
    real_port: 9090
  nginx:
    server:
      ~port: ${_param:port}
""",
    "classes/d.yml": """\
applications:
  - ~web
  - db
parameters:
  ~old:
    kept: 1
""",
    "nodes/n1.yml": """\
classes:
  - c
  - d
parameters:
  nginx:
    server:
      tls: true
  old:
    gone: 2
  pkgs:
    - git
""",
}


def write(root: Path, files: dict[str, str]) -> Path:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "nodes").mkdir(exist_ok=True)
    (root / "classes").mkdir(exist_ok=True)
    return root


def explain(inventory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(inventory))
    result = subprocess.run([str(COMMAND), "explain", "-b", str(inventory), *args],
                            capture_output=True, text=True, env=env, cwd=inventory, timeout=120)
    assert "Traceback" not in result.stderr
    return result


def explain_json(inventory: Path, *args: str) -> dict[str, Any]:
    result = explain(inventory, *args, "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def summary(contributions: list[dict[str, Any]]) -> list[tuple]:
    return [(c["source"], c["key"], c["effect"], (c.get("by") or {}).get("source"), c["final"])
            for c in contributions]


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    return write(tmp_path / "inv", THREE_CLASSES)


pytestmark = pytest.mark.skipif(not COMMAND.exists(), reason="run `make install` first")


# -- parameters ---------------------------------------------------------------------------------

def test_value_through_three_classes_with_override_and_reference_chain(inventory: Path) -> None:
    report = explain_json(inventory, "n1", "nginx:server:port")
    assert report["value"] == 9090 and report["kind"] == "value"
    contributions = report["contributions"]
    assert summary(contributions) == [
        ("a", "nginx:server:port", "overridden", "b", False),
        ("b", "nginx:server:port", "replaced", "c", False),
        ("c", "nginx:server:~port", "set", None, True),
    ]
    assert [(c["file"], c["line"], c["written"]) for c in contributions] == [
        ("classes/a.yml", 7, "${_param:base_port}"),
        ("classes/b.yml", 6, 81),
        ("classes/c.yml", 11, "${_param:port}"),
    ]
    # The overridden reference still shows what it pointed at.
    assert contributions[0]["references"][0]["value"] == 80
    # The chain: ${_param:port} -> c's `${_param:real_port}` -> 9090 written in c, line 8.
    first = contributions[2]["references"][0]
    assert (first["reference"], first["value"]) == ("${_param:port}", 9090)
    [link] = first["sources"]
    assert (link["source"], link["line"], link["written"]) == ("c", 7, "${_param:real_port}")
    [second] = link["references"]
    assert (second["reference"], second["value"]) == ("${_param:real_port}", 9090)
    assert [(s["source"], s["line"], s["written"]) for s in second["sources"]] == [("c", 8, 9090)]


def test_text_output_names_files_lines_and_effects(inventory: Path) -> None:
    result = explain(inventory, "n1", "nginx:server:port")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("node n1, parameter nginx:server:port\nfinal value:\n  9090\n")
    assert "1. a  classes/a.yml:7" in text
    assert "overridden by b (classes/b.yml:6, nginx:server:port)" in text
    assert "replaced by c (classes/c.yml:11, nginx:server:~port) with ~" in text
    assert "set with ~ (replaces what was there) -> in the final value" in text
    assert "${_param:real_port} = 9090" in text
    assert "c  classes/c.yml:8  _param:real_port: 9090" in text


def test_constant_ignores_a_later_write(inventory: Path) -> None:
    report = explain_json(inventory, "n1", "ssh:root_login")
    assert report["value"] is False
    assert summary(report["contributions"]) == [
        ("a", "ssh:=root_login", "set", None, True),
        ("b", "ssh:root_login", "ignored", "a", False),
    ]
    assert report["contributions"][1]["by"]["line"] == 10
    text = explain(inventory, "n1", "ssh:root_login").stdout
    assert "ignored: constant set by a (classes/a.yml:10, ssh:=root_login)" in text


def test_lists_append_and_an_item_names_its_writer(inventory: Path) -> None:
    report = explain_json(inventory, "n1", "pkgs")
    assert report["value"] == ["curl", "vim", "git"]
    assert summary(report["contributions"]) == [
        ("a", "pkgs", "set", None, True),
        ("b", "pkgs", "appended", None, True),
        ("n1", "pkgs", "appended", None, True),
    ]
    item = explain_json(inventory, "n1", "pkgs:1")
    assert item["path"] == "pkgs"
    assert item["element"]["value"] == "vim" and item["element"]["from"]["source"] == "b"


def test_a_mapping_is_explained_leaf_by_leaf_including_removed_keys(inventory: Path) -> None:
    report = explain_json(inventory, "n1", "old")
    assert report["kind"] == "mapping" and report["value"] == {"kept": 1, "gone": 2}
    leaves = {leaf["path"]: leaf for leaf in report["leaves"]}
    assert set(leaves) == {"old:kept", "old:gone", "old:before"}
    removed = leaves["old:before"]
    assert removed["present"] is False
    assert summary(removed["contributions"]) == [
        ("a", "old:before", "removed", "d", False),
        ("d", "~old", "removes", None, False),
    ]
    text = explain(inventory, "n1", "old").stdout
    assert "old:before: not in the final parameters" in text
    assert "removed by d (classes/d.yml:5, ~old)" in text


def test_a_mapping_written_by_a_reference_merges_with_later_writes(tmp_path: Path) -> None:
    inv = write(tmp_path, {
        "classes/defaults.yml": "parameters:\n  defaults:\n    port: 1\n    host: h\n",
        "classes/web.yml": "classes: [defaults]\nparameters:\n  web: ${defaults}\n",
        "nodes/n1.yml": "classes: [web]\nparameters:\n  web:\n    port: 2\n",
    })
    port = explain_json(inv, "n1", "web:port")
    assert port["value"] == 2
    assert summary(port["contributions"]) == [
        ("web", "web", "overridden", "n1", False),
        ("n1", "web:port", "set", None, True),
    ]
    assert port["contributions"][0]["via"] == "${defaults}"
    host = explain_json(inv, "n1", "web:host")
    assert summary(host["contributions"]) == [("web", "web", "set", None, True)]
    # The reference is followed to the part of the mapping that holds the leaf.
    [ref] = host["contributions"][0]["references"]
    assert (ref["reference"], ref["path"], ref["value"]) == ("${defaults}", "defaults:host", "h")
    assert [(s["source"], s["line"]) for s in ref["sources"]] == [("defaults", 4)]


def test_a_prefixed_key_kept_below_a_prefixed_key_is_explained_where_a_merge_reads_it(
        tmp_path: Path) -> None:
    # `~l` stays as written below `~a`; merged into b through `${a}`, it overrides b:l (issue
    # 36): the fold reports the key it read, so b:l is n1's reference, and c's [1] replaced.
    inv = write(tmp_path, {
        "classes/c.yml": "parameters:\n  b: {l: [1]}\n  '~a': {'~l': [2]}\n",
        "nodes/n1.yml": "classes: [c]\nparameters:\n  b: '${a}'\n",
    })
    report = explain_json(inv, "n1", "b:l")
    assert report["value"] == [2]
    assert summary(report["contributions"]) == [
        ("c", "b:l", "replaced", "n1", False),
        ("n1", "b", "set", None, True),
    ]
    assert report["contributions"][1]["via"] == "${a}"
    # The reference is followed to the key as a holds it.
    [ref] = report["contributions"][1]["references"]
    assert (ref["path"], ref["value"]) == ("a:~l", [2])
    kept = explain_json(inv, "n1", "a")
    assert kept["value"] == {"~l": [2]}


def test_null_above_a_key_removes_it(tmp_path: Path) -> None:
    inv = write(tmp_path, {
        "reclass-config.yml": "allow_none_override: true\n",
        "classes/a.yml": "parameters:\n  x:\n    y: 1\n",
        "nodes/n1.yml": "classes: [a]\nparameters:\n  x: null\n",
    })
    report = explain_json(inv, "n1", "x:y")
    assert report["present"] is False
    assert summary(report["contributions"]) == [
        ("a", "x:y", "removed", "n1", False),
        ("n1", "x", "removes", None, False),
    ]


def test_nested_reference_shows_the_inner_reference(tmp_path: Path) -> None:
    inv = write(tmp_path, {
        "nodes/n1.yml": "parameters:\n  env: prod\n  ports:\n    prod: 443\n"
                        "  port: ${ports:${env}}\n",
    })
    [contribution] = explain_json(inv, "n1", "port")["contributions"]
    [ref] = contribution["references"]
    assert (ref["reference"], ref["path"], ref["value"]) == ("${ports:${env}}", "ports:prod", 443)
    assert ref["inner"][0]["path"] == "env" and ref["inner"][0]["value"] == "prod"


def test_long_reference_chains_stop_at_the_depth_limit(tmp_path: Path) -> None:
    lines = ["parameters:", "  v0: end"] + [f"  v{i}: ${{v{i - 1}}}" for i in range(1, 15)]
    inv = write(tmp_path, {"nodes/n1.yml": "\n".join(lines) + "\n"})
    report = explain_json(inv, "n1", "v14")
    ref, depth = report["contributions"][0]["references"][0], 0
    while "sources" in ref:
        ref, depth = ref["sources"][0]["references"][0], depth + 1
    assert ref["note"] == "depth limit reached" and 5 <= depth < 14


# -- classes and applications ----------------------------------------------------------------

def test_class_include_chain_with_lines(inventory: Path) -> None:
    report = explain_json(inventory, "n1", "--class", "a")
    assert [(link["source"], link["file"], link["line"], link["class"])
            for link in report["chain"]] == [
        ("n1", "nodes/n1.yml", 2, "c"),
        ("c", "classes/c.yml", 2, "b"),
        ("b", "classes/b.yml", 2, "a"),
    ]
    text = explain(inventory, "n1", "--class", "a").stdout
    assert "node n1 has class a (class 1 of 4 in merge order)" in text
    assert "  b  classes/b.yml:2  classes: a" in text


def test_class_chain_shows_relative_names_and_class_mappings(tmp_path: Path) -> None:
    inv = write(tmp_path, {
        "reclass-config.yml": "class_mappings:\n  - 'n* profile.web'\n",
        "classes/profile/base.yml": "parameters: {}\n",
        "classes/profile/web.yml": "classes:\n  - .base\n",
        "nodes/n1.yml": "parameters: {}\n",
    })
    report = explain_json(inv, "n1", "--class", "profile.base")
    first, second = report["chain"]
    assert first["source_kind"] == "automatic"
    assert (first["file"], first["line"], first["listed"]) == (
        "reclass-config.yml", 2, "n* profile.web")
    assert (second["source"], second["line"], second["listed"]) == ("profile.web", 2, ".base")
    text = explain(inv, "n1", "--class", "profile.base").stdout
    assert "class_mappings  reclass-config.yml:2  n* profile.web" in text
    assert "classes: .base (= profile.base)" in text


def test_application_added_then_removed(inventory: Path) -> None:
    web = explain_json(inventory, "n1", "--application", "web")
    assert web["present"] is False
    assert [(e["source"], e["line"], e["written"], e["effect"]) for e in web["events"]] == [
        ("c", 4, "web", "added"), ("d", 2, "~web", "removed")]
    db = explain_json(inventory, "n1", "--application", "db")
    assert db["present"] is True
    assert [link["source"] for link in db["chain"]] == ["n1"]


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "code", "message"), [
    (["n2", "pkgs"], 74, "Node 'n2' not found"),
    (["n1", "nginx:server:prot"], 74, "did you mean nginx:server:port?"),
    (["n1", "nginx:server:port:x"], 74, "nginx:server:port is a value (9090), not a mapping"),
    (["n1", "--class", "bb"], 74, "does not have class 'bb' (did you mean b?)"),
    (["n1", "--application", "wbe"], 74, "does not have application 'wbe'"),
    (["n1"], 2, "Give exactly one of PATH, --exports PATH, --class NAME or --application"),
])
def test_errors_are_clear_and_non_zero(inventory: Path, args: list[str], code: int,
                                       message: str) -> None:
    result = explain(inventory, *args)
    assert result.returncode == code
    assert message in result.stderr
    assert result.stdout == ""


def test_engine_errors_are_reported_as_the_engine_reports_them(tmp_path: Path) -> None:
    inv = write(tmp_path, {k: v for k, v in THREE_CLASSES.items() if k != "reclass-config.yml"})
    result = explain(inv, "n1", "ssh:root_login")
    assert result.returncode == 65
    assert "Attempt to change constant value" in result.stderr


# -- the example inventory and the corpus ------------------------------------------------------

def test_example_inventory_reference_chain() -> None:
    report = explain_json(REPO / "inventory-example", "web1.staging.example.com",
                          "nginx:server_name")
    assert report["value"] == "shop.staging.example.com"
    [contribution] = report["contributions"]
    [ref] = contribution["references"]
    [source] = ref["sources"]
    assert (source["source"], source["file"], source["line"]) == (
        "env.staging", "classes/env/staging.yml", 5)
    [domain] = source["references"]
    assert [s["source"] for s in domain["sources"]] == ["env.staging"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="conformance corpus not present")
def test_explained_writes_agree_with_the_engine_on_the_whole_corpus() -> None:
    """Every leaf of every node: present exactly when some write is final, and a lone final
    plain scalar is the engine's value."""
    checked = 0
    for scenario in sorted(CORPUS.glob("*/scenario.json")):
        if json.loads(scenario.read_text()).get("args"):
            continue
        try:
            inv = reclass_ng.load(str(scenario.parent / "inventory"), warn=lambda _: None)
            traces = [NodeTrace(inv, node) for node in inv.node_names]
        except reclass_ng.errors.ReclassError:
            continue  # scenarios that expect an error
        for trace in traces:
            for leaf in trace.written_leaves(()):
                final = lookup(trace.params, leaf)
                finals = [c for c in trace.trace(leaf) if c.final]
                where = f"{scenario.parent.name} {trace.node} {leaf}"
                assert (final is MISSING) == (not finals), where
                if len(finals) == 1 and finals[0].via is None and isinstance(
                        finals[0].written, (int, float, bool, type(None))):
                    assert finals[0].written == final, where
                checked += 1
    assert checked > 1000


def test_in_process_report_matches_cli(inventory: Path) -> None:
    inv = reclass_ng.load(str(inventory), warn=lambda _: None)
    report = explain_parameter(NodeTrace(inv, "n1"), "nginx:server")
    assert report == explain_json(inventory, "n1", "nginx:server")
    assert {leaf["path"] for leaf in report["leaves"]} == {
        "nginx:server:port", "nginx:server:name", "nginx:server:extra", "nginx:server:tls"}


def test_reference_defaults_show_the_default_used(tmp_path: Path) -> None:
    inv = write(tmp_path, {
        "reclass-config.yml": "reference_defaults: true\n",
        "nodes/n1.yml": "parameters:\n  port: ${nope::42}\n",
    })
    report = explain_json(inv, "n1", "port")
    assert report["value"] == 42
    [ref] = report["contributions"][0]["references"]
    assert (ref["path"], ref["note"]) == ("nope", "missing: the default '42' is used")


def test_a_constant_below_stops_a_later_mapping_reference(tmp_path: Path) -> None:
    # `=a: ${m}` merges m into a, except where a constant already holds a key (a:b here).
    inv = write(tmp_path, {
        "reclass-config.yml": "strict_constant_parameters: false\n",
        "classes/c0.yml": "parameters:\n  a:\n    =b: 7\n",
        "classes/c1.yml": "classes: [c0]\nparameters:\n  =a: ${m}\n",
        "classes/c2.yml": "classes: [c1]\nparameters:\n  a:\n    c: 1\n",
        "nodes/n1.yml": "classes: [c2]\nparameters:\n  m:\n    b: 6\n    c: 5\n",
    })
    report = explain_json(inv, "n1", "a")
    leaves = {leaf["path"]: leaf for leaf in report["leaves"]}
    assert report["value"] == {"b": 7, "c": 5}
    assert summary(leaves["a:b"]["contributions"]) == [
        ("c0", "a:=b", "set", None, True),
        ("c1", "=a", "ignored", "c0", False),
    ]
    assert summary(leaves["a:c"]["contributions"]) == [
        ("c1", "=a", "set", None, True),
        ("c2", "a:c", "ignored", "c1", False),
    ]
    assert leaves["a:c"]["contributions"][0]["via"] == "${m}"


def test_explain_after_a_failed_inventory_render_reports_the_class_write(tmp_path: Path) -> None:
    # inventory() fails at a0 and leaves the shared class walk of [web] half used; explain
    # through the same Inventory used to see no class at all (it reported no writes).
    inv = write(tmp_path, {"classes/web.yml": "parameters:\n  port: 80\n",
                           "nodes/a0.yml": "classes: [missing]\n",
                           **{f"nodes/a{i}.yml": "classes: [web]\n" for i in (1, 2, 3)}})
    inventory = reclass_ng.load(str(inv), warn=lambda _: None)
    with pytest.raises(reclass_ng.errors.ReclassError):
        inventory.inventory()
    report = explain_parameter(NodeTrace(inventory, "a1"), "port")
    assert summary(report["contributions"]) == [("web", "port", "set", None, True)]
    assert report["contributions"][0]["line"] == 2


def test_class_listed_twice_names_both_places(tmp_path: Path) -> None:
    inv = write(tmp_path, {
        "classes/base.yml": "parameters: {}\n",
        "classes/web.yml": "classes: [base]\n",
        "nodes/n1.yml": "classes:\n  - web\n  - base\n",
    })
    report = explain_json(inv, "n1", "--class", "base")
    assert [(link["source"], link["line"]) for link in report["chain"]] == [
        ("n1", 2), ("web", 1)]
    assert [(link["source"], link["line"]) for link in report["also_listed_by"]] == [("n1", 3)]


# -- random inventories: the labelled writes against the engine's result ------------------------------------------

SETTINGS_ALLOWING_EVERYTHING = dict(
    strict_constant_parameters=False, allow_scalar_over_dict=True, allow_scalar_over_list=True,
    allow_list_over_scalar=True, allow_dict_over_scalar=True, allow_none_override=True)


def _random_value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if roll < 0.25:
        return rng.randint(0, 9)
    if roll < 0.45:
        return [rng.randint(0, 9) for _ in range(rng.randint(0, 2))]
    if roll < 0.55:
        return None
    if roll < 0.7:
        return rng.choice(["${ref_list}", "${ref_int}", "${ref_map}"])
    if depth < 2:
        return {rng.choice("bc"): _random_value(rng, depth + 1) for _ in range(rng.randint(1, 2))}
    return rng.randint(0, 9)


def _random_flags(rng: random.Random, value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return {rng.choice(["", "", "", "~", "="]) + key: _random_flags(rng, child)
            for key, child in value.items()}


def _written_value(trace: NodeTrace, contribution: Any, leaf: tuple) -> Any:
    if contribution.via:
        return lookup(trace.params, ("ref_map",) + leaf[len(contribution.key):])
    if type(contribution.written) is Interpolation:
        return lookup(trace.params, (contribution.written.text[2:-1],))
    return contribution.written


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_explained_writes_agree_with_the_engine_on_random_inventories(seed: int) -> None:
    """Four chained classes and a node write `a` (and below) with random values, `~`/`=` flags
    and references; the writes marked final must make up the engine's value exactly."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        for i in range(4):
            doc: dict[str, Any] = {"parameters": _random_flags(rng, {"a": _random_value(rng, 0)})}
            if i:
                doc["classes"] = [f"c{i - 1}"]
            write(root, {f"classes/c{i}.yml": yaml.safe_dump(doc)})
        node = _random_flags(rng, {"a": _random_value(rng, 0)})
        node.update({"ref_list": [7, 8], "ref_int": 5, "ref_map": {"b": 6, "c": [1]}})
        write(root, {"nodes/n1.yml": yaml.safe_dump({"classes": ["c3"], "parameters": node})})
        try:
            inv = reclass_ng.load(directory, read_config=False, warn=lambda _: None,
                                  **SETTINGS_ALLOWING_EVERYTHING)
            trace = NodeTrace(inv, "n1")
        except reclass_ng.errors.ReclassError:
            return  # an inventory the engine rejects has nothing to explain
        for leaf in dict.fromkeys([*trace.written_leaves(("a",)), ("a", "b"), ("a", "c")]):
            final = lookup(trace.params, leaf)
            contributions = trace.trace(leaf)
            finals = [c for c in contributions if c.final]
            if isinstance(final, dict) and final:
                continue
            assert (final is MISSING) == (not finals), (leaf, contributions)
            if not finals:
                continue
            parts = [_written_value(trace, c, leaf) for c in finals]
            if isinstance(final, list):
                flat: list[Any] = []
                for part in parts:
                    flat.extend(part if isinstance(part, list) else [part])
                assert flat == final, (leaf, contributions)
            else:
                assert parts == [final], (leaf, contributions)


def test_exports_are_explained_with_references_into_parameters(tmp_path: Path) -> None:
    inv = write(tmp_path, {
        "classes/e.yml": "exports:\n  ip: ${ip}\n  name: web\n",
        "nodes/n1.yml": "classes: [e]\nparameters:\n  ip: 10.0.0.1\nexports:\n  name: n1\n",
    })
    ip = explain_json(inv, "n1", "--exports", "ip")
    assert (ip["section"], ip["value"]) == ("exports", "10.0.0.1")
    [ref] = ip["contributions"][0]["references"]
    assert [(s["source"], s["line"]) for s in ref["sources"]] == [("n1", 3)]
    name = explain_json(inv, "n1", "--exports", "name")
    assert summary(name["contributions"]) == [
        ("e", "name", "overridden", "n1", False), ("n1", "name", "set", None, True)]
    assert name["contributions"][1]["line"] == 5
    result = explain(inv, "n1", "--exports", "nam")
    assert result.returncode == 74 and "has no export 'nam' (did you mean name?)" in result.stderr


def test_each_reference_of_a_list_says_which_item_it_is_in(make_inventory) -> None:
    root = make_inventory({"nodes/n1.yml": ("parameters:\n  a: x\n  b: y\n  list:\n"
                                            "    - ${a}\n    - plain\n    - ${b}\n")})
    proc = explain(root, "n1", "list")
    assert proc.returncode == 0, proc.stderr
    assert "       ${a} = x  (item 0 of this write)\n" in proc.stdout, proc.stdout
    assert "       ${b} = y  (item 2 of this write)\n" in proc.stdout
    [write] = json.loads(explain(root, "n1", "list", "-o", "json").stdout)["contributions"]
    assert [(r["reference"], r["within"]) for r in write["references"]] == [
        ("${a}", "0"), ("${b}", "2")]
