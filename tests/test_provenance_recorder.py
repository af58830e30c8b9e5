"""The provenance recorder (observe/provenance_recorder.py): it keeps what ended values as
facts while the node renders, and works out whom each ended only for the paths asked about."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from inventory_writer import write_inventory
from speeds import at_speed
from test_subtrees import CLASS_PARAMS, KEYS, NODE_PARAMS, OPTIONS, TREES

import reclass_ng
from reclass_ng.observe import RenderObserver, WriteObserver
from reclass_ng.observe.provenance import NodeProvenance
from reclass_ng.observe.provenance_recorder import SectionRecorder
from reclass_ng.settings import Speed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from generate import generate  # noqa: E402

# `a` is replaced as a whole by `~a` in b, then c writes below it again; a's reference at
# `a:deep` replaced base's mapping there, but b's `~a` ended both first (a stack is folded
# before the values below it); `keep` is a constant that c's write cannot change.
LAYERS = {
    "classes/base.yml": "parameters:\n  a:\n    x: 1\n    deep:\n      y: 1\n  =keep: 1\n",
    "classes/a.yml": "classes: [base]\nparameters:\n  a:\n    deep: ${other}\n  other: 5\n",
    "classes/b.yml": "classes: [a]\nparameters:\n  ~a:\n    z: 2\n",
    "classes/c.yml": "classes: [b]\nparameters:\n  a:\n    x: 3\n  keep: 2\n",
    "nodes/n1.yml": "classes: [c]\n",
}


def labels(provenance: NodeProvenance, path: tuple) -> list[tuple]:
    return [(w.source.name, ":".join(w.key), w.effect, w.by.source.name if w.by else None,
             w.final) for w in provenance.writes(path)]


def parameters_recorder(provenance: NodeProvenance) -> SectionRecorder:
    return provenance._sections["parameters"]


def test_endings_are_kept_as_facts_and_worked_out_only_for_the_paths_asked(
        load_inventory) -> None:
    provenance = load_inventory(LAYERS, strict_constant_parameters=False).provenance("n1")
    recorder = parameters_recorder(provenance)
    assert provenance.error is None
    assert ("a",) in recorder.endings and ("keep",) in recorder.endings
    assert recorder.kills == {}  # nothing derived while rendering
    provenance.writes(("a", "x"))
    # The asked path and above it only, where something ended (nothing ended at a:x itself:
    # its earlier value went with the `~a` above it).
    assert ("a", "x") not in recorder.endings
    assert set(recorder.kills) == {(), ("a",)}


def test_an_ending_ends_what_was_alive_at_or_below_its_path(
        load_inventory) -> None:
    provenance = load_inventory(LAYERS, strict_constant_parameters=False).provenance("n1")
    assert labels(provenance, ("a", "x")) == [
        ("base", "a:x", "removed", "b", False),
        ("b", "a", "removes", None, False),
        ("c", "a:x", "set", None, True),
    ]
    assert labels(provenance, ("a", "deep", "y")) == [
        ("base", "a:deep:y", "removed", "b", False),
        ("b", "a", "removes", None, False),
    ]
    assert labels(provenance, ("a", "deep")) == [
        ("base", "a:deep", "removed", "b", False),
        ("a", "a:deep", "removed", "b", False),
        ("b", "a", "removes", None, False),
    ]
    assert labels(provenance, ("a",)) == [
        ("base", "a", "replaced", "b", False),
        ("a", "a", "replaced", "b", False),
        ("b", "a", "set", None, True),
        ("c", "a", "merged", None, True),
    ]
    assert labels(provenance, ("a", "z")) == [("b", "a:z", "set", None, True)]
    assert labels(provenance, ("keep",)) == [
        ("base", "keep", "set", None, True),
        ("c", "keep", "ignored", "base", False),
    ]


def test_asking_in_any_order_gives_the_same_answers(load_inventory) -> None:
    paths = [("a", "deep", "y"), ("a", "x"), ("a",), ("a", "deep"), ("keep",), ("other",)]
    first = load_inventory(LAYERS, strict_constant_parameters=False).provenance("n1")
    second = load_inventory(LAYERS, strict_constant_parameters=False).provenance("n1")
    forwards = {path: labels(first, path) for path in paths}
    backwards = {path: labels(second, path) for path in reversed(paths)}
    assert forwards == backwards


# -- observed renders take the resolver's fast paths: the facts recorded are the same ------

def recorded_facts(provenance: NodeProvenance) -> dict[str, Any]:
    """Everything the recorder kept, with objects made per render (entity writes, layers)
    named by their position, so two renders of one inventory compare with ==."""
    nodeinfo = dict(provenance.nodeinfo or {})
    nodeinfo.pop("__reclass__", None)  # its timestamp differs from one second to the next
    facts: dict[str, Any] = {"nodeinfo": orjson.dumps(nodeinfo, default=repr),
                             "error": str(provenance.error)}
    for section, recorder in provenance._sections.items():
        index = {id(write): number for number, write in enumerate(recorder.writes)}

        def piece(found: tuple | None, index: dict[int, int] = index) -> tuple | None:
            return None if found is None else (index[id(found[0])], found[1])

        facts[section] = {
            "writes": [(w.source.name, w.source.kind, orjson.dumps(w.value, default=repr),
                        w.order, w.notes or {}) for w in recorder.writes],
            "layers": [piece((recorder.layer_writes[id(layer)],
                              recorder.layer_paths[id(layer)]))
                       for layer in recorder.stacked_layers],
            # the rendered values of references written in the entities, in render order
            "resolved": [(written.text, repr(written.source),
                          orjson.dumps(recorder.resolved[id(written)], default=repr))
                         for written in recorder.rendered_references],
            "references": list(zip(recorder.reference_paths, recorder.reference_targets,
                                   strict=True)),
            "endings": {path: [(e.seq, e.kind, piece(e.by), e.override,
                                None if e.target is None else index[id(e.target)],
                                sorted(index[key] for key in e.keep))
                               for e in endings]
                        for path, endings in recorder.endings.items()},
        }
    return facts


def answers(provenance: NodeProvenance) -> dict[tuple, Any]:
    """What NodeProvenance answers for every path some entity writes, and the paths above."""
    found: dict[tuple, Any] = {}
    for section in ("parameters", "exports"):
        for written in provenance.written_paths(section=section):
            for length in range(len(written) + 1):
                path = written[:length]
                if (section, path) not in found:
                    found[section, path] = (
                        [(w.source.name, w.key, w.flag, w.effect, w.via, w.final, w.line,
                          w.by.source.name if w.by else None)
                         for w in provenance.writes(path, section)],
                        provenance.references(path, section))
    return found


def assert_fast_paths_record_the_same(inventory: Any, names: list[str]) -> None:
    """Each node's provenance with the fast paths against the full render's (the reference:
    Speed.rendered_references off), facts and answers."""
    reference = at_speed(inventory, inventory.speed.replace(rendered_references=False))
    for name in names:
        full = reference.provenance(name)
        inventory.provenance(name)  # first: the fast paths take paths looked up before only
        fast = inventory.provenance(name)
        assert recorded_facts(fast) == recorded_facts(full), name
        assert answers(fast) == answers(full), name


class CallLog(WriteObserver):
    """Logs what a render tells an observer of writes that keeps no records of its own."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.direct: list[tuple] = []

    def rendered(self, path: tuple, interpolation: Any, value: Any) -> None:
        self.calls.append(("rendered", path, interpolation.text, value))

    def reference(self, path: tuple, target: str) -> None:
        self.calls.append(("reference", path, target))

    def folded(self, path: tuple, layers: Any, index: int, outcome: str, value: Any) -> None:
        self.calls.append(("folded", path, index, outcome, value))

    def rendered_directly(self, path: tuple, value: Any, new: Any, targets: Any) -> None:
        self.direct.append(path)
        super().rendered_directly(path, value, new, targets)


class ParametersLog(RenderObserver):
    def __init__(self) -> None:
        self.log = CallLog()

    def writes(self, section: str) -> WriteObserver | None:
        return self.log if section == "parameters" else None


def test_an_observed_render_takes_the_fast_paths_and_is_told_the_same(load_inventory) -> None:
    # `b` is a reference to a value rendered already, `t` a string of such references, `s`
    # a stack of scalars and such references: the fast paths store them, and the observer
    # is told (by WriteObserver.rendered_directly) what the full render tells it.
    inventory = load_inventory({
        "classes/base.yml": "parameters:\n  a: 1\n  c: z\n  s: 0\n  t: x${a}${c}\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  b: ${a}\n  ~s: ${a}\n",
    })
    logs = {}
    for fast in (False, True):
        rendering = at_speed(inventory, Speed(rendered_references=fast))
        rendering.nodeinfo("n1")  # first: the fast paths take paths looked up before only
        observer = ParametersLog()
        node = rendering.renderer.merge("n1", observer=observer)
        rendering.renderer.interpolate(node, observer=observer)
        logs[fast] = observer.log
    assert sorted(logs[True].direct) == [("b",), ("s",), ("t",)]
    assert logs[False].direct == []
    assert logs[True].calls == logs[False].calls
    assert ("folded", ("s",), 1, "override", 1) in logs[True].calls
    provenance = inventory.provenance("n1")
    assert provenance.references(("t",)) == ["a", "c"]
    assert [w.effect for w in provenance.writes(("s",))] == ["replaced", "set"]
    assert_fast_paths_record_the_same(inventory, ["n1"])


def generated_files(classes: list[dict], nodes: list[tuple]) -> dict[str, Any]:
    """An inventory of the strategies of tests/test_subtrees.py (classes, nodes listing them,
    with exports)."""
    files: dict[str, Any] = {}
    for index, params in enumerate(classes):
        include = [f"c{index + 1}"] if index + 1 < len(classes) and index % 2 else []
        files[f"classes/c{index}.yml"] = {"classes": include, "parameters": params}
    for index, (listed, node_params, export, svc) in enumerate(nodes):
        params: dict[str, Any] = {"_param": node_params}
        if svc is not None:
            params["svc"] = svc
        files[f"nodes/n{index}.yml"] = {
            "classes": [f"c{i % len(classes)}" for i in listed], "parameters": params,
            "exports": {"e": export}}
    return files


@settings(max_examples=60)
@given(classes=st.lists(CLASS_PARAMS, min_size=1, max_size=3),
       nodes=st.lists(st.tuples(st.lists(st.integers(0, 2), min_size=1, max_size=2),
                                NODE_PARAMS, st.sampled_from(["u", "v"]),
                                st.one_of(st.none(), st.dictionaries(KEYS, TREES, max_size=1))),
                      min_size=1, max_size=3),
       options=OPTIONS)
def test_fast_paths_record_what_the_full_render_records(classes: list[dict], nodes: list[tuple],
                                                        options: dict[str, Any]) -> None:
    files = generated_files(classes, nodes)
    with tempfile.TemporaryDirectory() as tmp:
        root = write_inventory(Path(tmp), {path: yaml.safe_dump(doc, sort_keys=False)
                                           for path, doc in files.items()})
        inventory = reclass_ng.load(str(root), read_config=False, warn=lambda _: None,
                                    **options)
        assert_fast_paths_record_the_same(inventory, inventory.node_names)


@pytest.mark.parametrize("shape", ["mcp", "kapitan"])
def test_fast_paths_record_the_same_on_a_generated_inventory(tmp_path: Path, shape: str
                                                             ) -> None:
    generate(shape, 12, 1, tmp_path, queries=True)
    inventory = reclass_ng.load(str(tmp_path), warn=lambda _: None)  # its reclass-config.yml
    assert_fast_paths_record_the_same(inventory, inventory.node_names)
