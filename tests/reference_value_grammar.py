"""The value grammar as a pyparsing grammar: the reference the hand-written parser in
reclass_ng/syntax/grammar.py is checked against (tests/test_value_parser.py).

It is the grammar reclass-ng shipped first, written the way kapicorp-reclass states its rules;
the package no longer uses it because importing pyparsing alone took longer than rendering a
node. Like kapicorp, it reads a string with one sentinel by a simple grammar when that grammar
takes it, and any other string by the full grammar, whose items inside a reference skip
leading whitespace (pyparsing's default) and whose nested references skip it before their
close too (issue 36).
"""

from __future__ import annotations

import re

import pyparsing as pp

from reclass_ng.syntax.ast import Query, Ref, Template, Text


class ReferenceSyntaxError(Exception):
    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.column = column


def _not_starting_with(forbidden: list[str]) -> str:
    return "(?:(?!" + "|".join(re.escape(f) for f in forbidden) + ").)+"


def _join_text(tokens: pp.ParseResults) -> list[object]:
    """Merge adjacent Text tokens so a template has as few items as possible."""
    merged: list[object] = []
    for token in tokens:
        if isinstance(token, Text) and merged and isinstance(merged[-1], Text):
            merged[-1] = Text(merged[-1].value + token.value)
        else:
            merged.append(token)
    return merged


def _const(value: str) -> object:
    return lambda: Text(value)


class ReferenceGrammar:
    """Parses strings into Templates with pyparsing (slow, simple to check by eye)."""

    def __init__(self, reference_sentinels: tuple[str, str] = ("${", "}"),
                 export_sentinels: tuple[str, str] = ("$[", "]"), escape: str = "\\") -> None:
        self.ref_open, self.ref_close = reference_sentinels
        self.query_open, self.query_close = export_sentinels
        self.escape = escape
        self._grammar = self._build(skip_whitespace=False)
        self._full_grammar = self._build(skip_whitespace=True)
        self._simple_grammar = self._build_simple()

    def _read_by_full_grammar(self, text: str) -> bool:
        """kapicorp's choice: the simple grammar for one sentinel, when it takes the string."""
        sentinels = text.count(self.ref_open) + text.count(self.query_open)
        if sentinels != 1:
            return sentinels > 1
        try:
            self._simple_grammar.parse_string(text, parse_all=True)
        except pp.ParseBaseException:
            return True
        return False

    def parse(self, text: str) -> Template:
        grammar = self._full_grammar if self._read_by_full_grammar(text) else self._grammar
        try:
            items = grammar.parse_string(text, parse_all=True)
        except pp.ParseBaseException as err:
            raise ReferenceSyntaxError(f"{err.msg} at char {err.loc}", err.loc + 1) from None
        return Template(tuple(_join_text(items)))

    def _build(self, skip_whitespace: bool) -> pp.ParserElement:
        # No element skips whitespace by itself (`${ a }` alone names the key " a "), the
        # full grammar's skipping is written out; pyparsing reads the default when an element
        # is created.
        previous = pp.ParserElement.DEFAULT_WHITE_CHARS
        pp.ParserElement.set_default_whitespace_chars("")
        try:
            return self._build_elements(skip_whitespace)
        finally:
            pp.ParserElement.set_default_whitespace_chars(previous)

    def _build_simple(self) -> pp.ParserElement:
        """kapicorp's simple grammar: text, one reference, text, without sentinel or escape
        characters."""
        previous = pp.ParserElement.DEFAULT_WHITE_CHARS
        pp.ParserElement.set_default_whitespace_chars("")
        try:
            excluded = self.escape + self.ref_open + self.ref_close + self.query_open \
                + self.query_close
            string = pp.CharsNotIn(excluded)
            reference = pp.Literal(self.ref_open) + string + pp.Literal(self.ref_close)
            return pp.Optional(string) + reference + pp.Optional(string) + pp.StringEnd()
        finally:
            pp.ParserElement.set_default_whitespace_chars(previous)

    def _build_elements(self, skip_whitespace: bool) -> pp.ParserElement:
        esc, r_open, r_close = self.escape, self.ref_open, self.ref_close
        q_open, q_close = self.query_open, self.query_close
        lit = pp.Literal

        double_escape = (lit(esc + esc) + pp.FollowedBy(
            lit(r_open) | lit(q_open) | lit(r_close) | lit(q_close))).set_parse_action(_const(esc))
        escaped_ref_open = lit(esc + r_open).set_parse_action(_const(r_open))
        escaped_query_open = lit(esc + q_open).set_parse_action(_const(q_open))
        escaped_ref_close = lit(esc + r_close).set_parse_action(_const(r_close))
        escaped_query_close = lit(esc + q_close).set_parse_action(_const(q_close))

        def text_run(forbidden: list[str]) -> pp.ParserElement:
            return pp.Regex(_not_starting_with(forbidden), flags=re.S).set_parse_action(
                lambda t: Text(t[0]))

        opens = [r_open, esc + r_open, esc + esc + r_open, q_open, esc + q_open, esc + esc + q_open]
        closes = [r_close, esc + r_close, esc + esc + r_close]

        nested = pp.Forward()
        ref_text = text_run([r_open, esc + r_open, esc + esc + r_open] + closes)
        ref_item = (nested | double_escape | escaped_ref_open | escaped_ref_close | ref_text
                    ).set_name("reference path")
        space = pp.Empty()
        if skip_whitespace:
            space = pp.Optional(pp.Suppress(pp.White(" \t\n\r")))
            ref_item = space + ref_item
        nested <<= (pp.Suppress(lit(r_open)) + pp.Group(pp.OneOrMore(ref_item)) + space
                    + pp.Suppress(lit(r_close)))
        nested.set_parse_action(lambda t: Ref(tuple(_join_text(t[0]))))
        reference = (pp.Suppress(lit(r_open)) + pp.Group(pp.OneOrMore(ref_item))
                     + pp.Suppress(lit(r_close)))
        reference.set_parse_action(lambda t: Ref(tuple(_join_text(t[0]))))

        # Inside a query everything up to the closing sentinel is text, unless it starts with an
        # escaped (or doubly escaped) close.
        query_text = pp.Regex(
            "(?!" + "|".join(re.escape(c) for c in [q_close, esc + q_close, esc + esc + q_close])
            + ")[^" + re.escape(q_close[0]) + "]+", flags=re.S).set_parse_action(lambda t: Text(t[0]))
        query_item = (double_escape | escaped_query_open | escaped_query_close | query_text
                      ).set_name("query text")
        query = (pp.Suppress(lit(q_open)) + pp.Group(pp.OneOrMore(query_item))
                 + pp.Suppress(lit(q_close)))
        query.set_parse_action(lambda t: Query("".join(item.value for item in t[0])))

        top_item = reference | query | double_escape | escaped_ref_open | escaped_query_open | \
            text_run(opens)
        return pp.OneOrMore(top_item)
