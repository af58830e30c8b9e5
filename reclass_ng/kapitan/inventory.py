"""The reclass-ng inventory backend for Kapitan.

Written as Kapitan writes its own backends (kapitan/inventory/backends/reclass_rs), against the
public API of reclass-ng only (`reclass_ng.load`, `Inventory.inventory()`, `ReclassError`), so
it can be proposed upstream as `kapitan/inventory/backends/reclass_ng/__init__.py` unchanged
apart from its imports.

Settings come from the same place as for Kapitan's `reclass` backend: `get_reclass_config()`,
which starts from Kapitan's defaults (`targets/` as nodes, `classes/`, `allow_none_override`,
the `--compose-target-name` and `ignore_class_notfound` of the command line) and applies the
inventory's `reclass-config.yml`. The instance keeps nothing but what Kapitan's base class
keeps, so it pickles into compile workers as the other backends do.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from kapitan.errors import InventoryError
from kapitan.inventory import Inventory, InventoryTarget
from kapitan.inventory.backends.reclass import get_reclass_config

import reclass_ng
from reclass_ng.values import to_plain

logger = logging.getLogger(__name__)


class ReclassNgInventory(Inventory):
    """Kapitan targets rendered by reclass-ng (a drop-in for kapicorp-reclass)."""

    def render_targets(self, targets: list[InventoryTarget] | None = None,
                       ignore_class_not_found: bool = False) -> None:
        # The paths stay relative to the inventory (normalise_nodes_classes=False): reclass-ng
        # joins them to inventory_base_uri itself, as reclass-rs does.
        config = get_reclass_config(self.inventory_path, ignore_class_not_found,
                                    self.compose_target_name, False)
        base_uri = config.pop("inventory_base_uri", None) or self.inventory_path
        try:
            inventory = reclass_ng.load(base_uri, read_config=False, warn=logger.warning, **config)
            start = datetime.now(timezone.utc)
            rendered = inventory.inventory()
            logger.debug("Inventory rendering with reclass-ng took %s",
                         datetime.now(timezone.utc) - start)
        except reclass_ng.ReclassError as err:
            # The whole report, as `reclass` prints it: kapicorp's lines (what str(err) holds)
            # and below them where the problem is written, the reference chain, "did you mean".
            message = "\n".join(err.report_lines())
            logger.error("Inventory reclass-ng error: %s", message)
            raise InventoryError(message) from err

        for target_name, nodeinfo in rendered["nodes"].items():
            target = self.targets.get(target_name)
            if target is None:  # a node Kapitan did not find as a target file
                continue
            # The engine's containers remember where values came from; Kapitan's models and
            # YAML writers want the built-in types.
            target.parameters = to_plain(nodeinfo["parameters"])
            target.classes = list(nodeinfo["classes"])
            target.applications = list(nodeinfo["applications"])
            target.exports = to_plain(nodeinfo["exports"])
