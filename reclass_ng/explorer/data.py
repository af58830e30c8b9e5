"""The explorer's data: what the pages show, asked of the engine and the existing tools.

`ExplorerData` sits on the service's own InventoryState (the files, re-read when they change)
and ObservedState (the facts nodes reported), so the explorer shows exactly what the API
serves. It names what it reads of them as protocols, so that the explorer, a tool, does not
import the server, the integration that mounts it (reclass_ng.server.explorer_routes).
Everything derived from the files belongs to one snapshot signature; the caches here are owned
by the ExplorerData object and bounded.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import attrs

import reclass_ng
from reclass_ng.cache import BoundedCache
from reclass_ng.classifier.classification import classification_steps
from reclass_ng.classifier.explanation import explanation_from_steps
from reclass_ng.classifier.facts import trusted_with_certname
from reclass_ng.classifier.groups import Group
from reclass_ng.diff import InventoryDiff, compare, render_side
from reclass_ng.diff.sources import exported_revision, repository_of, short_revision
from reclass_ng.errors import ConfigError, ReclassError
from reclass_ng.explorer.catalogue import NodeCatalogue, error_text, groups_matching
from reclass_ng.explorer.class_graph import ClassGraph
from reclass_ng.explorer.provenance import NodeExplanation
from reclass_ng.schemas import Violation, check_node, load_schemas

if TYPE_CHECKING:  # the protocol below names it; the explorer reads the tree it is given
    from reclass_ng.classifier.hierarchy import GroupTree

PROVENANCE_CACHE_SIZE = 32  # node traces kept (a trace is one node's merge, replayed)
DIFF_CACHE_SIZE = 4  # diffs kept (each renders the inventory twice)
WORKING_TREE = ""  # the diff side that is the directory as it is now


class InventorySnapshot(Protocol):
    """The files as read at one signature (the service's Snapshot is one)."""

    @property
    def signature(self) -> Hashable: ...

    @property
    def tree(self) -> GroupTree | None: ...


SnapshotT = TypeVar("SnapshotT", bound=InventorySnapshot)
SnapshotT_contra = TypeVar("SnapshotT_contra", bound=InventorySnapshot, contravariant=True)


class LiveInventory(Protocol[SnapshotT_contra]):
    """The inventory directory and its reclass inventory at a snapshot (the service's
    InventoryState is one)."""

    @property
    def inventory_dir(self) -> Path: ...

    def inventory(self, snapshot: SnapshotT_contra) -> reclass_ng.Inventory: ...


class StoredFacts(Protocol):
    """The facts each node last reported (the service's ObservedState is one)."""

    def runtime(self, node: str) -> dict[str, Any] | None: ...


@attrs.frozen
class NodeGroups:
    """The groups a node matches with its stored facts, and the classifier's explanation."""

    facts: dict[str, Any] | None  # {fact, trusted} as stored, None when it never reported
    matched: tuple[Group, ...]
    leaves: tuple[Group, ...]
    explanation: dict[str, Any]


@attrs.frozen
class DiffResult:
    old_label: str
    new_label: str
    diff: InventoryDiff | None
    error: str | None


class ExplorerData(Generic[SnapshotT]):
    """Read-only views of one inventory directory for the explorer pages."""

    def __init__(self, state: LiveInventory[SnapshotT], observed: StoredFacts) -> None:
        self.state = state
        self.observed = observed
        # (signature, what) -> the catalogue or the class graph of a snapshot
        self._per_snapshot: BoundedCache[tuple[Any, str], Any] = BoundedCache(4)
        self._provenance: BoundedCache[tuple[Any, str], NodeExplanation] = \
            BoundedCache(PROVENANCE_CACHE_SIZE)
        self._diffs: BoundedCache[tuple[str, str, Any], DiffResult] = \
            BoundedCache(DIFF_CACHE_SIZE)
        self._build_lock = threading.Lock()  # one full render at a time

    # -- the files as they are now ----------------------------------------------------------

    def inventory(self, snapshot: SnapshotT) -> reclass_ng.Inventory:
        return self.state.inventory(snapshot)

    def catalogue(self, snapshot: SnapshotT) -> NodeCatalogue:
        """Every node rendered (once per snapshot: the first page after a change waits)."""
        key = (snapshot.signature, "catalogue")

        def build(key: tuple[Any, str]) -> NodeCatalogue:
            with self._build_lock:  # a second request waits for the first one's render
                built = self._per_snapshot.peek(key)
                return built if built is not None else NodeCatalogue.build(
                    self.inventory(snapshot), snapshot.tree, self.observed.runtime)
        return self._per_snapshot.get(key, build)

    def class_graph(self, snapshot: SnapshotT) -> ClassGraph:
        return self._per_snapshot.get((snapshot.signature, "classes"),
                                      lambda _key: ClassGraph(self.inventory(snapshot)))

    # -- one node ---------------------------------------------------------------------------

    def provenance(self, snapshot: SnapshotT, node: str) -> NodeExplanation:
        """The node's trace; raises the engine's error when the node does not render."""
        return self._provenance.get((snapshot.signature, node),
                                    lambda _key: NodeExplanation(self.inventory(snapshot), node))

    def schema_violations(self, prov: NodeExplanation) -> tuple[list[Violation], str | None] | None:
        """The node's parameter schema violations (reclass_ng.schemas) and the message of a
        bad schema; None when the inventory attaches no schema. Schemas are read for each
        page: an edited schema file shows at once, and they are small."""
        base = prov.trace.base_dir
        try:
            schemas = load_schemas(base, prov.delimiter)
        except ConfigError as err:
            return [], err.message
        if schemas is None:
            return None
        return check_node(schemas, prov.node, prov.info["parameters"], prov.trace.provenance,
                          base), None

    def node_groups(self, snapshot: SnapshotT, node: str) -> NodeGroups | None:
        tree = snapshot.tree
        if tree is None:
            return None
        stored = self.observed.runtime(node)
        facts = stored or {}
        steps = classification_steps(tree, node, facts.get("fact"),
                                     trusted_with_certname(node, facts.get("trusted")))
        return NodeGroups(stored, steps.matched, steps.leaves,
                          explanation_from_steps(tree, steps))

    def group_nodes(self, snapshot: SnapshotT) -> dict[str, list[str]]:
        """Group id -> the inventory's nodes it matches with their stored facts (matching
        needs names and facts only: no node is rendered)."""
        found: dict[str, list[str]] = {}
        tree = snapshot.tree
        if tree is None:
            return found
        for name in self.inventory(snapshot).node_names:
            for group in groups_matching(tree, name, self.observed.runtime(name)):
                found.setdefault(group.id, []).append(name)
        return found

    # -- diff -------------------------------------------------------------------------------

    def revisions(self, limit: int = 30) -> list[tuple[str, str]]:
        """(commit, subject) of the latest commits touching the inventory, newest first."""
        directory = str(self.state.inventory_dir)
        try:
            top, prefix = repository_of(directory)
        except ReclassError:
            return []
        proc = subprocess.run(["git", "log", f"-n{limit}", "--format=%h%x00%s", "--",
                               prefix or "."], cwd=top, capture_output=True, check=False)
        if proc.returncode != 0:
            return []
        lines = proc.stdout.decode(errors="replace").splitlines()
        return [tuple(line.split("\0", 1)) for line in lines if "\0" in line]  # type: ignore[misc]

    def diff(self, snapshot: SnapshotT, old: str, new: str) -> DiffResult:
        """The `reclass-ng diff` of two revisions (WORKING_TREE: the directory as it is)."""
        key = (old, new, snapshot.signature if WORKING_TREE in (old, new) else None)
        return self._diffs.get(key, lambda _key: self._compute_diff(old, new))

    def _compute_diff(self, old: str, new: str) -> DiffResult:
        directory = str(self.state.inventory_dir)
        labels = []
        try:
            for revision in (old, new):
                labels.append("working tree" if revision == WORKING_TREE else
                              _revision_label(revision, short_revision(directory, revision)))
            with _side(directory, old) as old_dir, _side(directory, new) as new_dir:
                result = compare(render_side(old_dir), render_side(new_dir))
        except ReclassError as err:
            labels += ["?"] * (2 - len(labels))
            return DiffResult(labels[0], labels[1], None, error_text(err))
        return DiffResult(labels[0], labels[1], result, None)


def _revision_label(revision: str, short: str) -> str:
    same = revision.startswith(short) or short.startswith(revision)
    return short if same else f"{revision} ({short})"


@contextlib.contextmanager
def _side(directory: str, revision: str) -> Iterator[str]:
    """The directory of one diff side: the working tree, or the revision exported for the diff."""
    if revision == WORKING_TREE:
        yield directory
    else:
        with exported_revision(directory, revision) as exported:
            yield exported
