"""The reclass-ng inventory backend for Kapitan.

Written as Kapitan writes its own backends (kapitan/inventory/backends/reclass_rs), against the
public API of reclass-ng only (`reclass_ng.load`, `Inventory.inventory()`, `ReclassError`, and
the setting names of `reclass_ng.settings` through `reclass_ng.storage.kapitan_settings`), so
it can be proposed upstream as `kapitan/inventory/backends/reclass_ng/__init__.py` (with
kapitan_settings.py beside it) unchanged apart from its imports.

Settings come from the same place as for Kapitan's `reclass` backend: `get_reclass_config()`,
which starts from Kapitan's defaults (`targets/` as nodes, `classes/`, `allow_none_override`,
the `--compose-target-name` and `ignore_class_notfound` of the command line) and applies the
inventory's `reclass-config.yml`; `kapitan_load_settings` then keeps and ignores the keys
Kapitan's backend keeps and ignores, and roots relative paths at the inventory, never at the
working directory. The instance keeps nothing but what Kapitan's base class keeps, so it pickles
into compile workers as the other backends do.
"""

from __future__ import annotations

import logging
import os
from datetime import datetime, timezone

from kapitan.errors import InventoryError
from kapitan.inventory import Inventory, InventoryTarget
from kapitan.inventory.backends.reclass import get_reclass_config

import reclass_ng
from reclass_ng.storage.kapitan_settings import kapitan_load_settings
from reclass_ng.values import to_plain

logger = logging.getLogger(__name__)


class ReclassNgInventory(Inventory):
    """Kapitan targets rendered by reclass-ng (a drop-in for kapicorp-reclass)."""

    def render_targets(self, targets: list[InventoryTarget] | None = None,
                       ignore_class_not_found: bool = False) -> None:
        # Not normalised by Kapitan (normalise_nodes_classes=False): its join fails on the
        # mappings yaml_git and mixed storage take; kapitan_load_settings joins the paths.
        config = get_reclass_config(self.inventory_path, ignore_class_not_found,
                                    self.compose_target_name, False)
        try:
            settings = kapitan_load_settings(self.inventory_path, config, warn=logger.warning)
            config_file = os.path.join(self.inventory_path, "reclass-config.yml")
            if os.path.isfile(config_file):  # what get_reclass_config read: named in errors
                settings["config_file"] = config_file
            inventory = reclass_ng.load(self.inventory_path, read_config=False,
                                        warn=logger.warning, **settings)
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
