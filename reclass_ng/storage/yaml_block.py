"""A fast path for the YAML that inventories are written in: block mappings and sequences of
one-line scalars, read line by line without PyYAML's node graph.

PyYAML's C loader makes a Python node per scalar (with two position marks and a call into
Python to resolve its tag) before the constructor turns that graph into values: for reclass
files that is most of the cost of reading them. `BlockYamlReader.parse` reads the subset of YAML
that nearly every class and node file keeps to and raises NotSimple for anything outside it:
flow collections other than `{}` and one-line `[...]` of plain and quoted scalars,
multi-line, block and escaped scalars, anchors, aliases, tags, merge keys, complex keys, tabs,
carriage returns, non-ASCII or non-printable bytes, document markers, a document that is not a
mapping (or empty), nesting deeper than the loader's limit, and whatever it cannot place (odd
indentation). storage/yaml_load.py then reads that file the full way (`parse_yaml_full`, with
PyYAML, which a run whose files are all read here never imports), which also gives every
error its message and line. What the fast path returns is what the full way returns, value for value, type for
type and key for key in order: tests/test_yaml_block.py compares the two on generated
documents and on the example inventories.
"""

from __future__ import annotations

from reclass_ng.cache import BoundedCache

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# The tag of strings: a memoised tag that is this very object needs no further look.
STR_TAG = _STR = "tag:yaml.org,2002:str"
# Characters that cannot start a plain scalar (YAML 1.1 indicators); `-`, `?` and `:` may,
# before a non-space in block context (`-1`, Kapitan's `?{base64:...}` secret references,
# `::1`), as libyaml's scanner reads them; those are the only such starts read here.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
# Characters that end a plain scalar inside a flow collection or start something this parser
# leaves to PyYAML there (nested collections, comments, keys, anchors, tags); quotes may
# enclose a whole item (`["a", '.*']`), which may then hold any of these.
_QUOTES = frozenset("'\"")
_FLOW_UNREAD = frozenset("[]{}#&*!|>%@`?:")
_FLOW_UNREAD_OR_QUOTE = _FLOW_UNREAD | _QUOTES
# Bytes of a file this parser reads: printable ASCII and newlines (no tab, no CR).
_PLAIN_BYTES = bytes(range(0x20, 0x7F)) + b"\n"
# libyaml refuses simple keys longer than 1024 characters.
_MAX_KEY_LENGTH = 1000
# Keys and values spelt in at least this many characters are not memoised.
_MAX_MEMO_LENGTH = 100


class NotSimple(Exception):
    """The document is outside what BlockYamlReader reads: read it the full way."""


def block_yaml_text(data: bytes) -> str | None:
    """`data` as text if BlockYamlReader may read it (printable ASCII and newlines, no
    document marker at the start of a line), else None."""
    if data.translate(None, _PLAIN_BYTES):
        return None  # a tab, CR, control or non-ASCII byte: the full reader decides
    text = data.decode("ascii")
    if text.startswith(("---", "...")) or "\n---" in text or "\n..." in text:
        return None
    return text


_UNKNOWN = object()  # not in a memo


class BlockYamlReader:
    """Reads plain block YAML (`parse`), memoising the keys and one-line values it has read.

    Both memo tables depend on the spelling alone (and on PyYAML's resolvers, fixed for the
    process), hold immutable values only, and keep at most `max_memo` entries, so a process
    reading new files for months keeps a bounded number. The reader belongs to one
    storage's loader (storage.yaml_load.YamlLoader), as its memo tables do."""

    __slots__ = ("plain_tag", "plain_value", "max_depth", "_keys", "_values")

    def __init__(self, plain_tags: BoundedCache[str, str], plain_value: Callable[[str], Any],
                 max_depth: int, max_memo: int) -> None:
        """`plain_tags` maps plain scalars to their resolved tags (the loader's memo; a string
        is taken as it is when it maps to STR_TAG itself), `plain_value` gives the value of
        any other plain scalar (NotSimple for what is not read here: timestamps, merge keys),
        `max_depth` bounds the nesting of collections (deeper documents raise NotSimple)."""
        self.plain_tag = plain_tags.peek
        self.plain_value = plain_value
        self.max_depth = max_depth
        self._keys: BoundedCache[str, Any] = BoundedCache(max_memo)  # key as written -> key
        # one-line scalar as written -> its value
        self._values: BoundedCache[str, Any] = BoundedCache(max_memo)

    def parse(self, text: str) -> dict[Any, Any] | None:  # noqa: C901
        """The mapping `text` holds, read as PyYAML's safe loader reads it (None when it holds
        only blank and comment lines); NotSimple when the text is not plain block YAML (see
        the module's docstring)."""
        # One loop, each line's cases inline (issue 28 left it whole): a Python call costs
        # about 450 instructions, as much as reading a line. Opening the block that an entry
        # without a value on its line starts in a function of its own (through _push_block)
        # cost 5.5 M instructions more on a 150-node `mcp` render (+0.4%, about 10,000
        # blocks) and took parse only to 23; a call per line would cost more.
        if " \n" in text or text.endswith(" "):
            text = "\n".join(line.rstrip(" ") for line in text.split("\n"))
        keys, values, max_depth = self._keys.peek, self._values.peek, self.max_depth
        unknown = _UNKNOWN
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
        for line in text.split("\n"):
            content = line.lstrip(" ")
            if not content:
                continue  # blank line (no multi-line scalar is read here)
            first = content[0]
            if first == "#":
                continue  # comment line
            indent = len(line) - len(content)
            dash = first == "-" and (len(content) == 1 or content[1] == " ")
            if pending is not None:
                owner, slot, owner_indent, from_key = pending
                pending = None
                if indent > owner_indent or (indent == owner_indent and from_key and dash):
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
                level, collection, is_sequence, indentless = _enclosing_block(stack, indent)
            if is_sequence:
                if not dash:
                    if not indentless:
                        raise NotSimple
                    stack.pop()  # the sequence written at its key's indentation has ended
                    level, collection, is_sequence, indentless = stack[-1]
                else:
                    rest = content[1:].lstrip(" ")
                    if not rest or rest[0] == "#":
                        collection.append(None)
                        pending = (collection, len(collection) - 1, indent, False)
                        continue
                    value = values(rest, unknown)
                    if value is not unknown:
                        collection.append(value)
                        continue
                    first = rest[0]
                    if first == "-" and (len(rest) == 1 or rest[1] == " "):
                        raise NotSimple  # `- - x`
                    if first == "'" or first == '"' or not (": " in rest or rest[-1] == ":"):
                        collection.append(self._value(rest))
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
                rest = rest.lstrip(" ")
            key = keys(text_key, unknown)
            if key is unknown:
                key = self._key(text_key)
            if not rest or rest[0] == "#":
                collection[key] = None
                pending = (collection, key, indent, True)
                continue
            value = values(rest, unknown)
            if value is unknown:
                value = self._value(rest)
            collection[key] = value
        if not root:
            return None  # no content line (any would be in root or raise): no document
        return root

    def _key(self, text: str) -> Any:
        """The key written `text` (a plain or quoted scalar), remembered."""
        if not text or text[-1] == " " or len(text) > _MAX_KEY_LENGTH:
            raise NotSimple
        if text[0] in _QUOTES:
            key = _quoted(text)  # `"null": ~`: the string, whatever it spells
        elif text[0] in _INDICATORS or " #" in text:
            raise NotSimple
        else:
            plain_tag = self.plain_tag  # a local: see storage.yaml_load.YamlLoader
            key = text if plain_tag(text) is _STR else self.plain_value(text)
        if len(text) < _MAX_MEMO_LENGTH:
            self._keys.put(text, key)
        return key

    def _value(self, text: str) -> Any:
        """The value of the one-line scalar `text` (not a comment), remembered unless it is
        a (mutable) collection."""
        value = _scalar(text.lstrip(" "), self.plain_tag, self.plain_value)
        if len(text) < _MAX_MEMO_LENGTH and type(value) is not list and type(value) is not dict:
            self._values.put(text, value)
        return value


# A block is (indentation of its entries, the collection, is it a sequence, is it a sequence
# written at its key's own indentation), as BlockYamlReader.parse keeps them on its stack.
_Block = tuple  # tuple[int, Any, bool, bool]


def _push_block(stack: list[_Block], block: _Block, max_depth: int) -> _Block:
    """`block` opened inside the innermost one of `stack`; NotSimple beyond `max_depth`."""
    if len(stack) >= max_depth:
        raise NotSimple
    stack.append(block)
    return block


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


def _scalar(text: str, plain_tag: Callable[[str], str | None],
            plain_value: Callable[[str], Any]) -> Any:
    """The value of the one-line scalar `text` (no leading space, not a comment)."""
    first = text[0]
    if first in _QUOTES:
        return _quoted(text)
    if first in _INDICATORS:
        if text == "{}":
            return {}
        if first == "[" and text[-1] == "]":
            return _flow_sequence(text, plain_tag, plain_value)
        if first not in "-?:" or len(text) == 1 or text[1] == " ":
            raise NotSimple
    comment = text.find(" #")
    if comment >= 0:
        text = text[:comment].rstrip(" ")
    if ": " in text or text[-1] == ":":
        raise NotSimple
    return text if plain_tag(text) is _STR else plain_value(text)


def _quoted(text: str) -> str:
    """The string of the quoted scalar `text`, one line, nothing after its closing quote:
    single-quoted with `''` for a quote, or double-quoted without escapes."""
    first = text[0]
    if len(text) < 2 or text[-1] != first:
        raise NotSimple
    inner = text[1:-1]
    if first == "'":
        if "'" in inner:
            if "'" in inner.replace("''", ""):
                raise NotSimple
            inner = inner.replace("''", "'")
        return inner
    if '"' in inner or "\\" in inner:
        raise NotSimple
    return inner


def _flow_sequence(text: str, plain_tag: Callable[[str], str | None],
                   plain_value: Callable[[str], Any]) -> list[Any]:
    """The items of `[a, b]` written on one line: plain and quoted scalars only (`classes:
    [a, b]`, `parts: ["a", 'b']`)."""
    inner = text[1:-1]
    if not inner.strip(" "):
        return []
    quoted = not _FLOW_UNREAD_OR_QUOTE.isdisjoint(inner)
    if quoted and _QUOTES.isdisjoint(inner):
        raise NotSimple
    items = []
    for item in inner.split(","):
        item = item.strip(" ")
        if not item or (item[0] == "-" and (len(item) == 1 or item[1] == " ")):
            raise NotSimple  # `[a, ]`, `[- a]`
        if quoted:  # some item is quoted: each is checked on its own
            if item[0] in _QUOTES:
                items.append(_quoted(item))  # a comma inside quotes leaves an unclosed piece
                continue
            if not _FLOW_UNREAD_OR_QUOTE.isdisjoint(item):
                raise NotSimple
        items.append(item if plain_tag(item) is _STR else plain_value(item))
    return items
