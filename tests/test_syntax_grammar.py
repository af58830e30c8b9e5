"""The hand-written value parser reads exactly what the pyparsing reference grammar reads.

tests/reference_value_grammar.py states the grammar with pyparsing; generated strings over the
sentinel characters must give equal templates, or both an error, with default and custom
sentinels and escape characters. The fast path for plain strings is held to the same.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_value_grammar import ReferenceGrammar, ReferenceSyntaxError

from reclass_ng.syntax.ast import Ref, Template, Text
from reclass_ng.syntax.grammar import SyntaxProblem, ValueParser

SENTINELS = [(("${", "}"), ("$[", "]"), "\\"), (("{{", "}}"), ("$<", ">"), "~"),
             (("${", "}"), ("$[", "]"), "!")]
PAIRS = [(ValueParser(*s), ReferenceGrammar(*s)) for s in SENTINELS]
pieces = st.sampled_from(["${", "}", "$", "{", "a", "b:c", " ", "\\", "\\\\", "$[", "]", "{{",
                          "}}", "~", "~~", "$<", ">", "x", "!", "\n"])


def _reference(grammar: ReferenceGrammar, text: str):
    try:
        return grammar.parse(text)
    except ReferenceSyntaxError:
        return "error"


def _ours(parser: ValueParser, text: str):
    try:
        return parser.parse(text)
    except SyntaxProblem:
        return "error"


@settings(max_examples=3000)
@given(st.lists(pieces, max_size=14).map("".join), st.sampled_from(PAIRS))
def test_parser_agrees_with_the_reference_grammar(text, pair):
    parser, grammar = pair
    assert _ours(parser, text) == _reference(grammar, text)


@settings(max_examples=1000)
@given(st.lists(pieces, max_size=14).map("".join), st.sampled_from(PAIRS))
def test_fast_path_agrees_or_declines(text, pair):
    parser, grammar = pair
    fast = parser.simple_template(text)
    if fast is not None:
        assert fast == _reference(grammar, text)


@pytest.mark.parametrize("text", [
    "${a}", "http://${host}:${port}/x", "a}b", "$${a}", "${_param:x_y}-suffix", "\\${baz}",
    "n${bar:${foo}}", "\\\\${a}", "${a\\}b}", "$[ exports:x ]", "$[ a \\] b ]", "${a:${b:${c}}}",
])
def test_known_strings(text):
    parser, grammar = PAIRS[0]
    assert parser.parse(text) == grammar.parse(text)


def test_nested_reference_and_escape():
    parser = ValueParser()
    assert parser.parse("n${bar:${foo}}") == Template(
        (Text("n"), Ref((Text("bar:"), Ref((Text("foo"),))))))
    assert parser.parse("\\${baz}") == Template((Text("${baz}"),))


def _ref(*items):
    return Ref(tuple(Text(i) if isinstance(i, str) else i for i in items))


# What kapicorp-reclass 2.0.0's parser made of each (its RefItem/ScaItem tree, issue 36):
# whitespace starting an item inside a reference is skipped when the full grammar reads the
# string (more than one sentinel, or a character its simple grammar refuses).
@pytest.mark.parametrize("text, items", [
    ("${ ka}", (_ref(" ka"),)),  # one reference alone: the simple grammar keeps it
    ("${ a} ${b}", (_ref("a"), Text(" "), _ref("b"))),
    ("${${b} a}", (_ref(_ref("b"), "a"),)),
    ("${ ${b}a}", (_ref(_ref("b"), "a"),)),
    ("${ k${c}}", (_ref("k", _ref("c")),)),
    ("${x:${ b }:y}", (_ref("x:", _ref("b "), ":y"),)),
    ("${a:${b}\tc}", (_ref("a:", _ref("b"), "c"),)),
    ("\\${a} ${ b}", (Text("${a} "), _ref("b"))),
    ("${a:${x:${b} }}", (_ref("a:", _ref("x:", _ref("b"))),)),
])
def test_whitespace_as_kapicorp_reads_it(text, items):
    parser, grammar = PAIRS[0]
    assert parser.parse(text) == Template(items) == grammar.parse(text)


@pytest.mark.parametrize("text", ["${k${c} }", "${x:${b} }"])
def test_whitespace_before_the_close_of_a_top_level_reference_is_an_error(text):
    with pytest.raises(SyntaxProblem):
        ValueParser().parse(text)


@pytest.mark.parametrize("text, column", [("${unclosed", 11), ("a ${b} ${", 10), ("${}", 3)])
def test_errors_say_where(text, column):
    with pytest.raises(SyntaxProblem) as info:
        ValueParser().parse(text)
    assert info.value.column == column
    assert "Expected" in info.value.message


def test_pyparsing_is_not_needed_for_values():
    import subprocess
    import sys
    code = ("import sys, reclass_ng.syntax.grammar as g; "
            "g.ValueParser().parse('n${a:${b}}\\\\${c}'); print('pyparsing' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
