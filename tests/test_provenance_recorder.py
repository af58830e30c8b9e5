"""The provenance recorder (reclass_ng/provenance_recorder.py): it keeps what ended values as
facts while the node renders, and works out whom each ended only for the paths asked about."""

from __future__ import annotations

from reclass_ng.provenance import NodeProvenance
from reclass_ng.provenance_recorder import SectionRecorder

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
    assert set(recorder.kills) == {(), ("a",), ("a", "x")}  # the asked path and above it only


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
