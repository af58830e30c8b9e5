"""Has any directory of the inventory changed? The quick check of a long-lived inventory.

On Linux the kernel says so (inotify): a watch on every directory, taken before the storage
scans them, reports every entry created, deleted, moved, modified or whose attributes changed;
a check is one non-blocking read. Elsewhere, or when no inotify instance or watch is left
(they are limited per user), directories are compared by signature (snapshot.
DirectorySignatures). Either way the check also asks whether each path still names the
directory it named (snapshot.PathIdentities: a symlink switched, a directory replaced by a
rename), which no event or signature of a watched directory shows. This only says *whether*
to look: what changed is decided by content digests (a full refresh). File contents a node read are hashed on every quick check
anyway, so an edit is seen even where notifications are not delivered (a network file system
changed from another host).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from collections.abc import Iterable
from typing import Protocol

from reclass_ng.incremental.snapshot import (
    LOCAL_FILE_SYSTEMS,
    DirectorySignatures,
    PathIdentities,
)
from reclass_ng.storage.yaml_fs import walk_directories

_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = 0o2000000
_IN_ONLYDIR = 0x01000000
# modify, attrib, close_write, moved_from, moved_to, create, delete, delete_self, move_self
_MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800



class DirectoryCheck(Protocol):
    # True when `unchanged()` also answers for the content of every file in the directories
    # (a write to any of them is an event), so a caller need not read them to know.
    sees_file_changes: bool

    def unchanged(self) -> bool: ...

    def close(self) -> None: ...


def file_system_type(path: str) -> str | None:
    """The type of the file system `path` is on (Linux /proc/self/mountinfo), or None."""
    target = os.path.realpath(path)
    found: tuple[int, str] | None = None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
            for line in mounts:
                fields, _, rest = line.partition(" - ")
                parts = fields.split()
                if len(parts) < 5 or not rest:
                    continue
                point = parts[4].replace("\\040", " ")
                inside = target == point or target.startswith(point.rstrip("/") + "/")
                if inside and (found is None or len(point) >= found[0]):
                    found = (len(point), rest.split()[0])
    except OSError:
        return None
    return found[1] if found is not None else None


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 - present?
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


class InotifyDirectories:
    """Kernel notifications for every directory below the roots (one inotify instance)."""

    def __init__(self, roots: Iterable[str]) -> None:
        if _LIBC is None:
            raise OSError("inotify is not available")
        fd = _LIBC.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd: int | None = fd
        self.pid = os.getpid()  # a forked child shares the queue: it must not trust it
        self.changed = False
        self.sees_file_changes = False
        roots = list(roots)
        self.paths = PathIdentities(roots)  # before the walk: see PathIdentities
        linked: list[tuple[str, tuple[int, int]]] = []
        try:
            for root in roots:
                for directory in walk_directories(root, linked):
                    wd = _LIBC.inotify_add_watch(fd, os.fsencode(directory), _MASK | _IN_ONLYDIR)
                    if wd < 0:
                        raise OSError(ctypes.get_errno(), f"inotify_add_watch {directory} failed")
        except OSError:
            self.close()
            raise
        self.paths.add_linked(linked)
        self.sees_file_changes = all(file_system_type(root) in LOCAL_FILE_SYSTEMS
                                     for root in roots)

    def unchanged(self) -> bool:
        """True while no event arrived since the watches were taken and every path names
        the directory it named."""
        if self.changed or self.fd is None or os.getpid() != self.pid:
            return False
        try:
            if os.read(self.fd, 65536):
                self.changed = True  # any event (an overflow included): look again
        except BlockingIOError:
            pass
        except OSError:
            self.changed = True
        if not self.changed and not self.paths.unchanged():
            self.changed = True
        return not self.changed

    def close(self) -> None:
        if self.fd is not None and os.getpid() == self.pid:
            os.close(self.fd)
        self.fd = None

    def __del__(self) -> None:
        self.close()


class SignatureDirectories:
    """The portable check: directory signatures (see snapshot.DirectorySignatures)."""

    sees_file_changes = False  # a directory's signature changes with its entries only

    def __init__(self, roots: Iterable[str]) -> None:
        roots = list(roots)
        self.paths = PathIdentities(roots)  # before the walk: see PathIdentities
        linked: list[tuple[str, tuple[int, int]]] = []
        self.signatures = DirectorySignatures(roots, linked)
        self.paths.add_linked(linked)

    def unchanged(self) -> bool:
        return self.signatures.unchanged() and self.paths.unchanged()

    def close(self) -> None:
        pass


class AlwaysCheck:
    """No directories to watch (yaml_git trees): every quick check is a full refresh."""

    sees_file_changes = False

    def unchanged(self) -> bool:
        return False

    def close(self) -> None:
        pass


def watch_directories(roots: Iterable[str], use_inotify: bool = True) -> DirectoryCheck:
    """A check of the directories below `roots`, taken now (call it before scanning them)."""
    roots = list(roots)
    if use_inotify:
        try:
            return InotifyDirectories(roots)
        except OSError:
            pass
    return SignatureDirectories(roots)
