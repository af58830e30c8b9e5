"""Watching an inventory: poll its files, re-render what changed, say which nodes changed.

Polling (a full `Inventory.refresh()` per round: listing and content digests) needs no
dependency and sees every change, including edits that keep a file's size and mtime; a round
costs a fraction of a second even on a few thousand files, which is fine for someone editing.

Each node is rendered on its own account: a node that fails does not hide the others, so a
round reports the healthy nodes' changes whatever fails elsewhere, every node that fails (or
fails differently than before), and the nodes that render again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reclass_ng
from reclass_ng.errors import ReclassError
from reclass_ng.records import Record


class WatchRound(Record):
    """What one round found.

    `changed`: nodes rendered in both rounds whose output differs; `added`/`removed`: nodes that
    appeared in or went from the listing (an added node that fails is also in `failing`);
    `fixed`: nodes that failed and render again; `failing`: each node that fails now and did not
    fail this way before, with its error; `still_failing`: the other nodes that fail.
    `error`: the inventory as a whole could not be read (settings, directories), nothing else
    is known. `first`: the round that first read the inventory: `rendered` and `failing` then
    describe every node. `recovered`: the inventory could not be read last round and can now.
    """

    __slots__ = ("changed", "added", "removed", "fixed", "failing", "still_failing",
                 "rendered", "error", "first", "recovered")
    _fields = __slots__
    changed: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    fixed: tuple[str, ...]
    failing: tuple[ReclassError, ...]
    still_failing: tuple[str, ...]
    rendered: int
    error: ReclassError | None
    first: bool
    recovered: bool

    def __init__(self, changed: tuple[str, ...] = (), added: tuple[str, ...] = (),
                 removed: tuple[str, ...] = (), fixed: tuple[str, ...] = (),
                 failing: tuple[ReclassError, ...] = (), still_failing: tuple[str, ...] = (),
                 rendered: int = 0, error: ReclassError | None = None,
                 first: bool = False, recovered: bool = False) -> None:
        _set = object.__setattr__
        _set(self, "changed", changed)
        _set(self, "added", added)
        _set(self, "removed", removed)
        _set(self, "fixed", fixed)
        _set(self, "failing", failing)
        _set(self, "still_failing", still_failing)
        _set(self, "rendered", rendered)
        _set(self, "error", error)
        _set(self, "first", first)
        _set(self, "recovered", recovered)

    @property
    def anything(self) -> bool:
        return bool(self.first or self.recovered or self.changed or self.added or self.removed
                    or self.fixed or self.failing or self.error)

    @property
    def failing_nodes(self) -> tuple[str, ...]:
        """The nodes of `failing`, in node order."""
        return tuple(err.node for err in self.failing if err.node is not None)


def comparable(info: dict[str, Any]) -> dict[str, Any]:
    """A nodeinfo without its timestamp (which differs between renders)."""
    meta = {k: v for k, v in info["__reclass__"].items() if k != "timestamp"}
    return {**info, "__reclass__": meta}


def render_each_node(inventory: reclass_ng.Inventory
                     ) -> tuple[dict[str, dict[str, Any]], dict[str, ReclassError]]:
    """Every node's nodeinfo, or the error it fails with (in node order), as of the last
    refresh. Raises only what stops the whole inventory (settings, directories)."""
    try:  # one batch render of every stale node, which shares class walks between them
        return dict(inventory.inventory()["nodes"]), {}
    except ReclassError as err:
        if err.node is None:
            raise
    # Some node fails: every result is kept by now, so each node is served without rendering.
    rendered: dict[str, dict[str, Any]] = {}
    failed: dict[str, ReclassError] = {}
    for name in inventory.node_names:
        try:
            rendered[name] = inventory.nodeinfo(name)
        except ReclassError as err:
            failed[name] = err.for_node(name)
    return rendered, failed


def _error_key(err: ReclassError) -> tuple[str, ...]:
    """What tells two errors of a node apart (their report)."""
    return tuple(err.report_lines())


class InventoryWatcher:
    """One live inventory, its nodes as last rendered and the errors of those that failed."""

    def __init__(self, inventory: reclass_ng.Inventory) -> None:
        self.inventory = inventory
        self.nodes: dict[str, dict[str, Any]] = {}
        self.errors: dict[str, ReclassError] = {}
        self.failed: ReclassError | None = None  # the inventory as a whole, last round
        self.seen = False  # whether a round listed the nodes

    def poll(self) -> WatchRound:
        """Refresh; when something changed (or the inventory could not be read), render and
        compare every node with the last round."""
        try:
            refresh = self.inventory.refresh()
            if not refresh.changed and self.failed is None and self.seen:
                return WatchRound()
            nodes, errors = render_each_node(self.inventory)
        except ReclassError as err:
            repeated = self.failed is not None and _error_key(self.failed) == _error_key(err)
            self.failed = err
            return WatchRound(error=err, first=not self.seen) if not repeated else WatchRound()
        first, recovered = not self.seen, self.seen and self.failed is not None
        self.failed = None
        self.seen = True
        before, errors_before = self.nodes, self.errors
        known = {*before, *errors_before}
        listed = [*nodes, *errors]
        if first:
            found = WatchRound(failing=tuple(errors[n] for n in sorted(errors)),
                               rendered=len(nodes), first=True)
        else:
            failing = tuple(errors[name] for name in sorted(errors)
                            if name not in errors_before
                            or _error_key(errors_before[name]) != _error_key(errors[name]))
            reported = {err.node for err in failing}
            found = WatchRound(
                changed=tuple(name for name in sorted(nodes) if name in before
                              and nodes[name] is not before[name]
                              and comparable(nodes[name]) != comparable(before[name])),
                added=tuple(sorted(name for name in listed if name not in known)),
                removed=tuple(sorted(name for name in known if name not in nodes
                                     and name not in errors)),
                fixed=tuple(sorted(name for name in nodes if name in errors_before)),
                failing=failing,
                still_failing=tuple(sorted(name for name in errors if name not in reported)),
                rendered=len(nodes), recovered=recovered)
        self.nodes, self.errors = nodes, errors
        return found


def watch(inventory: reclass_ng.Inventory, report: Callable[[WatchRound], None],
          sleep: Callable[[], None], rounds: int | None = None) -> None:
    """Poll `rounds` times (forever when None), reporting rounds that found something."""
    watcher = InventoryWatcher(inventory)
    done = 0
    while rounds is None or done < rounds:
        found = watcher.poll()
        if found.anything or done == 0:
            report(found)
        done += 1
        if rounds is None or done < rounds:
            sleep()
