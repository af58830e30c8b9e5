"""Output: the fast indented JSON writer is json.dumps(indent=2), character for character."""

from __future__ import annotations

import datetime
import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.output import dump, pretty_json, write
from reclass_ng.values import MDict, MList, RDict, RList

scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
           | st.text() | st.dates())
keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)


def _containers(children):
    return (st.lists(children, max_size=4)
            | st.lists(children, max_size=4).map(MList)
            | st.lists(children, max_size=4).map(RList)
            | st.lists(children, max_size=4).map(tuple)
            | st.dictionaries(keys, children, max_size=4)
            | st.dictionaries(st.text(), children, max_size=4).map(MDict)
            | st.dictionaries(st.text(), children, max_size=4).map(RDict))


values = st.recursive(scalars, _containers, max_leaves=30)


def _reference(value):
    def default(v):
        if isinstance(v, datetime.date):
            return v.isoformat()
        raise TypeError
    return json.dumps(value, indent=2, default=default)


@settings(max_examples=400)
@given(values)
def test_pretty_json_is_json_dumps_indent_2(value):
    assert pretty_json(value) == _reference(value)


@settings(max_examples=100)
@given(st.dictionaries(st.text(), st.dictionaries(st.text(), values, max_size=3), max_size=4),
       st.dictionaries(st.text(), values, max_size=3))
def test_streamed_inventory_is_the_whole_document(nodes, classes):
    document = {"__reclass__": {"timestamp": "now"}, "nodes": nodes, "classes": classes,
                "applications": {}}
    out = io.StringIO()
    write(document, out, "json", True)
    assert out.getvalue() == dump(document, "json", True) == _reference(document) + "\n"


def test_unsupported_values_fail_like_json():
    for bad in ({"a": {1, 2}}, {("t",): 1}):
        try:
            pretty_json(bad)
        except TypeError:
            continue
        raise AssertionError(f"{bad!r} was encoded")
