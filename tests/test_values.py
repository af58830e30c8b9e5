"""The tree types and helpers of reclass_ng.values: the one plain-data conversion and the files
a merge error lists."""

from __future__ import annotations

import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.syntax.ast import Ref, Template, Text
from reclass_ng.values import (
    NEEDS_RESOLVING,
    Interpolation,
    Layer,
    OwnedDict,
    OwnedList,
    Source,
    Stack,
    UnresolvedDict,
    UnresolvedList,
    frozen_copy,
    layer_files,
    owned_copy,
    to_plain,
)


def test_plain_data_is_built_from_the_built_in_types_only() -> None:
    tree = OwnedDict({"a": OwnedList([1, (2, 3)]), "b": {"c": OwnedDict({"d": None})}})
    plain = to_plain(tree)
    assert plain == {"a": [1, [2, 3]], "b": {"c": {"d": None}}}
    assert type(plain) is dict and type(plain["a"]) is list and type(plain["a"][1]) is list
    assert type(plain["b"]["c"]) is dict
    plain["a"].append(4)
    assert tree["a"] == [1, (2, 3)]  # a copy


def test_dates_as_text_and_json_compatible_data() -> None:
    day = datetime.date(2024, 5, 1)
    assert to_plain({"d": day}) == {"d": day}
    assert to_plain({"d": [day]}, dates_as_text=True) == {"d": ["2024-05-01"]}
    # Data read from outside (Puppet facts): keys, dates and bytes become text as well.
    assert to_plain({1: day, "b": b"\xffok", "t": (True, 2.5)}, json_compatible=True) == \
        {"1": "2024-05-01", "b": "\ufffdok", "t": [True, 2.5]}


def test_a_merge_error_lists_each_file_once_in_merge_order() -> None:
    a = Source("yaml_fs:///i/classes/a.yml", "a", "class", "/i/classes/a.yml")
    n = Source("yaml_fs:///i/nodes/n.yml", "n", "node", "/i/nodes/n.yml")
    layers = [Layer(1, a), Layer(2, None), Layer(3, n), Layer(4, a)]
    assert layer_files(layers) == [a, n]
    assert layer_files([]) == []


# -- frozen_copy against a plain recursive copy ----------------------------------------------

def _frozen_reference(value: Any) -> Any:
    """The slow reference of values.frozen_copy: one value at a time, as it was written first."""
    kind = type(value)
    if kind is OwnedDict or kind is OwnedList:
        items = value.items() if kind is OwnedDict else enumerate(value)
        out: dict[Any, Any] = {}
        dirty = []
        for key, item in items:
            item = _frozen_reference(item)
            if type(item) in NEEDS_RESOLVING:
                dirty.append(key)
            out[key] = item
        if kind is OwnedList:
            listed = list(out.values())
            return UnresolvedList(listed, tuple(dirty), True) if dirty else listed
        return UnresolvedDict(out, tuple(dirty), True) if dirty else out
    if kind is Stack and not value.shared:
        return Stack([Layer(_frozen_reference(layer.value), layer.source, layer.override,
                            layer.constant) for layer in value.layers], shared=True)
    return value


def _shape(value: Any) -> Any:
    """Types, dirty marks and values, to compare two frozen trees exactly."""
    kind = type(value)
    if kind in (dict, UnresolvedDict, OwnedDict):
        return (kind.__name__, getattr(value, "dirty", None), getattr(value, "merged", None),
                [(key, _shape(item)) for key, item in value.items()])
    if kind in (list, UnresolvedList, OwnedList):
        return (kind.__name__, getattr(value, "dirty", None), getattr(value, "merged", None),
                [_shape(item) for item in value])
    if kind is Stack:
        return ("Stack", value.shared, [(_shape(layer.value), layer.source, layer.override,
                                         layer.constant) for layer in value.layers])
    return (kind.__name__, value)


_SRC = Source("yaml_fs:///i/classes/a.yml", "a", "class", "/i/classes/a.yml")
_INTERP = Interpolation(Template((Ref((Text("r"),)),)), _SRC, "${r}")
_LEAVES = st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["x", "y"]),
                    st.just(_INTERP), st.just(UnresolvedDict({"u": _INTERP})),
                    st.just({"plain": 1}), st.just([1, 2]))


def _containers(inner: Any) -> Any:
    keys = st.sampled_from(["a", "b", "c", "d"])
    layers = st.lists(st.tuples(inner, st.booleans(), st.booleans()), min_size=1, max_size=3)
    return st.one_of(
        st.dictionaries(keys, inner, max_size=4).map(lambda d: OwnedDict.from_source(d, _SRC)),
        st.lists(inner, max_size=4).map(OwnedList),
        st.tuples(layers, st.booleans()).map(lambda t: Stack(
            [Layer(v, _SRC, override, constant) for v, override, constant in t[0]], t[1])))


@settings(max_examples=150, deadline=None)
@given(tree=st.recursive(_LEAVES, _containers, max_leaves=20))
def test_frozen_copy_is_the_plain_recursive_copy(tree: Any) -> None:
    assert _shape(frozen_copy(tree)) == _shape(_frozen_reference(tree))


def _owned_containers(value: Any) -> list[Any]:
    kind = type(value)
    if kind is OwnedDict or kind is OwnedList:
        items = value.values() if kind is OwnedDict else value
        return [value, *(c for item in items for c in _owned_containers(item))]
    if kind is Stack and not value.shared:
        return [value, *(c for layer in value.layers for c in _owned_containers(layer.value))]
    return []


@settings(max_examples=100, deadline=None)
@given(tree=st.recursive(_LEAVES, _containers, max_leaves=20))
def test_owned_copy_copies_every_owned_container_and_nothing_else(tree: Any) -> None:
    copy = owned_copy(tree)
    assert _shape(copy) == _shape(tree)
    if type(tree) is OwnedDict:
        assert (copy.src, copy.origin) == (tree.src, tree.origin)
    mine = {id(c) for c in _owned_containers(tree)}
    assert not mine & {id(c) for c in _owned_containers(copy)}


def test_copies_of_a_stack_hold_its_layers_whose_values_need_no_copy() -> None:
    # Layers are never changed once made: a copy of a merge's stack takes a list of its own
    # (a merge appends to it) but the layers of scalars and references themselves; a layer
    # holding an owned mapping is copied with it.
    source = Source("yaml_fs:///i/classes/a.yml", "a", "class", "/i/classes/a.yml")
    scalar, owned = Layer("x", source), Layer(OwnedDict({"k": 1}), source, override=True)
    stack = Stack([scalar, owned])
    for copy, shared in ((owned_copy(stack), False), (frozen_copy(stack), True)):
        assert copy is not stack and copy.layers is not stack.layers and copy.shared is shared
        assert copy.layers[0] is scalar
        assert copy.layers[1] is not owned and copy.layers[1].override
        assert copy.layers[1].value == {"k": 1} and copy.layers[1].value is not owned.value
