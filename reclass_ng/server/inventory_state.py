"""The inventory as the service sees it: groups, group tree and reclass inventory, re-read when
any file changes on disk.

Hand edits (and `git pull`) must show up without a restart, so each request compares a cheap
signature of the tree (every file's path, size, mtime, ctime and inode) with the one the cached
snapshot was built from, and rebuilds the snapshot when they differ. The ctime and inode catch
a same-size edit that restores the mtime (`cp -p`, `rsync -a`). Writes do not trust even that:
under the lock they compare the bytes of every group file with the snapshot's. The reclass
inventory is one live inventory (reclass_ng.incremental): the signature says when to refresh
it, the refresh compares file contents and renders again only the nodes they affect.

A snapshot keeps the bytes each group was parsed from, so a group's data, `serial_number` and
ETag in one answer always describe the same version of its file.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import attrs

import reclass_ng
from reclass_ng.classifier.errors import GroupProblem
from reclass_ng.classifier.group_files import groups_dir, groups_from_sources, read_group_sources
from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.errors import ReclassError
from reclass_ng.incremental.snapshot import RACY_SECONDS
from reclass_ng.server.errors import INVALID_INVENTORY, INVENTORY_ERROR, ApiError

Signature = tuple[tuple[str, int, int, int, int], ...]


def tree_signature(top: Path) -> Signature:
    """(path, size, mtime_ns, ctime_ns, inode) of every non-hidden file below `top`, sorted.

    Runs on every request, so it uses os.scandir (no path joining, one stat per file)."""
    entries: list[tuple[str, int, int, int, int]] = []
    pending = [str(top)]
    while pending:
        try:
            scanner = os.scandir(pending.pop())
        except OSError:
            continue  # removed while we walked; the next request sees the new state
        with scanner:
            for entry in scanner:
                if entry.name.startswith("."):
                    continue  # lock file, our own temporary files, hidden directories
                try:
                    if entry.is_dir():
                        pending.append(entry.path)
                        continue
                    stat = entry.stat()
                except OSError:
                    continue
                entries.append((entry.path, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns,
                                stat.st_ino))
    entries.sort()
    return tuple(entries)


def racy_signature(signature: Signature) -> bool:
    """True when a file changed within RACY_SECONDS: a second edit in the same tick of a
    coarse file system clock could leave the signature as it is, so content decides."""
    newest = max((entry[3] for entry in signature), default=0)
    return newest / 1e9 > time.time() - RACY_SECONDS


@attrs.frozen
class Snapshot:
    """The inventory as read at one signature."""

    signature: Signature
    groups: tuple[Group, ...]
    problems: tuple[GroupProblem, ...]
    tree: GroupTree | None
    sources: dict[str, bytes | str] = attrs.field(factory=dict, eq=False, repr=False)

    def group(self, group_id: str) -> Group | None:
        return next((g for g in self.groups if g.id == group_id), None)

    def content(self, group: Group) -> bytes:
        """The bytes of the group's file that `group` was parsed from."""
        found = self.sources.get(group.file or "")
        return found if isinstance(found, bytes) else b""

    def valid_tree(self) -> GroupTree:
        """The group tree, or a 500 listing every problem in the group files."""
        if self.tree is None and not self.problems:
            raise ApiError(500, INVALID_INVENTORY, "The inventory has no groups: add groups/ "
                           "with a root group (see doc/node-groups.rst)", None)
        if self.tree is None:
            raise ApiError(500, INVALID_INVENTORY,
                           f"The groups/ files have {len(self.problems)} problem(s); fix them "
                           "(`reclass-ng groups validate`) before classifying",
                           [{"file": p.file, **p.to_error()} for p in self.problems])
        return self.tree


class InventoryState:
    """Cached snapshot of one inventory directory, refreshed when its files change."""

    def __init__(self, inventory_dir: str | os.PathLike[str]) -> None:
        # Not resolved: with `-b /srv/current` and `current -> releases/r1`, a release switch
        # (`ln -sfn releases/r2 current`) must be served, not the release named at start.
        self.inventory_dir = Path(os.path.abspath(inventory_dir))
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._inventory: tuple[Signature, reclass_ng.Inventory] | None = None

    def snapshot(self) -> Snapshot:
        """The groups as on disk, by the files' signature (cheap: one stat per file)."""
        signature = tree_signature(self.inventory_dir)
        with self._lock:
            if self._snapshot is None or self._snapshot.signature != signature:
                self._snapshot = self._read(signature, self._sources())
            return self._snapshot

    def write_snapshot(self) -> Snapshot:
        """The groups as on disk, checked byte for byte: for writes, under the inventory lock,
        where a stale snapshot would mean checking a change against the wrong version."""
        signature = tree_signature(self.inventory_dir)
        sources = self._sources()
        with self._lock:
            if self._snapshot is None or self._snapshot.sources != sources:
                self._snapshot = self._read(signature, sources)
            return self._snapshot

    def _sources(self) -> dict[str, bytes | str]:
        if not groups_dir(self.inventory_dir).is_dir():
            return {}
        return read_group_sources(self.inventory_dir)

    def _read(self, signature: Signature, sources: dict[str, bytes | str]) -> Snapshot:
        groups: list[Group] = []
        problems: list[GroupProblem] = []
        if sources:
            groups, problems = groups_from_sources(sources)
        tree = None
        if not problems and groups:
            tree = GroupTree.build(groups, str(groups_dir(self.inventory_dir)))
        return Snapshot(signature, tuple(groups), tuple(problems), tree, sources)

    def inventory(self, snapshot: Snapshot | None = None) -> reclass_ng.Inventory:
        """The reclass inventory (nodes/ and classes/), one live inventory kept current; pass
        the request's snapshot to skip listing the files a second time.

        The signature only says whether to look: when it changed, or is too recent to trust
        (racy_signature), `Inventory.refresh()` compares every file by content and renders
        again only the nodes whose files changed. A yaml_git or mixed inventory is refreshed
        on every call (its branches are not in this directory)."""
        signature = (snapshot or self.snapshot()).signature
        with self._lock:
            try:
                if self._inventory is None:
                    loaded = reclass_ng.load(str(self.inventory_dir))
                    loaded.refresh()
                else:
                    loaded = self._inventory[1]
                    if (self._inventory[0] != signature or racy_signature(signature)
                            or loaded.settings.storage_type != "yaml_fs"):
                        loaded.refresh()
            except ReclassError as err:
                self._inventory = None  # opened again by the next request
                raise ApiError(500, INVENTORY_ERROR, str(err),
                               {"inventory": str(self.inventory_dir)}) from err
            self._inventory = (signature, loaded)
            return loaded

    def node_file(self, name: str) -> Path | None:
        """The nodes/ file of a node, or None when it has none."""
        found = self.inventory().storage.nodes.get(name)
        return Path(found.path) if found is not None else None

    def group_path(self, group: Group) -> Path:
        assert group.file is not None  # groups read from files always know theirs
        return self.inventory_dir / group.file

