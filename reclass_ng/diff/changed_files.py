"""Which files differ between two inventory directories: the causes a diff review names and
the input of `reclass-ng affected`.

Files are compared by content. Version-control metadata (`.git`) is skipped; nothing else is,
so a change to reclass-config.yml or to a file no node reads is listed too (the caller decides
what it means).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from reclass_ng.errors import ConfigError
from reclass_ng.storage.regular_file import open_regular_file

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
    # Opened the guarded way: a file listed as regular can be swapped for a FIFO before it is
    # opened, and a plain open would wait for a writer forever.
    first, first_info = _opened(a)
    try:
        second, second_info = _opened(b)
        try:
            if first_info.st_size != second_info.st_size:
                return False
            while True:
                chunk = os.read(first, CHUNK)
                if chunk != os.read(second, CHUNK):
                    return False
                if not chunk:
                    return True
        finally:
            os.close(second)
    finally:
        os.close(first)


def _opened(path: str) -> tuple[int, os.stat_result]:
    try:
        return open_regular_file(path)
    except OSError as err:
        raise ConfigError(f"{path}: cannot compare it: {err.strerror}") from None


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
