"""Anchors (`&name`), aliases (`*name`) and merge keys (`<<: *name`) for the block reader
(storage/yaml_block.py), read as PyYAML's safe loader reads them, within the limits the full
reader keeps.

What an alias gives: the value of its anchor, built again. The full reader
(storage/yaml_full.py, `construct_tree`) keeps no memo of the nodes it has built, so each
alias there is a list or mapping of its own, never one shared with the anchor or another
alias (PyYAML's own constructor would share it): an alias here is a deep copy, and no two
places of a document hold the same list or mapping, as with the full reader. Scalars are
immutable and are shared.

Where this reader declines (storage/yaml_block.NotSimple; the full reader then reads the file,
and every error is its own): an anchor name that is not letters, digits, `-` and `_` followed
by a space or the end of the line, a name anchored twice or an alias to a name not anchored
before it (both errors in PyYAML), an alias to a list or mapping that is still open (a
document containing itself, which the full reader refuses), an alias with anything but a
comment after it, an anchor on a key or before a tag or another alias, a second merge key in
a mapping, one naming anything but a mapping or a mapping written with a key twice or with a
merge key of its own (DocumentAnchors.merge), and any document that
might pass the full reader's limits: a copy that would nest deeper than MAX_YAML_DEPTH, and
aliases that might expand past MAX_EXPANDED_NODES values. The full reader counts, in a
document holding a `*`, every list and mapping it builds with its entries, copies included;
this reader bounds that count from the text (`text_bound`: at most four per line, two per
bracket or brace and one per comma) and from what each alias copies (the bound of the lines
its anchor's value spans, and of the aliases among them), and declines when the bound passes
the limit, so an alias bomb is always the full reader's, with its error.
"""

from __future__ import annotations

from reclass_ng.storage.yaml_rules import MAX_EXPANDED_NODES, NotSimple

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

# The characters of an anchor's name (libyaml's yaml_parser_scan_anchor: alphanumerics, `-`
# and `_`).
_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def text_bound(text: str, lines: list[str]) -> int:
    """At least the number of lists and mappings and of their entries that the full reader
    counts in the document `text` (split into `lines`) without its aliases' copies: a line
    adds at most an entry to a sequence, a mapping it opens there with its first entry, and
    the block it opens under the entry above; a `[` or `{` a collection with an entry, a
    comma an entry."""
    return 4 * len(lines) + 2 * (text.count("[") + text.count("{")) + text.count(",")


def _line_bound(line: str) -> int:
    """text_bound of one line."""
    return 4 + 2 * (line.count("[") + line.count("{")) + line.count(",")


class Anchor:
    """A value anchored at line `line` (an index of the document's lines) of an entry at
    column `indent` in `owner[slot]`; `value` is what the entry holds. Stands in for its
    owner in BlockYamlReader.parse's pending entry (`anchor[slot] = value`), so that the
    value a block below gives it is recorded here too."""

    __slots__ = ("owner", "slot", "line", "indent", "value", "bound")

    def __init__(self, owner: Any, slot: Any, line: int, indent: int) -> None:
        self.owner = owner
        self.slot = slot
        self.line = line
        self.indent = indent
        self.value: Any = None
        self.bound = -1  # what a copy may count in the full reader (_span_bound); -1: not yet

    def __setitem__(self, slot: Any, value: Any) -> None:
        self.owner[slot] = value
        self.value = value


class DocumentAnchors:
    """The anchors of one document being read, and what its aliases may still expand to."""

    __slots__ = ("lines", "max_depth", "anchors", "aliases", "budget", "merged")

    def __init__(self, text: str, lines: list[str], max_depth: int) -> None:
        self.lines = lines
        self.max_depth = max_depth
        self.anchors: dict[str, Anchor] = {}
        # (line, bound) of each alias read so far, in the order of their lines
        self.aliases: list[tuple[int, int]] = []
        self.budget = MAX_EXPANDED_NODES - text_bound(text, lines)
        self.merged: set[int] = set()  # ids of the mappings a merge key was read into

    def anchor(self, text: str, owner: Any, slot: Any, line: int,
               indent: int) -> tuple[Anchor, str]:
        """The anchor that `text` starts with (`&name`), defined for `owner[slot]` on line
        `line` at column `indent`, and the rest of `text` after it (no leading spaces)."""
        name, rest = _name(text)
        if name in self.anchors:
            raise NotSimple  # PyYAML: found duplicate anchor
        if rest and rest[0] in "*&!":
            raise NotSimple  # an anchor before an alias, another anchor or a tag
        anchor = self.anchors[name] = Anchor(owner, slot, line, indent)
        return anchor, rest

    def alias(self, text: str, stack: list[tuple], line: int) -> Any:
        """The value of the alias `text` (`*name`, maybe a comment after it) on line `line`,
        an entry of the innermost block of `stack` (BlockYamlReader.parse's open blocks)."""
        name, rest = _name(text)
        if rest and rest[0] != "#":
            raise NotSimple
        anchor = self.anchors.get(name)
        if anchor is None:
            raise NotSimple  # PyYAML: found undefined alias
        value = anchor.value
        if type(value) is not dict and type(value) is not list:
            return value  # a scalar: immutable, shared
        for block in stack:
            if block[1] is value:
                raise NotSimple  # an alias inside the block it names: recursive
        if anchor.bound < 0:
            anchor.bound = self._span_bound(anchor)
        self.budget -= anchor.bound
        if self.budget < 0:
            raise NotSimple  # it might pass MAX_EXPANDED_NODES: the full reader counts
        self.aliases.append((line, anchor.bound))
        return _copy(value, self.max_depth - len(stack))

    def merge(self, text: str, mapping: dict[Any, Any], stack: list[tuple], line: int) -> None:
        """Reads the merge key `<<: text` (`text` an alias to a mapping, maybe a comment
        after it) on line `line` into `mapping`, the innermost block of `stack`, as PyYAML's
        SafeConstructor.flatten_mapping does: the aliased mapping's entries come first, in
        their order, and the mapping's own entries, before the merge key or after it,
        override them (the mapping's entries read later are simply put in). NotSimple for a
        second merge key in one mapping (their entries override one another, not the
        mapping's own ones), an alias to anything but a mapping (PyYAML merges a list of
        mappings, and refuses the rest), and one to a mapping written with a key twice or
        with a merge key of its own: of the entries it merges with one key, PyYAML 6.0.4
        keeps the first or the last depending on whether the keys' strings are one object
        (`id(pair[0].value)`: one-character keys are), which the values here cannot tell."""
        if id(mapping) in self.merged:
            raise NotSimple
        merged = self.alias(text, stack, line)  # a copy: its lists and mappings are new
        if type(merged) is not dict or \
                self._entry_lines(self.anchors[_name(text)[0]]) != len(merged):
            raise NotSimple
        self.merged.add(id(mapping))
        merged.update(mapping)
        mapping.clear()
        mapping.update(merged)

    def _entry_lines(self, anchor: Anchor) -> int:
        """The number of entries written in the mapping block that `anchor` names (its lines
        at the indentation of the first line below the anchor's), each key once if it equals
        the length of the mapping read; NotSimple if one of them is a merge key."""
        lines, number, column, count = self.lines, anchor.line + 1, -1, 0
        while number < len(lines):
            line = lines[number]
            content = line.lstrip(" ")
            number += 1
            if not content or content[0] == "#":
                continue
            indent = len(line) - len(content)
            if indent <= anchor.indent:
                break
            if column < 0:
                column = indent
            if indent == column and content[0] != "-":
                if content.startswith("<<"):
                    raise NotSimple
                count += 1
        return count

    def _span_bound(self, anchor: Anchor) -> int:
        """At least what the full reader counts when it builds the value of `anchor`: the
        line bounds of its lines (the anchor's, then every line below indented more than
        its entry, or as much and starting with `-`, comments and blank lines included)
        and the bounds of the aliases among them."""
        lines, column = self.lines, anchor.indent
        start = number = anchor.line
        total = _line_bound(lines[start])
        number += 1
        while number < len(lines):
            line = lines[number]
            content = line.lstrip(" ")
            if content and content[0] != "#":
                indent = len(line) - len(content)
                if indent < column or (indent == column and content[0] != "-"):
                    break
            total += _line_bound(line)
            number += 1
        for line_number, bound in self.aliases:
            if start < line_number < number:
                total += bound
        return total


def _name(text: str) -> tuple[str, str]:
    """The name of the anchor or alias `text` starts with (`&name`, `*name`), and the rest
    of `text` after it and the spaces that follow it."""
    end = text.find(" ")
    name = text[1:] if end < 0 else text[1:end]
    if not name or not _NAME_CHARACTERS.issuperset(name):
        raise NotSimple
    return name, "" if end < 0 else text[end:].lstrip(" ")


def _copy(value: Any, room: int) -> Any:
    """A deep copy of the list or mapping `value`, placed where `room` levels of nesting are
    left (NotSimple when it needs more: the full reader refuses the document)."""
    if room < 1:
        raise NotSimple
    room -= 1
    if type(value) is dict:
        return {key: _copy(item, room) if type(item) is dict or type(item) is list else item
                for key, item in value.items()}
    return [_copy(item, room) if type(item) is dict or type(item) is list else item
            for item in value]
