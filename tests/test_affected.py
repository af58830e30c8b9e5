"""`reclass-ng affected`: the nodes a change affects, from each node's recorded inputs.

The property test applies random edits to a small inventory with class chains, missing classes,
references, exports and queries, and checks that every node whose render changed is listed.
The command-line tests drive `reclass-ng affected` over real git revisions and file lists.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from git_repos import git, write_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reclass_ng
from reclass_ng.affected import affected_nodes, record_dependencies
from reclass_ng.diff import compare, render_side
from reclass_ng.diff.changed_files import changed_files
from tests.conftest import VENV_BIN

CLASSES = [f"c{i}" for i in range(4)]
NODES = [f"n{i}" for i in range(4)]


def class_text(index: int, value: int, parent: bool, reference: bool, exports: bool) -> str:
    lines = []
    if parent and index > 0:
        lines.append(f"classes: [c{index - 1}]")
    lines += ["parameters:", f"  c{index}:", f"    v: {value}"]
    lines.append("  shared: ${c0:v}" if reference else f"  shared: {value}")
    if exports:
        lines += ["exports:", f"  val: {value}"]
    return "\n".join(lines) + "\n"


def node_text(classes: list[str], own: int, query: bool) -> str:
    lines = [f"classes: [{', '.join(classes)}]", "parameters:", f"  own: {own}"]
    if query:
        lines.append("  seen: $[ exports:val ]")
    return "\n".join(lines) + "\n"


class_files = st.builds(class_text, st.sampled_from(range(4)), st.integers(0, 3), st.booleans(),
                        st.booleans(), st.booleans())
node_files = st.builds(node_text, st.lists(st.sampled_from([*CLASSES, "missing"]), max_size=3,
                                           unique=True),
                       st.integers(0, 3), st.booleans())
CONFIGS = ["ignore_class_notfound: true\n",
           "ignore_class_notfound: true\nallow_none_override: true\n"]


@st.composite
def inventories(draw: st.DrawFn) -> dict[str, str]:
    files = {"reclass-config.yml": CONFIGS[0]}
    for index, name in enumerate(CLASSES):
        if draw(st.booleans()) or index == 0:
            files[f"classes/{name}.yml"] = class_text(index, draw(st.integers(0, 3)),
                                                      draw(st.booleans()), draw(st.booleans()),
                                                      draw(st.booleans()))
    for name in NODES:
        if draw(st.booleans()) or name == "n0":
            files[f"nodes/{name}.yml"] = draw(node_files)
    return files


@st.composite
def edits(draw: st.DrawFn, files: dict[str, str]) -> dict[str, str | None]:
    """Paths to write (text) or delete (None)."""
    changes: dict[str, str | None] = {}
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["class", "node", "delete", "config", "move"]))
        if kind == "class":
            index = draw(st.sampled_from(range(4)))
            changes[f"classes/c{index}.yml"] = class_text(
                index, draw(st.integers(0, 3)), draw(st.booleans()), draw(st.booleans()),
                draw(st.booleans()))
        elif kind == "node":
            changes[f"nodes/{draw(st.sampled_from(NODES))}.yml"] = draw(node_files)
        elif kind == "delete" and files:
            changes[draw(st.sampled_from(sorted(f for f in files if f.endswith(".yml")
                                                and "/" in f)))] = None
        elif kind == "config":
            changes["reclass-config.yml"] = draw(st.sampled_from(CONFIGS))
        elif kind == "move":  # a class moved to dir/init.yml: the same name, another file
            index = draw(st.sampled_from(range(4)))
            text = files.get(f"classes/c{index}.yml")
            if text is not None:
                changes[f"classes/c{index}.yml"] = None
                changes[f"classes/c{index}/init.yml"] = text
    return changes


def ignore(message: str) -> None:
    """Warnings (a class not found, ignored) are not what is tested here."""


def apply(root: Path, changes: dict[str, str | None]) -> None:
    for path, text in changes.items():
        target = root / path
        if text is None:
            target.unlink(missing_ok=True)
        else:
            write_files(root, {path: text})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_node_whose_render_changed_is_listed(data: st.DataObject) -> None:
    files = data.draw(inventories())
    changes = data.draw(edits(files))
    with tempfile.TemporaryDirectory() as scratch:
        old, new = Path(scratch, "old"), Path(scratch, "new")
        write_files(old, files)
        shutil.copytree(old, new)
        apply(new, changes)
        sides = [record_dependencies(reclass_ng.load(str(side), warn=ignore), str(side)) for side in (old, new)]
        listed = affected_nodes(sides, changed_files(str(old), str(new)),
                                set(sides[0][1]) != set(sides[1][1]))
        rendered = compare(render_side(str(old)), render_side(str(new)))
        changed = {node.node for node in rendered.nodes}
        assert changed <= set(listed.nodes), (changes, changed - set(listed.nodes))
        # Only the files given are read against the new side, as `--files` does.
        alone = affected_nodes([sides[1]], changed_files(str(old), str(new)))
        assert {n.node for n in rendered.nodes if n.status != "removed"} <= set(alone.nodes)


BASE = {
    "classes/base.yml": "parameters:\n  base:\n    port: 80\n",
    "classes/web.yml": ("classes: [base]\nparameters:\n  web:\n    port: ${base:port}\n"
                        "exports:\n  backend: ${web:port}\n"),
    "classes/lb.yml": "parameters:\n  lb:\n    backends: $[ exports:backend ]\n",
    "classes/db.yml": "parameters:\n  db:\n    size: 10\n",
    "nodes/web1.yml": "classes: [web]\n",
    "nodes/web2.yml": "classes: [web]\nparameters:\n  web:\n    port: 8080\n",
    "nodes/lb1.yml": "classes: [lb]\n",
    "nodes/db1.yml": "classes: [db]\n",
}


def reclass_ng_affected(*args: str, cwd: Path, stdin: str | None = None
                        ) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(VENV_BIN / "reclass-ng"), "affected", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120, input=stdin)
    assert "Traceback" not in proc.stderr
    return proc


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    write_files(repo / "inventory", BASE)
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "first", cwd=repo)
    return repo


def commit(repo: Path, files: dict[str, str | None], message: str) -> None:
    apply(repo / "inventory", files)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", message, cwd=repo)


def test_between_git_revisions_with_exports_and_queries(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    commit(repo, {"classes/base.yml": "parameters:\n  base:\n    port: 81\n"}, "port 81")
    proc = reclass_ng_affected("-b", "inventory", "--from", "HEAD~1", "--to", "HEAD", "--why",
                               cwd=repo)
    assert proc.returncode == 0, proc.stderr
    # web2 overrides the port but reads the class; lb1 queries the web nodes' exports.
    assert proc.stdout.splitlines() == [
        "lb1: its queries read the exports of web1; its queries read the exports of web2",
        "web1: class base (classes/base.yml) changed",
        "web2: class base (classes/base.yml) changed",
    ]
    # A node removed changes the list of nodes the load balancer's query reads.
    commit(repo, {"nodes/db1.yml": None}, "no db")
    proc = reclass_ng_affected("-b", "inventory", "--from", "HEAD~1", "-o", "json", cwd=repo)
    document = json.loads(proc.stdout)
    assert document["nodes"] == ["db1", "lb1"]
    assert document["reasons"]["lb1"] == ["its queries read the list of nodes, which changed",
                                          "its queries read the exports of db1"]
    assert document["changed_files"] == ["nodes/db1.yml"]
    # The settings file: every node.
    (repo / "inventory/reclass-config.yml").write_text("allow_none_override: true\n")
    proc = reclass_ng_affected("-b", "inventory", "--from", "HEAD", "-o", "json", cwd=repo)
    document = json.loads(proc.stdout)
    assert document["nodes"] == ["lb1", "web1", "web2"] and document["settings_changed"]


def test_a_list_of_changed_files(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    listed = "inventory/classes/db.yml\ninventory/README.md\ncomponents/x.jsonnet\n"
    proc = reclass_ng_affected("-b", "inventory", "--files-from", "-", "-o", "json", cwd=repo,
                               stdin=listed)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    # lb1's query reads every node's exports: db1's might change (nothing is rendered).
    assert document["nodes"] == ["db1", "lb1"]
    assert document["unread_files"] == [str(repo / "components/x.jsonnet"), "README.md"]
    # A missing class that a file now provides.
    (repo / "inventory/nodes/db1.yml").write_text("classes: [db, db.tuning]\n")
    (repo / "inventory/reclass-config.yml").write_text("ignore_class_notfound: true\n")
    proc = reclass_ng_affected("-b", "inventory", "--files", "inventory/classes/db/tuning.yml",
                               cwd=repo)
    assert proc.stdout.splitlines() == ["db1", "lb1"]
    proc = reclass_ng_affected("-b", "inventory", "--files", "components/x.jsonnet",
                               "--other-files", "all", cwd=repo)
    assert proc.stdout.splitlines() == ["db1", "lb1", "web1", "web2"]


def test_bad_command_lines(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    proc = reclass_ng_affected("-b", "inventory", cwd=repo)
    assert proc.returncode == 2 and "give the changed files" in proc.stderr
    proc = reclass_ng_affected("-b", "inventory", "--files-from", "absent.txt", cwd=repo)
    assert proc.returncode == 74 and "cannot read --files-from absent.txt" in proc.stderr
    proc = reclass_ng_affected("-b", "inventory", "--from", "nope", cwd=repo)
    assert proc.returncode == 2
    assert "reclass-ng affected: unknown revision 'nope'" in proc.stderr
    os.makedirs(tmp_path / "empty")
    proc = reclass_ng_affected("-b", str(repo / "inventory"), "--from-dir", str(tmp_path / "x"),
                               cwd=repo)
    assert proc.returncode == 74 and "No such directory" in proc.stderr


def test_a_huge_file_list_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    listed = "inventory/classes/db.yml\n" * 200_000  # over the 100,000 files read from a list
    proc = reclass_ng_affected("-b", "inventory", "--files-from", "-", cwd=repo, stdin=listed)
    assert proc.returncode == 2 and "200000 changed files listed, more than 100000" \
        in proc.stderr
