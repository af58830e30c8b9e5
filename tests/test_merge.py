"""Merge rules (spec section 3): the fold table, allow_* settings, `~` overrides, `=` constants.

Every cell of the table in 3.3 is checked twice: with the new layer written directly (merged
while entities are merged) and with the new layer produced by a reference (folded during
interpolation), since the engine takes a different code path for each.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reclass_ng.errors import ChangedConstantError, ReclassError, TypeMergeError
from reclass_ng.merge import Merger
from reclass_ng.observe import WriteObserver
from reclass_ng.prepare import EntityPreparer
from reclass_ng.resolve import Resolver
from reclass_ng.settings import Speed
from reclass_ng.storage import load_settings
from reclass_ng.syntax.grammar import ValueParser
from reclass_ng.values import Layer, OwnedDict, Source, Stack

# Every test at both speeds: the fast paths and their references (tests/speeds.py).
pytestmark = pytest.mark.usefixtures("both_speeds")

ALLOW = ("allow_scalar_over_dict", "allow_scalar_over_list", "allow_list_over_scalar",
         "allow_dict_over_scalar", "allow_none_override")
ALL_ALLOWED = {name: True for name in ALLOW}

SCALAR, NULL, LIST, DICT = "s", "~", "[n1, n2]", "{y: 2}"
OLD = {"scalar": "old", "null": "~", "list": "[o]", "dict": "{x: 1}"}
NEW = {"scalar": SCALAR, "null": NULL, "list": LIST, "dict": DICT}
ERR = object()

# (accumulated, new) -> (result with defaults, the allow_* settings that make an error pass)
TABLE: dict[tuple[str, str], tuple[Any, dict[str, Any]]] = {
    ("null", "scalar"): ("s", {}),
    ("null", "null"): (None, {}),
    ("null", "list"): (["n1", "n2"], {}),
    ("null", "dict"): ({"y": 2}, {}),
    ("scalar", "scalar"): ("s", {}),
    ("scalar", "null"): (None, {}),
    ("scalar", "list"): (ERR, {"allow_list_over_scalar": ["old", "n1", "n2"]}),
    ("scalar", "dict"): (ERR, {"allow_dict_over_scalar": {"y": 2}}),
    ("list", "scalar"): (ERR, {"allow_scalar_over_list": "s"}),
    ("list", "null"): (ERR, {"allow_scalar_over_list": None, "allow_none_override": None}),
    ("list", "list"): (["o", "n1", "n2"], {}),
    ("list", "dict"): (ERR, {}),
    ("dict", "scalar"): (ERR, {"allow_scalar_over_dict": "s"}),
    ("dict", "null"): (ERR, {"allow_scalar_over_dict": None, "allow_none_override": None}),
    ("dict", "list"): (ERR, {}),
    ("dict", "dict"): ({"x": 1, "y": 2}, {}),
}
KIND_WORD = {"scalar": "scalar", "null": "scalar", "list": "list", "dict": "dictionary"}


def layered(old: str, new: str, via_reference: bool) -> dict[str, str]:
    """Class `a` sets k to `old`; the node sets k to `new` (or to `${src}` holding `new`)."""
    node = "classes: [a]\nparameters:\n"
    node += f"  src: {new}\n  k: ${{src}}\n" if via_reference else f"  k: {new}\n"
    return {"classes/a.yml": f"parameters:\n  k: {old}\n", "nodes/n1.yml": node}


CELLS = [(old, new, via) for (old, new) in TABLE for via in (False, True)]


@pytest.mark.parametrize("old, new, via_reference", CELLS)
def test_fold_table_defaults(params, old: str, new: str, via_reference: bool) -> None:
    expected, _ = TABLE[(old, new)]
    files = layered(OLD[old], NEW[new], via_reference)
    if expected is ERR:
        with pytest.raises(TypeMergeError) as info:
            params(files)
        new_kind = "reference" if via_reference else KIND_WORD[new]
        message = str(info.value)
        assert f"Cannot merge {new_kind} over {KIND_WORD[old]}, at k" in message
        assert "classes/a.yml" in message and "nodes/n1.yml" in message
        assert info.value.exit_code == 65
    else:
        assert params(files)["k"] == expected


ALLOWED_CELLS = [(old, new, setting, value, via)
                 for (old, new), (_, allowed) in TABLE.items()
                 for setting, value in allowed.items() for via in (False, True)]


@pytest.mark.parametrize("old, new, setting, expected, via_reference", ALLOWED_CELLS)
def test_fold_table_allow_settings(params, old, new, setting, expected, via_reference) -> None:
    assert params(layered(OLD[old], NEW[new], via_reference), **{setting: True})["k"] == expected


@pytest.mark.parametrize("old, new", [("list", "dict"), ("dict", "list")])
def test_list_dict_mismatch_is_an_error_even_with_everything_allowed(params, old, new) -> None:
    with pytest.raises(TypeMergeError):
        params(layered(OLD[old], NEW[new], False), **ALL_ALLOWED)


@pytest.mark.parametrize("setting", ALLOW)
def test_each_allow_setting_leaves_other_cells_failing(params, setting: str) -> None:
    # allow_X only opens its own cells: scalar over dict stays an error unless it is that one.
    files = layered(OLD["dict"], NEW["scalar"], False)
    if setting == "allow_scalar_over_dict":
        assert params(files, **{setting: True})["k"] == "s"
    else:
        with pytest.raises(TypeMergeError):
            params(files, **{setting: True})


def test_lists_concatenate_in_merge_order_keeping_duplicates(params) -> None:
    files = {"classes/a.yml": "parameters: {l: [a]}\n",
             "classes/b.yml": "classes: [a]\nparameters: {l: [b, a]}\n",
             "nodes/n1.yml": "classes: [b]\nparameters: {l: [n]}\n"}
    assert params(files)["l"] == ["a", "b", "a", "n"]


def test_deep_dict_merge_later_wins_per_key(params) -> None:
    files = {"classes/a.yml": "parameters:\n  d: {x: 1, sub: {p: 1, q: 1}, l: [1]}\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  d: {y: 2, sub: {q: 2}, l: [2]}\n"}
    assert params(files)["d"] == {"x": 1, "sub": {"p": 1, "q": 2}, "l": [1, 2], "y": 2}


def test_type_error_at_depth_names_the_full_path(params) -> None:
    files = {"classes/a.yml": "parameters:\n  a: {b: {c: [1]}}\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  a: {b: {c: x}}\n"}
    with pytest.raises(TypeMergeError, match="Cannot merge scalar over list, at a:b:c"):
        params(files)


# -- `~` overrides ---------------------------------------------------------------------------

@pytest.mark.parametrize("new, expected", [
    ("[n]", ["n"]), ("~", None), ("{}", {}), ("scalar", "scalar"), ("{z: 1}", {"z": 1}),
])
@pytest.mark.parametrize("old", ["[o]", "{x: 1}", "old"])
def test_override_replaces_any_type(params, old: str, new: str, expected: Any) -> None:
    files = {"classes/a.yml": f"parameters:\n  k: {old}\n",
             "nodes/n1.yml": f"classes: [a]\nparameters:\n  ~k: {new}\n"}
    assert params(files)["k"] == expected


def test_layers_after_override_merge_on_top(params) -> None:
    files = {"classes/a.yml": "parameters:\n  k1: {w: 0}\n",
             "classes/b.yml": "parameters:\n  ~k1: {x: 1}\n",
             "classes/c.yml": "parameters:\n  k1: {z: 3}\n",
             "nodes/n1.yml": "classes: [a, b, c]\nparameters:\n  k1: {y: 2}\n"}
    result = params(files)["k1"]
    assert result == {"x": 1, "z": 3, "y": 2}
    assert list(result) == ["x", "z", "y"]


def test_override_at_depth(params) -> None:
    files = {"classes/a.yml": "parameters:\n  ov: {x: {a: 1}, keep: 1}\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  ov:\n    ~x: {b: 2}\n"}
    assert params(files)["ov"] == {"x": {"b": 2}, "keep": 1}


def test_override_with_reference_replaces_instead_of_merging(params) -> None:
    files = {"classes/a.yml": "parameters:\n  k: {a: 1}\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  other: {b: 2}\n  ~k: ${other}\n"}
    assert params(files)["k"] == {"b": 2}


def test_reference_to_dict_merges_with_other_layers(params) -> None:
    files = {"classes/a.yml": "parameters:\n  k: {a: 1}\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  other: {b: 2}\n  k: ${other}\n"}
    assert params(files)["k"] == {"a": 1, "b": 2}


@pytest.mark.parametrize("key, name", [("~~a", "a"), ("~~~a", "~a"), ("~=c", "c"), ("=~d", "d")])
def test_at_most_two_prefix_characters_are_consumed(params, key: str, name: str) -> None:
    files = {"nodes/n1.yml": f"parameters:\n  '{key}': v\n"}
    assert params(files) == {name: "v"}


def test_prefixes_inside_list_items_are_literal(params) -> None:
    files = {"nodes/n1.yml": "parameters:\n  l:\n    - {~a: 1, =b: 2}\n"}
    assert params(files)["l"] == [{"~a": 1, "=b": 2}]


def test_custom_override_prefix(params) -> None:
    files = {"classes/a.yml": "parameters:\n  k: [1]\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  '!k': [2]\n"}
    assert params(files, dict_key_override_prefix="!")["k"] == [2]


# -- `=` constants ---------------------------------------------------------------------------

def test_changing_a_constant_is_an_error_naming_both_files(params) -> None:
    files = {"classes/a.yml": "parameters:\n  =c: const\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  c: changed\n"}
    with pytest.raises(ChangedConstantError) as info:
        params(files)
    message = str(info.value)
    assert "Attempt to change constant value, at c" in message
    assert message.index("classes/a.yml") < message.index("nodes/n1.yml")
    assert info.value.exit_code == 65


@pytest.mark.parametrize("later", ["~c: other", "c: [1]", "c: {x: 1}", "c: ~"])
def test_strict_constant_rejects_every_later_layer(params, later: str) -> None:
    files = {"classes/a.yml": "parameters:\n  =c: const\n",
             "nodes/n1.yml": f"classes: [a]\nparameters:\n  {later}\n"}
    with pytest.raises(ChangedConstantError):
        params(files)


@pytest.mark.parametrize("constant, later, expected", [
    ("const", "c: changed", "const"),
    ("{x: 1}", "c: {y: 2}", {"x": 1}),
    ("[1]", "~c: [2]", [1]),
])
def test_non_strict_constant_ignores_later_layers(params, constant, later, expected) -> None:
    files = {"classes/a.yml": f"parameters:\n  =c: {constant}\n",
             "nodes/n1.yml": f"classes: [a]\nparameters:\n  {later}\n"}
    assert params(files, strict_constant_parameters=False)["c"] == expected


def test_values_before_a_constant_are_overridden_normally(params) -> None:
    files = {"classes/a.yml": "parameters:\n  c5: a\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  =c5: b\n"}
    assert params(files)["c5"] == "b"


def test_constant_at_depth(params) -> None:
    files = {"classes/a.yml": "parameters:\n  outer:\n    =inner: 1\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  outer: {inner: 2}\n"}
    with pytest.raises(ChangedConstantError, match="at outer:inner"):
        params(files)


# -- null handling and key order -------------------------------------------------------------

def test_null_then_anything_never_errors(params) -> None:
    files = {"classes/a.yml": "parameters: {a: ~, b: ~, c: ~}\n",
             "nodes/n1.yml": "classes: [a]\nparameters: {a: [1], b: {x: 1}, c: 3}\n"}
    assert params(files) == {"a": [1], "b": {"x": 1}, "c": 3}


def test_reference_resolving_to_null_acts_as_null_layer(params) -> None:
    files = {"classes/a.yml": "parameters:\n  k: [1]\n",
             "nodes/n1.yml": "classes: [a]\nparameters:\n  nothing: ~\n  k: ${nothing}\n"}
    with pytest.raises(TypeMergeError):
        params(files)
    assert params(files, allow_none_override=True)["k"] is None


def test_key_order_is_first_seen_merge_order(render) -> None:
    files = {"classes/a.yml": "parameters: {l: 1, foo: 1}\n",
             "nodes/n1.yml": "classes: [a]\nparameters: {bar: 1, l: 2}\n"}
    assert list(render(files)["parameters"]) == ["_reclass_", "l", "foo", "bar"]


def test_merging_does_not_change_shared_class_data(load_inventory) -> None:
    inv = load_inventory({"classes/a.yml": "parameters: {d: {x: 1}, l: [1]}\n",
                          "nodes/n1.yml": "classes: [a]\nparameters: {d: {y: 1}, l: [2]}\n",
                          "nodes/n2.yml": "classes: [a]\n"})
    assert inv.nodeinfo("n1")["parameters"]["d"] == {"x": 1, "y": 1}
    assert inv.nodeinfo("n2")["parameters"]["d"] == {"x": 1}
    assert inv.nodeinfo("n2")["parameters"]["l"] == [1]


def test_plain_and_override_key_in_one_mapping_renders_the_override(params) -> None:
    # `b` and `~b` in one file mapping become one stack that must still be rendered in every
    # copy of that mapping (the mapping's list of keys needing work includes it).
    files = {"classes/c.yml": "parameters:\n  a:\n    x: 1\n    b: plain\n    ~b: ${a:x}\n",
             "nodes/n1.yml": "classes: [c]\n",
             "nodes/n2.yml": "classes: [c]\nparameters: {a: {x: 2}}\n"}
    assert params(files)["a"] == {"x": 1, "b": 1}
    assert params(files, node="n2")["a"] == {"x": 2, "b": 2}


# -- Merger.merge_mapping against its reference, merge_value for every key ---------------------

def _merged_shape(value: Any) -> Any:
    """Types, values and the source of every key, to compare two merged trees exactly."""
    if isinstance(value, dict):
        sources = {key: value.source_of(key) for key in value} if type(value) is OwnedDict \
            else None
        return (type(value).__name__, sources,
                [(key, _merged_shape(item)) for key, item in value.items()])
    if isinstance(value, list):
        return (type(value).__name__, [_merged_shape(item) for item in value])
    if type(value) is Stack:
        return ("Stack", [(_merged_shape(layer.value), layer.source, layer.override,
                           layer.constant) for layer in value.layers])
    return (type(value).__name__, getattr(value, "text", value))


_KEYS = st.sampled_from(["a", "b", "c"])
_FILE_TREES = st.recursive(
    st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["x", "${r}"])),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(
        st.one_of(_KEYS, _KEYS.map(lambda k: "~" + k), _KEYS.map(lambda k: "=" + k)), inner,
        max_size=3)), max_leaves=10)


@settings(max_examples=150, deadline=None)
@given(files=st.lists(st.dictionaries(_KEYS, _FILE_TREES, max_size=3), min_size=1, max_size=5))
def test_merge_mapping_is_merge_value_for_every_key(files: list[dict[str, Any]]) -> None:
    settings_ = load_settings(None, {}, read_config=False)
    preparer = EntityPreparer(settings_, ValueParser())
    try:
        entities = [preparer.mapping(params, "parameters", Source(f"f{i}", f"c{i}", "class"))
                    for i, params in enumerate(files)]
    except ChangedConstantError:
        assume(False)  # `=a` then `a` in one mapping: refused as the file is read (issue 36)
    trees = []
    for merger in (Merger(settings_, Speed()), Merger(settings_, Speed(inlined_merge=False))):
        tree = OwnedDict.from_source((), None)
        try:
            for index, params in enumerate(entities):
                merger.merge_mapping(tree, params, Source(f"f{index}", f"c{index}", "class"), ())
        except ReclassError as err:
            trees.append(str(err))
            continue
        trees.append(_merged_shape(tree))
    assert trees[0] == trees[1]


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_owned_dict_copies_keep_items_and_sources(how: str) -> None:
    # In the compiled build OwnedDict is an extension type (values.pxd), which pickle and
    # copy would rebuild empty without OwnedDict.__reduce__.
    import copy
    import pickle

    owned = OwnedDict.from_source({"a": 1, "b": {"c": 2}}, Source("f1", "c1", "class"))
    owned.set_origin("b", Source("f2", "c2", "class"))
    bare = OwnedDict({"x": 1})  # made by dict's constructor: src and origin unset
    for mapping in (owned, bare):
        if how == "pickle":
            again = pickle.loads(pickle.dumps(mapping))
        else:
            again = getattr(copy, how)(mapping)
        assert type(again) is OwnedDict and again == mapping
        assert again.src == mapping.src and again.origin == mapping.origin
        assert again.source_of("b") == mapping.source_of("b")


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_layer_stacks_copy_with_every_field(how: str) -> None:
    # In the compiled build Layer and Stack are extension types (values.pxd): pickle (`--jobs`)
    # and copy go through Cython's generated reducers, which must keep every field.
    import copy
    import pickle

    source = Source("f1", "c1", "class")
    stack = Stack([Layer({"a": 1}, source), Layer("x", None, override=True, constant=True)],
                  shared=True)
    again = pickle.loads(pickle.dumps(stack)) if how == "pickle" else getattr(copy, how)(stack)
    assert type(again) is Stack and again.shared is True
    assert [(type(layer), layer.value, layer.source, layer.override, layer.constant)
            for layer in again.layers] == \
        [(Layer, {"a": 1}, source, False, False), (Layer, "x", None, True, True)]


# -- the fast paths' copy of fold's rule for scalars -----------------------------------------

class _FoldLog(WriteObserver):
    def __init__(self) -> None:
        self.folds: list[tuple] = []

    def folded(self, path: tuple, layers: Any, index: int, outcome: str, value: Any) -> None:
        self.folds.append((path, index, outcome, value))


_SCALAR_LAYERS = st.lists(st.tuples(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False),
              st.sampled_from(["", "x", "1"])),
    st.booleans()), min_size=1, max_size=5)


@settings(max_examples=100, deadline=None)
@given(written=_SCALAR_LAYERS)
def test_a_stack_of_scalars_folds_as_the_fast_paths_repeat_it(written: list[tuple]) -> None:
    # resolve/fast_paths.py's _folded_scalars and WriteObserver.rendered_directly repeat Merger.fold's
    # rule for scalars (each layer replaces the one below: observe.seam.replacing_outcome).
    settings_ = load_settings(None, {}, read_config=False)
    merger = Merger(settings_)
    stack = Stack([Layer(value, Source(f"f{i}", f"c{i}", "class"), override=override)
                   for i, (value, override) in enumerate(written)])
    folded_log, direct_log = _FoldLog(), _FoldLog()
    folded = merger.fold(stack.layers, lambda layer: layer.value, ("k",), lambda m: None,
                         folded_log)
    resolver = Resolver(OwnedDict.from_source((), None), merger, speed=Speed())
    fast = resolver._folded_scalars(stack)
    direct_log.rendered_directly(("k",), stack, fast, {})
    assert (type(fast), repr(fast)) == (type(folded), repr(folded))
    assert direct_log.folds == folded_log.folds
