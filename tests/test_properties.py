"""Hypothesis properties of rendering: determinism, escapes, idempotent class merging, value
fidelity through references, list order, and queries against a plain reference evaluation.

Files are written with yaml.safe_dump, so every generated value reaches reclass-ng exactly as
PyYAML will read it back.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reclass_ng
from reclass_ng.output import dump

# Every test at both speeds: the fast paths and their references (tests/speeds.py).
pytestmark = pytest.mark.usefixtures("both_speeds")

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=6) \
    .filter(lambda k: k != "_reclass_")
PLAIN_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="$"),
                     max_size=12)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                    st.floats(allow_nan=False), PLAIN_TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=12)


def render_files(files: dict[str, Any], node: str = "n1", **options: Any) -> dict[str, Any]:
    """Write the files (YAML documents as Python data) to a fresh inventory and render a node."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "nodes").mkdir()
        (root / "classes").mkdir()
        for relpath, document in files.items():
            path = root / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(document), encoding="utf-8")
        info = reclass_ng.load(str(root), read_config=False, warn=lambda m: None,
                               **options).nodeinfo(node)
        info["__reclass__"].pop("timestamp")
        return json.loads(json.dumps(info).replace(str(root), "@ROOT@"))


def same_typed(a: Any, b: Any) -> bool:
    """Equal with identical types at every level (1 != 1.0 != True), NaN-free."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_typed(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_typed(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isinf(a):
        return a == b
    return a == b


PARAM_TREES = st.dictionaries(KEYS, VALUES, max_size=5)


@SETTINGS
@given(class_params=PARAM_TREES, node_params=st.dictionaries(KEYS, SCALARS, max_size=4))
def test_rendering_is_deterministic(class_params: dict, node_params: dict) -> None:
    files = {"classes/a.yml": {"parameters": class_params},
             "nodes/n1.yml": {"classes": ["a"], "parameters": {"copy": "${_reclass_:name}",
                                                              **node_params}}}
    try:
        first = render_files(files)
    except reclass_ng.ReclassError as err:  # e.g. a scalar over a dict: must fail the same way
        try:
            render_files(files)
        except reclass_ng.ReclassError as again:
            assert type(again) is type(err)
            return
        raise AssertionError("second rendering succeeded where the first failed") from None
    second = render_files(files)
    assert dump(first, "json") == dump(second, "json")
    assert dump(first, "yaml") == dump(second, "yaml")


REF_TEXT = st.text(alphabet="abcxyz019:_- .", min_size=1, max_size=10)


@SETTINGS
@given(inner=REF_TEXT, before=st.text(alphabet="ab -{]:", max_size=5),
       after=st.text(alphabet="ab -]:", max_size=5))
def test_escaped_reference_round_trips_to_literal_text(inner: str, before: str,
                                                       after: str) -> None:
    written = before + "\\${" + inner + "}" + after
    files = {"nodes/n1.yml": {"parameters": {"v": written, "r": "${v}"}}}
    params = render_files(files)["parameters"]
    assert params["v"] == before + "${" + inner + "}" + after
    assert params["r"] == params["v"]  # escaped text is not interpolated again


@SETTINGS
@given(class_params=PARAM_TREES, apps=st.lists(st.sampled_from("pqrs"), max_size=3))
def test_merging_a_class_twice_changes_nothing(class_params: dict, apps: list[str]) -> None:
    a = {"parameters": class_params, "applications": apps}
    once = {"classes/a.yml": a, "nodes/n1.yml": {"classes": ["a"]}}
    twice = {"classes/a.yml": a, "nodes/n1.yml": {"classes": ["a", "a"]}}
    via_includes = {"classes/a.yml": a, "classes/b.yml": {"classes": ["a"]},
                    "classes/c.yml": {"classes": ["a"]},
                    "nodes/n1.yml": {"classes": ["b", "a", "c"]}}
    expected = render_files(once)
    for variant in (twice, via_includes):
        got = render_files(variant)
        assert got["parameters"] == expected["parameters"]
        assert got["applications"] == expected["applications"]


@SETTINGS
@given(value=VALUES)
def test_values_survive_a_reference_unchanged(value: Any) -> None:
    files = {"nodes/n1.yml": {"parameters": {"a": value, "b": "${a}", "c": "${b}"}}}
    params = render_files(files)["parameters"]
    # JSON round-tripping in render_files turns tuples into lists only; compare typed.
    assert same_typed(params["a"], value)
    assert same_typed(params["b"], value)
    assert same_typed(params["c"], value)


@SETTINGS
@given(lists=st.lists(st.lists(st.one_of(st.integers(-5, 5), st.sampled_from("xyz")),
                               max_size=4), min_size=1, max_size=5))
def test_lists_concatenate_in_class_order(lists: list[list[Any]]) -> None:
    names = [f"c{i}" for i in range(len(lists))]
    files = {f"classes/{name}.yml": {"parameters": {"l": items}}
             for name, items in zip(names, lists, strict=True)}
    files["nodes/n1.yml"] = {"classes": names, "parameters": {"l": ["node"]}}
    expected = [item for items in lists for item in items] + ["node"]
    assert render_files(files)["parameters"]["l"] == expected


NODE_EXPORTS = st.lists(st.fixed_dictionaries({"v": st.integers(0, 3),
                                               "role": st.sampled_from(["web", "db"]),
                                               "env": st.sampled_from(["base", "other"])}),
                        min_size=1, max_size=5)


@SETTINGS
@given(nodes=NODE_EXPORTS, wanted=st.integers(0, 3), logic=st.sampled_from(["and", "or"]))
def test_queries_match_a_reference_evaluation(nodes: list[dict], wanted: int, logic: str) -> None:
    files: dict[str, Any] = {}
    for i, spec in enumerate(nodes):
        files[f"nodes/m{i}.yml"] = {"environment": spec["env"],
                                    "exports": {"v": spec["v"], "role": spec["role"]}}
    files["nodes/q.yml"] = {"parameters": {
        "list": f"$[ if exports:v == {wanted} {logic} exports:role == web ]",
        "values": f"$[ exports:role if exports:v != {wanted} ]",
        "all": "$[ +AllEnvs exports:v ]"}}
    params = render_files(files, "q")["parameters"]
    in_scope = {f"m{i}": spec for i, spec in enumerate(nodes) if spec["env"] == "base"}

    def passes(spec: dict) -> bool:
        left, right = spec["v"] == wanted, spec["role"] == "web"
        return (left and right) if logic == "and" else (left or right)

    assert params["list"] == sorted(n for n, spec in in_scope.items() if passes(spec))
    assert params["values"] == {n: spec["role"] for n, spec in sorted(in_scope.items())
                                if spec["v"] != wanted}
    assert params["all"] == {f"m{i}": spec["v"] for i, spec in enumerate(nodes)}
