"""Finding one node's or one class's file without scanning a whole yaml_fs tree.

`reclass --nodeinfo` reads a handful of files of an inventory of thousands; listing every
directory of classes/ and nodes/ up front made its start grow with the inventory. Here a class
is found by listing only the directories its dotted name can lead to (each at most once per
process), and a node by one walk that only compares file names, building no index. Both return
every file that names what was asked for: more than one is a duplicate name, which the caller
reports through the full scan (storage/yaml_fs.py), so the message is the one reclass prints.

The full scans of yaml_fs.py stay the reference: tests/test_storage_lookup.py checks that
these lookups find exactly what those scans name, on generated trees.
"""

from __future__ import annotations

import os

EXTENSIONS = (".yml", ".yaml")
SKIPPED_DIRS = frozenset({"CVS", "SCCS"})

# What a directory entry is to a scan (entry_kind).
FILE, WALKED_DIRECTORY, SKIPPED_DIRECTORY = "file", "walked directory", "skipped directory"

# stem -> file names with that stem (two: `x.yml` and `x.yaml`, a duplicate), and
# sub-directory name -> its path, of one directory.
Listing = tuple[dict[str, list[str]], dict[str, str]]


def directory_identity(entry: os.DirEntry[str], device: int) -> tuple[int, int] | None:
    """(device, inode) of the directory `entry` names, following a symlink (so a directory
    reached twice, or a link back up the tree, is walked once); None if it cannot be read.
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
    cannot be stat'ed (a dangling symlink) counts as a file, as in os.walk. The one rule of
    every scan of yaml_fs trees, the full ones (yaml_fs) and the lookups here."""
    try:
        is_dir = entry.is_dir()
    except OSError:
        return FILE
    if not is_dir:
        return FILE
    name = entry.name
    return SKIPPED_DIRECTORY if name[0] == "." or name in SKIPPED_DIRS else WALKED_DIRECTORY


def list_directory(directory: str) -> Listing:
    """The YAML files and the sub-directories a scan descends into, of one directory (an
    unreadable directory lists nothing, as in the full scan)."""
    files: dict[str, list[str]] = {}
    subdirs: dict[str, str] = {}
    try:
        with os.scandir(directory) as scan:
            for entry in scan:
                name = entry.name
                kind = entry_kind(entry)
                if kind is WALKED_DIRECTORY:
                    subdirs[name] = entry.path
                elif kind is FILE and name.endswith(EXTENSIONS):
                    stem = name[:-4] if name[-4:] == ".yml" else name[:-5]
                    files.setdefault(stem, []).append(name)
    except OSError:
        pass
    return files, subdirs


class ClassFinder:
    """The files naming a class, found by listing only the directories its name leads to.

    `classes/a/b.c.yml`, `classes/a.b/c.yml`, `classes/a.b.c.yml` and `classes/a/b/c/init.yml`
    all name class `a.b.c`: a name is split at each of its dots into a directory part and the
    rest, and only directories that exist are listed. The name is never joined into a path,
    so no name can reach outside classes/. Listings are kept for the life of the storage (one
    per directory of classes/ at most).
    """

    __slots__ = ("top", "_listings")

    def __init__(self, top: str) -> None:
        self.top = top
        self._listings: dict[str, Listing] = {}

    def files_naming(self, name: str) -> list[str]:
        """Every class file whose class name is `name` (several: a duplicate name)."""
        found: list[str] = []
        self._search(self.top, name, True, found)
        return found

    def _listing(self, directory: str) -> Listing:
        listing = self._listings.get(directory)
        if listing is None:
            listing = self._listings[directory] = list_directory(directory)
        return listing

    def _search(self, directory: str, rest: str, at_top: bool, found: list[str]) -> None:
        files, subdirs = self._listing(directory)
        # `dir/init.yml` names `dir`, not `dir.init` (a top-level init.yml is class `init`).
        if at_top or rest != "init":
            found.extend(directory + os.sep + filename for filename in files.get(rest, ()))
        same = subdirs.get(rest)
        if same is not None:
            found.extend(same + os.sep + filename
                         for filename in self._listing(same)[0].get("init", ()))
        dot = rest.find(".")
        while dot != -1:
            below = subdirs.get(rest[:dot])
            if below is not None:
                self._search(below, rest[dot + 1:], False, found)
            dot = rest.find(".", dot + 1)


def find_node_files(nodes_dir: str, name: str, compose_node_name: bool
                    ) -> list[tuple[str, str, str]]:
    """(directory, file name, directory below nodes/ + os.sep) of every file naming node
    `name`: one walk over nodes/ that compares file names only (without compose_node_name a
    node may be in any directory). Each real directory is read once, so a symlink loop ends;
    several results are a duplicate name."""
    found: list[tuple[str, str, str]] = []
    try:
        top = os.stat(nodes_dir)
    except OSError:
        return found
    seen = {(top.st_dev, top.st_ino)}
    # (directory, its path below nodes/, the node name a file there is named after, minus
    # its extension); with compose_node_name only directories whose dotted path starts the
    # name can hold it (and every directory of a tree whose first component starts with `_`).
    pending: list[tuple[str, str, str, int]] = [(nodes_dir, "", name, top.st_dev)]
    while pending:
        directory, relative, stem, device = pending.pop()
        try:
            scan = os.scandir(directory)
        except OSError:
            continue
        with scan:
            for entry in scan:
                kind = entry_kind(entry)
                entry_name = entry.name
                if kind is FILE:
                    if entry_name == stem + ".yml" or entry_name == stem + ".yaml":
                        found.append((directory, entry_name, relative))
                    continue
                if kind is SKIPPED_DIRECTORY:
                    continue
                below = _stem_below(stem, entry_name, relative, name, compose_node_name)
                if below is None:
                    continue
                identity = directory_identity(entry, device)
                if identity is None or identity in seen:
                    continue
                seen.add(identity)
                pending.append((entry.path, relative + entry_name + os.sep, below, identity[0]))
    return found


def _stem_below(stem: str, subdir: str, relative: str, name: str,
                compose_node_name: bool) -> str | None:
    # The file stem naming the node inside `subdir` of a directory whose files need `stem`;
    # None when no file below `subdir` can name it.
    if not compose_node_name or (relative or subdir).startswith("_"):
        return name  # named by the file's base name alone
    if stem.startswith(subdir + "."):
        return stem[len(subdir) + 1:]
    return None
