"""The public entry points: `load()` and the Inventory it returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reclass_ng.collector import cycle_collection_paused
from reclass_ng.entity import Entity
from reclass_ng.errors import ReclassError
from reclass_ng.render import InventoryRenderer
from reclass_ng.settings import load_settings

if TYPE_CHECKING:  # concurrent.futures costs ~10 ms to import; only parallel renders need it
    from concurrent.futures import Executor

__all__ = ["Entity", "Inventory", "load"]


class Inventory(InventoryRenderer):
    """A reclass inventory: nodes, classes and settings, rendered on demand.

    `node_names` and `nodeinfo(name)` come from InventoryRenderer (reclass_ng.render).
    """

    def inventory(self, executor: Executor | None = None, *,
                  progress: Callable[[int, int], None] | None = None,
                  chunk_size: int | None = None) -> dict[str, Any]:
        """The `--inventory` structure: every node, and which nodes have each class/application.

        With an `executor` (a process pool, a Dask client's executor, ...) the nodes are
        rendered by its workers, in chunks of `chunk_size` (see reclass_ng.parallel); the result
        is the same. `progress(done, total)` is told how far the render is, two steps a node.
        """
        if executor is not None:
            from reclass_ng.parallel import render_inventory

            return render_inventory(self, executor, chunk_size=chunk_size, progress=progress)
        with cycle_collection_paused():
            return self.render_serially(progress)


def load(inventory_base_uri: str | None = None, *, read_config: bool = True,
         warn: Callable[[str], None] | None = None, **settings: Any) -> Inventory:
    """Open an inventory. Settings are reclass-config.yml keys; keyword values win over the file."""
    config_warnings: list[str] = []  # unknown reclass-config.yml keys, told once loaded
    try:
        resolved = load_settings(inventory_base_uri, settings, read_config=read_config,
                                 warn=config_warnings.append)
    except ReclassError:
        raise
    inventory = Inventory(resolved, warn=warn)
    for message in config_warnings:
        inventory.warn(message)
    return inventory
