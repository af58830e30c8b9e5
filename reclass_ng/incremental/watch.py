"""Watching an inventory: poll its files, re-render what changed, say which nodes changed.

Polling (a full `Inventory.refresh()` per round: listing and content digests) needs no
dependency and sees every change, including edits that keep a file's size and mtime; a round
costs a fraction of a second even on a few thousand files, which is fine for someone editing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reclass_ng
from reclass_ng.errors import ReclassError
from reclass_ng.records import Record


class WatchRound(Record):
    """What one round found: nodes whose output changed, appeared or went; or the error."""

    __slots__ = ("changed", "added", "removed", "error")
    _fields = __slots__
    changed: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    error: ReclassError | None

    def __init__(self, changed: tuple[str, ...] = (), added: tuple[str, ...] = (),
                 removed: tuple[str, ...] = (), error: ReclassError | None = None) -> None:
        _set = object.__setattr__
        _set(self, "changed", changed)
        _set(self, "added", added)
        _set(self, "removed", removed)
        _set(self, "error", error)

    @property
    def anything(self) -> bool:
        return bool(self.changed or self.added or self.removed or self.error)


def comparable(info: dict[str, Any]) -> dict[str, Any]:
    """A nodeinfo without its timestamp (which differs between renders)."""
    meta = {k: v for k, v in info["__reclass__"].items() if k != "timestamp"}
    return {**info, "__reclass__": meta}


class InventoryWatcher:
    """One live inventory and the nodes as last rendered without error."""

    def __init__(self, inventory: reclass_ng.Inventory) -> None:
        self.inventory = inventory
        self.nodes: dict[str, dict[str, Any]] = {}
        self.failed: ReclassError | None = None

    def poll(self) -> WatchRound:
        """Refresh; when something changed (or the last round failed), render and compare."""
        try:
            refresh = self.inventory.refresh()
            if not refresh.changed and self.failed is None and self.nodes:
                return WatchRound()
            nodes = self.inventory.inventory()["nodes"]
        except ReclassError as err:
            repeated = self.failed is not None and str(self.failed) == str(err)
            self.failed = err
            return WatchRound() if repeated else WatchRound(error=err)
        self.failed = None
        before = self.nodes
        changed = tuple(name for name in nodes if name in before
                        and nodes[name] is not before[name]
                        and comparable(nodes[name]) != comparable(before[name]))
        found = WatchRound(changed, tuple(name for name in nodes if name not in before),
                           tuple(name for name in before if name not in nodes))
        self.nodes = {name: info for name, info in nodes.items()}
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
