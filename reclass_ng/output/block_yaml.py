"""Block YAML of whole inventories, the text of `output.dump(data, "yaml")`, written fast.

PyYAML's emitter (libyaml's, through `output.yaml_dumper()`) costs tens of microseconds a value:
26-31 s for a 2,000-node inventory, against under a second for JSON. The layout of block
YAML is simple (sorted keys, `key: value`, nested mappings indented by two, sequences in a
mapping not indented, `- ` items, `{}`/`[]` for empty containers, null/true/false and ints
as Python prints them); how to write a string, float or date is the hard part (plain or
quoted, escapes), so PyYAML is asked that, once per distinct value, many values per call.

What PyYAML would write differently depending on where the value sits is left to it: a
scalar whose text could be wrapped (it has a space and would reach past column 80) or spans
lines, a key it would not write as a simple key, a key that is not a string. A node holding
one of these is dumped by PyYAML whole, as is a document whose other parts hold one.
"""

from __future__ import annotations

from collections.abc import Iterator

from reclass_ng.cli.yaml_import import pyyaml
from reclass_ng.output.exact import yaml_dumper
from reclass_ng.storage.yaml_load import plain_scalar_tag
from reclass_ng.values import OwnedDict, OwnedList

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

_DICTS = frozenset({dict, OwnedDict, *(c for c in dict.__subclasses__()
                                    if c.__module__ == "reclass_ng.values")})
_LISTS = frozenset({list, OwnedList, *(c for c in list.__subclasses__()
                                    if c.__module__ == "reclass_ng.values")})
# datetime.date and datetime.datetime, by name: a date exists only once PyYAML has imported
# datetime, which most starts do not.
_DATE_TYPES = ("date", "datetime")
_WIDTH = 80  # libyaml's best_width: plain and quoted scalars break at a space past it
_NODES_HEAD = "nodes:\n"


class _Unusual(Exception):
    """A value whose text depends on its place in the document: PyYAML writes it."""


class _Pending:
    """A string written before PyYAML was asked how: the place in the text and its column."""

    __slots__ = ("value", "column")

    def __init__(self, value: str, column: int) -> None:
        self.value = value
        self.column = column


_STR_TAG = "tag:yaml.org,2002:str"


def plain_as_is(text: str) -> bool:
    """Whether PyYAML writes the string `text` plain and unchanged, as a value and as a simple
    key: ASCII letters, digits and `_`, then also `-`, `.` and `/`, fewer than 128 of them,
    reading back as a string. A subset PyYAML need not be asked about (names, paths,
    versions, most of a node's strings); tests/test_output_yaml.py compares it with PyYAML."""
    return (0 < len(text) < 128 and text.isascii() and (text[0].isalnum() or text[0] == "_")
            and text.replace("_", "a").replace("-", "a").replace(".", "a").replace("/", "a")
            .isalnum() and plain_scalar_tag(text) == _STR_TAG)


def value_spelling(text: str) -> str | None:
    """How PyYAML (libyaml's emitter) writes the string `text` as a value (not a key), for
    common strings: plain when it reads back as a string, else in single quotes (`'3.2'`,
    `'yes'`); None for the others, which PyYAML is asked about.

    Common strings: what plain_as_is accepts, of any length and also starting with `/`, with
    spaces (`Tue Nov  4`), colons, `@`, `$`, `{` and `}` inside (libyaml forbids the last two only in
    flow context), without a `: `, a colon or space at the end (`Tue Nov 24 22:07:08 2026`,
    `yaml_fs:///inventory/nodes/n1.yml`, `ops@example.org`, `a.${b}`). Where the value sits
    decides whether libyaml would break it at a space (past column 80): the writer checks
    that. tests/test_output_yaml.py compares it with PyYAML."""
    if not (text and text.isascii() and (text[0].isalnum() or text[0] == "_" or text[0] == "/")
            and text[-1] != " " and text[-1] != ":" and ": " not in text
            and text.translate(_VALUE_PUNCTUATION).isalnum()):
        return None
    tag = plain_scalar_tag(text)
    if tag == _STR_TAG:
        return text
    return None if tag is None else "'" + text + "'"


# Characters value_spelling takes inside a string, mapped to a letter for str.isalnum.
_VALUE_PUNCTUATION = str.maketrans(dict.fromkeys("_-./ :@${}", "a"))


def _pyyaml(data: Any) -> str:
    # PyYAML is imported here, when a document first needs it (cli/yaml_import.py).
    return pyyaml().dump(data, Dumper=yaml_dumper(), default_flow_style=False)


class BlockYamlWriter:
    """Writes documents as `yaml.dump(data, Dumper=output.yaml_dumper(), default_flow_style=False)`.

    Holds what PyYAML said about each distinct key and scalar; one writer per document, so
    the memo is bounded by the document's own values.
    """

    def __init__(self) -> None:
        self._keys: dict[str, str | None] = {}  # None: not a simple key for PyYAML
        self._strings: dict[str, str | None] = {}  # None: the text spans lines
        self._others: dict[tuple[type, str], str | None] = {}
        # Plain containers by (id, indentation): the data outlive the writer, so ids are
        # stable; the writer never keys its own temporary mappings here.
        self._met: set[tuple[int, int]] = set()
        self._shared_texts: dict[tuple[int, int], str] = {}

    def inventory_pieces(self, data: dict[str, Any]) -> Iterator[str]:
        """The text of `output.dump(data, "yaml")` for an inventory document, in pieces."""
        nodes = data.get("nodes")
        if type(nodes) is not dict or not nodes or not all(type(k) is str for k in data) \
                or not all(type(name) is str for name in nodes):
            yield self.document(data)
            return
        rest = {key: value for key, value in data.items() if key != "nodes"}
        if any(key > "nodes" for key in rest):  # "nodes" is not the last key: no streaming
            yield self.document(data)
            return
        if rest:
            yield self.document(rest)[:-1]  # without the extra newline `dump` adds
        yield _NODES_HEAD
        names = sorted(nodes)
        missing = [name for name in names if name not in self._keys]
        if missing:
            self._ask_keys(missing)
        for name in names:
            yield self.node_text(name, nodes[name])
        yield "\n"

    def document(self, data: Any) -> str:
        """`output.dump(data, "yaml")`: the text and the newline `dump` adds after it."""
        if type(data) in _DICTS and data:
            try:
                return self._text(data, 0, "") + "\n"
            except (_Unusual, RecursionError):
                pass
        return _pyyaml(data) + "\n"

    def node_text(self, name: str, info: Any) -> str:
        """The text of node `name` in the `nodes` of an inventory (as deep as that puts it)."""
        try:
            return self._text({name: info}, 2, "  ")
        except (_Unusual, RecursionError):
            return _pyyaml({"nodes": {name: info}})[len(_NODES_HEAD):]

    def _text(self, mapping: Any, indent: int, lead: str) -> str:
        out: list[Any] = []
        pending: list[int] = []
        self._mapping(mapping, indent, lead, out, pending)
        self._settle(out, pending)
        return "".join(out)

    # -- layout -------------------------------------------------------------------------
    def _mapping(self, mapping: Any, indent: int, lead: str, out: list[Any],
                 pending: list[int]) -> None:
        """A non-empty mapping whose keys start at column `indent`; the first line starts
        with `lead` (the indentation, or the `- ` of the sequence item it is in)."""
        try:
            names = sorted(mapping)
        except TypeError:
            raise _Unusual from None
        keys = self._keys
        strings = self._strings
        spaces = " " * indent
        inner = indent + 2
        append = out.append
        for name in names:
            # A key not met yet raises (no check of every key first: `keys.keys() >=
            # mapping.keys()` cost 7% of writing), then PyYAML is asked about all of the
            # mapping's new keys at once.
            try:
                key = keys[name]
            except KeyError:
                self._ask_keys([name for name in names if name not in keys])
                key = keys[name]
            if key is None:
                raise _Unusual
            value = mapping[name]
            kind = type(value)
            if kind is str:
                text = strings.get(value, "")
                if text:
                    if indent + len(key) + 2 + len(text) > _WIDTH and " " in text:
                        raise _Unusual
                    append(f"{lead}{key}: {text}\n")
                elif text is None:
                    raise _Unusual
                else:
                    append(f"{lead}{key}: ")
                    pending.append(len(out))
                    append(_Pending(value, indent + len(key) + 2))
                    append("\n")
            elif value is None:  # inline, and before the containers: a call or
                # a lookup in _DICTS costs as much as writing the line
                append(f"{lead}{key}: null\n")
            elif kind is bool:
                append(f"{lead}{key}: true\n" if value else f"{lead}{key}: false\n")
            elif kind is int:
                append(f"{lead}{key}: {int.__repr__(value)}\n")
            elif kind in _DICTS:
                if not value:
                    append(f"{lead}{key}: {{}}\n")
                elif kind is dict and (shared := self._shared(value, inner, False)):
                    append(f"{lead}{key}:\n{' ' * inner}")
                    append(shared)
                else:
                    append(f"{lead}{key}:\n")
                    self._mapping(value, inner, " " * inner, out, pending)
            elif kind in _LISTS:
                if not value:
                    append(f"{lead}{key}: []\n")
                elif kind is list and (shared := self._shared(value, indent, True)):
                    append(f"{lead}{key}:\n{spaces}")
                    append(shared)
                else:
                    append(f"{lead}{key}:\n")
                    self._sequence(value, indent, spaces, out, pending)
            else:
                append(f"{lead}{key}: {self._scalar(value, kind, indent + len(key) + 2)}\n")
            lead = spaces

    def _sequence(self, items: Any, indent: int, lead: str, out: list[Any],
                  pending: list[int]) -> None:
        """A non-empty sequence whose `- ` start at column `indent` (first line: `lead`)."""
        spaces = " " * indent
        inner = indent + 2
        strings = self._strings
        append = out.append
        for value in items:
            kind = type(value)
            if kind is str:
                text = strings.get(value, "")
                if text:
                    if inner + len(text) > _WIDTH and " " in text:
                        raise _Unusual
                    append(f"{lead}- {text}\n")
                elif text is None:
                    raise _Unusual
                else:
                    append(f"{lead}- ")
                    pending.append(len(out))
                    append(_Pending(value, inner))
                    append("\n")
            elif value is None:
                append(f"{lead}- null\n")
            elif kind is bool:
                append(f"{lead}- true\n" if value else f"{lead}- false\n")
            elif kind is int:
                append(f"{lead}- {int.__repr__(value)}\n")
            elif kind in _DICTS:
                if not value:
                    append(f"{lead}- {{}}\n")
                elif kind is dict and (shared := self._shared(value, inner, False)):
                    append(f"{lead}- ")
                    append(shared)
                else:
                    self._mapping(value, inner, lead + "- ", out, pending)
            elif kind in _LISTS:
                if not value:
                    append(f"{lead}- []\n")
                elif kind is list and (shared := self._shared(value, inner, True)):
                    append(f"{lead}- ")
                    append(shared)
                else:
                    self._sequence(value, inner, lead + "- ", out, pending)
            else:
                append(f"{lead}- {self._scalar(value, kind, inner)}\n")
            lead = spaces

    def _shared(self, value: Any, indent: int, sequence: bool) -> str | None:
        """The text (after its first line's lead) of a plain container met before at the same
        indentation, else None. Containers of class files with nothing to interpolate reach
        many nodes unchanged, as the same object: their text is made once, at the second
        meeting (remembering every text would hold the whole document twice)."""
        place = (id(value), indent)
        text = self._shared_texts.get(place)
        if text is not None:
            return text
        if place not in self._met:
            self._met.add(place)
            return None
        out: list[Any] = []
        pending: list[int] = []
        if sequence:
            self._sequence(value, indent, "", out, pending)
        else:
            self._mapping(value, indent, "", out, pending)
        self._settle(out, pending)
        text = self._shared_texts[place] = "".join(out)
        return text

    # -- scalars ------------------------------------------------------------------------
    def _scalar(self, value: Any, kind: type, column: int) -> str:
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            return int.__repr__(value)
        if kind is float or (kind.__module__ == "datetime" and kind.__name__ in _DATE_TYPES):
            memo = (kind, repr(value))
            text = self._others.get(memo, "")
            if text == "":
                text = self._others[memo] = _single_line(_pyyaml([value]))
            if text is None or (column + len(text) > _WIDTH and " " in text):
                raise _Unusual
            return text
        raise _Unusual  # other types: PyYAML represents them, or says it cannot

    def _settle(self, out: list[Any], pending: list[int]) -> None:
        """Ask PyYAML about the strings written as `_Pending`, and put their text in."""
        if not pending:
            return
        strings = self._strings
        new = list(dict.fromkeys(out[at].value for at in pending if out[at].value not in strings))
        if new:
            self._ask_strings(new)
        for at in pending:
            item = out[at]
            text = strings[item.value]
            if text is None or (item.column + len(text) > _WIDTH and " " in text):
                raise _Unusual
            out[at] = text

    def _ask_strings(self, values: list[str]) -> None:
        # One dump of all of them: "- text\n" each; a text spanning lines is asked alone.
        strings = self._strings
        for value in values:
            spelling = value_spelling(value)
            if spelling is not None:
                strings[value] = spelling
        values = [value for value in values if value not in strings]
        if not values:
            return
        dumped = _pyyaml(values)
        texts = dumped[2:-1].split("\n- ")
        if len(texts) != len(values) or not dumped.startswith("- "):
            texts = [_pyyaml([value])[2:-1] for value in values]
        for value, text in zip(values, texts, strict=True):
            self._strings[value] = None if "\n" in text else text

    def _ask_keys(self, names: list[Any]) -> None:
        # One dump of {name: None, ...}: a line "text: null" each when all are simple keys.
        if not all(type(name) is str for name in names):
            raise _Unusual
        keys = self._keys
        for name in names:
            if plain_as_is(name):
                keys[name] = name
        names = sorted(name for name in names if name not in keys)
        if not names:
            return
        lines = _pyyaml(dict.fromkeys(names)).split("\n")[:-1]
        if len(lines) != len(names) or not all(
                line.endswith(": null") and not line.startswith("? ") for line in lines):
            lines = [_pyyaml({name: None})[:-1] for name in names]
        for name, line in zip(names, lines, strict=True):
            simple = line.endswith(": null") and not line.startswith("? ") and "\n" not in line
            self._keys[name] = line[:-len(": null")] if simple else None


def _single_line(text: str) -> str | None:
    # `- text\n` from a one-item dump, None when the text spans lines.
    body = text[2:-1]
    return None if "\n" in body or not text.startswith("- ") else body
