"""The live inventories a long-lived adapter process keeps: one per configuration, bounded.

A Salt master calls `ext_pillar` and `master_tops` once per minion on every pillar refresh;
rebuilding the inventory from disk for each call makes a refresh O(N) per minion. A pool keeps
each configuration's inventory between calls and refreshes it per call (reclass_ng.api.
Inventory.refresh): only what the asked node read is checked, and only changed nodes are
rendered again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import reclass_ng
from reclass_ng.incremental.live import LIVE_STORAGE_TYPES

DEFAULT_LIMIT = 4  # configurations kept; a master rarely has more than one or two


class LiveInventoryPool:
    """At most `limit` live inventories by configuration; the least recently used is dropped.

    `open_inventory(base_uri, **settings)` opens an inventory the way the adapter does (its
    checks and error messages included). Each inventory is used under its own lock, so
    threads of one process may share the pool.
    """

    def __init__(self, open_inventory: Callable[..., reclass_ng.Inventory],
                 limit: int = DEFAULT_LIMIT) -> None:
        if limit < 1:
            raise ValueError("a pool keeps at least one inventory")
        self.open_inventory = open_inventory
        self.limit = limit
        self._inventories: OrderedDict[str, tuple[reclass_ng.Inventory, threading.Lock]] = \
            OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._inventories)

    def use(self, base_uri: str | None, settings: Mapping[str, Any], node: str | None,
            work: Callable[[reclass_ng.Inventory], Any]) -> Any:
        """`work(inventory)` on the configuration's inventory, refreshed for `node` (for
        everything when `node` is None) first."""
        key = repr((base_uri, sorted(settings.items())))
        with self._lock:
            entry = self._inventories.get(key)
            if entry is not None:
                self._inventories.move_to_end(key)
        if entry is None:
            inventory = self.open_inventory(base_uri, **settings)
            if inventory.settings.storage_type not in LIVE_STORAGE_TYPES:
                return work(inventory)  # read afresh on every call
            entry = (inventory, threading.Lock())
            with entry[1]:
                inventory.refresh()
            with self._lock:
                entry = self._inventories.setdefault(key, entry)
                while len(self._inventories) > self.limit:
                    self._inventories.popitem(last=False)
        inventory, lock = entry
        with lock:
            inventory.refresh(node)
            return work(inventory)
