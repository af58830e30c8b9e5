"""`reclass-ng diff`, driven through the command line: git revisions and directories."""

from __future__ import annotations

import copy
import datetime
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reclass_ng.diff.compare import _same_tree, compare, render_side, tree_comparer
from reclass_ng.settings import Speed
from reclass_ng.values import OwnedDict, OwnedList
from tests.conftest import VENV_BIN, write_inventory
from tests.speeds import SPEEDS

GIT = ["git", "-c", "user.name=Lint Test", "-c", "user.email=test@example.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]

FIRST = {
    "nodes/web1.yml": "classes: [web]\nparameters:\n  web:\n    workers: 2\n",
    "nodes/web2.yml": "classes: [web]\n",
    "nodes/old.yml": "classes: [base]\n",
    "classes/base.yml": "parameters:\n  site:\n    domain: example.com\n    port: 80\n",
    "classes/web.yml": ("classes: [base]\nparameters:\n  web:\n    workers: 1\n"
                        "    url: http://${site:domain}:${site:port}/\n"),
}


def reclass_ng(*args: str, cwd: Path, tmpdir: Path | None = None
               ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmpdir)} if tmpdir else None
    proc = subprocess.run([str(VENV_BIN / "reclass-ng"), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env=env)
    assert "Traceback" not in proc.stderr
    return proc


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def two_commits(tmp_path: Path) -> tuple[Path, Path, str]:
    """A repository with the inventory below `inv/`, committed twice; (repo, inventory, rev1)."""
    repo = tmp_path / "repo"
    inventory = write_inventory(repo / "inv", FIRST)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    first = git(repo, "rev-parse", "HEAD")
    (inventory / "classes/base.yml").write_text(
        "parameters:\n  site:\n    domain: example.com\n    port: 8080\n    tls: true\n")
    (inventory / "nodes/old.yml").unlink()
    (inventory / "nodes/new.yml").write_text("classes: [web]\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    return repo, inventory, first


def test_diff_across_two_git_commits(tmp_path: Path) -> None:
    repo, inventory, first = two_commits(tmp_path)
    status_before = git(repo, "status", "--porcelain")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    proc = reclass_ng("diff", "-b", str(inventory), "--from", first, "--to", "HEAD", "--by", "node",
                      cwd=repo,
                      tmpdir=scratch)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    old_short, new_short = (git(repo, "rev-parse", "--short", rev) for rev in (first, "HEAD"))
    assert lines[:2] == [f"--- {first} ({old_short})", f"+++ HEAD ({new_short})"]
    assert "+ new (node added)" in lines
    assert "- old (node removed)" in lines
    web1 = lines[lines.index("~ web1") + 1: lines.index("~ web2")]
    assert web1 == [
        "    ~ parameters:site:port: 80 -> 8080   [class base, classes/base.yml:4]",
        "    + parameters:site:tls: true   [class base, classes/base.yml:5]",
        '    ~ parameters:web:url: "http://example.com:80/" -> "http://example.com:8080/"'
        "   [class web, classes/web.yml:5, via http://${site:domain}:${site:port}/]",
    ]
    assert lines[-1] == "4 nodes changed, 6 keys changed (1 nodes added, 1 removed)"
    # Read-only: nothing changed in the repository, no worktree or export left behind.
    assert git(repo, "status", "--porcelain") == status_before
    assert git(repo, "worktree", "list").count("\n") == 0
    assert list(scratch.iterdir()) == []


def test_working_tree_is_the_default_new_side(tmp_path: Path) -> None:
    repo, inventory, _ = two_commits(tmp_path)
    proc = reclass_ng("diff", "-b", str(inventory), "--from", "HEAD", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == (
        "0 nodes changed, 0 keys changed (0 nodes added, 0 removed)")
    (inventory / "nodes/web2.yml").write_text(
        "classes: [web]\nparameters:\n  web:\n    workers: 3\n")
    proc = reclass_ng("diff", "-b", str(inventory), "--from", "HEAD", "-o", "json", cwd=repo)
    assert proc.returncode == 1
    document: dict[str, Any] = json.loads(proc.stdout)
    assert document["summary"] == {"nodes_changed": 1, "keys_changed": 1, "nodes_added": 0,
                                   "nodes_removed": 0}
    [node] = document["nodes"]
    assert node["node"] == "web2" and node["status"] == "changed"
    assert node["changes"] == [{
        "path": "parameters:web:workers", "keys": ["parameters", "web", "workers"],
        "change": "changed", "old": 1, "new": 3,
        "source": {"kind": "node", "name": "web2", "file": "nodes/web2.yml", "line": 4,
                   "via": None}}]


def test_two_directories_and_a_node_that_starts_failing(tmp_path: Path) -> None:
    old = write_inventory(tmp_path / "a", FIRST)
    new = write_inventory(tmp_path / "b", {
        **FIRST, "classes/base.yml": "parameters:\n  site:\n    port: 80\n",
        "nodes/web2.yml": "classes: [web]\nparameters:\n  site:\n    domain: two.example\n"})
    proc = reclass_ng("diff", "--from-dir", str(old), "--to-dir", str(new), "--by", "node",
                      cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert "~ web1" in lines
    assert lines[lines.index("~ web1") + 1].startswith(
        "    ! now fails to render: Cannot resolve ${site:domain}, at web:url")
    assert "    - parameters:site:domain: \"example.com\"   [was class base, classes/base.yml:3]" \
        in lines
    assert '    ~ parameters:site:domain: "example.com" -> "two.example"   ' \
        '[node web2, nodes/web2.yml:4]' in lines
    assert lines[-1] == "3 nodes changed, 3 keys changed (0 nodes added, 0 removed)"


def test_errors_exit_above_one(tmp_path: Path) -> None:
    inventory = write_inventory(tmp_path / "plain", FIRST)
    proc = reclass_ng("diff", "-b", str(inventory), "--from", "HEAD", cwd=tmp_path)
    assert proc.returncode == 2 and "not inside a git repository" in proc.stderr
    repo, inventory, _ = two_commits(tmp_path)
    proc = reclass_ng("diff", "-b", str(inventory), "--from", "no-such-rev", cwd=repo)
    assert proc.returncode == 2 and "unknown revision 'no-such-rev'" in proc.stderr
    proc = reclass_ng("diff", "-b", str(inventory), cwd=repo)
    assert proc.returncode == 2 and "--from REV or --from-dir DIR" in proc.stderr
    proc = reclass_ng("diff", "--from-dir", str(tmp_path / "absent"), "--to-dir", str(inventory),
                      cwd=repo)
    assert proc.returncode == 74 and "No such directory" in proc.stderr


BROKEN = {
    "nodes/lost.yml": "classes: [absent]\n",
    "nodes/loose.yml": "parameters:\n  x: ${nowhere}\n",
    "nodes/fine.yml": "classes: [web]\n",
    "classes/web.yml": "parameters:\n  web:\n    workers: 1\n",
}


def test_a_node_failing_the_same_way_on_both_sides_is_no_change(tmp_path: Path) -> None:
    # Each side's error names its own directory; compared as written, every failing node of
    # an untouched copy would count as changed.
    old = write_inventory(tmp_path / "a", BROKEN)
    copy = write_inventory(tmp_path / "copy-of-a", BROKEN)
    for output in ("text", "json", "markdown", "junit", "github"):
        proc = reclass_ng("diff", "--from-dir", str(old), "--to-dir", str(copy),
                          "--format", output, cwd=tmp_path)
        assert proc.returncode == 0, (output, proc.stdout)
    # A failure that does change is still reported, without either side's directory.
    changed = write_inventory(tmp_path / "changed", {**BROKEN,
                                                     "nodes/lost.yml": "classes: [gone]\n"})
    proc = reclass_ng("diff", "--from-dir", str(old), "--to-dir", str(changed), "-o", "json",
                      cwd=tmp_path)
    assert proc.returncode == 1
    [node] = json.loads(proc.stdout)["nodes"]
    assert node["node"] == "lost"
    assert node["new_error"] == "In nodes/lost.yml Class gone not found under classes"
    assert str(tmp_path) not in json.dumps(node)


def shared_class_change(tmp_path: Path, nodes: int = 30) -> tuple[Path, Path]:
    files = {f"nodes/web{i:02}.yml": "classes: [web]\n" for i in range(nodes)}
    files["nodes/db.yml"] = "classes: [base]\nparameters:\n  db:\n    port: ${site:port}\n"
    files["classes/base.yml"] = "parameters:\n  site:\n    port: 80\n"
    files["classes/web.yml"] = "classes: [base]\nparameters:\n  nginx:\n    workers: 8\n"
    old = write_inventory(tmp_path / "old", files)
    new = write_inventory(tmp_path / "new", {
        **files, "classes/web.yml": "classes: [base]\nparameters:\n  nginx:\n    workers: 16\n",
        "nodes/db.yml": "classes: [base]\nparameters:\n  db:\n    port: ${site:nope}\n"})
    return old, new


def test_grouped_by_cause_in_every_review_format(tmp_path: Path) -> None:
    old, new = shared_class_change(tmp_path)
    run = lambda *extra: reclass_ng("diff", "--from-dir", str(old), "--to-dir", str(new),  # noqa: E731
                                    *extra, cwd=tmp_path)
    text = run()
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines[2] == "changed files: classes/web.yml (modified), nodes/db.yml (modified)"
    assert lines[3].startswith("now fail to render: Cannot resolve ${site:nope}")
    assert lines[3].endswith(": 1 node") and lines[4] == "    db"
    start = lines.index("class web, classes/web.yml (modified): 30 nodes")
    assert lines[start + 1] == "    parameters:nginx:workers: 8 -> 16   [line 4]"
    assert lines[start + 2] == ("        30 nodes: web00, web01, web02, web03, web04, web05, "
                                "web06, web07, web08, web09 and 20 more")
    assert lines[-1] == "31 nodes changed, 30 keys changed (0 nodes added, 0 removed)"

    markdown = run("--format", "markdown").stdout
    assert markdown.startswith("### reclass-ng diff: 31 nodes changed, 30 keys changed")
    assert "#### class web, classes/web.yml (modified): 30 nodes" in markdown
    assert "| `parameters:nginx:workers` | `8 -> 16` | 30 | line 4 |" in markdown
    cut = run("--format", "markdown", "--max-bytes", "600")
    assert cut.returncode == 1 and len(cut.stdout.encode()) <= 600
    assert "more groups not shown: the output is limited to 600 bytes" in cut.stdout

    github = run("--format", "github").stdout.splitlines()
    assert github[0].startswith("::error title=reclass-ng diff::now fail to render")
    assert github[1] == (f"::notice file={os.path.relpath(new / 'classes/web.yml', tmp_path)},"
                         "line=4,title=reclass-ng diff::class web, classes/web.yml (modified): "
                         "30 nodes%0Aparameters:nginx:workers: 8 -> 16 (30 nodes)")

    import xml.etree.ElementTree as ElementTree
    suite = ElementTree.fromstring(run("--format", "junit").stdout).find("testsuite")
    assert suite is not None and suite.get("tests") == "31" and suite.get("failures") == "31"
    web = suite.find("testcase[@name='web07']/failure")
    assert web is not None and web.text == (
        "parameters:nginx:workers: 8 -> 16   [class web, classes/web.yml (modified)]")

    document = json.loads(run("-o", "json").stdout)
    assert document["changed_files"] == {"classes/web.yml": "modified",
                                         "nodes/db.yml": "modified"}
    [write] = [g for g in document["groups"] if g["kind"] == "write"]
    assert write["file"] == "classes/web.yml" and len(write["nodes"]) == 30
    assert write["changes"][0]["old"] == 8 and write["changes"][0]["new"] == 16


def test_changes_of_every_shape_key_by_key(tmp_path: Path) -> None:
    """Only the parts of a node that differ are flattened: every kind of change is still
    found, key by key, as the whole node's flattening found it (a type change included)."""
    before = ("parameters:\n  flag: 1\n  same: {a: 1, b: [1, 2]}\n  deep: {x: {y: 1, z: 2}}\n"
              "  gone: {k: v}\n  emptied: {k: v}\n  items: [1, 2]\n  ratio: 1\n")
    after = ("parameters:\n  flag: true\n  same: {a: 1, b: [1, 2]}\n  deep: {x: {y: 1, w: 3}}\n"
             "  emptied: {}\n  items: [1, 2, 3]\n  ratio: 1.0\n  new: {n: {m: 1}}\n")
    old = write_inventory(tmp_path / "a", {"nodes/n1.yml": before, "nodes/n2.yml": before})
    new = write_inventory(tmp_path / "b", {"nodes/n1.yml": after, "nodes/n2.yml": before})
    proc = reclass_ng("diff", "--from-dir", str(old), "--to-dir", str(new), "--by", "node",
                      "-o", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    [node] = json.loads(proc.stdout)["nodes"]
    assert node["node"] == "n1"
    found = {change["path"]: (change["change"], change["old"], change["new"])
             for change in node["changes"]}
    assert found == {
        "parameters:flag": ("changed", 1, True),
        "parameters:ratio": ("changed", 1, 1.0),
        "parameters:deep:x:z": ("removed", 2, None),
        "parameters:deep:x:w": ("added", None, 3),
        "parameters:gone:k": ("removed", "v", None),
        "parameters:emptied:k": ("removed", "v", None),
        "parameters:emptied": ("added", None, {}),
        "parameters:items": ("changed", [1, 2], [1, 2, 3]),
        "parameters:new:n:m": ("added", None, 1),
    }
    assert [change["path"] for change in node["changes"]] == sorted(found)


# -- the fast path of equal trees (Speed.json_tree_compare) against its reference -----------

class _Text(str):
    pass


class _Number(int):
    pass


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-3, max_value=3),
    st.integers(min_value=2**63 - 2, max_value=2**64 + 2), st.sampled_from([0.0, -0.0, 1.0, 2.5]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["", "a", "1", "true"]),
    st.builds(_Text, st.sampled_from(["a", "1"])), st.builds(_Number, st.integers(0, 2)),
    st.dates())
_KEYS = st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.booleans())
_TREES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner), st.dictionaries(_KEYS, inner, max_size=3),
    st.builds(OwnedList, st.lists(inner, max_size=3)),
    st.builds(OwnedDict, st.dictionaries(_KEYS, inner, max_size=3))), max_leaves=12)


def _reshaped(tree: Any, choices: st.DataObject) -> Any:
    """`tree` copied with some leaves swapped for an equal value of another type, some
    mappings' keys reordered and some containers of the engine's classes made plain or the
    other way round: the near misses the fast path must tell apart as the walk does."""
    if isinstance(tree, dict):
        items = [(key, _reshaped(value, choices)) for key, value in tree.items()]
        if choices.draw(st.booleans()):
            items.reverse()
        return choices.draw(st.sampled_from([dict, OwnedDict]))(items)
    if isinstance(tree, list):
        return choices.draw(st.sampled_from([list, OwnedList]))(
            _reshaped(value, choices) for value in tree)
    if isinstance(tree, tuple):
        return tuple(_reshaped(value, choices) for value in tree)
    twins = [value for value in (tree, _Text(tree) if type(tree) is str else None,
                                 float(tree) if type(tree) in (int, bool) else None,
                                 int(tree) if type(tree) in (bool, float) and tree == tree
                                 and abs(tree) < 2**70 else None,
                                 -tree if type(tree) is float and tree == 0 else None)
             if value is not None or tree is None]
    return choices.draw(st.sampled_from(twins))


@given(_TREES, st.data())
def test_equal_trees_are_found_by_json_as_by_the_walk(tree: Any, choices: st.DataObject) -> None:
    other, unrelated = _reshaped(tree, choices), choices.draw(_TREES)
    fast = tree_comparer(Speed())
    assert fast is not _same_tree  # orjson is a dependency: the fast path is what runs
    assert tree_comparer(Speed.reference()) is _same_tree
    for a, b in ((tree, other), (other, tree), (tree, tree), (tree, copy.deepcopy(tree)),
                 (tree, unrelated), ([tree], [unrelated])):
        # Trees holding a nan are not equal (==) unless they hold the same nan object: the
        # fast path then says "not the same" where the walk says the same, and compare()
        # goes down to their values, where the walk's answer is taken (the test below).
        assert fast(a, b) == _same_tree(a, b) or (not fast(a, b) and _has_nan(a)), (a, b)


NAN = float("nan")


@pytest.mark.parametrize(("a", "b", "same"), [
    ([None], [NAN], False), ([NAN], [NAN], True), ([NAN], [float("nan")], True),
    ({"a": 1}, {"a": True}, False), ([1], [1.0], False), ({"a": [0.0]}, {"a": [-0.0]}, True),
    ({"a": _Text("x")}, {"a": "x"}, True), ([_Number(1)], [1], True), ([_Number(1)], [True], False),
    ([_Text("1")], [1], False),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True), ({1: "x"}, {True: "x"}, True),
    ([2**64], [2**64], True), ([2**64], [float(2**64)], False), ((1,), [1], False),
    (OwnedDict(a=OwnedList([1])), {"a": [1]}, True), (OwnedList([True]), [1], False),
    ((True,), (1,), True),
    ([datetime.date(2020, 1, 1)], [datetime.datetime(2020, 1, 1)], False),
    ([datetime.date(2020, 1, 1)], [datetime.date(2020, 1, 1)], True)])
def test_near_misses_of_equal_trees(a: Any, b: Any, same: bool) -> None:
    """Equal by `==` or by orjson's text, and yet not the same (or the other way round)."""
    fast = tree_comparer(Speed())
    assert _same_tree(a, b) is same
    assert fast(a, b) is same or (not fast(a, b) and _has_nan(a))
    assert fast([a, a], [b, b]) is same or (not fast([a], [b]) and _has_nan(a))


def _has_nan(tree: Any) -> bool:
    if isinstance(tree, dict):
        return any(_has_nan(value) for value in tree.values())
    if isinstance(tree, (list, tuple)):
        return any(_has_nan(value) for value in tree)
    return type(tree) is float and tree != tree


def test_a_diff_finds_the_same_changes_at_both_speeds(tmp_path: Path) -> None:
    """Values whose type alone changes are changes at both speeds (1 to 1.0 to true); a
    `.nan` left as it was is none."""
    same = "  same: {deep: [1, 2], nan: .nan, nans: [.nan, 1]}\n  nan: .NaN\n"
    old = write_inventory(tmp_path / "old", {
        "nodes/n1.yml": "parameters:\n  a: 1\n  b: [1, x]\n  c: {d: 0.5}\n" + same,
        "nodes/n2.yml": "parameters:\n  a: 1\n" + same})
    new = write_inventory(tmp_path / "new", {
        "nodes/n1.yml": "parameters:\n  a: 1.0\n  b: [true, x]\n  c: {d: '0.5'}\n" + same,
        "nodes/n2.yml": "parameters:\n  a: 1\n" + same})
    old_side, new_side = render_side(str(old)), render_side(str(new))
    found = {name: compare(old_side, new_side, speed) for name, speed in SPEEDS.items()}
    assert found["fast"] == found["reference"]
    assert [(node.node, [key.path for key in node.keys]) for node in found["fast"].nodes] == [
        ("n1", ["parameters:a", "parameters:b", "parameters:c:d"])]
