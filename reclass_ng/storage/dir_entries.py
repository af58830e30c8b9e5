"""What a directory's entries are to a scan of a yaml_fs tree: the one rule of every scan
(storage/yaml_fs.py, and the directory checks of incremental/ that watch what it reads).
"""

from __future__ import annotations

import os

EXTENSIONS = (".yml", ".yaml")
SKIPPED_DIRS = frozenset({"CVS", "SCCS"})


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


def directory_listing(path: str) -> tuple[list[str], list[os.DirEntry[str]]] | None:
    """(the names of its YAML files, the entries of the directories a scan descends into) of
    directory `path`, each sorted by name; None when it cannot be read (os.walk skips it too).

    A directory is walked unless it is hidden (`.git`) or a version-control one (CVS, SCCS).
    Anything else is a file (an entry that cannot be stat'ed, a dangling symlink, counts as
    one, as in os.walk); it is listed when its name ends in .yml or .yaml. Whether an entry is
    a directory is the type readdir gives (no stat call), but for a symlink.
    """
    # One call per directory, not per entry: a class tree's start-up scan is a few thousand
    # entries, and a Python call for each was a fifth of the scan.
    files = []
    walked = []
    try:
        with os.scandir(path) as scan:
            for entry in scan:
                name = entry.name
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if not is_dir:
                    if name.endswith(EXTENSIONS):
                        files.append(name)
                elif name[0] != "." and name not in SKIPPED_DIRS:
                    walked.append((name, entry))  # names differ: entries are never compared
    except OSError:
        return None
    files.sort()
    walked.sort()
    return files, [entry for _, entry in walked]
