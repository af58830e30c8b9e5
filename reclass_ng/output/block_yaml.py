"""Block YAML of whole inventories, the text of `output.dump(data, "yaml")`, written fast.

PyYAML's emitter (libyaml's, through `output.yaml_dumper()`) costs tens of microseconds a value:
26-31 s for a 2,000-node inventory, against under a second for JSON. The layout of block
YAML is simple (sorted keys, `key: value`, nested mappings indented by two, sequences in a
mapping not indented, `- ` items, `{}`/`[]` for empty containers, null/true/false and ints
as Python prints them); how libyaml writes a string where it sits (its style, escapes, and
where a long one is folded) is yaml_scalars.py, libyaml's rules restated.

PyYAML still represents what is neither a string nor a container nor null/bool/int (floats
and dates: their spelling, once per distinct value). What only PyYAML writes (a `!!binary`
value) is asked of it for that one scalar, at its place; keys that are neither strings nor
plain scalars, sets and the like make PyYAML write the node (or document) whole. Both are
counted (`fallbacks`, `whole_fallbacks`): bench/ reports them on real inventories.
"""

from __future__ import annotations

from reclass_ng.output.yaml_scalars import (
    PLAIN,
    WIDTH,
    one_line_spelling,
    scalar_style,
    simple_key,
    write_scalar,
)
from reclass_ng.storage.yaml_import import pyyaml
from reclass_ng.storage.yaml_load import plain_scalar_tag
from reclass_ng.storage.yaml_rules import RESOLVED_FIRST_CHARACTERS, standard_tags
from reclass_ng.values import OwnedDict, OwnedList

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

_DICTS = frozenset({dict, OwnedDict, *(c for c in dict.__subclasses__()
                                    if c.__module__ == "reclass_ng.values")})
_LISTS = frozenset({list, OwnedList, *(c for c in list.__subclasses__()
                                    if c.__module__ == "reclass_ng.values")})
_NODES_HEAD = "nodes:\n"
# Entries a streaming writer's memo holds at most (a few MB each): the memos of spellings and
# shared texts help across neighbouring nodes, never need the whole inventory. The memo of
# lines must hold what a run of nodes writes, though: `mcp` writes 21,000 distinct lines in
# its first 500 nodes and 9,000 more each 500 after; at 20,000 entries it was emptied every
# few hundred nodes and its lines made again (20,000 nodes: 23.6 s, 284 MB; now 20.9 s,
# 297 MB).
MEMO_ENTRIES = 60_000
# Characters of shared container texts a streaming writer holds at most (emptied beyond): each
# text keeps its container alive too, a few times the text's size, and MEMO_ENTRIES texts of
# `mcp` are about 24 MB. The texts of the last thousand or so nodes fit (about 1 MB per 500
# `mcp` nodes), and neighbours (nodes of a cluster) are what share containers.
SHARED_TEXT_CHARS = 4 * 1024 * 1024
# Keys a streaming writer's memo of sorted key lists holds at most (emptied beyond; about
# 2.5 MB of pointers): `mcp` mappings hold 2 to 750 keys, and its 2,000 nodes 6,300 distinct
# key lists of 470,000 keys in all.
ORDER_KEYS = 160_000
_STR_TAG = "tag:yaml.org,2002:str"
# What the memo of keys' texts answers for a key it does not hold (its texts are str or None:
# a str, so that it fits the compiled build's typed `key`; found by identity, never equal to
# a key's text). `get` with it, not a subscript: on the real models a third of the lookups
# miss, and a KeyError raised and caught costs about 1,500 instructions.
_NOT_MET = "\x00 not met"
# The indentations of the first _SPACED columns, made once: a mapping passes the one of its
# nested mapping as the lead of that mapping's first line, so that the line is written as
# remembered (`lead is spaces`), not sliced and joined to a new copy of the same spaces.
_SPACED = 48
_SPACES = tuple(" " * column for column in range(_SPACED))


class _Unusual(Exception):
    """A value the writer leaves to PyYAML with everything around it (a set, a tuple key)."""




def plain_as_is(text: str) -> bool:
    """Whether PyYAML writes the string `text` plain and unchanged, as a value and as a simple
    key: ASCII letters, digits and `_`, then also `-`, `.` and `/`, fewer than 128 of them,
    reading back as a string. A subset PyYAML need not be asked about (names, paths,
    versions, most of a node's strings); tests/test_output_yaml.py compares it with PyYAML."""
    return (0 < len(text) < 128 and text.isascii() and (text[0].isalnum() or text[0] == "_")
            and b"\0" not in text.encode("ascii").translate(_NAME_TABLE)
            and _plain_reads_as_string(text))


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
            and b"\0" not in text.encode("ascii").translate(_VALUE_TABLE)):
        return None
    if text[0] not in RESOLVED_FIRST_CHARACTERS and standard_tags():
        return text
    tag = plain_scalar_tag(text)
    if tag == _STR_TAG:
        return text
    return None if tag is None else "'" + text + "'"


def _plain_reads_as_string(text: str) -> bool:
    """Whether the non-empty plain scalar `text` reads back as a string, when that is known
    without PyYAML: a first character no implicit resolver tries (most words and paths) is
    answered without plain_scalar_tag's call."""
    return ((text[0] not in RESOLVED_FIRST_CHARACTERS and standard_tags())
            or plain_scalar_tag(text) == _STR_TAG)


# The characters plain_as_is and value_spelling take (ASCII only), as tables for
# bytes.translate that keep each of them and make every other byte NUL: an ASCII string's
# bytes so translated hold a NUL exactly when it has another character (NUL included). On
# the real models a new string's spelling cost 15 k instructions with str.translate (a dict
# lookup per distinct character, and a KeyError raised and cleared for each one missing),
# 7 k with a frozenset's issuperset (a hashed lookup per character), 1.6 k with the bytes'
# allowed characters deleted (translate then builds a table of 256 entries each call), and
# less with a whole table, one lookup a byte.
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_NAME_TABLE = bytes(code if chr(code) in _ALNUM + "_-./" else 0 for code in range(256))
_VALUE_TABLE = bytes(code if chr(code) in _ALNUM + "_-./ :@${}" else 0 for code in range(256))


def float_spelling(value: float) -> str:
    """The plain text PyYAML's representer gives a float (`represent_float`): `.nan`, `.inf`,
    `-.inf`, else its repr in lower case with `.0` put before an exponent that follows no
    point (`1e+17` is no YAML 1.1 float; `1.0e+17` is).

    With PyYAML's own implicit resolvers each such text reads back as a float, so PyYAML
    writes it plain and untagged, as it is: real models hold floats (versions, ratios,
    timeouts) in most nodes, and asking PyYAML's representer imported PyYAML (about 30 M
    instructions of a small run) for them alone. tests/test_output_yaml.py compares it with
    PyYAML."""
    if value != value:
        return ".nan"
    if value == _INFINITY:
        return ".inf"
    if value == -_INFINITY:
        return "-.inf"
    text = float.__repr__(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


_INFINITY = float("inf")


def _pyyaml(data: Any) -> str:
    # PyYAML is imported here, when a document first needs it (storage/yaml_import.py).
    from reclass_ng.output.exact import yaml_dumper  # PyYAML's: only for what it writes

    return pyyaml().dump(data, Dumper=yaml_dumper(), default_flow_style=False)


class BlockYamlWriter:
    """Writes documents as `yaml.dump(data, Dumper=output.yaml_dumper(), default_flow_style=False)`.

    Holds the spelling of each distinct key and scalar met; one writer per document, so the
    memo is bounded by the document's own values. `streaming`: the writer of a streamed
    inventory (output.streamed), whose nodes die once written: each memo is bounded by
    MEMO_ENTRIES (emptied when it holds more; the shared texts by SHARED_TEXT_CHARS too), and
    a container whose text is kept is kept too, so that its id cannot be reused by another.
    """

    def __init__(self, streaming: bool = False) -> None:
        self._keys: dict[str, str | None] = {}  # None: not a simple key, written after `? `
        self._strings: dict[str, str] = {}  # one-line spelling; "": it spans lines
        self._placed: dict[tuple[str, int, int], str] = {}  # folded or multi-line, by place
        # A mapping's entries of string and int values, lines with their indentation: most
        # recur across nodes, in mappings that are not the same object. Never a bool's or a
        # float's, equal to an int (True == 1 == 1.0). Kept as indentation -> key -> value
        # -> line, strings' and ints' apart: lookups of string keys in exact dicts cost less
        # than making, hashing and comparing an (indentation, key, value) tuple, and an
        # indentation is a list's index (doc/performance.rst, "The block writer's
        # remembered lines").
        self._str_lines: list[dict[str, dict[str, str]]] = []
        self._int_lines: list[dict[str, dict[int, str]]] = []
        self._item_lines: list[dict[str, str]] = []  # a sequence's string items, by value
        self._line_count = 0  # lines in the three
        self._others: dict[tuple[type, str], str | None] = {}  # None: PyYAML writes it
        # Plain containers by (id, indentation): the data outlive the writer, so ids are
        # stable; the writer never keys its own temporary mappings here.
        self._met: set[tuple[int, int]] = set()
        self._shared_texts: dict[tuple[int, int], str] = {}
        self._orders: dict[tuple[str, ...], list[str]] = {}  # a mapping's keys -> sorted
        self._order_keys = 0  # keys in _orders (a mapping may hold hundreds)
        self._dumper: Any = None
        # (streaming) the containers of _shared_texts, by place
        self._kept: dict[tuple[int, int], Any] | None = {} if streaming else None
        self._shared_chars = 0  # (streaming) characters in _shared_texts
        self.fallbacks = 0  # scalars PyYAML wrote, at their place
        self.whole_fallbacks = 0  # nodes or documents PyYAML wrote whole

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
        for name in sorted(nodes):
            yield self.node_text(name, nodes[name])
        yield "\n"

    def document(self, data: Any) -> str:
        """`output.dump(data, "yaml")`: the text and the newline `dump` adds after it."""
        kind = type(data)
        if data and (kind in _DICTS or kind in _LISTS):
            out: list[str] = []
            try:
                if kind in _DICTS:
                    self._mapping(data, 0, "", out)
                else:
                    self._sequence(data, 0, "", out)
                return "".join(out) + "\n"
            except (_Unusual, RecursionError):
                self.whole_fallbacks += 1
        return _pyyaml(data) + "\n"

    def node_text(self, name: str, info: Any) -> str:
        """The text of node `name` in the `nodes` of an inventory (as deep as that puts it)."""
        if self._kept is not None:
            self._bound_memos()
        out: list[str] = []
        try:
            self._mapping({name: info}, 2, "  ", out)
            return "".join(out)
        except (_Unusual, RecursionError):
            self.whole_fallbacks += 1
            return _pyyaml({"nodes": {name: info}})[len(_NODES_HEAD):]

    def _bound_memos(self) -> None:
        """(streaming) Empty each memo that holds more than MEMO_ENTRIES entries."""
        for memo in (self._keys, self._strings, self._placed, self._others, self._met):
            if len(memo) > MEMO_ENTRIES:
                memo.clear()
        if self._order_keys > ORDER_KEYS:
            self._orders.clear()
            self._order_keys = 0
        if self._line_count > MEMO_ENTRIES:
            self._str_lines, self._int_lines, self._item_lines = [], [], []
            self._line_count = 0
        if self._kept is not None and (len(self._shared_texts) > MEMO_ENTRIES
                                       or self._shared_chars > SHARED_TEXT_CHARS):
            self._shared_texts.clear()
            self._kept.clear()
            self._shared_chars = 0

    # -- layout -------------------------------------------------------------------------
    def _mapping(self, mapping: Any, indent: int, lead: str, out: list[str]) -> None:  # noqa: C901
        """A non-empty mapping whose keys start at column `indent`; the first line starts
        with `lead` (the indentation, or what is in front of it on that line)."""
        # Every value's case inline, in _sequence too (issue 28 left both whole): writing a
        # mapping or list entry in a method of its own (`_container_entry(value, kind, head,
        # indent, out)`) cost 80 M instructions more on a 150-node `mcp` render to YAML (+3.7%),
        # and took _mapping only to 12.
        # The sorted keys of each distinct key list met (in the mapping's order): on `mcp`
        # 2,000 nodes 99% of the mappings list keys met before, and sorting them was a
        # quarter of the writer's instructions (doc/performance.rst, "YAML: the keys' order
        # remembered"). Only lists of str keys are remembered: True, 1 and 1.0 are equal
        # keys that are written apart.
        in_order = tuple(mapping)
        names = self._orders.get(in_order)
        if names is None:
            try:
                names = sorted(in_order)
            except TypeError:  # keys of types that do not compare: PyYAML keeps their order
                names = list(in_order)
            else:
                for name in names:  # (a loop: the compiled build takes no closure here)
                    if type(name) is not str:
                        break
                else:
                    self._orders[in_order] = names
                    self._order_keys += len(names)
        keys = self._keys
        try:
            str_lines = self._str_lines[indent]
        except IndexError:
            str_lines = self._lines_at(indent)[0]
        spaces = _SPACES[indent] if indent < _SPACED else " " * indent
        inner = indent + 2
        # (`out.append` each time, not a local bound once: compiled, it is list's append
        # called in C, and the local was an attribute lookup a mapping; 3.11 specializes it)
        for name in names:
            value = mapping[name]
            kind = type(value)
            if kind is str:  # most entries, and most of them met before at this indentation
                # (`get`, not a subscript: a KeyError raised and caught costs more than
                # the lookup, and in small inventories half the lines are met once; not
                # `in` then a subscript either: two lookups more)
                by_value = str_lines.get(name)
                line = None if by_value is None else by_value.get(value)
                if line is None:  # (also a key that is no string: never remembered)
                    line = self._string_entry(name, value, indent, str_lines)
                out.append(line if lead is spaces else lead + line[indent:])
                lead = spaces
                continue
            if kind is int:  # remembered as strings are (never a bool: True == 1)
                by_int = self._int_lines[indent].get(name)  # (made with str_lines)
                line = None if by_int is None else by_int.get(value)
                if line is None:
                    line = self._int_entry(name, value, indent)
                out.append(line if lead is spaces else lead + line[indent:])
                lead = spaces
                continue
            key = keys.get(name, _NOT_MET)  # (a KeyError raised and caught costs more)
            if key is _NOT_MET:  # not met yet, or not a string (True and 1 are one dict key)
                key = self._key(name)
            if key is None:
                self._complex_entry(name, value, indent, lead, out)
            elif value is None:  # inline, and before the containers: a call or
                # a lookup in _DICTS costs as much as writing the line
                out.append(f"{lead}{key}: null\n")
            elif kind is bool:
                out.append(f"{lead}{key}: true\n" if value else f"{lead}{key}: false\n")
            elif kind in _DICTS:
                # (the lead of its first line is the object its _mapping takes as its
                # indentation: that line is then written as remembered, not sliced)
                inner_spaces = _SPACES[inner] if inner < _SPACED else " " * inner
                if not value:
                    out.append(f"{lead}{key}: {{}}\n")
                elif kind is dict and (shared := self._shared(value, inner, False)):
                    out.append(f"{lead}{key}:\n{inner_spaces}")
                    out.append(shared)
                else:
                    out.append(f"{lead}{key}:\n")
                    self._mapping(value, inner, inner_spaces, out)
            elif kind in _LISTS:
                if not value:
                    out.append(f"{lead}{key}: []\n")
                elif kind is list and (shared := self._shared(value, indent, True)):
                    out.append(f"{lead}{key}:\n{spaces}")
                    out.append(shared)
                else:
                    out.append(f"{lead}{key}:\n")
                    self._sequence(value, indent, spaces, out)
            else:
                column = indent + len(key) + 2
                out.append(f"{lead}{key}: {self._scalar(value, kind, column, inner)}\n")
            lead = spaces

    def _int_entry(self, name: Any, value: int, indent: int) -> str:
        """The text of entry `name: value` (an int) of a mapping whose keys start at column
        `indent`, that indentation included; remembered by place when `name` is a string."""
        key = self._keys.get(name, _NOT_MET)
        if key is _NOT_MET:
            key = self._key(name)
        spaces = " " * indent
        if key is None:
            out: list[str] = []
            self._complex_entry(name, value, indent, spaces, out)
            line = "".join(out)
        else:
            line = f"{spaces}{key}: {int.__repr__(value)}\n"
        if type(name) is str:
            self._lines_at(indent)[1].setdefault(name, {})[value] = line
            self._line_count += 1
        return line

    def _string_entry(self, name: Any, value: str, indent: int,
                      str_lines: dict[str, dict[str, str]]) -> str:
        """The text of entry `name: value` (a string) of a mapping whose keys start at column
        `indent`, that indentation included; remembered by place when `name` is a string."""
        key = self._keys.get(name, _NOT_MET)
        if key is _NOT_MET:
            key = self._key(name)
        spaces = " " * indent
        if key is None:
            out: list[str] = []
            self._complex_entry(name, value, indent, spaces, out)
            line = "".join(out)
        else:
            text = self._strings.get(value)
            if text is None:
                text = self._spell(value)
            column = indent + len(key) + 2
            if not text or (column + len(text) > WIDTH and " " in text):
                text = self._placed_text(value, column, indent + 2)
            line = f"{spaces}{key}: {text}\n"
        if type(name) is str:  # (True and 1 would be one key)
            by_value = str_lines.get(name)
            if by_value is None:
                by_value = str_lines[name] = {}
            by_value[value] = line
            self._line_count += 1
        return line

    def _lines_at(self, indent: int) -> tuple[dict[str, dict[str, str]],
                                              dict[str, dict[int, str]], dict[str, str]]:
        """The memos of string and int entries' and string items' lines at `indent` (made
        up to it when missing)."""
        while len(self._str_lines) <= indent:
            self._str_lines.append({})
            self._int_lines.append({})
            self._item_lines.append({})
        return self._str_lines[indent], self._int_lines[indent], self._item_lines[indent]

    def _complex_entry(self, name: Any, value: Any, indent: int, lead: str,
                       out: list[str]) -> None:
        """`? key` then `: value` (libyaml's form for a key longer than 128 bytes or spanning
        lines): the value starts on the `:` line, nested blocks two columns in."""
        inner = indent + 2
        out.append(f"{lead}? {self._complex_key_text(name, inner)}\n{' ' * indent}:")
        kind = type(value)
        if kind is str or value is None or kind is bool or kind is int:
            out.append(f" {self._scalar(value, kind, inner, inner)}\n")
        elif kind in _DICTS:
            if value:
                self._mapping(value, inner, " ", out)
            else:
                out.append(" {}\n")
        elif kind in _LISTS:
            if value:
                self._sequence(value, inner, " ", out)
            else:
                out.append(" []\n")
        else:
            out.append(f" {self._scalar(value, kind, inner, inner)}\n")

    def _sequence(self, items: Any, indent: int, lead: str, out: list[str]) -> None:  # noqa: C901
        """A non-empty sequence whose `- ` start at column `indent` (first line: `lead`);
        each value's case inline, as in _mapping (which says why)."""
        spaces = _SPACES[indent] if indent < _SPACED else " " * indent
        try:
            item_lines = self._item_lines[indent]
        except IndexError:
            item_lines = self._lines_at(indent)[2]
        inner = indent + 2
        for value in items:
            kind = type(value)
            if kind is str:  # remembered as a mapping's string entries are
                line = item_lines.get(value)  # (`get`: see _mapping)
                if line is None:
                    line = self._string_item(value, indent, item_lines)
                out.append(line if lead is spaces else lead + line[indent:])
            elif value is None:
                out.append(f"{lead}- null\n")
            elif kind is bool:
                out.append(f"{lead}- true\n" if value else f"{lead}- false\n")
            elif kind is int:
                out.append(f"{lead}- {int.__repr__(value)}\n")
            elif kind in _DICTS:
                if not value:
                    out.append(f"{lead}- {{}}\n")
                elif kind is dict and (shared := self._shared(value, inner, False)):
                    out.append(f"{lead}- ")
                    out.append(shared)
                else:
                    self._mapping(value, inner, lead + "- ", out)
            elif kind in _LISTS:
                if not value:
                    out.append(f"{lead}- []\n")
                elif kind is list and (shared := self._shared(value, inner, True)):
                    out.append(f"{lead}- ")
                    out.append(shared)
                else:
                    self._sequence(value, inner, lead + "- ", out)
            else:
                out.append(f"{lead}- {self._scalar(value, kind, inner, inner)}\n")
            lead = spaces

    def _string_item(self, value: str, indent: int, item_lines: dict[str, str]) -> str:
        """The line of string item `value` of a sequence whose `- ` start at column `indent`
        (that indentation included), remembered in `item_lines`."""
        text = self._strings.get(value)
        if text is None:
            text = self._spell(value)
        inner = indent + 2
        if not text or (inner + len(text) > WIDTH and " " in text):
            text = self._placed_text(value, inner, inner)
        line = item_lines[value] = f"{' ' * indent}- {text}\n"
        self._line_count += 1
        return line

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
        out: list[str] = []
        if sequence:
            self._sequence(value, indent, "", out)
        else:
            self._mapping(value, indent, "", out)
        text = self._shared_texts[place] = "".join(out)
        if self._kept is not None:
            self._kept[place] = value  # its id stays its own while the text is kept
            self._shared_chars += len(text)
        return text

    # -- strings --------------------------------------------------------------------------
    def _spell(self, value: str) -> str:
        """The one-line spelling of string `value` ("" when it spans lines), remembered."""
        spelling = value_spelling(value)
        if spelling is None:
            style = scalar_style(value, self._reads_as_string(value))
            spelling = one_line_spelling(value, style) or ""
        self._strings[value] = spelling
        return spelling

    def _placed_text(self, value: str, column: int, indent: int) -> str:
        """String `value` as written from `column`: folded past column 80, or spanning lines
        continued at `indent`."""
        place = (value, column, indent)
        text = self._placed.get(place)
        if text is None:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: PyYAML's error, from PyYAML
                raise _Unusual from None
            style = scalar_style(value, self._reads_as_string(value))
            text = self._placed[place] = write_scalar(value, style, column, indent)
        return text

    def _reads_as_string(self, text: str) -> bool:
        """Whether plain `text` reads back as a string (PyYAML's resolver, as the dumper's)."""
        tag = plain_scalar_tag(text)
        if tag is None:
            dumper = self._representer()
            tag = dumper.resolve(pyyaml().ScalarNode, text, (True, False))
        return tag == _STR_TAG

    # -- keys -----------------------------------------------------------------------------
    def _key(self, name: Any) -> str | None:
        """The text of simple key `name`, or None when libyaml writes it after `? `."""
        if type(name) is str:
            if plain_as_is(name):
                text: str | None = name
            elif not simple_key(name):
                text = None
            else:
                try:
                    name.encode("utf-8")
                except UnicodeEncodeError:
                    raise _Unusual from None
                style = scalar_style(name, self._reads_as_string(name), in_simple_key=True)
                text = write_scalar(name, style, 0, 0, allow_breaks=False)
        elif name is None:
            text = "null"
        elif type(name) is bool:
            text = "true" if name else "false"
        elif type(name) is int:
            text = int.__repr__(name)
            text = text if len(text) <= 128 else None
        else:
            text = self._plain_other(name)
            if text is None:
                raise _Unusual  # a key PyYAML would tag or quote: it writes the mapping
            text = text if len(text.encode("utf-8")) <= 128 and "\n" not in text else None
        if type(name) is str:
            self._keys[name] = text
        return text

    def _complex_key_text(self, name: Any, column: int) -> str:
        if type(name) is str:
            return self._placed_text(name, column, column)
        text = self._plain_other(name) if type(name) is not int else int.__repr__(name)
        if text is None:
            raise _Unusual
        return write_scalar(text, PLAIN, column, column)

    # -- other scalars --------------------------------------------------------------------
    def _scalar(self, value: Any, kind: type, column: int, indent: int) -> str:
        """A scalar that is not a string, written from `column` (continued at `indent`)."""
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            return int.__repr__(value)
        if kind is str:
            text = self._strings.get(value) or self._spell(value)
            if not text or (column + len(text) > WIDTH and " " in text):
                text = self._placed_text(value, column, indent)
            return text
        plain = self._plain_other(value)
        if plain is None:
            return self._pyyaml_at(value, column, indent)
        if column + len(plain) > WIDTH and " " in plain:
            return write_scalar(plain, PLAIN, column, indent)
        return plain

    def _plain_other(self, value: Any) -> str | None:
        """PyYAML's spelling of a float, date or other scalar it writes plain and untagged;
        None for what it writes otherwise (`!!binary`). Raises _Unusual for containers
        PyYAML knows and the writer does not (sets) and for what it cannot represent."""
        if type(value) is float and standard_tags():
            return float_spelling(value)
        memo = (type(value), repr(value))
        try:
            return self._others[memo]
        except KeyError:
            pass
        yaml = pyyaml()
        dumper = self._representer()
        try:
            node = dumper.represent_data(value)
        except yaml.YAMLError:
            raise _Unusual from None  # the same error, raised by PyYAML writing it whole
        if type(node) is not yaml.ScalarNode:
            raise _Unusual
        text: str | None = node.value
        if node.style is not None or dumper.resolve(
                yaml.ScalarNode, node.value, (True, False)) != node.tag \
                or scalar_style(node.value, True) != PLAIN:
            text = None
        self._others[memo] = text
        return text

    def _pyyaml_at(self, value: Any, column: int, indent: int) -> str:
        """`value` as PyYAML writes it from `column` (continued at `indent`): the text of a
        document that puts it there, under mappings of one-letter keys."""
        self.fallbacks += 1
        block = indent - 2  # the column of the keys or `-` of the block holding it
        width = column - block  # what is in front of it: a key and `: `, or `- `
        if block < 0 or block % 2 or width < 2:
            raise _Unusual
        prefix = "".join(" " * level + "a:\n" for level in range(0, block, 2))
        if width > 2:
            inner: Any = {"x" * (width - 2): value}
            prefix += " " * block + "x" * (width - 2) + ": "
        else:
            inner = {"a": [value]}
            prefix += " " * block + "a:\n" + " " * block + "- "
        for _ in range(0, block, 2):
            inner = {"a": inner}
        text = _pyyaml(inner)
        if not text.startswith(prefix) or not text.endswith("\n"):
            raise _Unusual
        return text[len(prefix):-1]

    def _representer(self) -> Any:
        if self._dumper is None:
            import io

            from reclass_ng.output.exact import yaml_dumper

            self._dumper = yaml_dumper()(io.StringIO())
        return self._dumper
