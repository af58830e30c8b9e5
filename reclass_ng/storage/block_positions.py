"""The key table of a plain block YAML file (positions.key_positions), read line by line.

positions.key_positions walks the node graph PyYAML composes: for the class and node files
lint, diff and explain ask lines of, composing is most of the cost (a diff in which each of
2,000 nodes changed composed 2,000 node files for 0.5 s). `block_key_positions` reads the
table off the lines of a file that the block reader (storage/yaml_block.py) reads, which
only then is known to be plain block YAML: block mappings and sequences, one-line scalars,
plain scalars continued on the lines below, block scalars, `{}` and one-line `[...]`. It
declines (None) what it does not place as the composer does: anchors, aliases and merge
keys, quoted keys with escapes, flow sequences holding quotes, brackets or `: `, a list
item opening a block on the lines below, a sequence entry holding another one, and any
line it cannot put in an open block. tests/test_positions.py compares the two on generated
documents and the example inventories.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    KeyTable = dict[tuple[str, ...], tuple[int, int]]


class _Declined(Exception):
    """A line this reader does not place as PyYAML's composer does."""


# Where a value needs the composer: anchors, aliases, tags, flow mappings with content.
_UNPLACED_VALUE_STARTS = frozenset("&*!{")


def block_key_positions(lines: list[str], prefixes: str) -> KeyTable | None:
    """(key, key, ...) -> (line, column) of every key and list item of a document that the
    block reader read (`lines`: its text split at newlines), as positions.key_positions
    finds them; None where this reader declines."""
    try:
        return _scan(lines, prefixes)
    except _Declined:
        return None


def _scan(lines: list[str], prefixes: str) -> KeyTable:  # noqa: C901
    table: KeyTable = {}
    # Open blocks, innermost last: [indentation of their entries, key path, is it a
    # sequence, items so far, is it a sequence at its key's own indentation]
    stack: list[list] = [[0, (), False, 0, False]]
    # An entry without a value on its line: (its path, its indentation, was it a key)
    pending: tuple[tuple[str, ...], int, bool] | None = None
    # Lines below an entry that belong to its scalar (continued plain scalars, block
    # scalars: blank or indented more than this): the entry's indentation, else None
    scalar_above: int | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip(" ")
        content = line.lstrip(" ")
        indent = len(line) - len(content)
        if scalar_above is not None:
            if not content or indent > scalar_above:
                continue
            scalar_above = None
        if not content or content[0] == "#" or (line == "---" and not table):
            continue
        is_item = content == "-" or content.startswith("- ")
        if pending is not None:
            path, at, from_key = pending
            pending = None
            if indent > at or (is_item and indent == at and from_key):
                if not is_item and _key_end(content) is None:
                    # the pending entry's value, on the lines below it
                    scalar_above = _value(content, path, number, indent, at, table)
                    continue
                stack.append([indent, path, is_item, 0, indent == at])
        top = stack[-1]
        # the blocks this line closes: those indented more, and a sequence at its key's
        # indentation when a key follows it there
        while indent < top[0] or (top[4] and not is_item and indent == top[0]):
            stack.pop()
            top = stack[-1]
        if indent != top[0] or is_item != top[2]:
            raise _Declined
        column = indent
        if is_item:
            rest = content[1:].lstrip(" ")
            if not rest or rest[0] == "#" or rest[0] == "-" and (rest == "-"
                                                                  or rest[1] == " "):
                raise _Declined  # an item opening a block below, or holding a sequence
            column = len(line) - len(rest)
            path = top[1] + (str(top[3]),)
            top[3] += 1
            table.setdefault(path, (number, column + 1))
            if _key_end(rest) is None:
                scalar_above = _value(rest, path, number, column, indent, table)
                continue
            # the item is a mapping whose first key is on the dash's line
            stack.append([column, path, False, 0, False])
            top = stack[-1]
            content = rest
        end = _key_end(content)
        if end is None:
            raise _Declined
        key = _key_text(content[:end])
        path = top[1] + (key.lstrip(prefixes),)
        table.setdefault(path, (number, column + 1))
        rest = content[end + 1:].lstrip(" ")
        if not rest or rest[0] == "#":
            pending = (path, column, True)
            continue
        scalar_above = _value(rest, path, number, column + end + 1 + (len(content) - end - 1
                                                                      - len(rest)),
                              column, table)
    return table


def _value(text: str, path: tuple[str, ...], number: int, column: int, owner: int,
           table: KeyTable) -> int | None:
    """A value written after its key or dash at `column` of line `number` (`owner`: the
    indentation of its entry): the items of a flow sequence go into `table`. The
    indentation the lines of its scalar below must exceed (None: it has none)."""
    first = text[0]
    if first in _UNPLACED_VALUE_STARTS:
        if text.startswith("{}") and (len(text) == 2 or text[2:].lstrip(" ")[:1] == "#"):
            return None
        raise _Declined
    if first == "[":
        _flow_items(text, path, number, column, table)
        return None
    if first == "<":
        raise _Declined
    # plain, quoted or block scalars: lines below indented more than the entry are its own
    return owner


def _flow_items(text: str, path: tuple[str, ...], number: int, column: int,
                table: KeyTable) -> None:
    """The items of the one-line flow sequence `text` (from its `[`, at `column`): plain
    ones, or quoted whole without escapes."""
    index = 0
    at = 1
    end = len(text)
    while True:
        while at < end and text[at] == " ":
            at += 1
        if at >= end:
            raise _Declined  # not closed on its line
        first = text[at]
        if first == "]":
            break
        after = _flow_item_end(text, at, end)
        table.setdefault(path + (str(index),), (number, column + at + 1))
        index += 1
        while after < end and text[after] == " ":
            after += 1
        if after >= end:
            raise _Declined
        if text[after] == "]":
            at = after
            break
        if text[after] != ",":
            raise _Declined
        at = after + 1
    rest = text[at + 1:].lstrip(" ")
    if rest and rest[0] != "#":
        raise _Declined


def _flow_item_end(text: str, at: int, end: int) -> int:
    """Where the item of a flow sequence starting at `at` ends."""
    first = text[at]
    if first == "'" or first == '"':
        close = text.find(first, at + 1)
        if close < 0 or "\\" in text[at:close] or text[close + 1:close + 2] == first:
            raise _Declined  # escapes, or not closed on the line
        return close + 1
    after = at
    while after < end and text[after] not in ",]":
        after += 1
    item = text[at:after].rstrip(" ")
    if any(mark in item for mark in _FLOW_UNPLACED) or ": " in item or item.endswith(":") \
            or " #" in item:
        raise _Declined
    return after


# What a plain item of a flow sequence holding it is not placed here: nested collections,
# quotes inside it, anchors, aliases, tags, comments.
_FLOW_UNPLACED = frozenset("[]{}'\"#&*!|>%@`?")


def _key_end(content: str) -> int | None:
    """Where the `:` ending a line's key is (None: the line holds no key)."""
    first = content[0]
    if first == "'" or first == '"':
        close = content.find(first, 1)
        if close < 0:
            return None
        end = close + 1
        while end < len(content) and content[end] == " ":
            end += 1
        if end < len(content) and content[end] == ":" and (
                end + 1 == len(content) or content[end + 1] == " "):
            return end
        return None
    at = 0
    while True:
        at = content.find(":", at)
        if at < 0:
            return None
        if at + 1 == len(content) or content[at + 1] == " ":
            comment = content.find(" #")
            return None if 0 <= comment < at else at
        at += 1


def _key_text(written: str) -> str:
    """A key as the composer gives it: quotes off, spaces before the `:` dropped."""
    written = written.rstrip(" ")
    first = written[0]
    if first == "'" or first == '"':
        inner = written[1:-1]
        if "\\" in inner or "'" in inner or '"' in inner:
            raise _Declined
        return inner
    if first in "?&*!|>%@`[]{},#":
        raise _Declined
    return written
