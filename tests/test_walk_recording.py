"""A shared class walk recorded once for provenance (observe/walk_recording.py): each node's
record from `Inventory.each_provenance` (the walks nodes share merged and recorded once, then
told again to each node) must be the record of its own render (`Inventory.provenance`), fact
for fact and answer for answer."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inventory_writer import write_inventory
from test_provenance_recorder import answers, recorded_facts
from test_shared_walks import KEYS, PARAMS, SHARED, TREES

import reclass_ng
from reclass_ng.classes import SharedClassWalks
from reclass_ng.observe.provenance_recorder import ProvenanceRecorder, SectionRecorder
from reclass_ng.observe.walk_recording import WalkRecording
from reclass_ng.settings import Speed


def assert_each_provenance_is_its_own(root: Path, **options: Any) -> None:
    """Every node's record from each_provenance against its own render's."""
    shared = reclass_ng.load(str(root), read_config=False, warn=lambda _: None, **options)
    alone = reclass_ng.load(str(root), read_config=False, warn=lambda _: None,
                            speed=Speed(shared_class_walks=False), **options)
    for name, record in shared.each_provenance():
        own = alone.provenance(name)
        assert not isinstance(record, Exception), (name, record)
        # first: what the record answers from other nodes' answers (observe.shared_answers)
        assert contested(record) == contested(own), name
        assert recorded_facts(record) == recorded_facts(own), name
        assert answers(record) == answers(own), name
        assert [(m.entity.name, m.listed_by.entity.name if m.listed_by else None, m.order)
                for m in record.entities] == \
            [(m.entity.name, m.listed_by.entity.name if m.listed_by else None, m.order)
             for m in own.entities], name
        assert list(record.reads.classes.items()) == list(own.reads.classes.items()), name


def contested(provenance: Any) -> list[tuple]:
    """contested_key_writes() of both sections, in order, each write with all it says."""
    def summary(write: Any) -> tuple:
        return (write.source.name, write.path, write.key, write.flag,
                orjson.dumps(write.written, default=repr), write.effect, write.final,
                write.via, write.via_keys, write.order, write.line)

    return [(section, path, [summary(w) + (summary(w.by) if w.by else None,) for w in writes])
            for section in ("parameters", "exports")
            for path, writes in provenance.contested_key_writes(section)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classes=st.lists(PARAMS, min_size=2, max_size=4), nodes=st.lists(
    st.tuples(st.lists(st.integers(0, 3), min_size=1, max_size=3), st.dictionaries(
        KEYS, TREES, max_size=2)), min_size=2, max_size=5))
def test_a_replayed_walk_records_what_each_node_s_own_walk_records(
        classes: list[dict], nodes: list[tuple]) -> None:
    # Half the nodes list the same classes as the one before them (tests/test_shared_walks.py's
    # inventories: `~`, `=` keys, references, lists, stacks below stacks).
    files: dict[str, Any] = {}
    for index, params in enumerate(classes):
        include = [f"c{index + 1}"] if index + 1 < len(classes) and index % 2 else []
        files[f"classes/c{index}.yml"] = {"classes": include, "parameters": params,
                                          "exports": {"e": index}}
    for index, (listed, params) in enumerate(nodes):
        if index % 2:
            listed = nodes[index - 1][0]
        names = [f"c{i % len(classes)}" for i in listed]
        files[f"nodes/n{index}.yml"] = {"classes": names, "parameters": {"s": params}}
    with tempfile.TemporaryDirectory() as tmp:
        root = write_inventory(Path(tmp), {path: yaml.safe_dump(doc)
                                           for path, doc in files.items()})
        assert_each_provenance_is_its_own(root)


def test_a_shared_walk_is_recorded_once_and_told_to_each_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walks, replays = [], []
    walk_alone, replay = SharedClassWalks._walk_alone, WalkRecording.replay
    monkeypatch.setattr(SharedClassWalks, "_walk_alone", lambda self, entity, **recorded: (
        walks.append(entity.name) or walk_alone(self, entity, **recorded)))
    monkeypatch.setattr(WalkRecording, "replay", lambda self, observer, walker: (
        replays.append(walker.name) or replay(self, observer, walker)))
    node = "classes: [role]\nparameters:\n  d: {k: 2}\n  l: [3]\n  s: {m: 3}\n  c: 6\n"
    root = write_inventory(tmp_path, {**SHARED, **{f"nodes/n{i}.yml": node for i in range(4)}})
    assert_each_provenance_is_its_own(root)
    assert walks == ["n0"]
    assert replays == ["n0", "n1", "n2", "n3"]
    # what the record answers, with the walk's stacks and constants replayed
    record = dict(reclass_ng.load(str(root), read_config=False).each_provenance())["n2"]
    assert [(w.source.name, w.effect) for w in record.writes(("c",))] == \
        [("role", "set"), ("n2", "ignored")]
    assert [(w.source.name, w.effect) for w in record.writes(("l",))] == \
        [("base", "set"), ("role", "appended"), ("n2", "appended")]


def test_the_real_node_entity_lists_the_walk_s_classes(tmp_path: Path) -> None:
    # The walk was merged for n0; n1's record says n1 listed its first class.
    root = write_inventory(tmp_path, {**SHARED, "nodes/n0.yml": "classes: [role]\n",
                                      "nodes/n1.yml": "classes: [role]\n"})
    records = dict(reclass_ng.load(str(root), read_config=False).each_provenance())
    listed = {m.entity.name: m.listed_by.entity.name for m in records["n1"].entities
              if m.listed_by is not None}
    assert listed == {"base": "mid", "mid": "role", "role": "n1"}


def section_recorders_made_as(monkeypatch: pytest.MonkeyPatch, kind: type) -> None:
    """Each node's recorded render keeps its sections' writes in recorders of `kind`, a
    subclass of SectionRecorder overriding what a test watches. (The compiled build's
    SectionRecorder is an extension type, whose methods cannot be replaced: a subclass's
    can, and the engine and the record call them as they call the recorder's own.)"""
    made = ProvenanceRecorder.__init__

    def init(self: ProvenanceRecorder, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        self.sections = {section: kind(recorder.counter, recorder.share)
                         for section, recorder in self.sections.items()}

    monkeypatch.setattr(ProvenanceRecorder, "__init__", init)


def test_the_contested_writes_nodes_share_are_worked_out_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Three nodes merge the same classes; below `app` they record the same facts, below
    # `host` each node writes its own value. base's `x` is a reference: whether its value
    # holds `x:k` (and so what became of it there) is each node's own.
    asked: list[tuple] = []

    class Asked(SectionRecorder):
        def kills_at(self, path: tuple) -> Any:
            asked.append(path)
            return super().kills_at(path)

    section_recorders_made_as(monkeypatch, Asked)
    files = {"classes/base.yml": "parameters:\n  app: {port: 1, opts: {a: 1}}\n  host: x\n"
                                 "  x: ${src}\n",
             "classes/role.yml": "classes: [base]\nparameters:\n  app: {port: 2, opts: {a: 2}}\n"
                                 "  x: {k: 2, j: 3}\n"}
    sources = ["{k: 1}", "5", "{j: 1}"]
    files.update({f"nodes/n{i}.yml": f"classes: [role]\nparameters:\n  host: h{i}\n"
                                     f"  src: {sources[i]}\n" for i in range(3)})
    root = write_inventory(tmp_path, files)
    inventory = reclass_ng.load(str(root), read_config=False)
    found = {}
    for name, record in inventory.each_provenance():
        asked.clear()
        found[name] = [(path, [(w.source.name, w.effect, w.by.source.name if w.by else None)
                               for w in writes]) for path, writes in
                       record.contested_key_writes()]
        below_app = [path for path in asked if path[:1] == ("app",)]
        # n0 works the answers out (asking its record), the others take them
        assert bool(below_app) == (name == "n0"), (name, asked)
    assert found["n2"] == [
        (("app", "port"), [("base", "overridden", "role"), ("role", "set", None)]),
        (("app", "opts", "a"), [("base", "overridden", "role"), ("role", "set", None)]),
        (("host",), [("base", "overridden", "n2"), ("n2", "set", None)])]
    assert_each_provenance_is_its_own(root)

