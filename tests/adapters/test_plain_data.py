"""Plain copies of rendered values: the JSON fast path (reclass_ng.adapters.plain_data) gives
exactly what the reference conversion (values.to_plain) gives, or declines."""

from __future__ import annotations

import datetime
import math
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from reclass_ng.adapters.plain_data import plain_json
from reclass_ng.values import OwnedDict, OwnedList, to_plain


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types throughout (1, 1.0 and True are not the same value here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            same(key_a, key_b) and same(a[key_a], b[key_b])
            for key_a, key_b in zip(a, b, strict=True))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5),
    st.dates(), st.datetimes(), st.binary(max_size=3))
keys = st.one_of(st.text(max_size=4), st.integers(-3, 3), st.booleans())
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner),
    st.dictionaries(keys, inner, max_size=3),
    st.dictionaries(st.text(max_size=4), inner, max_size=3).map(OwnedDict),
    st.lists(inner, max_size=3).map(OwnedList)), max_leaves=12)


@given(values)
def test_the_json_path_gives_the_reference_copy_or_declines(value: Any) -> None:
    data = plain_json(value)
    if data is not None:
        assert same(orjson.loads(data), to_plain(value)), value


def test_values_json_would_change_take_the_reference_path() -> None:
    for value in ({"when": datetime.date(2024, 1, 2)}, {"x": float("nan")}, {"x": math.inf},
                  {1: "one"}, {"big": 2 ** 70}, {"raw": b"\x00"}, {"s": {1, 2}},
                  {"n": None, "x": float("nan")}, {"at": datetime.datetime(2024, 1, 2, 3, 4)}):
        assert plain_json(value) is None, value
    nested = OwnedDict({"a": OwnedList([1, 2.5, "x", True, (3, 4)]), "b": {"c": "d"}})
    data = plain_json(nested)
    assert data is not None
    assert same(orjson.loads(data), {"a": [1, 2.5, "x", True, [3, 4]], "b": {"c": "d"}})


def test_a_null_takes_the_json_path_when_it_is_none() -> None:
    value = OwnedDict({"n": None, "a": OwnedList([None, 1, 1.5, True]), "nullable": "null"})
    data = plain_json(value)
    assert data is not None
    assert same(orjson.loads(data), to_plain(value))


def test_a_caller_sure_of_no_nan_skips_the_read_back() -> None:
    assert plain_json({"x": float("nan")}) is None
    assert plain_json({"x": float("nan")}, nan_possible=False) == b'{"x":null}'
