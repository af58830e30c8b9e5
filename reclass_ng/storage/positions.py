"""Where a key is written: (file, line, column) of a key path in a YAML file.

Loading keeps no positions (for speed); these are read again, only when someone asks (an error
message, `explain`, `lint`, `diff`), one file at a time, and kept in a bounded cache owned by
a KeyPositions object. This is the one place that maps YAML keys to lines: a table of every key
of a file (`key_positions`, what tools look keys up in) and, for error messages, the position
of one value (`value_position`: the reference inside it, the list entry meant).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import yaml

from reclass_ng.cache import BoundedCache
from reclass_ng.errors import ReclassError
from reclass_ng.location import Location
from reclass_ng.settings import Speed
from reclass_ng.storage.block_positions import block_key_positions
from reclass_ng.storage.yaml_block import block_yaml_text
from reclass_ng.storage.yaml_load import (
    YamlLoader,
    compose_yaml_bytes,
    compose_yaml_file,
    read_input_file,
)

# Files whose key positions one KeyPositions keeps (an explain of one node reads a few dozen).
KEPT_FILES = 256
FLAG_PREFIXES = "~="


def _key_text(key: object) -> str:
    return key if isinstance(key, str) else str(key)


KeyTable = dict[tuple[str, ...], tuple[int, int]]


def key_positions(root: yaml.Node | None, prefixes: str = FLAG_PREFIXES) -> KeyTable:
    """(key, key, ...) -> (line, column) of every mapping key and list item of a composed YAML
    document; keys without their `prefixes` (`~`/`=`), list items by position (as text)."""
    table: KeyTable = {}
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())] if root is not None else []
    # Aliases share nodes (and may make loops): a shared node is walked once, where its anchor
    # is, which document order (children pushed last to first) reaches first.
    seen: set[int] = set()
    while stack:
        node, prefix = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        children: list[tuple[yaml.Node, tuple[str, ...]]] = []
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                path_key = prefix + (key_node.value.lstrip(prefixes),)
                mark = key_node.start_mark
                table.setdefault(path_key, (mark.line + 1, mark.column + 1))
                children.append((value_node, path_key))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                path_key = prefix + (str(index),)
                mark = item.start_mark
                table.setdefault(path_key, (mark.line + 1, mark.column + 1))
                children.append((item, path_key))
        stack.extend(reversed(children))
    return table


def file_positions(path: str, prefixes: str = FLAG_PREFIXES) -> KeyTable:
    """`key_positions` of a YAML file; empty when it cannot be read."""
    try:
        return _key_table(read_input_file(path), path, prefixes)  # within the loader's limits
    except (OSError, yaml.YAMLError, ReclassError):
        return {}


def _key_table(data: bytes, path: str, prefixes: str) -> KeyTable:
    """`key_positions` of the document in `data`: read off its lines where the block reader
    reads it (storage/block_positions.py, Speed.block_key_positions), else composed."""
    if Speed.from_environment().block_key_positions:
        if _block_loader().block_read(data)[0]:
            text = block_yaml_text(data)
            assert text is not None  # the block reader read it
            table = block_key_positions(text.split("\n"), prefixes)
            if table is not None:
                return table
    return key_positions(compose_yaml_bytes(data, path), prefixes)


_block_reading: YamlLoader | None = None


def _block_loader() -> YamlLoader:
    """The loader whose block reader tells which files key tables are read off their
    lines (one a process, made when first asked: its memo tables are bounded)."""
    global _block_reading
    if _block_reading is None:
        _block_reading = YamlLoader()
    return _block_reading


def deepest_position(table: KeyTable, keys: Sequence[object]) -> tuple[int, int] | None:
    """The position of the deepest of `keys` (strings or list indexes) found in `table`."""
    wanted = tuple(_key_text(k) for k in keys)
    for length in range(len(wanted), 0, -1):
        found = table.get(wanted[:length])
        if found is not None:
            return found
    return None


def buffer_positions(data: bytes, path: str) -> KeyTable:
    """`key_positions` of the content `data` of file `path` (an editor's buffer); empty when
    it does not parse."""
    try:
        return _key_table(data, path, FLAG_PREFIXES)
    except (yaml.YAMLError, ReclassError, RecursionError):
        return {}


class KeyPositions:
    """Positions of keys in files, each file read once while it stays in the cache;
    `overlay` (path -> content) holds what the storage reads instead of some files (an
    editor's unsaved buffers), whose positions are taken from it."""

    def __init__(self, kept_files: int = KEPT_FILES,
                 overlay: Mapping[str, bytes] | None = None) -> None:
        self._files: BoundedCache[str, dict[tuple[str, ...], tuple[int, int]]] = \
            BoundedCache(kept_files)
        self._overlay = overlay or {}

    def _read(self, path: str) -> KeyTable:
        data = self._overlay.get(path)
        return file_positions(path) if data is None else buffer_positions(data, path)

    def location(self, path: str | None, keys: Sequence[object]) -> Location | None:
        """Where the deepest key of `keys` found in file `path` is written (None: no file)."""
        if not path:
            return None
        found = deepest_position(self._files.get(path, self._read), keys)
        return Location(path, *found) if found is not None else Location(path)

    def line(self, path: str | None, keys: Sequence[object]) -> int | None:
        """The line of `location(path, keys)`."""
        found = self.location(path, keys)
        return found.line if found else None


# -- the position of one value, for error messages -------------------------------------------

def _key_matches(key_node: yaml.Node, key: object) -> bool:
    if not isinstance(key_node, yaml.ScalarNode):
        return False
    # Keys may carry the `~` (override) and `=` (constant) prefixes in the file.
    return key_node.value == str(key) or key_node.value.lstrip(FLAG_PREFIXES) == str(key)


def _descend(node: yaml.Node | None, keys: Sequence[object],
             pick: Callable[[yaml.Node], bool] | None) -> yaml.Node | None:
    """The deepest node on `keys` (a partial path ends at its last existing step)."""
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            found = [value for key_node, value in node.value if _key_matches(key_node, key)]
            if not found:
                return node
            node = found[-1]  # YAML keeps the last of duplicate keys
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) \
                and -len(node.value) <= key < len(node.value):
            node = node.value[key]
        else:
            return node
    if pick is not None and isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if pick(item):
                return item
    return node


def _line_column(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def value_position(path: str | None, keys: Sequence[object], needle: str | None = None,
                   pick: Callable[[yaml.Node], bool] | None = None) -> tuple[int, int] | None:
    """1-based (line, column) of the value at `keys` in a YAML file (None: not found).

    With `needle` (e.g. the text of a reference) the position is that of the needle inside the
    value when it is written there literally; `pick` chooses an item of a sequence at `keys`.
    """
    if not path:
        return None
    try:
        text = read_input_file(path).decode("utf-8")
        root = compose_yaml_file(path)  # within the loader's limits
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ReclassError):
        return None
    node = _descend(root, keys, pick)
    if node is None or node is root:
        return None
    start, end = node.start_mark.index, node.end_mark.index
    if needle:
        found = text.find(needle, start, max(end, start + len(needle)))
        if found >= 0:
            return _line_column(text, found)
    return node.start_mark.line + 1, node.start_mark.column + 1
