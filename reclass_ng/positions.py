"""Where a key is written: (file, line, column) of a key path in a YAML file.

Loading keeps no positions (for speed); these are read again, only when someone asks (an error
message, `explain`, `lint`, `diff`), one file at a time, and kept in a bounded cache owned by
a KeyPositions object.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import yaml

from reclass_ng.cache import BoundedCache
from reclass_ng.errors import ReclassError
from reclass_ng.records import Record
from reclass_ng.storage.yaml_load import compose_yaml_file

# Files whose key positions one KeyPositions keeps (an explain of one node reads a few dozen).
KEPT_FILES = 256
FLAG_PREFIXES = "~="


class Location(Record):
    """A place in a file: 1-based line and column (None when unknown)."""

    __slots__ = ("file", "line", "column")
    _fields = __slots__
    file: str
    line: int | None
    column: int | None

    def __init__(self, file: str, line: int | None = None, column: int | None = None) -> None:
        _set = object.__setattr__
        _set(self, "file", file)
        _set(self, "line", line)
        _set(self, "column", column)

    def text(self, base: str | None = None) -> str:
        """`file:line:column` (the file relative to `base` when it lies inside)."""
        shown = display_path(self.file, base)
        if self.line is None:
            return shown
        return f"{shown}:{self.line}" + (f":{self.column}" if self.column is not None else "")


def display_path(path: str, base: str | None) -> str:
    """`path` as messages show it: relative to the inventory `base` when it lies inside."""
    if not base or not os.path.isabs(path):
        return path
    relative = os.path.relpath(path, base)
    return path if relative.startswith("..") else relative


def _key_text(key: object) -> str:
    return key if isinstance(key, str) else str(key)


def file_positions(path: str) -> dict[tuple[str, ...], tuple[int, int]]:
    """(key, key, ...) -> (line, column) of every mapping key and list item of a YAML file;
    keys without their `~`/`=` prefixes, list items by position. Empty when unreadable."""
    try:
        root = compose_yaml_file(path)  # within the loader's limits
    except (OSError, yaml.YAMLError, ReclassError):
        return {}
    table: dict[tuple[str, ...], tuple[int, int]] = {}
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())] if root is not None else []
    while stack:
        node, prefix = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                path_key = prefix + (key_node.value.lstrip(FLAG_PREFIXES),)
                mark = key_node.start_mark
                table.setdefault(path_key, (mark.line + 1, mark.column + 1))
                stack.append((value_node, path_key))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                path_key = prefix + (str(index),)
                mark = item.start_mark
                table.setdefault(path_key, (mark.line + 1, mark.column + 1))
                stack.append((item, path_key))
    return table


class KeyPositions:
    """Positions of keys in files, each file read once while it stays in the cache."""

    def __init__(self, kept_files: int = KEPT_FILES) -> None:
        self._files: BoundedCache[str, dict[tuple[str, ...], tuple[int, int]]] = \
            BoundedCache(kept_files)

    def location(self, path: str | None, keys: Sequence[object]) -> Location | None:
        """Where the deepest key of `keys` found in file `path` is written (None: no file)."""
        if not path:
            return None
        table = self._files.get(path, file_positions)
        wanted = tuple(_key_text(k) for k in keys)
        for length in range(len(wanted), 0, -1):
            found = table.get(wanted[:length])
            if found is not None:
                return Location(path, *found)
        return Location(path)

    def line(self, path: str | None, keys: Sequence[object]) -> int | None:
        """The line of `location(path, keys)`."""
        found = self.location(path, keys)
        return found.line if found else None
