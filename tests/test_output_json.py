"""The bytes JSON writer of whole inventories is the exact writer (json.dumps(indent=2)), byte
for byte, with and without the loader's promise that no float needs json's own spelling."""

from __future__ import annotations

import datetime
import io
import json
import math
import struct
import subprocess
import sys

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.output import pretty_json, write
from reclass_ng.output.fast_json import NODES_PER_PIECE, inventory_json_pieces
from reclass_ng.storage.yaml_load import float_json_exact
from reclass_ng.values import OwnedDict, OwnedList, UnresolvedDict, UnresolvedList

exact_floats = st.floats(allow_nan=False, allow_infinity=False).filter(float_json_exact)
keys = st.text() | st.integers() | st.booleans() | st.none()


def _values(floats):
    scalars = (st.none() | st.booleans() | st.integers() | floats | st.text() | st.dates()
               | st.sampled_from(["é", "\x7f", "prairie-tundra", "1e-5", "null", "\ud800"]))

    def containers(children):
        return (st.lists(children, max_size=4) | st.lists(children, max_size=4).map(OwnedList)
                | st.lists(children, max_size=4).map(UnresolvedList)
                | st.lists(children, max_size=4).map(tuple)
                | st.dictionaries(keys, children, max_size=4)
                | st.dictionaries(st.text(), children, max_size=4).map(OwnedDict)
                | st.dictionaries(st.text(), children, max_size=4).map(UnresolvedDict))

    return st.recursive(scalars, containers, max_leaves=25)


def _inventories(values):
    return st.builds(
        lambda nodes, classes: {"__reclass__": {"timestamp": "now"}, "nodes": nodes,
                                "classes": classes, "applications": {}},
        st.dictionaries(st.text(), st.dictionaries(st.text(), values, max_size=3),
                        max_size=NODES_PER_PIECE + 3),
        st.dictionaries(st.text(), values, max_size=3))


def _joined(data, floats_exact):
    return b"".join(inventory_json_pieces(data, floats_exact)).decode("ascii")


@settings(max_examples=300)
@given(_inventories(_values(st.floats())))
def test_bytes_writer_is_the_exact_writer(document):
    assert _joined(document, False) == pretty_json(document) + "\n"


@settings(max_examples=300)
@given(_inventories(_values(exact_floats)))
def test_bytes_writer_trusting_the_loader_is_the_exact_writer(document):
    assert _joined(document, True) == pretty_json(document) + "\n"


def test_tricky_values_and_deep_nesting():
    deep: dict = {}
    node = deep
    for _ in range(300):
        node["d"] = node = {}
    tricky = {"small": 1e-05, "nan": float("nan"), "inf": [float("-inf")], "big": 2**64,
              "é": "ünï\u2028\U0001f600\x7f", "date": datetime.date(2020, 1, 2),
              "lone": "\ud800", "deep": deep}
    for key, value in tricky.items():
        document = {"__reclass__": {"timestamp": "t"}, "nodes": {"n1": {key: value}, "n2": {}},
                    "classes": {}, "applications": {}}
        assert _joined(document, False) == pretty_json(document) + "\n"


@settings(max_examples=2000)
@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_floats_the_loader_calls_exact_are_written_alike_by_orjson(bits):
    value = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if not math.isnan(value) and float_json_exact(value):
        assert orjson.dumps(value).decode() == float.__repr__(value)
    for near in (1e-4, math.nextafter(1e-4, 1.0), 1e16, 0.0, -0.0):
        assert float_json_exact(near)
        assert orjson.dumps(near).decode() == float.__repr__(near)


def test_write_to_a_text_stream_with_a_buffer_and_without():
    document = {"__reclass__": {"timestamp": "t"}, "nodes": {"n": {"a": ["é", 1.5]}},
                "classes": {}, "applications": {}}
    expected = json.dumps(document, indent=2) + "\n"
    plain = io.StringIO()
    write(document, plain, "json", True, floats_exact=True)
    wrapped = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    wrapped.write("before ")
    write(document, wrapped, "json", True, floats_exact=True)
    wrapped.flush()
    assert plain.getvalue() == expected
    assert wrapped.buffer.getvalue().decode() == "before " + expected


def test_reclass_writes_small_floats_from_yaml_as_json_does(tmp_path):
    # The command trusts the loader's record of the floats it built: a file with floats
    # orjson writes differently must switch the search back on.
    (tmp_path / "classes").mkdir()
    (tmp_path / "nodes").mkdir()
    (tmp_path / "classes" / "c.yml").write_text("parameters:\n  ok: 0.5\n  small: 1.0e-5\n")
    (tmp_path / "nodes" / "n1.yml").write_text("classes: [c]\nparameters:\n  x: .nan\n")
    (tmp_path / "nodes" / "n2.yml").write_text("parameters:\n  y: 2.5e-7\n")
    out = subprocess.run([sys.executable, "-m", "reclass_ng", "-b", str(tmp_path),
                          "--inventory", "-o", "json"], capture_output=True, text=True,
                         check=True).stdout
    assert '"small": 1e-05' in out and '"x": NaN' in out and '"y": 2.5e-07' in out
    assert out == json.dumps(json.loads(out), indent=2) + "\n"
