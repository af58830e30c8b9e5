"""The public entry points: `load()` and the Inventory it returns."""

from __future__ import annotations

from reclass_ng.collector import cycle_collection_paused
from reclass_ng.entity import Entity
from reclass_ng.errors import ReclassError
from reclass_ng.render import InventoryRenderer
from reclass_ng.settings import Settings, Speed
from reclass_ng.storage import load_settings
from reclass_ng.storage.base import Storage, floats_json_exact

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:  # concurrent.futures costs ~10 ms to import; only parallel renders need it
    from collections.abc import Callable, Sequence
    from concurrent.futures import Executor
    from typing import Any

    from reclass_ng.incremental.live import LiveRender, Refresh

__all__ = ["Entity", "Inventory", "Speed", "load", "other_nodes_errors"]


class Inventory(InventoryRenderer):
    """A reclass inventory: nodes, classes and settings, rendered on demand.

    `node_names` and `nodeinfo(name)` come from InventoryRenderer (reclass_ng.render). After
    the first `refresh()` the inventory stays current: see `refresh`.
    """

    def __init__(self, settings: Settings, warn: Callable[[str], None] | None = None,
                 storage: Storage | None = None, *,
                 reload: tuple[str | None, dict[str, Any], bool] | None = None,
                 config_warnings: Sequence[str] = (), speed: Speed | None = None) -> None:
        super().__init__(settings, warn, storage, speed=speed)
        # (base directory, explicit settings, read_config) as given to load(): what a
        # refresh reads again.
        self._reload = reload or (settings.inventory_base_uri, {}, False)
        # What reading the config file warned when the inventory was opened (load() tells
        # them): a refresh tells them again only once they differ.
        self._config_warnings = tuple(config_warnings)
        self._live: LiveRender | None = None

    def refresh(self, node: str | None = None) -> Refresh:
        """Bring the inventory up to date with its files, re-rendering only what changed.

        From the first call on, `node_names`, `nodeinfo()` and `inventory()` serve the files as
        of the last refresh: a node is rendered again only when a file it read (its node file,
        its classes, classes it did not find, the nodes its queries read) or the settings
        changed; the output is exactly a fresh render's. Files are compared by content. With
        `node`, only what that node reads is checked (cheap: for a caller about to serve one
        node), and everything when any of it changed. Returns what changed (see
        reclass_ng.incremental.live.Refresh); the first call renders everything again.
        """
        if self._live is None:
            from reclass_ng.incremental.live import LiveRender

            base, explicit, read_config = self._reload
            self._live = LiveRender(base, explicit, read_config, self.warn, speed=self.speed,
                                    told_config_warnings=self._config_warnings)
            return self._live.refresh()
        if node is not None:
            return self._live.refresh_for(node)
        return self._live.refresh()

    @property
    def floats_json_exact(self) -> bool:
        """Whether every float of what this inventory serves prints the same through orjson as
        through json (no float below 1e-4, NaN or infinity in the files it read: see
        reclass_ng.storage.base.floats_json_exact), so a JSON writer may skip checking."""
        if self._live is not None:
            return self._live.floats_json_exact
        return floats_json_exact(self.storage)

    @property
    def node_names(self) -> list[str]:
        """The inventory's node names, sorted."""
        if self._live is not None:
            return self._live.node_names
        return sorted(self.storage.nodes)

    def nodeinfo(self, name: str, extra: Sequence[Entity] = (), node_optional: bool = False,
                 environment: str | None = None) -> dict[str, Any]:
        """The `--nodeinfo` structure of one node (`environment`: see InventoryRenderer)."""
        if self._live is not None:
            return self._live.nodeinfo(name, extra, node_optional, environment)
        return super().nodeinfo(name, extra, node_optional, environment)

    def inventory(self, executor: Executor | None = None, *,
                  progress: Callable[[int, int], None] | None = None,
                  chunk_size: int | None = None) -> dict[str, Any]:
        """The `--inventory` structure: every node, and which nodes have each class/application.

        With an `executor` (a process pool, a Dask client's executor, ...) the nodes are
        rendered by its workers, in chunks of `chunk_size` (see reclass_ng.parallel); the result
        is the same. `progress(done, total)` is told how far the render is, two steps a node.
        """
        if self._live is not None:  # only changed nodes are rendered, in this thread
            return self._live.inventory()
        if executor is not None:
            from reclass_ng.parallel import render_inventory

            return render_inventory(self, executor, chunk_size=chunk_size, progress=progress)
        with cycle_collection_paused():
            return self.render_serially(progress)


def load(inventory_base_uri: str | None = None, *, read_config: bool = True,
         warn: Callable[[str], None] | None = None, speed: Speed | None = None,
         kapitan: bool = False, **settings: Any) -> Inventory:
    """Open an inventory. Settings are reclass-config.yml keys; keyword values win over the file.
    `speed`: which fast paths renders take (default: RECLASS_NG_SPEED's, see Speed).
    `kapitan`: the directory is a Kapitan inventory, read as Kapitan's reclass backend reads it
    (storage.kapitan_settings: Kapitan's defaults, then its reclass-config.yml)."""
    config_warnings: list[str] = []  # unknown reclass-config.yml keys, told once loaded
    if kapitan:
        from reclass_ng.storage.kapitan_settings import kapitan_inventory_settings

        inventory_base_uri = inventory_base_uri or "."
        settings = {**kapitan_inventory_settings(inventory_base_uri, config_warnings.append),
                    **settings}
        read_config = False
    try:
        resolved = load_settings(inventory_base_uri, settings, read_config=read_config,
                                 warn=config_warnings.append)
    except ReclassError:
        raise
    inventory = Inventory(resolved, warn=warn, reload=(inventory_base_uri, settings, read_config),
                          config_warnings=config_warnings, speed=speed)
    for message in config_warnings:
        inventory.warn(message)
    return inventory


def other_nodes_errors(inventory: InventoryRenderer, first: ReclassError) -> list[ReclassError]:
    """After rendering every node of `inventory` failed at `first`: the errors of the other
    nodes, so that a run reports them all (in node order)."""
    errors: list[ReclassError] = []
    for name in inventory.node_names:
        if name == first.node:
            continue
        try:
            inventory.nodeinfo(name)
        except ReclassError as err:
            errors.append(err.for_node(name))
    return errors
