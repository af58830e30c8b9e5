"""What a yaml_git or mixed inventory is: the snapshot of a storage whose class tree depends on
the node's environment (storage/split.py), for incremental rendering.

A yaml_git branch is read from a directory holding the files of its head commit (storage/
git_trees.py); a new commit is a new directory, so a file's path changes with every commit
even when its content does not. Files are therefore named here by where they are in the
inventory, not on disk: `nodes/<path below the nodes root>` and `classes[<environment>]/<path
below that environment's classes root>`. A node whose files have the same names and contents
in a new commit keeps its result (with the `__reclass__:uri` of its node file in the new
commit). Contents are compared by git's object ids (`git ls-tree`, once per commit) in
exported trees and by digests of the bytes in yaml_fs parts of a mixed storage.

The class trees of an environment are included once the storage has opened them (the
environments nodes were rendered in) and in every later snapshot of the same inventory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from reclass_ng.errors import ReclassError
from reclass_ng.incremental.snapshot import Digest, file_digest, names_digest
from reclass_ng.location import exported_commit
from reclass_ng.settings import Settings
from reclass_ng.storage.git_trees import blob_ids
from reclass_ng.storage.split import SplitStorage

NODES_TREE = "nodes/"


def classes_tree(environment: str) -> str:
    """The prefix naming the files of `environment`'s class tree."""
    return f"classes[{environment}]/"


class CommitDigests:
    """Object ids of the files of exported commits, asked from git once per commit; only the
    commits of the newest snapshot are kept."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], dict[str, str]] = {}
        self._used: dict[tuple[str, str], dict[str, str]] = {}

    def start(self) -> None:
        """A new snapshot is taken: forget the commits the last one did not use."""
        self._kept, self._used = self._used or self._kept, {}

    def digest(self, path: str) -> Digest | None:
        """The digest of a file: git's object id inside an exported commit, else its bytes'."""
        found = exported_commit(os.path.dirname(path))
        if found is None:
            return file_digest(path)
        mirror, commit, inside = found
        key = (mirror, commit)
        blobs = self._used.get(key)
        if blobs is None:
            blobs = self._kept.get(key)
            if blobs is None:
                try:
                    blobs = blob_ids(mirror, commit)
                except (ReclassError, OSError):
                    blobs = {}
            self._used[key] = blobs
        blob = blobs.get(f"{inside}/{os.path.basename(path)}" if inside
                         else os.path.basename(path))
        return bytes.fromhex(blob) if blob is not None else file_digest(path)


def _below(path: str, directory: str | None) -> str | None:
    if directory and path.startswith(directory + os.sep):
        return path[len(directory) + 1:].replace(os.sep, "/")
    return None


class SplitSnapshot:
    """The settings, node and class files (named by place, see the module docstring) and
    their digests of a yaml_git or mixed inventory. Same interface as InventorySnapshot."""

    paths_move = True  # the same file may be read from another directory in a new snapshot

    def __init__(self, settings: Settings, storage: SplitStorage, environments: Iterable[str],
                 digests: CommitDigests) -> None:
        self.settings = settings
        self.storage = storage
        self._digest = digests.digest
        digests.start()
        tree = storage.node_tree
        self.node_root = tree.nodes_dir
        self.node_paths: dict[str, str] = {name: tree.nodes[name].path for name in tree.nodes}
        self.nodes: dict[str, str] = {}
        self.digests: dict[str, Digest | None] = {}
        for name, path in self.node_paths.items():
            logical = NODES_TREE + (_below(path, self.node_root) or path)
            self.nodes[name] = logical
            self.digests[logical] = self._digest(path)
        self.class_roots: dict[str, str | None] = {}  # environment -> its classes directory
        self.classes: dict[str, str] = {}  # "<environment>\0<class name>" -> file
        for environment in dict.fromkeys(environments):
            self._add_environment(environment)
        self.nodes_key = names_digest(
            (name, path, (self.digests[path] or b"").hex())
            for name, path in sorted(self.nodes.items()))
        self._class_names_key: Digest | None = None

    def _add_environment(self, environment: str) -> None:
        try:
            tree = self.storage.classes_for(environment)
            class_paths = dict(tree.class_paths)
        except ReclassError:  # a branch gone: its nodes render again, and show the error
            self.class_roots[environment] = None
            return
        self.class_roots[environment] = root = tree.classes_dir
        prefix = classes_tree(environment)
        for name, path in class_paths.items():
            logical = prefix + (_below(path, root) or path)
            self.classes[f"{environment}\0{name}"] = logical
            self.digests[logical] = self._digest(path)
        self._class_names_key = None

    @property
    def environments(self) -> list[str]:
        return list(self.class_roots)

    @property
    def class_names_key(self) -> Digest:
        """One digest of every class name of every environment (what a missing class's
        suggestions and its being found depend on)."""
        if self._class_names_key is None:
            self._class_names_key = names_digest(
                (environment, "" if root is None else "open")
                for environment, root in self.class_roots.items())
            self._class_names_key = names_digest(
                [(self._class_names_key.hex(),), *((key,) for key in sorted(self.classes))])
        return self._class_names_key

    def include_opened_trees(self) -> None:
        """Add the class trees the storage opened since (nodes rendered in new environments)."""
        for environment in self.storage.opened_environments():
            if environment not in self.class_roots:
                self._add_environment(environment)

    def logical_paths(self, path: str) -> tuple[str, ...]:
        """The names of a file read from disk: one per environment whose tree holds it (the
        same commit may be the head of several branches); the path itself if none does."""
        below = _below(path, self.node_root)
        if below is not None:
            return (NODES_TREE + below,)
        names = tuple(classes_tree(environment) + rel
                      for environment, root in self.class_roots.items()
                      if (rel := _below(path, root)) is not None)
        return names or (path,)

    def class_keys(self, name: str, path: str) -> tuple[tuple[str, str], ...]:
        """(class key, file name) of class `name` read from `path`, per environment."""
        found = []
        for environment, root in self.class_roots.items():
            rel = _below(path, root)
            if rel is not None:
                found.append((f"{environment}\0{name}", classes_tree(environment) + rel))
        return tuple(found) or ((name, path),)

    def same_as(self, other: Any) -> bool:
        return (isinstance(other, SplitSnapshot) and self.settings == other.settings
                and self.node_paths == other.node_paths and self.classes == other.classes
                and self.class_roots == other.class_roots and self.digests == other.digests)
