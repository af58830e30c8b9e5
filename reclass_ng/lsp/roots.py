"""Finding the inventories of an editor's workspace.

An inventory root is a directory holding a `reclass-config.yml`, or both `nodes/` and
`classes/`, or Kapitan's layout: `inventory/targets/` and `inventory/classes/` (the root is then
`inventory/`, its nodes are read from `targets/`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

# How deep below a workspace folder inventories are looked for, and how many directories one
# search looks at: a workspace may be a home directory.
SEARCH_DEPTH = 4
SEARCH_DIRECTORIES = 5000
_SKIPPED = frozenset({"node_modules", "__pycache__", "CVS", "SCCS"})


class InventoryRoot:
    """One inventory: its base directory and the settings given on top of its config file."""

    __slots__ = ("path", "overrides")

    def __init__(self, path: str, overrides: dict[str, str] | None = None) -> None:
        self.path = path
        self.overrides = overrides or {}

    def __repr__(self) -> str:
        return f"InventoryRoot({self.path!r}, {self.overrides!r})"


def inventory_root_at(directory: str) -> InventoryRoot | None:
    """The inventory whose base is `directory`, if it is one."""
    if os.path.isfile(os.path.join(directory, "reclass-config.yml")):
        return InventoryRoot(directory)
    has = {name for name in ("nodes", "classes", "targets")
           if os.path.isdir(os.path.join(directory, name))}
    if {"nodes", "classes"} <= has:
        return InventoryRoot(directory)
    if {"targets", "classes"} <= has and not os.path.isfile(os.path.join(directory, "nodes")):
        return InventoryRoot(directory, {"nodes_uri": "targets"})
    return None


def find_inventory_roots(folders: Iterable[str]) -> list[InventoryRoot]:
    """Every inventory inside the workspace `folders` (breadth first, bounded), outermost first;
    an inventory's own sub-directories are not searched."""
    found: list[InventoryRoot] = []
    seen = 0
    queue = [(os.path.abspath(folder), 0) for folder in folders]
    while queue and seen < SEARCH_DIRECTORIES:
        directory, depth = queue.pop(0)
        seen += 1
        root = inventory_root_at(directory)
        if root is not None:
            found.append(root)
            continue
        if depth >= SEARCH_DEPTH:
            continue
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            continue
        queue.extend((entry.path, depth + 1) for entry in entries
                     if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".")
                     and entry.name not in _SKIPPED)
    return found


def root_of_file(path: str, roots: Iterable[InventoryRoot]) -> InventoryRoot | None:
    """The innermost known inventory holding `path`; else one found above the file (a file
    opened outside the workspace folders), else None."""
    path = os.path.abspath(path)
    holding = [root for root in roots if path.startswith(root.path + os.sep)]
    if holding:
        return max(holding, key=lambda root: len(root.path))
    directory = os.path.dirname(path)
    while True:
        root = inventory_root_at(directory)
        if root is not None:
            return root
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


__all__ = ["InventoryRoot", "find_inventory_roots", "inventory_root_at", "root_of_file"]
