"""Rendered file containers shared between recorded renders (observe/subtree_recording.py):
`Inventory.each_provenance` renders a file container that several nodes copy once, records
what its render told the recorder, and tells that again to each node reusing the copy. Each
node's record must be the record of its own render (`Inventory.provenance`, no memo), fact for
fact and answer for answer."""

from __future__ import annotations

import gc
import tempfile
import weakref
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inventory_writer import write_inventory
from test_walk_recording import assert_each_provenance_is_its_own, section_recorders_made_as

import reclass_ng
from reclass_ng.observe.provenance_recorder import SectionRecorder
from reclass_ng.settings import Speed

# `app` copies the container `svc` from one class file; its references read `host` and
# `port`, which the nodes set (the same or not), and `local` inside the container. It has
# seven keys to render: each_provenance shares no copy of a container with fewer.
APP = """\
parameters:
  svc:
    url: http://${host}:${port}/x
    name: ${host}
    port: ${port}
    local: ${svc:name}
    deep: {a: "${host}", b: "${port}-b", c: [1, "${host}"]}
    admin: admin@${host}
    listen: 0.0.0.0:${port}
  early:
    first: ${late}
    second: x${late}
  late: ${port}
"""


def _reused_paths(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """The paths at which a recorded render reused a copy, as each node's recorder is told."""
    reused: list[tuple] = []

    class Reusing(SectionRecorder):
        def rendered_again(self, path: tuple, told: Any) -> None:
            reused.append(path)
            super().rendered_again(path, told)

    section_recorders_made_as(monkeypatch, Reusing)
    return reused


def test_a_shared_copy_is_recorded_once_and_told_to_each_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = {f"nodes/n{i}.yml": f"classes: [app]\nparameters: {{host: h{i // 3}, port: 80}}\n"
             for i in range(6)}
    root = write_inventory(tmp_path, {"classes/app.yml": APP, **nodes})
    reused = _reused_paths(monkeypatch)
    assert_each_provenance_is_its_own(root)
    # The memo keeps a copy from the second meeting on (RenderedSubtrees.met_before): n1
    # and n3 (another host) render `svc` for it, n2, n4 and n5 reuse their copies. `early`
    # renders `late`, outside it, the first time it reads it: never kept, never reused.
    assert reused == [("svc",)] * 3
    # what the record answers inside a reused copy
    record = dict(reclass_ng.load(str(root), read_config=False).each_provenance())["n4"]
    assert record.nodeinfo is not None
    assert record.nodeinfo["parameters"]["svc"]["deep"] == {"a": "h1", "b": "80-b",
                                                            "c": [1, "h1"]}
    assert record.references(("svc", "url")) == ["host", "port"]
    assert [(w.source.name, w.key, w.via) for w in record.writes(("svc", "local"))] == \
        [("app", ("svc", "local"), None)]


def test_a_kept_copy_keeps_no_node_s_record_alive(tmp_path: Path) -> None:
    # The memo lives as long as the nodes' render; a node's record goes once its caller lets
    # go of it (lint's memory: a copy's recording held the record of the node that made it).
    nodes = {f"nodes/n{i}.yml": "classes: [app]\nparameters: {host: h, port: 80}\n"
             for i in range(4)}
    root = write_inventory(tmp_path, {"classes/app.yml": APP, **nodes})
    records = reclass_ng.load(str(root), read_config=False).each_provenance()
    gone = []
    for _, record in records:
        gone.append(weakref.ref(record._sections["parameters"]))
        del record
        gc.collect()
        assert [ref() for ref in gone[:-1]] == [None] * (len(gone) - 1)
    assert len(gone) == 4


def test_without_the_memo_nothing_is_reused(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = {f"nodes/n{i}.yml": "classes: [app]\nparameters: {host: h, port: 80}\n"
             for i in range(3)}
    root = write_inventory(tmp_path, {"classes/app.yml": APP, **nodes})
    reused = _reused_paths(monkeypatch)
    for subtrees in (False, True):
        inventory = reclass_ng.load(str(root), read_config=False,
                                    speed=Speed(rendered_subtrees=subtrees))
        assert all(record.error is None for _, record in inventory.each_provenance())
        assert reused == ([("svc",)] if subtrees else [])  # n2 reuses n1's copy


# `r` is rendered where the tree holds it: a container reading it first renders it (outside
# the container: not kept); a reference default is never kept.
# Mostly references to the node's values, which the copies share.
# Containers of seven keys or more (each_provenance shares no copy of a smaller one).
LEAVES = st.sampled_from(["x", 1, None, "${v}", "${w}", "p${v}q", "${v}${w}", "${w}", "${v}",
                          "${v}", "${w}", "a${w}", "${r}", "${missing::d}"])
KEYS = st.sampled_from(["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "~k9", "=k10"])
CONTAINERS = st.recursive(st.dictionaries(KEYS, LEAVES, min_size=7, max_size=9),
                          lambda inner: st.dictionaries(KEYS, st.one_of(LEAVES, inner,
                                                                        st.lists(LEAVES)),
                                                        min_size=7, max_size=9),
                          max_leaves=12)


# Three kinds of node: the classes each lists, and the values of `v` and `w` it sets
KINDS = [(["c0"], "1", "a"), (["c0", "c1"], "${w}", "b"), (["c2", "c1"], "${w}", "a")]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classes=st.lists(st.dictionaries(st.sampled_from(["c", "d", "e"]), CONTAINERS,
                                        min_size=1, max_size=2), min_size=3, max_size=3),
       kinds=st.lists(st.sampled_from([0, 0, 1, 2]), min_size=6, max_size=7))
def test_each_node_s_record_is_its_own(classes: list[dict], kinds: list[int]) -> None:
    # Nodes listing the same classes copy the same file containers; the values they read
    # (`v`, `w`) are the same on nodes of a kind (at least three nodes of one kind: the memo
    # keeps a copy from the second meeting on) and differ between kinds.
    files: dict[str, Any] = {}
    for index, params in enumerate(classes):
        files[f"classes/c{index}.yml"] = {"parameters": {**params, "r": "${w}"}}
    for index, kind in enumerate(kinds):
        names, v, w = KINDS[kind]
        files[f"nodes/n{index}.yml"] = {"classes": names, "parameters": {"v": v, "w": w}}
    with tempfile.TemporaryDirectory() as tmp:
        root = write_inventory(Path(tmp), {path: yaml.safe_dump(doc)
                                           for path, doc in files.items()})
        assert_each_provenance_is_its_own(root)
