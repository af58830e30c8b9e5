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
    return '"' + "".join(_escaped(char) for char in text) + '"'


def write_scalar(text: str, style: str, column: int, indent: int,
                 allow_breaks: bool = True) -> str:
    """`text` written in `style` from `column`, folded (when `allow_breaks`: not a simple key)
    and continued at `indent` as libyaml does."""
    if style == PLAIN:
        return _plain(text, column, indent, allow_breaks)
    if style == SINGLE_QUOTED:
        return _single_quoted(text, column, indent, allow_breaks)
    return _double_quoted(text, column, indent, allow_breaks)


def _escaped(char: str) -> str:
    if " " <= char <= "~" and char != '"' and char != "\\":
        return char
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02X}"
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


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

    def text(self) -> str:
        return "".join(self.parts)


def _plain(text: str, column: int, indent: int, allow_breaks: bool) -> str:
    # A plain scalar never holds a line break, nor starts or ends with a space: only the
    # spaces between words can become line breaks, the first of a run whose line already
    # reaches past WIDTH and that is not followed by another space.
    if not allow_breaks or " " not in text:
        return text
    words = text.split(" ")
    line = _Line(column, indent)
    line.write(words[0])
    for at in range(1, len(words)):
        word = words[at]
        if words[at - 1] and line.column > WIDTH and word:
            line.write_indent()
            line.indention = False
        else:
            line.write(" ")
        line.write(word)
    return line.text()


def _single_quoted(text: str, column: int, indent: int, allow_breaks: bool) -> str:
    line = _Line(column, indent)
    line.write("'")
    spaces = breaks = False
    last = len(text) - 1
    for at, char in enumerate(text):
        if char == " ":
            if (allow_breaks and not spaces and line.column > WIDTH and 0 < at < last
                    and text[at + 1] != " "):
                line.write_indent()
            else:
                line.write(" ")
            spaces = True
        elif char == "\n":
            if not breaks:
                line.line_break()  # a line break is written as an empty line
            line.line_break()
            line.indention = True
            breaks = True
        else:
            if breaks:
                line.write_indent()
            line.write("''" if char == "'" else char)
            line.indention = False
            spaces = breaks = False
    if breaks:
        line.write_indent()
    line.write("'")
    return line.text()


def _double_quoted(text: str, column: int, indent: int, allow_breaks: bool) -> str:
    line = _Line(column, indent)
    line.write('"')
    spaces = False
    last = len(text) - 1
    for at, char in enumerate(text):
        if char == " ":
            if allow_breaks and not spaces and line.column > WIDTH and 0 < at < last:
                line.write_indent()
                if text[at + 1] == " ":
                    line.write("\\")  # the next space would be taken for indentation
            else:
                line.write(" ")
            spaces = True
        else:
            line.write(_escaped(char))
            spaces = False
    line.write('"')
    return line.text()
