"""What an inventory is on disk: its settings, which node and class files exist, a digest of
every file's content, and signatures of its directories.

Content is compared by digest, never by size and modification time (an edit of the same size
that restores the mtime is still seen). Directory signatures (inode, mtime, ctime) are only a
hint for the quick per-node check of a long-lived inventory: a directory's ctime changes with
every entry added, removed or renamed and cannot be set back, and a signature taken less than
RACY_SECONDS after the directory changed is never trusted (coarse file system clocks could give
two changes the same time), as git does with its index.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Mapping

from reclass_ng.errors import ConfigError, YamlFileError
from reclass_ng.settings import CONFIG_FILE_NAME, DEFAULT_CONFIG_DIRS, Settings
from reclass_ng.storage.yaml_fs import YamlFsStorage, walk_directories
from reclass_ng.storage.yaml_load import read_input_file

RACY_SECONDS = 2.0

# File systems on which every write changes the file's stamp and the kernel reports it as an
# event (local ones). On network file systems (nfs, cifs, sshfs, ...) a change made on another
# host may not show in the attributes for seconds and sends no notification. (Here, not in
# dir_watch.py, so that reading stamps does not import ctypes.)
LOCAL_FILE_SYSTEMS = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "overlay", "zfs", "f2fs", "jfs",
    "reiserfs", "bcachefs", "nilfs2"})

Digest = bytes


def yaml_fs(storage: object) -> YamlFsStorage:
    """The storage, which incremental rendering only gets for yaml_fs inventories."""
    if not isinstance(storage, YamlFsStorage):
        raise ConfigError("incremental rendering reads yaml_fs inventories only")
    return storage


def storage_directories(settings: Settings) -> tuple[str, str]:
    """The nodes and classes directories of a yaml_fs inventory (as its storage opens them)."""
    base = os.path.expanduser(settings.inventory_base_uri or os.getcwd())
    return (os.path.join(base, os.path.expanduser(str(settings.nodes_uri))),
            os.path.join(base, os.path.expanduser(str(settings.classes_uri))))


def file_digest(path: str) -> Digest | None:
    """The digest of a file's bytes; None when the loader would not read it (missing, not a
    regular file, over its size limit): the render that follows says why, naming the file."""
    try:
        return hashlib.blake2b(read_input_file(path), digest_size=16).digest()
    except YamlFileError:
        return None


def names_digest(items: Iterable[tuple[str, ...]]) -> Digest:
    """One digest of a sequence of string tuples (a listing)."""
    digest = hashlib.blake2b(digest_size=16)
    for item in items:
        digest.update("\0".join(item).encode("utf-8", "surrogateescape") + b"\1")
    return digest.digest()


def local_devices(mountinfo: str = "/proc/self/mountinfo") -> frozenset[tuple[int, int]]:
    """(major, minor) of every mounted device whose file system is a local one."""
    devices = set()
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields, _, rest = line.partition(" - ")
                parts = fields.split()
                if len(parts) < 3 or not rest or rest.split()[0] not in LOCAL_FILE_SYSTEMS:
                    continue
                major, _, minor = parts[2].partition(":")
                if major.isdigit() and minor.isdigit():
                    devices.add((int(major), int(minor)))
    except OSError:
        return frozenset()
    return frozenset(devices)


class ConfigPlaces:
    """The paths of every place a reclass-config.yml is looked for (settings.
    find_config_file) for one base directory: made again only when the working directory,
    $HOME or the user changed (what `~` and the relative places depend on)."""

    __slots__ = ("base_dir", "_made_for", "_paths")

    def __init__(self, base_dir: str | None) -> None:
        self.base_dir = base_dir
        self._made_for: tuple[object, ...] | None = None
        self._paths: tuple[str, ...] = ()

    def paths(self) -> tuple[str, ...]:
        made_for = (os.getcwd(), os.environ.get("HOME"), os.getuid() if hasattr(os, "getuid")
                    else None)
        if made_for != self._made_for:
            directories = [self.base_dir] if self.base_dir else []
            directories += [os.getcwd(), *DEFAULT_CONFIG_DIRS]
            self._paths = tuple(os.path.join(os.path.expanduser(directory), CONFIG_FILE_NAME)
                                for directory in directories)
            self._made_for = made_for
        return self._paths


def config_stamps(base_dir: str | None | ConfigPlaces, local: frozenset[tuple[int, int]]
                  ) -> tuple[object, ...] | None:
    """The stat data of every place a reclass-config.yml is looked for (settings.
    find_config_file; `base_dir` or its ConfigPlaces), taken before the settings are read:
    while they stay the same, so do the settings. None when one changed less than
    RACY_SECONDS ago (a second change in the same clock tick could keep its stamp) or is on
    a device not in `local` (local_devices())."""
    places = base_dir if isinstance(base_dir, ConfigPlaces) else ConfigPlaces(base_dir)
    trusted_before = time.time_ns() - int(RACY_SECONDS * 1e9)
    stamps: list[object] = []
    for path in places.paths():
        try:
            stat = os.stat(path)
        except OSError:
            stamps.append(path)
            continue
        if (max(stat.st_mtime_ns, stat.st_ctime_ns) >= trusted_before
                or (os.major(stat.st_dev), os.minor(stat.st_dev)) not in local):
            return None
        stamps.append((path, stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns,
                       stat.st_ctime_ns))
    return tuple(stamps)


class PathIdentities:
    """(device, inode) of the directory each path names, every symbolic link on the way
    followed: of the nodes and classes directories, and of each symlinked directory inside
    them. A deploy that switches a symlink (`ln -sfn classes.v2 classes`, the whole inventory
    behind one) or replaces a directory (`mv inv inv.old; mv inv.new inv`) changes what a
    path means without an event in, or a new signature of, any directory read before: the
    identity behind the path is what changed.

    The identity of a root is taken before its tree is watched and scanned, that of a
    symlinked directory when the walk follows the link (walk_directories): a switch after
    either shows as a different identity at the next check."""

    __slots__ = ("identities",)

    def __init__(self, roots: Iterable[str]) -> None:
        self.identities: dict[str, tuple[int, int] | None] = {
            root: path_identity(root) for root in roots}

    def add_linked(self, linked: Iterable[tuple[str, tuple[int, int]]]) -> None:
        """Add the symlinked directories a walk followed, as (path, identity it used)."""
        self.identities.update(linked)

    def unchanged(self) -> bool:
        """True while every path still names the directory it named."""
        return all(path_identity(path) == identity
                   for path, identity in self.identities.items())


def path_identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of what `path` names, symbolic links followed; None if nothing."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)


class DirectorySignatures:
    """(inode, mtime, ctime) of every directory below the nodes and classes directories."""

    def __init__(self, roots: Iterable[str],
                 linked: list[tuple[str, tuple[int, int]]] | None = None) -> None:
        self.taken_at = time.time()
        self.signatures: dict[str, tuple[int, int, int] | None] = {}
        for root in roots:
            for directory in walk_directories(root, linked):
                self.signatures[directory] = _signature(directory)
        newest = max((sig[2] for sig in self.signatures.values() if sig is not None), default=0)
        self.racy = newest / 1e9 > self.taken_at - RACY_SECONDS

    def unchanged(self) -> bool:
        """True when no directory gained, lost or renamed an entry since (never when racy)."""
        if self.racy:
            return False
        return all(_signature(path) == sig for path, sig in self.signatures.items())


def _signature(path: str) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns)


class InventorySnapshot:
    """The settings, listing and file digests one render generation was made from."""

    def __init__(self, settings: Settings, storage: YamlFsStorage,
                 previous: InventorySnapshot | None = None,
                 digest: Callable[[str], Digest | None] = file_digest) -> None:
        self.settings = settings
        self.nodes: dict[str, str] = {name: storage.nodes[name].path for name in storage.nodes}
        self.classes: dict[str, str] = dict(storage.class_paths)
        self.digests: dict[str, Digest | None] = {
            path: digest(path) for path in (*self.nodes.values(), *self.classes.values())}
        self.class_names_key = names_digest((name,) for name in sorted(self.classes))
        self.nodes_key = names_digest(
            (name, path, (self.digests[path] or b"").hex())
            for name, path in sorted(self.nodes.items()))

    paths_move = False  # a file is read from the same path in every snapshot

    @property
    def node_paths(self) -> dict[str, str]:
        """Node name -> the file it is read from (the same as `nodes` here)."""
        return self.nodes

    def include_opened_trees(self) -> None:
        """Nothing to add: one class tree for every environment."""

    def logical_paths(self, path: str) -> tuple[str, ...]:
        """The names a file read from disk has in this snapshot: its path."""
        return (path,)

    def class_keys(self, name: str, path: str) -> tuple[tuple[str, str], ...]:
        """(class key, file name) of class `name` read from `path`."""
        return ((name, path),)

    def same_as(self, other: object) -> bool:
        return (isinstance(other, InventorySnapshot) and self.settings == other.settings
                and self.nodes == other.nodes and self.classes == other.classes
                and self.digests == other.digests)

    def changed_paths(self, other: InventorySnapshot) -> set[str]:
        """Files whose content differs (or which exist in only one of the two)."""
        mine, theirs = self.digests, other.digests
        return {path for path in mine.keys() | theirs.keys() if mine.get(path) != theirs.get(path)}


def digests_match(files: Iterable[tuple[str, Digest | None]],
                  known: Mapping[str, Digest | None] | None = None) -> bool:
    """True when every file still has its digest (read again, or looked up in `known`)."""
    for path, digest in files:
        now = known.get(path, b"") if known is not None else file_digest(path)
        if now != digest:
            return False
    return True
