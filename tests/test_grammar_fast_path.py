"""The value parser's fast path reads exactly what the full grammar reads, or declines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reclass_ng.syntax.grammar import SyntaxProblem, ValueParser

PARSERS = [ValueParser(), ValueParser(("{{", "}}"), ("$<", ">"), "~")]
pieces = st.sampled_from(["${", "}", "$", "{", "a", "b:c", " ", "\\", "$[", "]", "{{", "}}",
                          "~", "$<", ">", "x"])


def _full(parser: ValueParser, text: str):
    try:
        return parser._parse_with_grammar(text)
    except SyntaxProblem:
        return "error"


@settings(max_examples=2000)
@given(st.lists(pieces, max_size=12).map("".join), st.sampled_from(PARSERS))
def test_fast_path_agrees_with_the_grammar(text, parser):
    fast = parser.simple_template(text)
    if fast is not None:
        assert fast == _full(parser, text)


def test_fast_path_takes_the_common_strings():
    parser = ValueParser()
    for text in ["${a}", "http://${host}:${port}/x", "a}b", "$${a}", "${_param:x_y}-suffix"]:
        assert parser.simple_template(text) == _full(parser, text)
    for text in ["${a${b}}", "\\${a}", "$[ exports:x ]", "${a", "${}", ""]:
        assert parser.simple_template(text) is None
