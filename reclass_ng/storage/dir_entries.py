"""What a directory entry is to a scan of a yaml_fs tree: the one rule of every scan
(storage/yaml_fs.py, and the directory checks of incremental/ that watch what it reads).
"""

from __future__ import annotations

import os

EXTENSIONS = (".yml", ".yaml")
SKIPPED_DIRS = frozenset({"CVS", "SCCS"})

# What a directory entry is to a scan (entry_kind).
FILE, WALKED_DIRECTORY, SKIPPED_DIRECTORY = "file", "walked directory", "skipped directory"


def directory_identity(entry: os.DirEntry[str], device: int) -> tuple[int, int] | None:
    """(device, inode) of the directory `entry` names, following a symlink (so a link back to
    a directory of its own path is known); None if it cannot be read.
    `device` is that of the directory being listed (an entry's own inode needs no stat call)."""
    try:
        if entry.is_symlink():
            info = entry.stat()
            return (info.st_dev, info.st_ino)
        return (device, entry.inode())
    except OSError:
        return None


def entry_kind(entry: os.DirEntry[str]) -> str:
    """WALKED_DIRECTORY for a directory a scan descends into, SKIPPED_DIRECTORY for a hidden
    one (`.git`) or a version-control one (CVS, SCCS), FILE for anything else: an entry that
    cannot be stat'ed (a dangling symlink) counts as a file, as in os.walk."""
    try:
        is_dir = entry.is_dir()
    except OSError:
        return FILE
    if not is_dir:
        return FILE
    name = entry.name
    return SKIPPED_DIRECTORY if name[0] == "." or name in SKIPPED_DIRS else WALKED_DIRECTORY
