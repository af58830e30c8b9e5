"""Error messages point at every place a user has to look: a YAML syntax error at the bracket or
quote that was opened as well as where parsing stopped, a merge or changed-constant error at
file:line of both sides."""

from __future__ import annotations

import re

import pytest


@pytest.mark.parametrize(("text", "stopped", "opened", "what"), [
    ("parameters:\n  a: [1, 2\n  b: 3\n  c: 4\n", "3:4", "line 2, column 6", "flow sequence"),
    ("parameters:\n  a: {x: 1\n  b: 3\n", "3:4", "line 2, column 6", "flow mapping"),
    ('parameters:\n  a: "abc\n  b: 3\n', "4:1", "line 2, column 6", "quoted scalar"),
])
def test_a_yaml_syntax_error_names_where_the_construct_opened(run_reclass, make_inventory,
                                                              text, stopped, opened, what):
    base = make_inventory({"nodes/n1.yml": text})
    done = run_reclass(["-b", str(base), "-n", "n1"])
    assert done.returncode == 65
    assert f"nodes/n1.yml:{stopped}: invalid YAML" in done.stderr
    assert f"{what} opened at {opened}" in done.stderr


def test_a_type_merge_error_names_file_and_line_of_both_sides(run_reclass, make_inventory):
    base = make_inventory({
        "classes/a.yml": "parameters:\n  web:\n    port: 80\n    hosts:\n      - a\n",
        "nodes/n1.yml": "classes: [a]\nparameters:\n  web:\n    hosts: b\n",
    })
    done = run_reclass(["-b", str(base), "-n", "n1"])
    assert done.returncode == 65
    assert "Cannot merge" in done.stderr and "at web:hosts" in done.stderr
    assert re.search(r"classes/a\.yml:5\b", done.stderr), done.stderr
    assert re.search(r"nodes/n1\.yml:4\b", done.stderr), done.stderr


def test_a_changed_constant_names_file_and_line_of_both_sides(run_reclass, make_inventory):
    base = make_inventory({
        "classes/a.yml": "parameters:\n  x: 1\n  =port: 22\n",
        "nodes/n1.yml": "classes: [a]\nparameters:\n  y: 2\n  port: 2222\n",
    })
    done = run_reclass(["-b", str(base), "-n", "n1"])
    assert done.returncode == 65
    assert "Attempt to change constant value" in done.stderr
    assert re.search(r"classes/a\.yml:3\b", done.stderr), done.stderr
    assert re.search(r"nodes/n1\.yml:4\b", done.stderr), done.stderr
