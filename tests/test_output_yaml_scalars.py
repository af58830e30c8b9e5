"""The block YAML writer writes every string itself, byte for byte as PyYAML (libyaml) does:
long prose folded past column 80, single- and double-quoted text with its folding and escapes,
multi-line text, non-ASCII text, keys that are not simple, YAML 1.1 look-alikes, at any depth.

Before, the writer gave PyYAML a whole node as soon as one of its strings was one of these;
these tests count PyYAML's `dump` calls, so they fail on that writer."""

from __future__ import annotations

import contextlib
import datetime
from unittest import mock

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.output import pyyaml_text
from reclass_ng.output.block_yaml import BlockYamlWriter

_LOOK_ALIKES = ["yes", "No", "on", "OFF", "y", "n", "~", "null", "Null", "true", "False", "1",
                "-1", "0o17", "012", "0x1F", "1_000", "1:20:30", "1.5", ".5", "1e3", "1.0e+3",
                ".inf", "-.Inf", ".NaN", "2020-01-02", "2020-01-02 03:04:05", "=", "<<", "",
                "---", "...", "-", "?", ":", "- a", "? a", ": a", "a:", "#x", "a #b", "a#b"]
_UNICODE = ["é", "ü", "日本語", "\U0001f600", "e\u0301", "\u200b", "\ufeff", "\xa0", "\x85",
            "\u2028", "\u2029", "\x00", "\x07", "\t", "\r", "\x1b", "\x7f", "\ud7ff", "\ue000",
            "\ufffe", "\U0010ffff"]
_PUNCTUATION = list(" :#'\"-?{}[],&*!|>%@`\\/=~.$")
_characters = st.sampled_from(_PUNCTUATION + [c for c in _UNICODE if len(c) == 1] + ["\n"]) | st.characters(
    codec="utf-8") | st.sampled_from(list("abcdefxyz0123456789"))
_words = st.text(alphabet=st.sampled_from(list("abcdefghij0123456789.-_/")), min_size=1,
                 max_size=12) | st.sampled_from(_LOOK_ALIKES[:-12]) | st.text(_characters,
                                                                               max_size=4)
_prose = st.lists(_words, min_size=1, max_size=40).flatmap(
    lambda words: st.lists(st.sampled_from([" ", " ", " ", "  ", "\n", "\n\n", " \n"]),
                           min_size=len(words), max_size=len(words)).map(
        lambda seps: "".join(w + s for w, s in zip(words, seps, strict=True))))
_edges = st.tuples(st.sampled_from(["", " ", "  ", "\n", "'", '"', "#", "- "]), _prose,
                   st.sampled_from(["", " ", "\n", "\n\n", ":", "'"])).map("".join)
strings = (st.sampled_from(_LOOK_ALIKES + _UNICODE) | _words | _prose | _edges
           | st.text(_characters, max_size=120)
           | st.integers().map(str) | st.floats().map(str))
keys = strings.filter(lambda text: not text.startswith("\ud800"))


def _containers(children):
    return st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4)


documents = st.recursive(strings, _containers, max_leaves=25)


@contextlib.contextmanager
def _pyyaml_dumps():
    """Count the documents PyYAML dumps (the writer's fallbacks: what it did not write)."""
    calls: list[object] = []
    real = yaml.dump
    with mock.patch.object(yaml, "dump", lambda *a, **k: calls.append(a[0]) or real(*a, **k)):
        yield calls


def _nested(value: object, depth: int) -> object:
    # Alternate mappings and sequences so that both kinds of indentation are met.
    for level in range(depth):
        value = {f"k{level}": value} if level % 3 else [value]
    return value


def _assert_written_without_pyyaml(data: object, depth: int) -> None:
    """`data` under depth // 2 mappings is written as PyYAML writes it, and without it."""
    for _ in range(depth // 2):
        data = {"d": data}
    reference = pyyaml_text(data)
    with _pyyaml_dumps() as calls:
        assert BlockYamlWriter().document(data) == reference
    assert calls == []


@settings(max_examples=1500)
@given(documents, st.integers(min_value=0, max_value=45))
def test_strings_anywhere_are_written_as_pyyaml_writes_them(document, depth):
    data = {"nodes": {"n1": {"parameters": _nested(document, depth)}}}
    reference = pyyaml_text(data)
    writer = BlockYamlWriter()
    with _pyyaml_dumps() as calls:
        text = "".join(writer.inventory_pieces(data))
    assert text == reference
    assert calls == []
    assert writer.fallbacks == writer.whole_fallbacks == 0


@settings(max_examples=500)
@given(strings, st.integers(min_value=0, max_value=60), st.integers(min_value=1, max_value=40))
def test_strings_near_the_folding_column(text, depth, key_width):
    # Every column from the left edge to past 80, as a value, an item, a key.
    _assert_written_without_pyyaml({"x" * key_width: text, "l": [text], text: 1}, depth)


def test_real_inventory_shapes_are_written_without_pyyaml():
    certificate = "-----BEGIN CERTIFICATE-----\n" + "\n".join(
        "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ" for _ in range(8)
    ) + "\n-----END CERTIFICATE-----\n"
    script = "#!/bin/bash\nset -e\n\nfor i in 1 2 3; do\n  echo \"step $i: done\"\ndone\n"
    prose = ("Salt master of the OpenStack control plane; keeps the reclass model in "
             "/srv/salt/reclass and the formulas in /usr/share/salt-formulas/env")
    node = {"parameters": {
        "_param": {"description": prose, "cert": certificate, "script": script,
                   "port": "8080", "version": "2.0", "enabled": "yes", "city": "Zürich",
                   "greeting": "Grüße aus Köln — 東京", "empty": "", "cmd": "a: b # c",
                   "k" * 130: "long key", "multi\nline key": ["x", prose]},
        "linux": {"system": {"motd": [prose, {"note": prose + " " + prose}]}},
        "when": datetime.date(2020, 1, 2), "ratio": 0.25}}
    data = {"nodes": {f"n{i}": node for i in range(3)}}
    writer = BlockYamlWriter()
    with _pyyaml_dumps() as calls:
        text = "".join(writer.inventory_pieces(data))
    assert text == pyyaml_text(data)
    assert calls == []
    assert writer.fallbacks == writer.whole_fallbacks == 0


def test_what_only_pyyaml_writes_falls_back_for_that_scalar_alone():
    # A !!binary value (bytes) is PyYAML's, at its place; the rest of the node is the writer's.
    data = {"nodes": {"n1": {"a": {"b": b"\x00binary", "c": "x y"}, "d": [b"raw", "z"],
                             "e": "word " * 30}}}
    writer = BlockYamlWriter()
    with _pyyaml_dumps() as calls:
        text = "".join(writer.inventory_pieces(data))
    assert text == pyyaml_text(data)
    assert writer.fallbacks == len(calls) == 2
    assert writer.whole_fallbacks == 0


# The writer writes a quoted or plain string by runs: one slice between two points where
# libyaml decides something (a space it may fold at, a line break, an escape, a doubled quote).
# What lands on such a point at the folding column: every one of them, at every column.
_AT_THE_FOLD = [" ", "  ", "   ", "\t", " \t ", "\t\t", "é ", "\U0001f600 ", "\u2028 ", "\\ ",
                '" ', "' ", "'' ", "\n", "\n\n", "\n\n\n", " \n", "\n ", " \n ", "\n\t", ": ",
                " #", "-" * 50 + " "]
_STYLE_PREFIXES = ["", "'", "é"]  # plain, single-quoted, double-quoted (unless the rest says)


def _near_the_fold() -> list[str]:
    texts = []
    for prefix in _STYLE_PREFIXES:
        for mark in _AT_THE_FOLD:
            for width in range(70, 84):
                texts.append(f"{prefix}{'x' * width}{mark}y z {'w' * 70} v")
                texts.append(f"{prefix}{'x' * width}{mark}y")  # ends at the fold
                texts.append(f"{prefix}{'ab ' * (width // 3)}{mark}{'cd ' * 30}e")
    return texts


def test_runs_of_quoted_and_plain_text_fold_where_libyaml_folds():
    texts = _near_the_fold() + [
        "a\n\nb\n", "a\n\n\n", "\n", "\n\na", "é\n\n", "'\n" + "x " * 60 + "\n\n",
        "x" * 100 + " y" + " " * 5 + "z" * 90 + " " * 3, " " * 90 + "x", "x" + " " * 90,
        "\t".join(["echo step"] * 20) + "\n", "é" * 30 + " " + "ü" * 30 + " " + "\x85" * 20,
        "\ud7ff " * 30, "\U0010ffff " * 20 + "\U0001f600\U0001f600 " * 10,
    ]
    for depth in (0, 41):  # 41: continuation lines start past column 80
        data: object = {"k": texts, "key" * 4: {f"v{at}": text for at, text in enumerate(texts)}}
        for level in range(depth):
            data = {"d": data} if level % 2 else [data]
        with _pyyaml_dumps() as calls:
            text = BlockYamlWriter().document(data)
        assert calls == []
        assert text == pyyaml_text(data), depth


_RUN_PIECES = st.sampled_from(["x", "word", "x" * 37, "x" * 85, " ", "  ", "   ", "\n", "\n\n",
                               "\t", "é", "\U0001f600", "\x85", "\u2028", "'", '"', "\\", ":",
                               "#", "-"])


@settings(max_examples=150)
@given(st.lists(_RUN_PIECES, max_size=60).map("".join), st.integers(min_value=0, max_value=50),
       st.integers(min_value=1, max_value=30))
def test_runs_of_any_pieces_fold_where_libyaml_folds(text, depth, key_width):
    _assert_written_without_pyyaml({"x" * key_width: text, "l": [text, [text]]}, depth)


@settings(max_examples=500)
@given(st.text(_characters, max_size=60) | st.text(max_size=30)
       | st.lists(st.sampled_from(_UNICODE + _PUNCTUATION + ["\n", "a b"]), max_size=40).map("".join))
def test_double_quoted_escapes_are_the_escape_tables(text):
    # yaml_scalars escapes by str.replace when few distinct characters need it (translate
    # looks every character up): each character escaped as the table says, whatever else
    # the text holds (backslashes and quotes among the escapes' own characters).
    from reclass_ng.output import yaml_scalars

    assert yaml_scalars._escaped(text) == text.translate(yaml_scalars._ESCAPES)
