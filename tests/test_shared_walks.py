"""Nodes with the same class list share one merge of their classes in an inventory render
(classes.SharedClassWalks): every node must come out as its own `--nodeinfo` render does,
and the cases where the walk depends on the node must be merged node by node."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inventory_writer import write_inventory

import reclass_ng
from reclass_ng.classes import SharedClassWalks
from reclass_ng.errors import ReclassError, TypeMergeError
from reclass_ng.settings import Speed

KEYS = st.sampled_from(["a", "b", "c", "d"])
LEAVES = st.one_of(st.none(), st.integers(0, 9), st.sampled_from(["x", "y", "${r}", "${s:a}",
                                                                   "p${r}q"]))
TREES = st.recursive(LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(KEYS, KEYS.map(lambda k: "~" + k), KEYS.map(lambda k: "=" + k)),
                    inner, max_size=3)), max_leaves=8)
PARAMS = st.fixed_dictionaries({"r": st.sampled_from(["r1", "r2"])},
                               optional={"s": TREES, "t": TREES, "u": TREES})


def _render(root: Path, share: bool) -> Any:
    """The inventory; without `share`, the slow reference: every node walks its own classes."""
    inventory = reclass_ng.load(str(root), read_config=False, warn=lambda message: None,
                                speed=Speed(shared_class_walks=share))
    try:
        nodes = inventory.inventory()["nodes"]
    except ReclassError as err:
        return type(err), str(err)
    for info in nodes.values():
        info["__reclass__"].pop("timestamp")
    return nodes


def _render_both(files: dict[str, Any]) -> None:
    """The inventory with shared walks is the inventory without them, errors included."""
    with tempfile.TemporaryDirectory() as tmp:
        root = write_inventory(Path(tmp), {path: yaml.safe_dump(doc)
                                           for path, doc in files.items()})
        assert _render(root, share=True) == _render(root, share=False)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classes=st.lists(PARAMS, min_size=2, max_size=4), nodes=st.lists(
    st.tuples(st.lists(st.integers(0, 3), min_size=1, max_size=3), st.dictionaries(
        KEYS, TREES, max_size=2)), min_size=2, max_size=5))
def test_sharing_changes_nothing(classes: list[dict], nodes: list[tuple]) -> None:
    files: dict[str, Any] = {}
    for index, params in enumerate(classes):
        include = [f"c{index + 1}"] if index + 1 < len(classes) and index % 2 else []
        files[f"classes/c{index}.yml"] = {"classes": include, "parameters": params,
                                          "applications": [f"app{index}", "~app0"]}
    for index, (listed, params) in enumerate(nodes):
        # Half the nodes list the same classes as the one before them.
        if index % 2 and index > 0:
            listed = nodes[index - 1][0]
        names = [f"c{i % len(classes)}" for i in listed]
        files[f"nodes/n{index}.yml"] = {"classes": names, "parameters": {"s": params}}
    _render_both(files)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classes=st.lists(PARAMS, min_size=2, max_size=4), nodes=st.lists(
    st.tuples(st.lists(st.integers(0, 3), min_size=1, max_size=2), st.dictionaries(
        KEYS, TREES, max_size=2)), min_size=2, max_size=5))
def test_sharing_the_start_of_class_lists_changes_nothing(classes: list[dict],
                                                          nodes: list[tuple]) -> None:
    # Every node's list starts with the list of the first node: the walk of that start is
    # shared, and each node walks the rest of its own list over it.
    files: dict[str, Any] = {}
    for index, params in enumerate(classes):
        include = [f"c{index + 1}"] if index + 1 < len(classes) and index % 2 else []
        files[f"classes/c{index}.yml"] = {"classes": include, "parameters": params,
                                          "applications": [f"app{index}", "~app1"]}
    first = [f"c{i % len(classes)}" for i in nodes[0][0]]
    for index, (listed, params) in enumerate(nodes):
        names = first + [f"c{i % len(classes)}" for i in listed] if index else first
        files[f"nodes/n{index}.yml"] = {"classes": names, "parameters": {"s": params}}
    _render_both(files)


SHARED = {
    "classes/base.yml": "parameters:\n  d:\n    k: 1\n  l: [1]\n  s: {k: 1}\n",
    "classes/mid.yml": "classes: [base]\nparameters:\n  s: {k2: 2}\n",
    # s: a dict (merged, so owned) under a reference: a layer stack the node adds to.
    "classes/role.yml": ("classes: [mid]\nparameters:\n  d: {j: '${r}'}\n  l: [2]\n"
                         "  s: '${t}'\n  t: {z: 1}\n  r: rv\n  ~o: {a: 1}\n  =c: 5\n"),
}


def _inventory(tmp_path: Path, files: dict[str, str], **options: Any) -> Any:
    return reclass_ng.load(str(write_inventory(tmp_path, files)), read_config=False,
                           warn=lambda message: None, **options)


def _nodes(count: int, text: str) -> dict[str, str]:
    return {f"nodes/n{i}.yml": text for i in range(count)}


def test_a_shared_list_is_walked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walks = []
    walk_alone = SharedClassWalks._walk_alone
    monkeypatch.setattr(SharedClassWalks, "_walk_alone",
                        lambda self, entity: walks.append(entity.name) or walk_alone(self, entity))
    node = "classes: [role]\nparameters:\n  d: {k: 2}\n  l: [3]\n  s: {m: 3}\n"
    inventory = _inventory(tmp_path, {**SHARED, **_nodes(4, node)})
    nodes = inventory.inventory()["nodes"]
    assert walks == ["n0"]
    for name in ("n0", "n1", "n3"):
        params = nodes[name]["parameters"]
        assert params["d"] == {"k": 2, "j": "rv"}
        assert params["s"] == {"k": 1, "k2": 2, "z": 1, "m": 3}
        assert params["l"] == [1, 2, 3] and params["c"] == 5 and params["o"] == {"a": 1}
    # Each node has its own containers (the resolver and the node's merge changed them).
    assert nodes["n0"]["parameters"]["d"] is not nodes["n1"]["parameters"]["d"]


def test_a_walk_s_merged_values_are_frozen_once_for_its_nodes(tmp_path: Path) -> None:
    # `s` and `d` are merged by the walk; the nodes set `s:m` and `d` nothing.
    node = "classes: [role]\nparameters:\n  s: {m: 3}\n"
    nodes = _inventory(tmp_path, {**SHARED, **_nodes(3, node)}).inventory()["nodes"]
    params = [nodes[f"n{i}"]["parameters"] for i in range(3)]
    # No reference inside: one plain mapping for every node (values.frozen_copy).
    assert params[0]["t"] is params[1]["t"] is params[2]["t"]
    # A reference inside (d:j): each node renders its own copy.
    assert params[0]["d"] is not params[1]["d"] and params[1]["d"] == {"k": 1, "j": "rv"}
    # What a node merges into is its own, with the walk's values under it.
    assert params[0]["s"] is not params[1]["s"]
    assert params[2]["s"] == {"k": 1, "k2": 2, "z": 1, "m": 3}


def test_merge_errors_over_a_shared_walk_name_the_files_of_each_key(tmp_path: Path) -> None:
    # `s:k` was set by base, `s:k2` by mid; the node's list over `s:k2` names mid.
    files = {**SHARED, "classes/role.yml": "classes: [mid]\nparameters:\n  s: {k3: 3}\n",
             **_nodes(3, "classes: [role]\nparameters:\n  s: {k2: [1]}\n")}
    root = write_inventory(tmp_path, files)
    shared = _render(root, share=True)
    assert shared == _render(root, share=False)
    assert shared[0] is TypeMergeError and "mid.yml" in shared[1]


def test_nodes_listing_more_classes_share_the_walk_of_the_ones_they_start_with(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walks = []
    walk_alone = SharedClassWalks._walk_alone
    monkeypatch.setattr(SharedClassWalks, "_walk_alone",
                        lambda self, entity: walks.append(entity.name) or walk_alone(self, entity))
    files = {**SHARED, "classes/extra.yml": "parameters:\n  s: {e: 4}\n  d: {k: 5}\n",
             "classes/other.yml": "classes: [extra]\nparameters:\n  s: {o: 6}\n",
             "nodes/a.yml": "classes: [role]\n", "nodes/b.yml": "classes: [role, extra]\n",
             "nodes/c.yml": "classes: [role, other]\nparameters:\n  s: {m: 3}\n"}
    nodes = _inventory(tmp_path, files).inventory()["nodes"]
    assert walks == ["a"]  # [role] once, for all three nodes
    assert nodes["a"]["parameters"]["s"] == {"k": 1, "k2": 2, "z": 1}
    assert nodes["b"]["parameters"]["s"] == {"k": 1, "k2": 2, "z": 1, "e": 4}
    assert nodes["c"]["parameters"]["s"] == {"k": 1, "k2": 2, "z": 1, "e": 4, "o": 6, "m": 3}
    assert nodes["c"]["parameters"]["d"] == {"k": 5, "j": "rv"}
    assert nodes["c"]["classes"] == ["base", "mid", "extra", "role", "other"]  # reclass's
    assert _render(tmp_path, share=True) == _render(tmp_path, share=False)
    # The class the walk's nodes merge over it set nothing in the walk's own mappings.
    assert nodes["a"]["parameters"]["d"] == {"k": 1, "j": "rv"}


def test_merge_errors_after_a_shared_start_name_the_files_of_each_key(tmp_path: Path) -> None:
    # `s:k2` was set by mid in the shared walk of [role]; `extra` merges a list over it.
    files = {**SHARED, "classes/role.yml": "classes: [mid]\nparameters:\n  s: {k3: 3}\n",
             "classes/extra.yml": "parameters:\n  s: {k2: [1]}\n",
             "nodes/a.yml": "classes: [role]\n", "nodes/b.yml": "classes: [role, extra]\n",
             "nodes/c.yml": "classes: [role, mid]\n"}
    root = write_inventory(tmp_path, files)
    shared = _render(root, share=True)
    assert shared == _render(root, share=False)
    assert shared[0] is TypeMergeError and "mid.yml" in shared[1]


@pytest.mark.parametrize("files, options", [
    # A class sets a key the automatic parameters set too: merged in order.
    ({"classes/role.yml": "parameters:\n  _reclass_: {extra: 1}\n"}, {}),
    # A class name with a reference depends on the node's parameters.
    ({"classes/role.yml": "classes: ['${_reclass_:name:short}x']\n",
      "classes/n0x.yml": "parameters: {k: 0}\n", "classes/n1x.yml": "parameters: {k: 1}\n",
      "classes/n2x.yml": "parameters: {k: 2}\n"}, {}),
    # Skipped classes warn for every node.
    ({"classes/role.yml": "classes: [missing]\nparameters: {k: 1}\n"},
     {"ignore_class_notfound": True}),
])
def test_node_dependent_walks_are_merged_per_node(tmp_path: Path, files: dict[str, str],
                                                  options: dict[str, Any]) -> None:
    inventory = _inventory(tmp_path, {**files, **_nodes(3, "classes: [role]\n")}, **options)
    nodes = inventory.inventory()["nodes"]
    for name in ("n0", "n1", "n2"):
        alone = _inventory(tmp_path, {}, **options).nodeinfo(name)
        for info in (nodes[name], alone):
            info["__reclass__"].pop("timestamp")
        assert nodes[name] == alone


def test_a_failing_shared_walk_fails_at_its_first_node(tmp_path: Path) -> None:
    files = {"classes/role.yml": "classes: [missing]\n", "nodes/a.yml": "classes: [ok]\n",
             "classes/ok.yml": "", **_nodes(3, "classes: [role]\n")}
    with pytest.raises(ReclassError) as whole:
        _inventory(tmp_path, files).inventory()
    assert whole.value.node == "n0" and "missing" in str(whole.value)
