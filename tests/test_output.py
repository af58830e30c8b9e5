"""Output: the fast indented JSON writer is json.dumps(indent=2), character for character."""

from __future__ import annotations

import datetime
import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.output import dump, fast_pretty_json, pretty_json, write
from reclass_ng.output.exact import _orjson_text
from reclass_ng.values import OwnedDict, OwnedList, UnresolvedDict, UnresolvedList

scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
           | st.text() | st.dates())
keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)


def _containers(children):
    return (st.lists(children, max_size=4)
            | st.lists(children, max_size=4).map(OwnedList)
            | st.lists(children, max_size=4).map(UnresolvedList)
            | st.lists(children, max_size=4).map(tuple)
            | st.dictionaries(keys, children, max_size=4)
            | st.dictionaries(st.text(), children, max_size=4).map(OwnedDict)
            | st.dictionaries(st.text(), children, max_size=4).map(UnresolvedDict))


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


# -- the orjson path: the same text, or the exact path where orjson writes something else -----

@settings(max_examples=600)
@given(values, st.sampled_from(["", "    "]))
def test_fast_pretty_json_is_json_dumps_indent_2(value, indent):
    assert fast_pretty_json(value, indent) == pretty_json(value, indent)
    if not indent:
        assert fast_pretty_json(value) == _reference(value)


@settings(max_examples=600)
@given(st.lists(st.floats() | st.integers(min_value=-2**70, max_value=2**70), max_size=6))
def test_fast_pretty_json_writes_numbers_as_json_does(numbers):
    document = {"n": numbers, "first": numbers[:1] and numbers[0]}
    assert fast_pretty_json(document) == _reference(document)


def test_fast_pretty_json_on_what_orjson_writes_differently():
    tricky = [
        {"small": 1e-05, "tiny": [-6.35e-05, 1e-07], "ok": 0.0001},
        {"nan": float("nan")}, {"inf": [float("inf"), None]},
        {"big": 2**64, "neg": -2**63 - 1},
        {"é": "ünï\u2028", "emoji": "\U0001f600", "del": "\x7f", "ctl": "\x00\x1f\b\t"},
        {1: "int key"}, {"lone": "\ud800"},
        {"date": datetime.date(2020, 1, 2),
         "time": datetime.datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc)},
        {"key with e-1": "v1e-5 and 0.00001", "n": 5},
    ]
    deep: dict = {}
    node = deep
    for _ in range(300):
        node["d"] = node = {}
    for value in [*tricky, deep]:
        assert fast_pretty_json(value, "    ") == pretty_json(value, "    ")
        assert fast_pretty_json(value) == _reference(value)


def test_the_orjson_path_is_taken_for_plain_trees():
    # Without this the tests above would pass with orjson never used.
    assert _orjson_text(OwnedDict({"a": [1, 2.5, "x"], "b": None})) is not None
    assert _orjson_text({"key with e-1": "v1e-5"}) is not None
    assert _orjson_text({"n": 1e-05}) is None


# The dumper's resolver answers common plain strings itself (no regular expressions); PyYAML's
# safe dumper is the reference for every answer, and for the documents written with it.
_SPELLINGS = ["yes", "No", "ON", "oFF", "true", "False", "null", "NULL", "~", "", "0", "012",
              "10", "1_0", "0x1f", "1:30", "1.5", "1e3", ".inf", "-1", "+1", "<<", "=", "node01",
              "2001-12-14", "y", "n", "\u0661", "a b", "x\n", "!x", "&a", "*a"]


@settings(max_examples=300)
@given(st.text(alphabet="yYesnNotTrufaFlOL~0123456789_.:+-xbe<=!&* \n\u0661", max_size=8)
       | st.sampled_from(_SPELLINGS))
def test_dumper_resolves_plain_scalars_as_pyyaml_does(value):
    import yaml

    from reclass_ng.output import yaml_dumper

    ours, reference = yaml_dumper()(io.StringIO()), yaml.SafeDumper(io.StringIO())
    for implicit in ((True, False), (False, True), (True, True), (False, False)):
        assert ours.resolve(yaml.ScalarNode, value, implicit) == \
            reference.resolve(yaml.ScalarNode, value, implicit), (value, implicit)


def test_yaml_of_plain_spellings_is_pyyamls():
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # what output.yaml_dumper() builds on
    data = {"words": _SPELLINGS, "nested": {word: [word] for word in _SPELLINGS}}
    assert dump(data, "yaml", pretty=False) == yaml.dump(
        data, Dumper=dumper, default_flow_style=True) + "\n"
    assert dump(data, "yaml") == yaml.dump(data, Dumper=dumper, default_flow_style=False) + "\n"
