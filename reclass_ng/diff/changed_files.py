"""Which files differ between two inventory directories: the causes a diff review names and
the input of `reclass-ng affected`.

Files are compared by content. Version-control metadata (`.git`) is skipped; nothing else is,
so a change to reclass-config.yml or to a file no node reads is listed too (the caller decides
what it means).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn"})
# Two files of more than this are compared in chunks rather than read whole.
CHUNK = 1 << 20


def inventory_files(root: str) -> Iterator[str]:
    """Relative paths (with `/`) of the regular files below `root`, symbolic links skipped."""
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRECTORIES
                                   and not os.path.islink(os.path.join(directory, d)))
        for name in sorted(files):
            path = os.path.join(directory, name)
            if os.path.isfile(path) and not os.path.islink(path):
                yield os.path.relpath(path, root).replace(os.sep, "/")


def _same_content(a: str, b: str) -> bool:
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as first, open(b, "rb") as second:
        while True:
            chunk = first.read(CHUNK)
            if chunk != second.read(CHUNK):
                return False
            if not chunk:
                return True


def changed_files(old_root: str, new_root: str) -> dict[str, str]:
    """Relative path -> "added", "removed" or "modified", for every file that differs."""
    old = set(inventory_files(old_root))
    new = set(inventory_files(new_root))
    changes: dict[str, str] = {}
    for path in sorted(old | new):
        if path not in old:
            changes[path] = "added"
        elif path not in new:
            changes[path] = "removed"
        elif not _same_content(os.path.join(old_root, path), os.path.join(new_root, path)):
            changes[path] = "modified"
    return changes
