"""String values: text, `${references}` and `$[queries]`, with reclass's escape rules.

In words (sentinels shown with their defaults):

* top level: text, `${ref}`, `$[query]`. `\\${` is a literal `${`, `\\$[` a literal `$[`, and two
  escape characters directly before a sentinel (`\\\\${`) stand for one literal escape character
  followed by a real reference. Any other backslash is plain text.
* inside a reference: text, nested references, `\\}` (a literal `}`), `\\${` (a literal `${`).
* inside a query: text up to the closing `]`, where `\\]` is a literal `]`.

As a parsing expression grammar (ordered choice, greedy repetition), which is how the parser
below reads it, alternative by alternative:

    value     := top_item+ END
    top_item  := reference | query | double_escape | esc r_open | esc q_open | text(top)
    reference := r_open ref_item+ r_close
    ref_item  := reference | double_escape | esc r_open | esc r_close | text(ref)
    query     := q_open query_item+ q_close
    query_item:= double_escape | esc q_open | esc q_close | query_text
    double_escape := esc esc &(r_open | q_open | r_close | q_close)     -> one escape character
    text(top) := characters, none starting r_open or q_open, alone or after one or two escapes
    text(ref) := characters, none starting r_open or r_close, alone or after one or two escapes
    query_text:= not at (q_close | esc q_close | esc esc q_close), then characters up to q_close

Whitespace, as kapicorp reads it: kapicorp reads a string holding one reference and no other
syntax character with a simple grammar, and any other string with its full pyparsing grammar,
where whitespace (space, tab, newline, carriage return) at the start of every item inside a
reference is skipped: `${ a} ${b}` refers to `a` and `${${b} c}` to the value of b followed by
`c`. Before the `}` of a nested reference it is skipped too; before the `}` of a top-level one
it is an error. `${ a}` alone names the key " a".

tests/reference_value_grammar.py states the same grammar with pyparsing; the two are checked
against each other on generated strings. Parsing is memoised per distinct string, strings
without a sentinel never get here, and the common plain case (text around references that do
not nest, no escape character, no query) takes a shorter path.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock, without importing threading

from reclass_ng.syntax.ast import Query, Ref, Template, Text

# What kapicorp's full grammar skips inside references (pyparsing's default whitespace).
_WHITESPACE = " \t\n\r"


class SyntaxProblem(Exception):
    """A string that is not well formed; `.column` is 1-based."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


class ValueParser:
    """Parses strings into Templates for one choice of sentinels and escape character."""

    def __init__(self, reference_sentinels: tuple[str, str] = ("${", "}"),
                 export_sentinels: tuple[str, str] = ("$[", "]"), escape: str = "\\") -> None:
        self.ref_open, self.ref_close = reference_sentinels
        self.query_open, self.query_close = export_sentinels
        self.escape = escape
        esc, r_open, r_close = escape, self.ref_open, self.ref_close
        q_open, q_close = self.query_open, self.query_close
        # What ends plain text at the top level and inside a reference.
        self._top_stops = (r_open, esc + r_open, esc + esc + r_open,
                           q_open, esc + q_open, esc + esc + q_open)
        self._ref_stops = (r_open, esc + r_open, esc + esc + r_open,
                           r_close, esc + r_close, esc + esc + r_close)
        self._query_stops = (q_close, esc + q_close, esc + esc + q_close)
        self._after_double_escape = (r_open, q_open, r_close, q_close)
        self._cache: dict[str, Template] = {}
        self._lock = allocate_lock()
        # Characters kapicorp's simple grammar refuses anywhere in a string (see skips_whitespace).
        self._not_simple = frozenset(esc + r_open + r_close + q_open + q_close)

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
            template = _Reading(self, text).value()
        with self._lock:
            return self._cache.setdefault(text, template)

    def skips_whitespace(self, text: str) -> bool:
        """Whether kapicorp reads `text` with its full grammar, which skips whitespace at the
        start of each item inside a reference (see the module's docstring). Its simple grammar,
        tried first on a string with one sentinel, takes text, one reference and text, none of
        them holding a character of a sentinel or the escape character."""
        sentinels = text.count(self.ref_open) + text.count(self.query_open)
        if sentinels != 1:
            return sentinels > 1
        start = text.find(self.ref_open)
        if start < 0:
            return True  # a query
        inner = start + len(self.ref_open)
        end = text.find(self.ref_close, inner)
        if end <= inner:
            return True
        not_simple = self._not_simple
        rest = text[:start] + text[inner:end] + text[end + len(self.ref_close):]
        return any(c in not_simple for c in rest)

    def simple_template(self, text: str) -> Template | None:
        """The Template of text whose references do not nest and which has no escape character
        and no query; None for anything else (the full reading decides those, errors included)."""
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
            if end <= inner:  # unclosed or empty reference: an error, the full reading says it
                return None
            if text.find(r_open, inner, end) >= 0:
                return None
            if text[inner] in _WHITESPACE and self.skips_whitespace(text):
                return None  # kapicorp skips it: the full reading says how
            if start > pos:
                items.append(Text(text[pos:start]))
            items.append(Ref((Text(text[inner:end]),)))
            pos = end + len(r_close)
        if pos < len(text):
            items.append(Text(text[pos:]))
        return Template(tuple(items))


Item = tuple[Text | Ref | Query, int]  # what one rule read, and where reading goes on


class _Reading:
    """One string read by the grammar above; each rule returns (item, next position) or None."""

    def __init__(self, parser: ValueParser, text: str) -> None:
        self.p = parser
        self.text = text
        self.furthest = (0, "text")  # where reading stopped furthest, and what was expected
        # whitespace skipped before each item inside a reference (kapicorp's full grammar)
        self.skip = any(c in text for c in _WHITESPACE) and parser.skips_whitespace(text)
        # Each stop of text_run: (where it was last looked for from, where it was found there
        # or after, len(text) for nowhere). A later look from between the two needs no search:
        # a long text with many items is searched about once per stop, not once per item.
        self.next_stop: dict[str, tuple[int, int]] = {}

    def value(self) -> Template:
        items: list[Text | Ref | Query] = []
        pos, end = 0, len(self.text)
        while pos < end:
            found = self.top_item(pos)
            if found is None:
                break
            items.append(found[0])
            pos = found[1]
        if not items or pos != end:
            at, expected = self.furthest if self.furthest[0] >= pos else (pos, "end of text")
            raise SyntaxProblem(f"Expected {expected} at char {at}", at + 1)
        return Template(tuple(_joined(items)))

    def expect(self, pos: int, what: str) -> None:
        if pos >= self.furthest[0]:
            self.furthest = (pos, what)

    # -- rules --------------------------------------------------------------------------

    def top_item(self, pos: int) -> Item | None:
        p = self.p
        return (self.reference(pos) or self.query(pos) or self.double_escape(pos)
                or self.escaped(pos, p.ref_open) or self.escaped(pos, p.query_open)
                or self.text_run(pos, p._top_stops))

    def reference(self, pos: int, nested: bool = False) -> Item | None:
        p, text = self.p, self.text
        if not text.startswith(p.ref_open, pos):
            self.expect(pos, repr(p.ref_open))
            return None
        at = pos + len(p.ref_open)
        items: list[Text | Ref | Query] = []
        while True:
            start = self.after_whitespace(at) if self.skip else at
            found = (self.reference(start, True) or self.double_escape(start)
                     or self.escaped(start, p.ref_open) or self.escaped(start, p.ref_close)
                     or self.text_run(start, p._ref_stops))
            if found is None:
                break
            items.append(found[0])
            at = found[1]
        if not items:
            self.expect(at, "reference path")
            return None
        if nested and self.skip:
            at = self.after_whitespace(at)
        if not text.startswith(p.ref_close, at):
            self.expect(at, repr(p.ref_close))
            return None
        return Ref(tuple(_joined(items))), at + len(p.ref_close)  # type: ignore[arg-type]

    def after_whitespace(self, pos: int) -> int:
        text, end = self.text, len(self.text)
        while pos < end and text[pos] in _WHITESPACE:
            pos += 1
        return pos

    def query(self, pos: int) -> Item | None:
        p, text = self.p, self.text
        if not text.startswith(p.query_open, pos):
            return None
        at = pos + len(p.query_open)
        parts: list[str] = []
        while True:
            found = (self.double_escape(at) or self.escaped(at, p.query_open)
                     or self.escaped(at, p.query_close) or self.query_text(at))
            if found is None:
                break
            parts.append(found[0].value)  # type: ignore[union-attr]
            at = found[1]
        if not parts:
            self.expect(at, "query text")
            return None
        if not text.startswith(p.query_close, at):
            self.expect(at, repr(p.query_close))
            return None
        return Query("".join(parts)), at + len(p.query_close)

    def query_text(self, pos: int) -> Item | None:
        text = self.text
        if pos >= len(text) or text.startswith(self.p._query_stops, pos):
            return None
        end = text.find(self.p.query_close[0], pos)
        end = len(text) if end < 0 else end
        return (Text(text[pos:end]), end) if end > pos else None

    def double_escape(self, pos: int) -> Item | None:
        esc, text = self.p.escape, self.text
        if text.startswith(esc + esc, pos) and \
                text.startswith(self.p._after_double_escape, pos + 2 * len(esc)):
            return Text(esc), pos + 2 * len(esc)
        return None

    def escaped(self, pos: int, sentinel: str) -> Item | None:
        marker = self.p.escape + sentinel
        if self.text.startswith(marker, pos):
            return Text(sentinel), pos + len(marker)
        return None

    def text_run(self, pos: int, stops: tuple[str, ...]) -> Item | None:
        """Plain text from `pos` up to where one of `stops` starts, at least one character.
        (A regular expression would say it in one line, at the cost of importing `re` in a
        run that may need it nowhere else: about 26 M instructions with `enum`.)"""
        text, next_stop = self.text, self.next_stop
        end = len(text)
        for stop in stops:
            since, at = next_stop.get(stop, (end, -1))
            if not since <= pos <= at:  # reading has passed it, or gone back (a failed rule)
                at = text.find(stop, pos)
                at = len(text) if at < 0 else at
                next_stop[stop] = (pos, at)
            if at < end:
                end = at
        return (Text(text[pos:end]), end) if end > pos else None


def _joined(items: list[Text | Ref | Query]) -> list[Text | Ref | Query]:
    """Adjacent texts as one, so a template has as few items as possible."""
    merged: list[Text | Ref | Query] = []
    for item in items:
        if type(item) is Text and merged and type(merged[-1]) is Text:
            merged[-1] = Text(merged[-1].value + item.value)  # type: ignore[union-attr,unused-ignore]
        else:
            merged.append(item)
    return merged
