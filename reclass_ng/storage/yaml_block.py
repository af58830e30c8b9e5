"""A fast path for the YAML that inventories are written in: block mappings and sequences of
scalars, read line by line without PyYAML's node graph.

PyYAML's C loader makes a Python node per scalar (with two position marks and a call into
Python to resolve its tag) before the constructor turns that graph into values: for reclass
files that is most of the cost of reading them. `BlockYamlReader.parse` reads the subset of YAML
that class and node files keep to: block mappings and sequences; one-line plain, single- and
double-quoted scalars (with libyaml's escapes), a comment after any of them; plain scalars
continued on the lines below their key or dash; literal and folded block scalars (`|`, `>`,
with chomping and indentation indicators); `{}` and one-line `[...]` of plain and quoted
scalars (plain ones may hold a `:`, as URLs do); anchors on entries' values, aliases as
entries' values and a merge key `<<: *name` in a mapping (storage/yaml_aliases.py); a `---`
line starting the document; non-ASCII text; tabs inside block scalars. It raises NotSimple
for anything else: other flow collections, multi-line quoted scalars, tags, other merge
keys (a second one in a mapping, a list or a block after `<<:`), complex keys, anchors on keys,
tabs elsewhere, carriage returns, control characters, libyaml's other line breaks (NEL, LS,
PS) and byte-order marks, directives, a second document or `...`, a document that is not a
mapping (or empty), nesting deeper than the loader's limit, aliases that might expand past
its limit, and whatever it cannot place (odd indentation), or is not sure libyaml reads the
same way (a tab or a `#` right after a block scalar's indicators, a flow item starting or
ending with `:`). storage/yaml_load.py then reads that file the full way (`parse_yaml_full`,
with PyYAML, which a run whose files are all read here never imports), which also gives
every error its message and line: declining is always correct, and every invalid document
is declined. What the fast path returns is what the full way returns, value for value, type
for type and key for key in order, with no list or mapping in two places (an alias is a
copy): tests/test_yaml_block.py compares the two on generated documents and on the example
inventories.
"""

from __future__ import annotations

from reclass_ng.cache import BoundedCache
from reclass_ng.storage.yaml_rules import (
    MAX_EXPANDED_NODES,
    RESOLVED_FIRST_CHARACTERS,
    STR_TAG,
    NotSimple,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from reclass_ng.storage.yaml_aliases import DocumentAnchors

_STR = STR_TAG  # a memoised tag that is this very object needs no further look
# A plain scalar starting with any other character is a string (with PyYAML's own resolvers,
# which the reader needs): it is taken as it is, without a look at the memo of tags.
_RESOLVED_FIRST = RESOLVED_FIRST_CHARACTERS
# Characters that cannot start a plain scalar (YAML 1.1 indicators); `-`, `?` and `:` may,
# before a non-space in block context (`-1`, Kapitan's `?{base64:...}` secret references,
# `::1`), as libyaml's scanner reads them; those are the only such starts read here.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
# Characters that end a plain scalar inside a flow collection or start something this parser
# leaves to PyYAML there (nested collections, comments, keys, anchors, tags); quotes may
# enclose a whole item (`["a", '.*']`), which may then hold any of these. A `:` may sit
# inside a plain item (`[https://x]`, _flow_item_colons).
_QUOTES = frozenset("'\"")
_FLOW_UNREAD = frozenset("[]{}#&*!|>%@`?")
_FLOW_UNREAD_OR_QUOTE = _FLOW_UNREAD | _QUOTES
_FLOW_LOOKED_AT = _FLOW_UNREAD_OR_QUOTE | {":"}
# Bytes of a file this parser reads: printable ASCII and newlines (no tab, no CR).
_PLAIN_BYTES = bytes(range(0x20, 0x7F)) + b"\n"
# Each plain byte kept, each other byte a space: a file is plain when this table leaves it as
# it is. One pass over the bytes, where deleting the plain bytes (to see what is left) first
# builds a table of deletions, each call.
_OTHERS_TO_SPACE = bytes(code if code in _PLAIN_BYTES else 0x20 for code in range(256))
# libyaml refuses simple keys longer than 1024 characters.
_MAX_KEY_LENGTH = 1000
# Below this many characters a document cannot reach MAX_EXPANDED_NODES, whatever it holds
# (storage.yaml_aliases.text_bound: at most 4 a line and 2 a character besides).
_SMALL_TEXT = (MAX_EXPANDED_NODES - 4) // 6
# Keys and values spelt in at least this many characters are not memoised.
_MAX_MEMO_LENGTH = 100
# Whole `key: value` lines (indentation included) this long or longer are not memoised.
_MAX_LINE_MEMO_LENGTH = 120


def block_yaml_text(data: bytes) -> str | None:
    """`data` as text if BlockYamlReader may read it, else None: UTF-8 of printable
    characters, newlines and tabs (BlockYamlReader.parse reads tabs inside block scalars
    only), no carriage return, and no document marker at the start of a line but one `---`
    line starting the document (after comment lines, if any)."""
    if data.translate(_OTHERS_TO_SPACE) == data:
        text = data.decode("ascii")  # printable ASCII and newlines: most files
    else:
        odd = data.translate(None, _PLAIN_BYTES)  # the bytes that are not plain
        if odd.translate(None, _TAB_AND_NON_ASCII_BYTES):
            return None  # a CR or a control byte: the full reader decides
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None  # PyYAML names the byte
        if not odd.isascii() and not _printable_non_ascii(odd.decode("utf-8")):
            return None
    if text.startswith(("---", "...")) or "\n---" in text or "\n..." in text:
        return _without_start_marker(text)
    return text


# A tab and the bytes of UTF-8's multi-byte characters: allowed by block_yaml_text, each
# character checked (_printable_non_ascii).
_TAB_AND_NON_ASCII_BYTES = b"\t" + bytes(range(0x80, 0x100))
# libyaml's line breaks besides `\n` (NEL, LS, PS) and the byte-order mark, whose place in a
# document its scanner decides: left to the full reader.
_NON_ASCII_BREAKS_AND_BOM = frozenset("\x85\u2028\u2029\ufeff")


def _printable_non_ascii(text: str) -> bool:
    """Whether the non-ASCII characters of `text` are all ones libyaml's reader accepts
    (0xA0-0xD7FF, 0xE000-0xFFFD, 0x10000 and above) and none a line break or a byte-order
    mark."""
    for character in set(text):
        code = ord(character)
        if code < 0x80:
            continue
        if (code < 0xA0 or 0xD7FF < code < 0xE000 or code in (0xFFFE, 0xFFFF)
                or character in _NON_ASCII_BREAKS_AND_BOM):
            return False
    return True


def _without_start_marker(text: str) -> str | None:
    """`text` with the `---` line that starts its document blanked (the line count kept), or
    None when it holds any other document marker (a second document, `...`, `--- value`)."""
    head, marker, tail = text.partition("---")
    if head and not head.endswith("\n"):
        return None  # `---` inside a line: the full reader decides
    for line in head.split("\n"):
        stripped = line.lstrip(" ")
        if stripped and stripped[0] != "#":
            return None  # content before the marker: a second document starts there
        if line.startswith("..."):
            return None
    end = tail.find("\n")
    after = tail if end < 0 else tail[:end]
    rest = after.lstrip(" ")
    if rest and (rest[0] != "#" or rest == after):
        return None  # `--- value`, `----`, `---#`: not a bare start marker
    tail = "" if end < 0 else tail[end:]
    if tail.startswith(("\n---", "\n...")) or "\n---" in tail or "\n..." in tail:
        return None
    return head + tail


_UNKNOWN = object()  # not in a memo


class BlockYamlReader:
    """Reads plain block YAML (`parse`), memoising the keys and one-line values it has read,
    and whole `key: value` and `key:` lines (most lines of a Salt model repeat an earlier
    one: 68% of mk-lab's, against 44% of its values).

    The memo tables depend on the spelling alone (and on PyYAML's resolvers, fixed for the
    process), hold immutable values only, and keep at most `max_memo` entries and one
    file's, so a process reading new files for months keeps a bounded number: each is a
    plain dict, emptied when a parse starts with more than `max_memo` entries in it (a
    BoundedCache.put per new key or value, a Python call, cost a Salt model's parse 1.5%).
    The reader belongs to one storage's loader (storage.yaml_load.YamlLoader), as its memo
    tables do."""

    __slots__ = ("plain_tag", "plain_value", "max_depth", "max_memo", "unique_keys", "_keys",
                 "_values", "_entries")

    def __init__(self, plain_tags: BoundedCache[str, str], plain_value: Callable[[str], Any],
                 max_depth: int, max_memo: int, unique_keys: bool = False) -> None:
        """`plain_tags` maps plain scalars to their resolved tags (the loader's memo; a string
        is taken as it is when it maps to STR_TAG itself), `plain_value` gives the value of
        any other plain scalar (NotSimple for what is not read here: timestamps, merge keys),
        `max_depth` bounds the nesting of collections (deeper documents raise NotSimple).
        `unique_keys`: a mapping writing a key twice raises NotSimple too (PyYAML keeps the
        last value without a word; a document read here then writes no key twice, which
        lint's duplicate-key rule need not look for), as does a key written after a merge
        key gave it."""
        self.unique_keys = unique_keys
        self.plain_tag = plain_tags.peek
        self.plain_value = plain_value
        self.max_depth = max_depth
        self.max_memo = max_memo
        self._keys: dict[str, Any] = {}  # key as written -> key
        self._values: dict[str, Any] = {}  # one-line scalar as written -> its value
        # `key: value` line as written, indentation included -> (its indentation, the key,
        # the value): lines whose value is an immutable one-line scalar, and `key:` lines
        # opening a block (the value _UNKNOWN).
        self._entries: dict[str, tuple[int, Any, Any]] = {}

    def parse(self, text: str) -> dict[Any, Any] | None:  # noqa: C901
        """The mapping `text` holds, read as PyYAML's safe loader reads it (None when it holds
        only blank and comment lines); NotSimple when the text is not plain block YAML (see
        the module's docstring). `text` is what block_yaml_text made of a file's bytes."""
        # One loop, each line's cases inline (issue 28 left it whole): a Python call costs
        # about 450 instructions, as much as reading a line. Opening the block that an entry
        # without a value on its line starts in a function of its own (through _push_block)
        # cost 5.5 M instructions more on a 150-node `mcp` render (+0.4%, about 10,000
        # blocks) and took parse only to 23; a call per line would cost more.
        # Lines without their trailing spaces; a block scalar reads its lines as written.
        # (A loop over the lines' last characters, not `" \n" in text`: compiled, it is a C
        # loop, and a search for two characters scanned the whole text at about 4
        # instructions a byte.)
        written = lines = text.split("\n")
        for line in written:
            if line and line[-1] == " ":
                lines = [line.rstrip(" ") for line in written]
                break
        # Tabs are read inside block scalars only (block_yaml_text lets them through): each
        # one a block scalar holds is counted off, and any left over declines the document.
        tabs = text.count("\t") if "\t" in text else 0  # `in` scans faster than count
        # What a line's indentation is stripped of: any whitespace (None) where that is spaces
        # only, in ASCII text without tabs (block_yaml_text lets no other whitespace through).
        # `lstrip(None)` is 2.5 times as fast as `lstrip(" ")`, which looks each character it
        # strips up in its argument (str.isascii is a flag of the string, not a scan).
        indentation = None if not tabs and text.isascii() else " "
        lines_left = iter(lines)
        # (the memos' `get` called where needed, not bound once: compiled, a typed dict's
        # `get` is dict's C lookup, and a bound method was a Python call a line)
        keys, values, max_depth = self._keys, self._values, self.max_depth
        entry_memo = self._entries
        if len(entry_memo) > self.max_memo:
            entry_memo.clear()
        if len(keys) > self.max_memo:
            keys.clear()
        if len(values) > self.max_memo:
            values.clear()
        unknown = _UNKNOWN
        unique = self.unique_keys
        root: dict[Any, Any] = {}
        collection: Any
        # Open collections, innermost last: (indentation of their entries, the collection,
        # is it a sequence, is it a sequence written at its key's own indentation); the
        # innermost one is also in the four variables below.
        top: _Block | None
        level, collection, is_sequence, indentless = top = (0, root, False, False)
        stack: list[_Block] = [top]
        # The last entry had no value on its line: (its collection, its key or index, the
        # indentation a nested block must exceed, whether it was a mapping key).
        pending: tuple[Any, Any, int, bool] | None = None
        anchors: DocumentAnchors | None = None  # made at the first anchor or alias
        if len(text) > _SMALL_TEXT and "*" in text:
            _check_text_bound(text, lines)
        for line in lines_left:
            # A line read before as `key: value` with a one-line value, or as `key:` opening
            # a block, is the same entry whatever the file (the line alone decides it): in
            # the mapping whose entries are at its indentation (the blocks indented more
            # closed), or one it opens below the entry waiting for its value, it is taken as
            # it was. Anything else takes the way below, from the blocks closed here.
            # (Each check below is taken once a line: a third of a Salt model's lines come
            # here, and a check costs about 120 instructions.)
            entry = entry_memo.get(line)
            if entry is not None:
                indent, key, value = entry
                if pending is not None:
                    if indent > pending[2]:
                        # the block this line opens (a mapping, the line being `key: ...`)
                        owner, slot, owner_indent, from_key = pending
                        pending = None
                        opened: dict[Any, Any] = {}
                        owner[slot] = opened
                        if len(stack) >= max_depth:
                            raise NotSimple
                        level, collection, is_sequence, indentless = top = (
                            indent, opened, False, False)
                        stack.append(top)
                elif indent != level:
                    # the blocks this line closes (NotSimple where the full way raises it);
                    # most often the innermost one alone, closed here without a call
                    if indent < level and stack[-2][0] == indent:
                        stack.pop()
                        level, collection, is_sequence, indentless = stack[-1]
                    else:
                        level, collection, is_sequence, indentless = _enclosing_block(
                            stack, indent)
                if pending is None and not is_sequence:
                    if unique and key in collection:
                        raise NotSimple  # a key written twice
                    if value is unknown:  # `key:`: its value is on the lines below
                        collection[key] = None
                        pending = (collection, key, indent, True)
                    else:
                        collection[key] = value
                    continue
            content = line.lstrip(indentation)
            if not content:
                continue  # blank line (a block scalar's own are read with it)
            first = content[0]
            if first == "#":
                continue  # comment line
            indent = len(line) - len(content)
            dash = first == "-" and (len(content) == 1 or content[1] == " ")
            if pending is not None:
                owner, slot, owner_indent, from_key = pending
                pending = None
                if indent > owner_indent or (indent == owner_indent and from_key and dash):
                    if not dash and ": " not in content and content[-1] != ":":
                        # the entry's value is a scalar written on the lines below it
                        if first == "|" or first == ">":
                            owner[slot], tabs_read = _read_block_scalar(
                                content, written, lines_left, owner_indent)
                            tabs -= tabs_read
                        else:
                            owner[slot] = self._scalar_below(content, lines, lines_left,
                                                             owner_indent, len(stack))
                        continue
                    # the entry's value is the block this line opens (a sequence may sit at
                    # its key's own indentation)
                    nested: Any = [] if dash else {}
                    owner[slot] = nested
                    if len(stack) >= max_depth:
                        raise NotSimple
                    level, collection, is_sequence, indentless = top = (
                        indent, nested, dash, indent == owner_indent)
                    stack.append(top)
            if indent != level:
                if indent < level and stack[-2][0] == indent:  # the innermost block closed
                    stack.pop()
                    level, collection, is_sequence, indentless = stack[-1]
                else:
                    level, collection, is_sequence, indentless = _enclosing_block(
                        stack, indent)
            if is_sequence:
                if not dash:
                    if not indentless:
                        raise NotSimple
                    stack.pop()  # the sequence written at its key's indentation has ended
                    level, collection, is_sequence, indentless = stack[-1]
                else:
                    rest = content[1:].lstrip(indentation)
                    if not rest or rest[0] == "#":
                        collection.append(None)
                        pending = (collection, len(collection) - 1, indent, False)
                        continue
                    value = values.get(rest, unknown)
                    if value is not unknown:
                        collection.append(value)
                        continue
                    first = rest[0]
                    if first == "-" and (len(rest) == 1 or rest[1] == " "):
                        raise NotSimple  # `- - x`
                    if first == "|" or first == ">":
                        value, tabs_read = _read_block_scalar(rest, written, lines_left, indent)
                        collection.append(value)
                        tabs -= tabs_read
                        continue
                    if first == "&" or first == "*":
                        if anchors is None:
                            anchors = _document_anchors(text, lines, max_depth)
                        collection.append(None)
                        pending, tabs_read = self._anchor_or_alias(
                            rest, anchors, (collection, len(collection) - 1, indent, False),
                            stack, written, lines_left)
                        tabs -= tabs_read
                        continue
                    if not (": " in rest or rest[-1] == ":") or (
                            (first == "'" or first == '"') and not _quoted_key(rest)):
                        collection.append(self._value(rest, len(stack)))
                        continue
                    # `- key: value`: a mapping whose keys line up after the dash
                    indent += len(content) - len(rest)
                    content = rest
                    nested = {}
                    collection.append(nested)
                    level, collection, is_sequence, indentless = _push_block(
                        stack, (indent, nested, False, False), max_depth)
            elif dash:
                raise NotSimple  # a sequence entry among mapping keys
            # `key: value` or `key:` in `collection`, a mapping whose keys are at `indent`
            text_key, separator, rest = content.partition(": ")
            if not separator:
                if content[-1] != ":":
                    raise NotSimple
                text_key = content[:-1]
            elif rest and rest[0] == " ":
                rest = rest.lstrip(indentation)
            key = keys.get(text_key, unknown)
            if key is unknown:
                if text_key == "<<" and rest[:1] == "*":  # a merge key (never memoised)
                    if anchors is None:
                        anchors = _document_anchors(text, lines, max_depth)
                    anchors.merge(rest, collection, stack,
                                  len(lines) - _lines_left(lines_left) - 1)
                    continue
                key = self._key(text_key)
            if unique and key in collection:
                raise NotSimple  # a key written twice
            if not rest or rest[0] == "#":
                collection[key] = None
                pending = (collection, key, indent, True)
                if not dash and len(line) < _MAX_LINE_MEMO_LENGTH:
                    entry_memo[line] = (indent, key, unknown)
                continue
            value = values.get(rest, unknown)
            if value is unknown:
                first = rest[0]
                if first == "|" or first == ">":
                    value, tabs_read = _read_block_scalar(rest, written, lines_left, indent)
                    collection[key] = value
                    tabs -= tabs_read
                    continue
                if first == "&" or first == "*":
                    if anchors is None:
                        anchors = _document_anchors(text, lines, max_depth)
                    collection[key] = None
                    pending, tabs_read = self._anchor_or_alias(
                        rest, anchors, (collection, key, indent, True), stack, written,
                        lines_left)
                    tabs -= tabs_read
                    continue
                value = self._value(rest, len(stack))
                if type(value) is list or type(value) is dict:
                    collection[key] = value  # mutable: never shared through a memo
                    continue
            collection[key] = value
            if not dash and len(line) < _MAX_LINE_MEMO_LENGTH:
                # (`- key: value` opens a mapping in a sequence: never memoised)
                entry_memo[line] = (indent, key, value)
        if tabs:
            raise NotSimple  # a tab outside a block scalar's text
        if not root:
            return None  # no content line (any would be in root or raise): no document
        return root

    def _key(self, text: str) -> Any:
        """The key written `text` (a plain or quoted scalar, maybe spaces after it: `key :`),
        remembered."""
        if not text or len(text) > _MAX_KEY_LENGTH:
            raise NotSimple
        if text[-1] == " ":
            return self._key(text.rstrip(" "))
        if text[0] in _QUOTES:
            key = _quoted(text)  # `"null": ~`: the string, whatever it spells
        elif text[0] in _INDICATORS or " #" in text:
            raise NotSimple
        elif text[0] not in _RESOLVED_FIRST:
            key = text
        else:
            plain_tag = self.plain_tag  # a local: see storage.yaml_load.YamlLoader
            key = text if plain_tag(text) is _STR else self.plain_value(text)
        if len(text) < _MAX_MEMO_LENGTH:
            self._keys[text] = key
        return key

    def _scalar_below(self, content: str, lines: list[str], lines_left: Iterator[str],
                      parent: int, depth: int) -> Any:
        """The value of the scalar that starts on the line `content` below an entry at column
        `parent` (`key:` or `-` alone on their line): its lines are taken from `lines_left`
        (an iterator over `lines`), as far as they are indented more than `parent`, and
        folded as libyaml folds a plain scalar (a line break between two lines is a space;
        n empty lines are n line breaks). NotSimple for a multi-line scalar that is not
        plain or holds what could end it (`: `, ` #`, an indicator starting a line)."""
        start = number = len(lines) - _lines_left(lines_left)
        last = len(lines) - 1
        pieces = [content]
        breaks = 0
        end = start  # the index after its last line
        while number <= last:
            line = lines[number]
            text = line.lstrip(" ")
            number += 1
            if not text:
                breaks += 1
                continue
            if len(line) - len(text) <= parent or text[0] == "#":
                break  # an entry of an enclosing block, or a comment, which ends the scalar
            if text[0] in _INDICATORS or ": " in text or text[-1] == ":" or " #" in text:
                raise NotSimple
            pieces.append("\n" * breaks if breaks else " ")
            pieces.append(text)
            breaks = 0
            end = number
        for _ in range(end - start):
            next(lines_left)
        if len(pieces) == 1:
            return self._value(content, depth)  # one line: any one-line scalar
        if content[0] in _INDICATORS or " #" in content:
            raise NotSimple  # a multi-line quoted or flow scalar, or a comment inside
        value = "".join(pieces)
        return value if self.plain_tag(value) is _STR else self.plain_value(value)

    def _value(self, text: str, depth: int) -> Any:
        """The value of the one-line scalar `text` (not a comment) in a block at `depth` (the
        number of blocks open), remembered unless it is a (mutable) collection, which
        NotSimple refuses past max_depth."""
        # (One function: a call costs about 450 instructions, and a Salt model's render
        # reads a few thousand new values.)
        scalar = text.lstrip(" ")
        first = scalar[0]
        value: Any
        if first in _QUOTES:
            value = _quoted_value(scalar)
        elif first in _INDICATORS and (first not in "-?:" or len(scalar) == 1
                                       or scalar[1] == " "):
            # `-1`, `?{...}` and `::1` are plain scalars; `{}` and `[...]` collections
            if scalar == "{}":
                value = {}
            elif first == "[" and scalar[-1] == "]":
                value = _flow_sequence(scalar, self.plain_tag, self.plain_value)
            else:
                raise NotSimple
            if depth >= self.max_depth:
                raise NotSimple  # one level too deep: the full reader's error
            return value
        else:
            comment = scalar.find(" #")
            if comment >= 0:
                scalar = scalar[:comment].rstrip(" ")
            if ": " in scalar or scalar[-1] == ":":
                raise NotSimple
            if first not in _RESOLVED_FIRST:
                value = scalar
            else:
                value = scalar if self.plain_tag(scalar) is _STR else self.plain_value(scalar)
        if len(text) < _MAX_MEMO_LENGTH:
            self._values[text] = value
        return value

    def _anchor_or_alias(self, text: str, anchors: DocumentAnchors,
                         entry: tuple[Any, Any, int, bool], stack: list[_Block],
                         written: list[str], lines_left: Iterator[str],
                         ) -> tuple[tuple[Any, Any, int, bool] | None, int]:
        """Reads the value `text` (`*name`, or `&name` and what follows it) of `entry`
        (collection, key or index, its column, whether it is a mapping's key: parse's pending
        entry) in the innermost block of `stack`, the line just taken from `lines_left` (an
        iterator over the document's lines `written`). Returns the entry when its value is
        the block below it (parse's `pending`, else None), and the number of tabs a block
        scalar's text holds."""
        owner, slot, parent, _ = entry
        number = len(written) - _lines_left(lines_left) - 1  # the line's index
        if text[0] == "*":
            owner[slot] = anchors.alias(text, stack, number)
            return None, 0
        anchor, rest = anchors.anchor(text, owner, slot, number, parent)
        if not rest or rest[0] == "#":
            return (anchor, *entry[1:]), 0  # the anchor records what the block below gives
        if rest[0] == "|" or rest[0] == ">":
            value, tabs = _read_block_scalar(rest, written, lines_left, parent)
        else:
            value, tabs = self._value(rest, len(stack)), 0
        owner[slot] = anchor.value = value
        return None, tabs


# A block is (indentation of its entries, the collection, is it a sequence, is it a sequence
# written at its key's own indentation), as BlockYamlReader.parse keeps them on its stack.
_Block = tuple  # tuple[int, Any, bool, bool]


def _push_block(stack: list[_Block], block: _Block, max_depth: int) -> _Block:
    """`block` opened inside the innermost one of `stack`; NotSimple beyond `max_depth`."""
    if len(stack) >= max_depth:
        raise NotSimple
    stack.append(block)
    return block


def _document_anchors(text: str, lines: list[str], max_depth: int) -> DocumentAnchors:
    """The anchors of the document `text` (split into `lines`), met at its first anchor or
    alias (storage/yaml_aliases.py, imported then: few documents hold any)."""
    from reclass_ng.storage.yaml_aliases import DocumentAnchors

    return DocumentAnchors(text, lines, max_depth)


def _check_text_bound(text: str, lines: list[str]) -> None:
    """NotSimple for a document holding a `*` whose lists, mappings and entries might pass
    MAX_EXPANDED_NODES: the full reader counts them all in such a document, aliases or not."""
    from reclass_ng.storage.yaml_aliases import text_bound

    if text_bound(text, lines) > MAX_EXPANDED_NODES:
        raise NotSimple


def _enclosing_block(stack: list[_Block], indent: int) -> _Block:
    """The open block whose entries a line at `indent` continues, the deeper ones closed;
    NotSimple for more indentation (a multi-line scalar) or a level no open block has."""
    if indent > stack[-1][0]:
        raise NotSimple  # a continuation line: a multi-line scalar
    while stack[-1][0] > indent:
        stack.pop()
    block = stack[-1]
    if block[0] != indent:
        raise NotSimple  # indentation matching no open block
    return block


def _lines_left(lines: Iterator[str]) -> int:
    # A list's iterator knows how many items it has left (operator.length_hint, without
    # importing `operator` at every start).
    return lines.__length_hint__()  # type: ignore[attr-defined]


def _read_block_scalar(header: str, lines: list[str], lines_left: Iterator[str],
                       parent: int) -> tuple[str, int]:
    """The string of the block scalar (`|` literal, `>` folded) whose `header` ends the line
    of an entry at column `parent`, its lines taken from `lines_left` (an iterator over
    `lines`, the document's lines as written); also the number of tabs its text holds.
    The line that ends it is left in `lines_left`."""
    start = len(lines) - _lines_left(lines_left)
    value, end, tabs = _block_scalar(header, lines, start, parent)
    for _ in range(end - start):
        next(lines_left)
    return value, tabs


def _block_scalar(header: str, lines: list[str], start: int,  # noqa: C901
                  parent: int) -> tuple[str, int, int]:
    """The string of the block scalar `header` opens, read from `lines[start]` on as libyaml
    reads it (yaml_parser_scan_block_scalar), the index of the first line after it and the
    number of tabs in its text. `parent` is the column of the entry it is the value of (the
    indentation libyaml's scanner holds there: an indentation indicator counts from it, and
    the text is indented more). NotSimple for an invalid header, a tab in the indentation,
    or leading blank lines longer than the first line's indentation."""
    # The header: `|` or `>`, then a chomping indicator and an indentation indicator (1-9),
    # each at most once, in either order; then nothing or a comment.
    literal = header[0] == "|"
    chomping = increment = ""
    position = 1
    while position < 3:
        indicator = header[position:position + 1]
        if indicator and indicator in "+-" and not chomping:
            chomping = indicator
        elif indicator and indicator in "123456789" and not increment:
            increment = indicator
        else:
            break
        position += 1
    after = header[position:]
    if after and (after[0] != " " or after.lstrip(" ")[:1] != "#"):
        raise NotSimple  # `|0`, `|++`, `| text`, `|#c`, a tab
    last = len(lines) - 1  # lines[last] has no line break after it ("" at the end of text)
    number = start
    breaks = 0  # empty lines since the header or the last line of text
    if increment:
        indent = parent + int(increment)
    else:
        # The indentation is the first non-empty line's, more than the parent's (libyaml
        # takes the longest of the blank lines before it too; a longer one is left to it).
        longest_blank = 0
        while number < last:
            line = lines[number]
            if line.strip(" "):
                break
            longest_blank = max(longest_blank, len(line))
            breaks += 1
            number += 1
        line = lines[number]
        content = line.lstrip(" ")
        column = len(line) - len(content)
        if content[:1] == "\t":
            raise NotSimple  # a tab where indentation is expected
        indent = max(column, parent + 1)
        if longest_blank > indent and column > parent:
            raise NotSimple
    prefix = " " * indent
    pieces: list[str] = []
    line_break = ""  # the break after the last line of text ("" before the first)
    blank_start = False  # the last line of text started with a blank
    tabs = 0
    while number <= last:
        line = lines[number]
        if len(line) > indent and line.startswith(prefix):
            text = line[indent:]
            starts_blank = text[0] == " " or text[0] == "\t"
            if not literal and line_break and not blank_start and not starts_blank:
                if not breaks:
                    pieces.append(" ")  # folded: a line break between two lines is a space
            else:
                pieces.append(line_break)
            if breaks:
                pieces.append("\n" * breaks)
                breaks = 0
            pieces.append(text)
            if "\t" in text:
                tabs += text.count("\t")
            blank_start = starts_blank
            line_break = "\n" if number < last else ""
        elif not line.strip(" "):
            if number == last:
                number += 1  # the end of the text (after spaces at most): no line break
                break
            breaks += 1  # an empty line (spaces up to the indentation at most)
        elif line.lstrip(" ")[0] == "\t":
            raise NotSimple  # a tab where indentation is expected
        else:
            break  # a line indented less: the scalar has ended
        number += 1
    if chomping == "-":
        tail = ""
    elif chomping == "+":
        tail = line_break + "\n" * breaks
    else:
        tail = line_break
    return "".join(pieces) + tail, number, tabs


def _quoted_key(text: str) -> bool:
    """Whether `text`, starting with a quote, is a quoted key followed by its `:` (`'k': v`,
    `"k":`), not a quoted scalar."""
    end = _leading_quoted(text)[1]
    return text[end:end + 2] in (": ", ":")


def _quoted(text: str) -> str:
    """The string of the quoted scalar `text`, one line, nothing after its closing quote:
    single-quoted with `''` for a quote, or double-quoted with libyaml's escapes."""
    value, end = _leading_quoted(text)
    if end != len(text):
        raise NotSimple
    return value


def _quoted_value(text: str) -> str:
    """The string of the quoted scalar `text`, one line, maybe a comment after it."""
    value, end = _leading_quoted(text)
    if end < len(text):  # a comment may follow, after a space
        after = text[end:]
        if after[0] != " " or after.lstrip(" ")[:1] != "#":
            raise NotSimple
    return value


def _leading_quoted(text: str) -> tuple[str, int]:
    """The string of the one-line quoted scalar that starts `text`, and where it ends (the
    index after its closing quote)."""
    if text[0] == "'":
        end = text.find("'", 1)
        while end >= 0 and text[end + 1:end + 2] == "'":
            end = text.find("'", end + 2)  # `''`: a quote inside
        if end < 0:
            raise NotSimple  # no closing quote on this line
        inner = text[1:end]
        return (inner.replace("''", "'") if "'" in inner else inner), end + 1
    end = text.find('"', 1)
    if end < 0:
        raise NotSimple
    inner = text[1:end]
    if "\\" in inner:
        return _escaped_double_quoted(text)
    return inner, end + 1


# libyaml's one-character escapes in double-quoted scalars (scanner.c; not `\'`).
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
            "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
            "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}
# Escapes of a character by its code: the number of hexadecimal digits each takes.
_CODE_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _escaped_double_quoted(text: str) -> tuple[str, int]:
    """The string of the one-line double-quoted scalar with escapes that starts `text`, and
    the index after its closing quote; NotSimple for an escape libyaml refuses (an unknown
    one, a surrogate, a code past U+10FFFF) or a `\\` ending the line (an escaped break)."""
    parts = []
    position = 1
    while True:
        quote = text.find('"', position)
        backslash = text.find("\\", position)
        if quote < 0:
            raise NotSimple
        if backslash < 0 or quote < backslash:
            parts.append(text[position:quote])
            return "".join(parts), quote + 1
        parts.append(text[position:backslash])
        escape = text[backslash + 1:backslash + 2]
        position = backslash + 2
        if escape in _ESCAPES:
            parts.append(_ESCAPES[escape])
            continue
        length = _CODE_ESCAPES.get(escape)
        digits = text[position:position + length] if length else ""
        if not digits or len(digits) != length or not _HEX_DIGITS.issuperset(digits):
            raise NotSimple
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            raise NotSimple
        parts.append(chr(code))
        position += length


def _flow_sequence(text: str, plain_tag: Callable[[str], str | None],
                   plain_value: Callable[[str], Any]) -> list[Any]:
    """The items of `[a, b]` written on one line: plain and quoted scalars only (`classes:
    [a, b]`, `parts: ["a", 'b']`, `scopes: [https://x/y]`)."""
    inner = text[1:-1]
    if not inner.strip(" "):
        return []
    looked_at = not _FLOW_LOOKED_AT.isdisjoint(inner)
    items = []
    for item in inner.split(","):
        item = item.strip(" ")
        if not item or (item[0] == "-" and (len(item) == 1 or item[1] == " ")):
            raise NotSimple  # `[a, ]`, `[- a]`
        if looked_at:  # some item is quoted or holds a `:`: each is checked on its own
            if item[0] in _QUOTES:
                items.append(_quoted(item))  # a comma inside quotes leaves an unclosed piece
                continue
            if not _FLOW_UNREAD_OR_QUOTE.isdisjoint(item):
                raise NotSimple
            if ":" in item and not _flow_item_colons(item):
                raise NotSimple
        items.append(item if plain_tag(item) is _STR else plain_value(item))
    return items


def _flow_item_colons(item: str) -> bool:
    """Whether the `:`s of the plain flow item `item` (one of `[...]`'s, stripped, without
    the characters of _FLOW_UNREAD_OR_QUOTE) are all inside its scalar: each followed by a
    character that is not a space (`a: b` is a mapping's entry), none first (`:x`, which
    PyYAML's Python scanner reads as an entry's value) nor last (`x:`, which libyaml refuses
    and the Python scanner reads as a key). PyYAML's Python scanner and libyaml 0.2.5 and
    later (in PyYAML 6's wheels: 0.2.5, 0.2.6 in 6.0.4) then read every `:` as part of the
    scalar (`[https://x]`); libyaml before 0.2.5 refused any `:` inside a flow collection."""
    return item[0] != ":" and item[-1] != ":" and ": " not in item
