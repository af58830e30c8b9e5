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
