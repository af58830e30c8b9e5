"""The pyparsing grammar of string values, with reclass's escape rules.

In words (sentinels shown with their defaults):

* top level: text, `${ref}`, `$[query]`. `\\${` is a literal `${`, `\\$[` a literal `$[`, and two
  escape characters directly before a sentinel (`\\\\${`) stand for one literal escape character
  followed by a real reference. Any other backslash is plain text.
* inside a reference: text, nested references, `\\}` (a literal `}`), `\\${` (a literal `${`).
* inside a query: text up to the closing `]`, where `\\]` is a literal `]`.

Parsing is the slow part of interpolation, so results are memoised per distinct string, and
strings without a sentinel never get here. Most strings are plain text around references that
do not nest and have no escape character: `simple_template` reads those directly, and pyparsing
(whose import alone costs more than rendering one node) is loaded only for the others.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

from reclass_ng.syntax.ast import Query, Ref, Template, Text

if TYPE_CHECKING:
    import pyparsing as pp


class SyntaxProblem(Exception):
    """A string that is not well formed; `.column` is 1-based."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


def _not_starting_with(forbidden: list[str]) -> str:
    return "(?:(?!" + "|".join(re.escape(f) for f in forbidden) + ").)+"


def _join_text(tokens: Any) -> list[object]:
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


class ValueParser:
    """Parses strings into Templates for one choice of sentinels and escape character."""

    def __init__(self, reference_sentinels: tuple[str, str] = ("${", "}"),
                 export_sentinels: tuple[str, str] = ("$[", "]"), escape: str = "\\") -> None:
        self.ref_open, self.ref_close = reference_sentinels
        self.query_open, self.query_close = export_sentinels
        self.escape = escape
        self._grammar: pp.ParserElement | None = None  # built on first need
        self._cache: dict[str, Template] = {}
        self._lock = threading.Lock()

    def may_contain_syntax(self, text: str) -> bool:
        """Cheap test: only strings containing an opening sentinel need parsing."""
        return self.ref_open in text or self.query_open in text

    def parse(self, text: str) -> Template:
        """The Template of `text`; raises SyntaxProblem when it is malformed."""
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        template = self.simple_template(text)
        if template is None:
            template = self._parse_with_grammar(text)
        self._cache[text] = template
        return template

    def simple_template(self, text: str) -> Template | None:
        """The Template of text whose references do not nest and which has no escape character
        and no query; None for anything else (the grammar decides those, errors included)."""
        if not text or self.escape in text or self.query_open in text:
            return None
        r_open, r_close = self.ref_open, self.ref_close
        items: list[Text | Ref] = []
        pos = 0
        while True:
            start = text.find(r_open, pos)
            if start < 0:
                break
            inner = start + len(r_open)
            end = text.find(r_close, inner)
            if end <= inner:  # unclosed or empty reference: an error, let the grammar say it
                return None
            nested = text.find(r_open, inner, end)
            if nested >= 0:
                return None
            if start > pos:
                items.append(Text(text[pos:start]))
            items.append(Ref((Text(text[inner:end]),)))
            pos = end + len(r_close)
        if pos < len(text):
            items.append(Text(text[pos:]))
        return Template(tuple(items))

    def _parse_with_grammar(self, text: str) -> Template:
        import pyparsing as pp

        with self._lock:  # pyparsing's packrat-free parsers are not re-entrant across threads
            if self._grammar is None:
                self._grammar = self._build()
            try:
                items = self._grammar.parse_string(text, parse_all=True)
            except pp.ParseBaseException as err:
                raise SyntaxProblem(f"{err.msg} at char {err.loc}", err.loc + 1) from None
        return Template(tuple(_join_text(items)))

    def _build(self) -> pp.ParserElement:
        import pyparsing as pp

        # Whitespace is significant everywhere (`${ a }` names the key " a "), so no element may
        # skip it; pyparsing reads the default when an element is created.
        previous = pp.ParserElement.DEFAULT_WHITE_CHARS
        pp.ParserElement.set_default_whitespace_chars("")
        try:
            return self._build_elements()
        finally:
            pp.ParserElement.set_default_whitespace_chars(previous)

    def _build_elements(self) -> pp.ParserElement:
        import pyparsing as pp

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

        reference = pp.Forward()
        ref_text = text_run([r_open, esc + r_open, esc + esc + r_open] + closes)
        ref_item = (reference | double_escape | escaped_ref_open | escaped_ref_close | ref_text
                    ).set_name("reference path")
        reference <<= (pp.Suppress(lit(r_open)) + pp.Group(pp.OneOrMore(ref_item))
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
