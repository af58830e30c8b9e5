"""The fast block YAML writer (output/block_yaml.py) writes what PyYAML writes, byte for byte: on
generated data, on every scenario of the conformance corpus, through the `reclass` command."""

from __future__ import annotations

import datetime
import io
import re
import shlex
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng import output
from reclass_ng.output import dump, pyyaml_text, write
from reclass_ng.output.block_yaml import BlockYamlWriter, float_spelling
from reclass_ng.values import OwnedDict, OwnedList, UnresolvedDict, UnresolvedList

# Strings PyYAML writes in every style: plain, quoted because they read as another type or
# start with an indicator, escaped, spanning lines, long enough to be wrapped.
tricky_strings = st.sampled_from([
    "", " ", "a b", "yes", "No", "null", "~", "1.0", "010", "0x1f", "1_000", "1:20", "2020-01-02",
    "- a", "a: b", "#c", "a #c", "'", '"', "&x", "*x", "!t", "%", "@", "`", "{a}", "[a]", "?",
    "é", "\x7f", "\t", "a\nb", "a\n\nb\n", " lead", "trail ", "\u2028", "\U0001f600",
    "word " * 20, "x" * 90, "a " * 39 + "b", "${_param:x}", "1e-5", ".nan", "=", "<<",
])
strings = st.text(max_size=30) | tricky_strings | st.text(alphabet="ab :-", max_size=90)
scalars = (st.none() | st.booleans() | st.integers() | st.floats() | strings | st.dates()
           | st.datetimes(timezones=st.none() | st.just(datetime.timezone.utc)))
keys = strings | st.sampled_from(["k" * 130, "a\nb", 1, True, None])


def _containers(children):
    return (st.lists(children, max_size=4) | st.lists(children, max_size=4).map(OwnedList)
            | st.lists(children, max_size=3).map(UnresolvedList)
            | st.dictionaries(strings, children, max_size=4)
            | st.dictionaries(strings, children, max_size=4).map(OwnedDict)
            | st.dictionaries(strings, children, max_size=3).map(UnresolvedDict)
            | st.dictionaries(keys, children, max_size=2))


values = st.recursive(scalars, _containers, max_leaves=30)


@settings(max_examples=500)
@given(values)
def test_block_yaml_is_pyyaml(value):
    assert dump(value, "yaml") == pyyaml_text(value)


@settings(max_examples=200)
@given(st.dictionaries(strings, st.dictionaries(strings, values, max_size=3), max_size=5),
       st.dictionaries(strings, st.lists(strings, max_size=3), max_size=3))
def test_streamed_inventory_is_pyyaml(nodes, classes):
    document = {"__reclass__": {"timestamp": "now"}, "nodes": nodes, "classes": classes,
                "applications": {}}
    out = io.StringIO()
    write(document, out, "yaml", True)
    assert out.getvalue() == pyyaml_text(document)


def test_values_near_the_wrapping_column():
    # PyYAML breaks a scalar at a space past column 80: the writer must leave those to it.
    for depth in range(10):
        for length in range(60, 84):
            text = ("ab " * 30)[:length]
            value: object = {"key": text, "list": [text, {"k": text}],
                             "when": datetime.datetime(2020, 1, 2, 3, 4, 5)}
            for level in range(depth):
                value = {"d": value} if level % 2 else [value]
            assert dump(value, "yaml") == pyyaml_text(value)


def test_fast_path_is_taken_for_plain_trees(monkeypatch):
    # Without this the tests above would pass with PyYAML writing everything.
    calls = []
    real = yaml.dump
    monkeypatch.setattr(yaml, "dump", lambda *a, **k: calls.append(a) or real(*a, **k))
    document = {"nodes": {f"n{i}": {"parameters": {"a": [1, "x y", None, True, 2.5, {}]}}
                          for i in range(50)}}
    text = "".join(BlockYamlWriter().inventory_pieces(document))
    assert len(calls) <= 5  # keys and scalars asked in batches, not once per node
    assert text == pyyaml_text(document)


SCENARIO_TIMESTAMP = re.compile(r"timestamp: .*")


@pytest.mark.slow  # every corpus scenario written twice (about a minute)
def test_corpus_yaml_output_is_pyyaml(monkeypatch, tmp_path):
    """Every scenario that renders, printed with -o yaml, fast writer against PyYAML's."""
    from test_corpus import RUNNER, SCENARIOS, run_in_process

    if not SCENARIOS:
        pytest.skip("conformance corpus not found")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert RUNNER is not None
    compared = 0
    for scenario in SCENARIOS:
        if scenario.get("expect") != "ok":
            continue
        inventory = f"{scenario['_dir']}/inventory"
        cmd = RUNNER.build_command("reclass -b {inventory} {args} {mode} -o yaml", scenario,
                                   inventory)
        status, fast, _ = run_in_process(cmd, inventory, 60)
        with monkeypatch.context() as patched:
            patched.setattr(output, "write", _pyyaml_write)
            status_ref, reference, _ = run_in_process(cmd, inventory, 60)
        assert status == status_ref, shlex.join([cmd])
        assert SCENARIO_TIMESTAMP.sub("", fast) == SCENARIO_TIMESTAMP.sub("", reference), cmd
        compared += status == 0
    assert compared > 200


def _pyyaml_write(data, stream, fmt="yaml", pretty=True, **_):
    assert fmt == "yaml"
    stream.write(pyyaml_text(data, pretty))


def test_containers_shared_between_nodes():
    # Class files' containers reach many nodes as the same object; their text is remembered
    # per indentation, and one that only deeper down holds a wrapped scalar is PyYAML's.
    long_text = "word " * 14
    shared_map = {"b": "x y", "c": [1, {"d": "q", "e": 2.5}], "f": {}, "g": long_text.strip() + "s"}
    shared_list = ["a", {"k": shared_map}, ["n", []], None]
    nodes = {f"n{i}": {"p": shared_map, "l": shared_list, "deep": [[shared_map], shared_list],
                       "x": {"y": shared_list, "z": {"w": {"v": shared_map}}}}
             for i in range(5)}
    document = {"__reclass__": {"timestamp": "t"}, "nodes": nodes, "classes": {"c": ["n0"]}}
    out = io.StringIO()
    write(document, out, "yaml", True)
    assert out.getvalue() == pyyaml_text(document)
    assert dump(nodes, "yaml") == pyyaml_text(nodes)


# plain_as_is, the strings written without asking PyYAML, against PyYAML itself.
_NAME_LIKE = st.text(alphabet="aZy_N0189-./:#e ", min_size=1, max_size=12) | st.sampled_from(
    ["yes", "no", "on", "Off", "y", "n", "null", "true", "1.2.3", "10.0.0.1", "2.5", "1e3",
     "0x1f", "1_0", "012", "_", "-a", ".a", "/a", "a/b", "a-", "a.", "---", "...", "a" * 127,
     "a" * 128, "n1.example.org", "_param", "1:20", "2020-01-02"])


@settings(max_examples=500)
@given(_NAME_LIKE)
def test_strings_written_as_is_are_what_pyyaml_writes(text):
    from reclass_ng.output.block_yaml import plain_as_is

    if plain_as_is(text):
        assert pyyaml_text([text]) == f"- {text}\n\n"
        assert pyyaml_text({text: None}) == f"{text}: null\n\n"
        assert pyyaml_text({"k": {text: text}}) == f"k:\n  {text}: {text}\n\n"


_VALUE_LIKE = _NAME_LIKE | st.text(alphabet="aZy_N0189-./: #e${}@'", min_size=1,
                                   max_size=30) | st.sampled_from(
    ["Tue Nov 24 22:07:08 2026", "yaml_fs:///srv/nodes/n1.yml", "a: b", "a:", "a.${b:c}", "a{",
     "a}", "a${", "a ", "a  b", "a #b", "a:b", "1:20", "on x", "x" + " y" * 50, "/srv/a",
     "ops@a.local", "3.2", "yes", "null", "12", "/", "1.2.3", "a'b", "Tue Nov  4 22:07:08 2026",
     "x" + "  y" * 40, "a" * 75 + "  b"])


@settings(max_examples=500)
@given(_VALUE_LIKE, st.integers(min_value=0, max_value=40))
def test_values_spelt_without_pyyaml_are_what_pyyaml_writes(text, depth):
    # As a value and a sequence item at any indentation: the writer's own width check
    # leaves a long one with a space to PyYAML.
    from reclass_ng.output.block_yaml import value_spelling

    spelling = value_spelling(text)
    if spelling is not None:
        assert pyyaml_text([text]) == f"- {spelling}\n\n" or len(text) > 76
        data: object = {"k": text, "l": [text, "x"]}
        for level in range(depth // 4):
            data = {f"d{level}": data}
        assert dump(data, "yaml") == pyyaml_text(data)


def test_common_values_are_written_without_pyyaml():
    from reclass_ng.output.block_yaml import value_spelling

    assert [value_spelling(t) for t in ["Tue Nov 24 22:07:08 2026", "a:b", "c.${d}", "/srv/x",
                                        "ops@a.local", "3.2", "yes", "12", "Tue Nov  4",
                                        "1:20"]] == [
        "Tue Nov 24 22:07:08 2026", "a:b", "c.${d}", "/srv/x", "ops@a.local", "'3.2'", "'yes'",
        "'12'", "Tue Nov  4", "'1:20'"]  # 1:20: a sexagesimal int, decided without PyYAML
    assert all(value_spelling(t) is None for t in ["a: b", "a:", "a ", " a", "a #b",
                                                   "é", "", "@a", "-a", ".5", "a'b"])


@settings(max_examples=500)
@given(st.floats() | st.sampled_from([1e17, 1e16, -1e-7, 1e-05, 0.1, -0.0, 5e-324, 2.5e+300,
                                      1.7976931348623157e308, 123456789012345680.0]))
def test_floats_are_spelt_as_pyyaml_spells_them(number):
    # float_spelling stands for PyYAML's representer (output.block_yaml._plain_other).
    assert "k: " + float_spelling(number) + "\n\n" == pyyaml_text({"k": number})
    for document in ({"k": number}, [number], {"a": [{"b": number}]}):
        assert dump(document, "yaml") == pyyaml_text(document)


def test_names_paths_and_versions_are_written_as_is():
    from reclass_ng.output.block_yaml import plain_as_is

    assert all(plain_as_is(t) for t in ["web01", "n1.example.org", "a/b-c_d", "1.2.3", "_x"])
    assert not any(plain_as_is(t) for t in ["yes", "2.5", "12", "-a", "a b", "a:b", "é", ""])


def test_keys_met_midway_and_inline_scalars():
    # Keys are looked up as the mapping is written: new ones (plain, quoted, not simple,
    # not strings) may come after known ones; null, booleans and ints are written inline.
    writer_input = [
        {"a": 1, "b": True, "c": None, "d": False, "e": -7, "f": 10**30},
        {"a": 1, "yes": "no", "a b": ["x", 0, None, True, [], {}], "é": "ü\u2028"},
        {"a": {"b": [[1, [2, None]], [False]], "k" * 130: 1}},
        {"a": 2, "z": {"m": "line\nbreak"}, "zz": "word " * 20},
        {"a": 3, "q": {1: "int key", "s": "str key"}},
        {"a": 4, "": "empty key", "t": datetime.date(2020, 1, 2), "u": 0.1, "v": -0.0},
    ]
    for value in writer_input:
        assert dump(value, "yaml") == pyyaml_text(value)
    document = {"nodes": {f"n{i}": value for i, value in enumerate(writer_input)}}
    assert "".join(BlockYamlWriter().inventory_pieces(document)) == pyyaml_text(document)


def test_streaming_writer_lets_go_of_shared_texts(monkeypatch):
    # A streamed inventory's writer remembers the text of a container met twice and holds
    # the container (its id must stay its own): bounded by characters too, so that at tens
    # of thousands of nodes it holds the last few hundred nodes' containers, not 20,000.
    from reclass_ng.output import block_yaml

    monkeypatch.setattr(block_yaml, "SHARED_TEXT_CHARS", 4_000, raising=False)
    writer = BlockYamlWriter(streaming=True)
    containers = [{f"k{j}": f"value {j} of container {i}" for j in range(40)} for i in range(51)]
    for i, shared in enumerate(containers[:-1]):
        for twin in ("a", "b", "c"):  # the second meeting remembers it, the third reuses it
            name = f"n{i}{twin}"
            text = writer.node_text(name, {"p": shared})
            # (pyyaml_text ends a document with the blank line reclass prints after it)
            assert text + "\n" == pyyaml_text({"nodes": {name: {"p": shared}}})[len("nodes:\n"):]
    references = [sys.getrefcount(shared) for shared in containers]
    held = [i for i, count in enumerate(references) if count > references[-1]]  # last: unwritten
    assert 0 < len(held) <= 4, held


def test_entries_of_equal_keys_of_other_types_are_each_their_own():
    # The writer remembers a string entry's line by (indentation, key, value); True, 1 and
    # 1.0 are one dict key, "1" and "true" another, and each is written as itself.
    value = [{True: "x"}, {1: "x"}, {1.0: "x"}, {"1": "x"}, {"true": "x"}, {None: "x"},
             {"null": "x"}, {False: "x y"}, {0: "x y"}]
    document = {"nodes": {"n1": {"a": value}, "n2": {"a": list(reversed(value))}}}
    assert "".join(BlockYamlWriter().inventory_pieces(document)) == pyyaml_text(document)
    # Int values' lines are remembered too: each equal value of another type is its own.
    values = [1, True, 1.0, "1", 0, False, 0.0, -0.0, 10**20, 1e20]
    document = {"nodes": {f"n{i}": {"k": value, "m": {"k": value}}
                          for i, value in enumerate(values + values[::-1])}}
    assert "".join(BlockYamlWriter().inventory_pieces(document)) == pyyaml_text(document)



def test_key_lists_met_again_are_written_in_order(monkeypatch):
    # The writer remembers the sorted keys of each list of string keys it met, by that list
    # in the mapping's order (the memo emptied past ORDER_KEYS keys in a streamed
    # inventory): the same keys in another order, another mapping of equal keys of other
    # types (True, 1 and 1.0 are one dict key) and a memo emptied midway change nothing.
    from reclass_ng.output import block_yaml

    monkeypatch.setattr(block_yaml, "ORDER_KEYS", 7, raising=False)
    mappings = [{"b": 1, "a": "x", "c": None}, {"a": 2, "c": True, "b": "y"},
                {"b": 3, "a": "z", "c": []}, {1: "one", 2: "two"}, {True: "one", 2: "two"},
                {2: "two", 1.0: "one"}, {"2": "two", "1": "one"}, {"1": "one", "2": "two"},
                {"b": 4, "a": {"b": 5, "a": 6}, "c": {"c": 7}}]
    turns = mappings * 3
    document = {"nodes": {f"n{i}": {"p": mapping, "q": [mapping, turns[i - 1]]}
                          for i, mapping in enumerate(turns)}}
    expected = pyyaml_text(document)
    assert "".join(BlockYamlWriter().inventory_pieces(document)) == expected
    streamed = BlockYamlWriter(streaming=True)
    assert "".join(streamed.inventory_pieces(document)) == expected


def _python_calls_writing(writer: BlockYamlWriter, name: str, info: dict) -> int:
    """How many Python functions writing node `name` called (as the profiler sees them: a
    dict's `get` or a list's `append` is no Python call)."""
    calls = [0]

    def count(frame, event, arg):
        if event == "call":
            calls[0] += 1

    sys.setprofile(count)
    try:
        writer.node_text(name, info)
    finally:
        sys.setprofile(None)
    return calls[0]


def _assert_met_again_without_python_calls(node) -> None:
    """Writing node(400) after node(400) was written calls no more Python functions than
    writing node(10) does (the lines are remembered), and the text is PyYAML's."""
    writer = BlockYamlWriter(streaming=True)
    writer.node_text("n0", node(400))
    few = _python_calls_writing(writer, "n1", node(10))
    many = _python_calls_writing(writer, "n2", node(400))
    assert many - few < 10, (few, many)
    assert writer.node_text("n3", node(400)) + "\n" == \
        pyyaml_text({"nodes": {"n3": node(400)}})[len("nodes:\n"):]


def test_string_entries_met_again_call_no_python_function():
    # Most entries of a node's mappings are strings met in earlier nodes at the same
    # indentation, in copies that are not the same object: their remembered line is found
    # by two `get`s of string keys, without a call of the writer's (each one called
    # _string_entry, then the memo's `get` of a tuple key).
    def node(size):
        return {"p": OwnedDict({f"key{i}": f"value {i}" for i in range(size)}),
                "q": [OwnedDict({"name": f"item{i}", "state": "on"}) for i in range(40)]}

    _assert_met_again_without_python_calls(node)


def test_string_items_met_again_call_no_python_function():
    # A sequence's string items too (class and application lists, hosts, members): a
    # remembered item's line is found by one `get`, without a call of the writer's (each one
    # spelt through a call and formatted anew).
    def node(size):
        return {"l": OwnedList([f"item {i}" for i in range(size)]),
                "m": [OwnedList(["a", f"b{i}"]) for i in range(40)]}

    _assert_met_again_without_python_calls(node)
