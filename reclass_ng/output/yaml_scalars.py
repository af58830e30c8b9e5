"""One string as libyaml's emitter writes it in block YAML, where `output.dump(data, "yaml")`
puts it: its style (plain, single- or double-quoted), its escapes and its folding.

`reclass --nodeinfo/--inventory` print YAML with PyYAML's CSafeDumper (libyaml 0.2.5),
`default_flow_style=False`, libyaml's default width (80) and indentation (2), and without
`allow_unicode`: every character outside printable ASCII is escaped in double quotes. These
are libyaml's rules (src/emitter.c: yaml_emitter_analyze_scalar, _select_scalar_style,
_check_simple_key, _write_plain_scalar, _write_single_quoted_scalar,
_write_double_quoted_scalar), restated for that configuration; tests/test_output_yaml.py
compares them with PyYAML byte for byte.

Positions: `column` is where the scalar's first character goes (after the `: ` or `- ` in
front of it); `indent` is where its continuation lines start (libyaml indents a scalar two
columns deeper than the block holding it: a mapping's keys, a sequence's `-`).
"""

from __future__ import annotations

WIDTH = 80  # libyaml's best_width: a space past it becomes a line break (in a value)
SIMPLE_KEY_LIMIT = 128  # bytes of UTF-8: a longer key is written after `? `

PLAIN = "plain"
SINGLE_QUOTED = "single"
DOUBLE_QUOTED = "double"

# libyaml's IS_BREAK: the characters that make a scalar span lines.
_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")
# Characters that may not start a plain scalar (libyaml's first-character indicators).
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
# The characters of double-quoted text with a short escape; the others outside printable ASCII
# are written \xXX, \uXXXX or \UXXXXXXXX (upper-case hex, as libyaml).
_SHORT_ESCAPES = {
    "\x00": "\\0", "\x07": "\\a", "\x08": "\\b", "\t": "\\t", "\n": "\\n", "\x0b": "\\v",
    "\x0c": "\\f", "\r": "\\r", "\x1b": "\\e", '"': '\\"', "\\": "\\\\", "\x85": "\\N",
    "\xa0": "\\_", "\u2028": "\\L", "\u2029": "\\P",
}


def spans_lines(text: str) -> bool:
    """Whether libyaml counts `text` as multi-line (it holds one of YAML's line breaks)."""
    if "\n" in text:
        return True
    if text.isascii():
        return "\r" in text
    return any(brk in text for brk in _BREAKS)


def simple_key(text: str) -> bool:
    """Whether libyaml writes the string `text` as a simple key (`text: value`), not after `? `."""
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return size <= SIMPLE_KEY_LIMIT and not spans_lines(text)


def scalar_style(text: str, plain_implicit: bool, in_simple_key: bool = False) -> str:
    """The style libyaml chooses for the string `text` in block context.

    `plain_implicit`: the plain spelling reads back as a string (PyYAML's resolver says so);
    `in_simple_key`: `text` is a simple key (never folded, an empty one quoted).
    """
    if not text:
        return SINGLE_QUOTED if in_simple_key or not plain_implicit else PLAIN
    single_line = text.replace("\n", "") if "\n" in text else text
    # Anything but printable ASCII and "\n" is special: double quotes, with escapes. So are a
    # space next to a line break (single quotes would lose it when read back).
    if not (single_line.isascii() and single_line.isprintable()) \
            or " \n" in text or "\n " in text:
        return DOUBLE_QUOTED
    if "\n" in text:
        return DOUBLE_QUOTED if in_simple_key else SINGLE_QUOTED
    first = text[0]
    if (not plain_implicit or first == " " or text[-1] == " " or first in _FIRST_INDICATORS
            or (first in "?:-" and (len(text) == 1 or text[1] == " "))
            or ": " in text or text[-1] == ":" or " #" in text
            or text.startswith(("---", "..."))):
        return SINGLE_QUOTED
    return PLAIN


def one_line_spelling(text: str, style: str) -> str | None:
    """`text` in `style` before any folding; None when the style spans lines (single quotes
    around a line break)."""
    if style == PLAIN:
        return text
    if style == SINGLE_QUOTED:
        return None if "\n" in text else "'" + text.replace("'", "''") + "'"
    return '"' + _escaped(text) + '"'


def write_scalar(text: str, style: str, column: int, indent: int,
                 allow_breaks: bool = True) -> str:
    """`text` written in `style` from `column`, folded (when `allow_breaks`: not a simple key)
    and continued at `indent` as libyaml does. `style` is the one scalar_style chose for
    `text` (plain and single-quoted text never has a space next to a line break)."""
    if style == PLAIN:
        return _plain(text, column, indent, allow_breaks)
    if style == SINGLE_QUOTED:
        if allow_breaks and indent > 0:
            unfolded = _single_quoted_unfolded(text, column, indent)
            if unfolded is not None:
                return unfolded
        return _single_quoted(text, column, indent, allow_breaks)
    return _double_quoted(text, column, indent, allow_breaks)


def _escape(code: int) -> str:
    char = chr(code)
    if " " <= char <= "~" and char != '"' and char != "\\":
        return char
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    if code <= 0xFF:
        return f"\\x{code:02X}"
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


class _EscapeTable(dict[int, str]):
    """str.translate's table for double-quoted text: each character as libyaml writes it.
    Filled as characters are met (not at import: most runs write no double quotes), and
    keeps only the first 256 code points (a text of every code point would otherwise leave
    a million entries behind)."""

    def __missing__(self, code: int) -> str:
        escaped = _escape(code)
        if code < 256:
            self[code] = escaped
        return escaped


_ESCAPES = _EscapeTable()
# The characters double quotes hold as they are: printable ASCII but the quote and backslash.
_UNESCAPED = frozenset(map(chr, range(0x20, 0x7F))) - {'"', "\\"}
# Distinct characters to escape beyond which _escaped translates the text in one pass.
_FEW_ESCAPES = 8


def _escaped(text: str) -> str:
    """`text` as double quotes hold it, each character escaped as libyaml escapes it:
    `text.translate(_ESCAPES)`, by str.replace for the few distinct characters that need an
    escape. translate looks every character of the text up in its table (a new int and a
    dict lookup each, 150 to 250 instructions a character once a line break has left its
    ASCII fast path), and real models double-quote scripts and certificates of kilobytes."""
    specials = set(text).difference(_UNESCAPED)
    if not specials:
        return text
    if len(specials) > _FEW_ESCAPES:
        return text.translate(_ESCAPES)
    if "\\" in specials:  # first: the other escapes add backslashes
        text = text.replace("\\", "\\\\")
        specials.discard("\\")
    for char in specials:  # an escape holds `\\`, `"` (`\\"`, once) and letters or digits
        text = text.replace(char, _ESCAPES[ord(char)])
    return text


def _fold_at(text: str, start: int, stop: int, column: int, space_may_follow: bool) -> int:
    """The first space of `text[start:stop]` (`text[start]` written at `column`) where libyaml
    may break the line: written past WIDTH, after a non-space, not the text's last character
    and, unless `space_may_follow` (double quotes, which escape the next space), before a
    non-space; -1 if there is none. The search starts where the column passes WIDTH."""
    at = start + WIDTH + 1 - column
    space = text.find(" ", at if at > start else start, stop)
    last = len(text) - 1
    while 0 <= space < last:
        if space and text[space - 1] != " " and (space_may_follow or text[space + 1] != " "):
            return space
        space = text.find(" ", space + 1, stop)
    return -1


class _Line:
    """libyaml's write position while one scalar is written: the column, and whether the
    line holds only indentation so far (`indention`) or ends in white space (`whitespace`)."""

    __slots__ = ("parts", "column", "indent", "indention", "whitespace")

    def __init__(self, column: int, indent: int) -> None:
        self.parts: list[str] = []
        self.column = column
        self.indent = indent
        self.indention = False
        self.whitespace = False

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.column += len(text)

    def line_break(self) -> None:
        self.parts.append("\n")
        self.column = 0

    def write_indent(self) -> None:
        # yaml_emitter_write_indent: a new line unless this one holds only indentation.
        if not self.indention or self.column > self.indent or (
                self.column == self.indent and not self.whitespace):
            self.line_break()
        if self.column < self.indent:
            self.write(" " * (self.indent - self.column))
        self.whitespace = True
        self.indention = True

    def write_folded(self, text: str, start: int, stop: int) -> None:
        """`text[start:stop]`, which holds no line break, folded where libyaml folds plain and
        single-quoted text (a lone space past WIDTH), one slice per run between folds."""
        while (space := _fold_at(text, start, stop, self.column, False)) >= 0:
            self.write(text[start:space])
            self.write_indent()
            self.indention = False  # the next character is not a space
            start = space + 1
        self.write(text[start:stop])

    def text(self) -> str:
        return "".join(self.parts)


def _plain(text: str, column: int, indent: int, allow_breaks: bool) -> str:
    # A plain scalar never holds a line break, nor starts or ends with a space: only the
    # spaces between words can become line breaks (yaml_emitter_write_plain_scalar), and
    # each fold follows a non-space, so it is always a new line and its indentation
    # (_Line.write_folded's path, written without _Line: real models fold hundreds of long
    # plain strings, and its method calls were most of their cost).
    end = len(text)
    if not allow_breaks or column + end <= WIDTH + 1 or " " not in text:
        return text
    parts = []
    fold = "\n" + " " * indent
    start = 0
    while (space := _fold_at(text, start, end, column, False)) >= 0:
        parts.append(text[start:space])
        parts.append(fold)
        start = space + 1
        column = indent
    parts.append(text[start:])
    return "".join(parts)


def _single_quoted(text: str, column: int, indent: int, allow_breaks: bool) -> str:
    # yaml_emitter_write_single_quoted_scalar, by runs: the text between line breaks is
    # folded as plain text is (a quote doubled counts two columns); a run of n line breaks is
    # written n + 1 times (the first as an empty line), and the text after it starts with
    # the indentation.
    quoted = text.replace("'", "''") if "'" in text else text
    line = _Line(column, indent)
    line.write("'")
    start, end = 0, len(quoted)
    breaks = False
    while start < end:
        stop = quoted.find("\n", start)
        if stop < 0:
            stop = end
        if stop > start:
            if breaks:
                line.write_indent()
                breaks = False
            if allow_breaks:
                line.write_folded(quoted, start, stop)
            else:
                line.write(quoted[start:stop])
            line.indention = False  # the run holds a non-space (no space next to a break)
        if stop < end:
            after = stop + 1
            while after < end and quoted[after] == "\n":
                after += 1
            line.parts.append("\n" * (after - stop + 1))
            line.column = 0
            line.indention = breaks = True
            stop = after
        start = stop
    if breaks:
        line.write_indent()
    line.write("'")
    return line.text()


def _single_quoted_unfolded(text: str, column: int, indent: int) -> str | None:
    """_single_quoted's text of `text` (continued at `indent` > 0, with breaks allowed) when
    no line of it is folded; None when one might be. Each run of n line breaks is
    written n + 1 times and the next text starts with the indentation, as _single_quoted
    writes them, by a loop over the lines instead of _Line's calls: real models single-quote
    scripts and keys of hundreds of lines, and the calls were most of their cost."""
    lines = (text.replace("'", "''") if "'" in text else text).split("\n")
    first = lines[0]
    if column + 1 + len(first) > WIDTH + 1 and " " in first:
        return None
    spaces = " " * indent
    parts = ["'", first]
    breaks = 0  # line breaks since the last text
    for run in lines[1:]:
        breaks += 1
        if run:
            if indent + len(run) > WIDTH + 1 and " " in run:
                return None
            parts.append("\n" * (breaks + 1))
            parts.append(spaces)
            parts.append(run)
            breaks = 0
    if breaks:
        parts.append("\n" * (breaks + 1))
        parts.append(spaces)
    parts.append("'")
    return "".join(parts)


def _double_quoted(text: str, column: int, indent: int, allow_breaks: bool) -> str:
    # yaml_emitter_write_double_quoted_scalar, by runs: the text is escaped first (escapes
    # hold no space, so its spaces are the text's own, and libyaml counts columns in the
    # characters it writes); a fold is always a new line (the line holds more than its
    # indentation), and a space after it is escaped.
    escaped = _escaped(text)
    if not allow_breaks or column + len(escaped) <= WIDTH + 1:
        return '"' + escaped + '"'
    parts = ['"']
    fold = "\n" + " " * indent
    start = 0
    line_column = column + 1  # where escaped[start] is written
    end = len(escaped)
    while (space := _fold_at(escaped, start, end, line_column, True)) >= 0:
        parts.append(escaped[start:space])
        parts.append(fold)
        start = space + 1
        line_column = indent
        if escaped[start] == " ":
            parts.append("\\")
            line_column += 1
    parts.append(escaped[start:])
    parts.append('"')
    return "".join(parts)
