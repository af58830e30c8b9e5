"""Values nested deep through references, through the command line: a node whose rendered
values nest deeper than resolve.MAX_RENDERED_DEPTH is a clear error (node, key path,
reference, file and line; exit 65), one within it is written as PyYAML and `json.dumps`
write it, and references rendered inside one another that walk down thousands of levels
stop at resolve.MAX_NESTING_IN_PROGRESS, never a RecursionError or a crash (doc/performance.rst,
"Rendered-depth limit"). `make test-compiled` runs this file against the compiled build too,
where such a walk recursed on the C stack until the process crashed (600 classes of 150
levels: a segmentation fault)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from inventory_writer import write_inventory

from reclass_ng.output import yaml_dumper
from reclass_ng.resolve import MAX_NESTING_IN_PROGRESS, MAX_RENDERED_DEPTH

TIMEOUT = 60  # seconds on the wall clock; each run takes well under one


def run_reclass(*args: str, speed: str = "") -> subprocess.CompletedProcess[str]:
    """`reclass ARGS` of the code under test (the installed one when the tests run from
    tests/ against a compiled install)."""
    env = dict(os.environ)
    if speed:
        env["RECLASS_NG_SPEED"] = speed
    return subprocess.run([sys.executable, "-m", "reclass_ng.cli.reclass", *args],
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)


def nested(levels: int, inner: str, kind: str) -> str:
    """`inner` inside `levels` flow lists, or mappings of the key `k`."""
    if kind == "list":
        return "[" * levels + inner + "]" * levels
    return "{k: " * levels + inner + "}" * levels


def deep_inventory(root: Path, levels: list[int], kind: str = "list") -> Path:
    """Classes c0, c1, ...: ci sets `p<i>` to levels[i] nested lists (or mappings) around
    `${p<i+1>}` (the last one around `end`); node n1 lists them all. The rendered p0 nests
    sum(levels) deep, at key path length 1 + sum(levels) for its innermost value."""
    files = {}
    for i, depth in enumerate(levels):
        inner = f'"${{p{i + 1}}}"' if i + 1 < len(levels) else "end"
        files[f"classes/c{i}.yml"] = f"parameters:\n  p{i}: {nested(depth, inner, kind)}\n"
    files["nodes/n1.yml"] = "classes:\n" + "".join(f"  - c{i}\n" for i in range(len(levels)))
    return write_inventory(root, files)


@pytest.fixture
def deep_recursion():
    """PyYAML's loader and dumper and json's indenting encoder recurse a few frames a level:
    the test's own reading and writing of the expected text needs more than the default."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(max(saved, 5000))
    yield
    sys.setrecursionlimit(saved)


# The innermost value of p0 sits exactly MAX_RENDERED_DEPTH levels deep: p0's key, then
# first + second lists or mappings.
WITHIN = [MAX_RENDERED_DEPTH // 2, MAX_RENDERED_DEPTH - 1 - MAX_RENDERED_DEPTH // 2]
PAST = [WITHIN[0], WITHIN[1] + 1]


@pytest.mark.parametrize("kind", ["list", "mapping"])
@pytest.mark.parametrize("mode", ["--nodeinfo", "--inventory"])
def test_a_value_at_the_limit_is_written_as_pyyaml_and_json_do_one_level_more_fails(
        tmp_path, kind, mode, deep_recursion):
    root = deep_inventory(tmp_path, WITHIN, kind)
    args = ["--nodeinfo", "n1"] if mode == "--nodeinfo" else ["--inventory"]
    written = run_reclass("-b", str(root), *args, "-o", "yaml")
    assert written.returncode == 0, written.stderr[-2000:]
    data = yaml.safe_load(written.stdout)
    info = data if mode == "--nodeinfo" else data["nodes"]["n1"]
    value, depth = info["parameters"]["p0"], 1
    while value != "end":
        value = value[0] if kind == "list" else value["k"]
        depth += 1
    assert depth == MAX_RENDERED_DEPTH  # the length of the innermost scalar's key path
    # `reclass` prints the document and a newline, as kapicorp-reclass does.
    assert written.stdout == yaml.dump(data, Dumper=yaml_dumper(),
                                       default_flow_style=False) + "\n"
    as_json = run_reclass("-b", str(root), *args, "-o", "json")
    assert as_json.returncode == 0, as_json.stderr[-2000:]
    again = json.loads(as_json.stdout)
    assert (again if mode == "--nodeinfo" else again["nodes"]["n1"])["parameters"] == \
        info["parameters"]
    # One level more is the error.
    deep_inventory(tmp_path, PAST, kind)
    result = run_reclass("-b", str(root), *args, "-o", "yaml")
    assert_depth_error(result, root, PAST[0], kind)
    assert as_json.stdout == json.dumps(json.loads(as_json.stdout), indent=2) + "\n"


def assert_depth_error(result: subprocess.CompletedProcess[str], root: Path, first: int,
                       kind: str) -> None:
    assert result.returncode == 65, result.stdout[-2000:] + result.stderr[-2000:]
    assert result.stdout == ""
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "-> n1", result.stderr[-2000:]
    step = "0" if kind == "list" else "k"
    assert lines[1] == (f"   A reference makes the value nest deeper than {MAX_RENDERED_DEPTH} "
                        "levels of mappings and lists: ${p1}, at p0" + f":{step}" * first
                        + f", in yaml_fs://{root}/classes/c0.yml"), result.stderr[-2000:]
    assert re.fullmatch(rf"      written at {re.escape(str(root))}/classes/c0\.yml:2:\d+ "
                        r"\(class c0\)", lines[2]), result.stderr[-2000:]


@pytest.mark.parametrize("kind", ["list", "mapping"])
@pytest.mark.parametrize("output", ["yaml", "json"])
@pytest.mark.parametrize("speed", ["", "reference"])
def test_a_value_one_level_past_the_limit_is_a_clear_error(tmp_path, kind, output, speed):
    # `speed`: the fast paths on (the default), or every value rendered the full way.
    root = deep_inventory(tmp_path, PAST, kind)
    result = run_reclass("-b", str(root), "--nodeinfo", "n1", "-o", output, speed=speed)
    assert_depth_error(result, root, PAST[0], kind)


def test_inventory_lists_the_node_past_the_limit_as_failing(tmp_path):
    root = deep_inventory(tmp_path / "inventory", PAST)
    (root / "nodes" / "n2.yml").write_text("parameters:\n  fine: [[x]]\n")
    result = run_reclass("-b", str(root), "--inventory", "-o", "json")
    assert_depth_error(result, root, PAST[0], "list")


def test_a_file_container_brought_past_the_limit_is_a_clear_error(tmp_path):
    # p1 is a file's list with nothing to render: the fast path that stores such a value
    # without the full render (FastPaths._counted_target) must leave it to the error.
    levels = MAX_RENDERED_DEPTH - 100
    reference = nested(100, '"${p1}"', "list")
    root = write_inventory(tmp_path, {
        "classes/c0.yml": f"parameters:\n  p0: {reference}\n",
        "classes/c1.yml": f"parameters:\n  p1: {nested(levels, 'end', 'list')}\n",
        "nodes/n1.yml": "classes: [c0, c1]\n"})
    for speed in ("", "reference"):
        result = run_reclass("-b", str(root), "--nodeinfo", "n1", "-o", "json", speed=speed)
        assert_depth_error(result, root, 100, "list")
    # One level less fits.
    (root / "classes" / "c1.yml").write_text(
        f"parameters:\n  p1: {nested(levels - 1, 'end', 'list')}\n")
    assert run_reclass("-b", str(root), "--nodeinfo", "n1", "-o", "json").returncode == 0


@pytest.mark.parametrize("classes", [60, 600])
@pytest.mark.parametrize("output", ["yaml", "json"])
def test_references_nested_thousands_of_levels_deep_stop_with_a_clear_error(tmp_path, classes,
                                                                          output):
    # 60 classes: 9,000 levels, an internal error (RecursionError) before the limit;
    # 600 classes: 90,000 levels, a segmentation fault of the compiled build.
    root = deep_inventory(tmp_path, [150] * classes)
    result = run_reclass("-b", str(root), "--nodeinfo", "n1", "-o", output)
    assert result.returncode == 65, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "-> n1", result.stderr[-2000:]
    # The reference that would take the walk past the limit: the 21st (150 levels each).
    crossing = MAX_NESTING_IN_PROGRESS // 150
    assert lines[1].startswith(
        f"   Values nest too deep to render (more than {MAX_NESTING_IN_PROGRESS:,} levels of "
        "mappings and lists inside the references being rendered): "
        f"${{p{crossing + 1}}}, at p{crossing}:0:0:"), result.stderr[-2000:]
    assert lines[1].endswith(f", in yaml_fs://{root}/classes/c{crossing}.yml"), lines[1][-300:]
    assert re.fullmatch(rf"      written at \S+/classes/c{crossing}\.yml:2:\d+ "
                        rf"\(class c{crossing}\)", lines[2]), result.stderr[-2000:]
    assert "reference chain: p0:0:" in result.stderr
    assert result.stdout == ""


def test_lint_reports_a_value_past_the_limit_as_a_finding(tmp_path):
    root = deep_inventory(tmp_path, PAST)
    result = subprocess.run([sys.executable, "-m", "reclass_ng.cli.main", "lint", "-b",
                             str(root)], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert f"nest deeper than {MAX_RENDERED_DEPTH} levels" in result.stdout, result.stdout[-2000:]
    assert "c0.yml" in result.stdout and "n1" in result.stdout, result.stdout[-2000:]
