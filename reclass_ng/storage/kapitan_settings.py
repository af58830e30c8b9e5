"""reclass-config.yml read as Kapitan's `reclass` backend reads it (doc/kapitan.rst, Settings):
for the Kapitan backend (reclass_ng.kapitan) and for the tools' `--kapitan`.

Kapitan's `get_reclass_config()` starts from Kapitan's defaults (`targets/` as nodes,
`classes/`, `allow_none_override`, the command line's `--compose-target-name` and
`ignore_class_notfound`) and puts every key of the inventory's reclass-config.yml over them.
Kapitan's backend then joins a relative `nodes_uri`/`classes_uri` to the inventory directory and
gives reclass only the storage keys, `class_mappings` and the keys of reclass's `Settings`:
`inventory_base_uri` and the keys of reclass's command line are read and ignored. Here the same
mapping becomes the settings of `reclass_ng.load`, rooted at the inventory directory.

No Kapitan import: the rules are tested without Kapitan installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from reclass_ng.settings import CONFIG_FILE_NAME, DEFAULTS, unknown_config_keys
from reclass_ng.storage import read_config_file

# Kapitan's own defaults under an inventory's reclass-config.yml (a `kapitan` command line
# without --compose-target-name): what the tools' `--kapitan` read an inventory with.
KAPITAN_DEFAULTS = {"nodes_uri": "targets", "classes_uri": "classes",
                    "allow_none_override": True, "compose_node_name": False}

# Keys Kapitan's reclass backend never passes to reclass: where the inventory is (Kapitan says:
# the inventory path), and how reclass's command line prints (Kapitan prints). Dropped unread,
# so a value Kapitan ignores can neither move the inventory nor fail a check.
IGNORED_BY_KAPITAN = frozenset({"inventory_base_uri", "output", "pretty_print", "no_refs",
                                "applications_postfix", "config_file"})
# Directories a relative value of is taken from the inventory directory, as Kapitan's backend
# does (it expands no `~` in them); cache_dir, reclass-ng's own, follows the same rule after the
# `~` expansion reclass-ng gives it everywhere.
INVENTORY_RELATIVE_PATHS = ("nodes_uri", "classes_uri")


def kapitan_inventory_settings(inventory_path: str,
                               warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The `reclass_ng.load(inventory_path, read_config=False, **settings)` settings that open
    a Kapitan inventory directory as Kapitan's `reclass` backend does: KAPITAN_DEFAULTS, then
    the directory's reclass-config.yml over them (`targets/` as nodes unless it says else)."""
    config: dict[str, Any] = dict(KAPITAN_DEFAULTS)
    config_file = os.path.join(inventory_path, CONFIG_FILE_NAME)
    has_config_file = os.path.isfile(config_file)
    if has_config_file:
        config.update(read_config_file(config_file))
    settings = kapitan_load_settings(inventory_path, config, warn=warn)
    if has_config_file:
        settings["config_file"] = config_file
    return settings


def kapitan_load_settings(inventory_path: str, config: Mapping[str, Any],
                          warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The `reclass_ng.load(inventory_path, read_config=False, **settings)` settings for the
    mapping Kapitan's `get_reclass_config(..., normalise_nodes_classes=False)` returned.

    Keys that are no setting of reclass-ng nor of kapicorp-reclass go to `warn` (Kapitan's
    backend ignores them silently) and are left out, as are the keys Kapitan ignores.
    """
    if warn is not None:
        for message in unknown_config_keys(config, os.path.join(inventory_path,
                                                                CONFIG_FILE_NAME)):
            warn(message)
    settings = {key: value for key, value in config.items()
                if key in DEFAULTS and key not in IGNORED_BY_KAPITAN}
    if isinstance(settings.get("cache_dir"), str):
        settings["cache_dir"] = os.path.expanduser(settings["cache_dir"])
    for key in (*INVENTORY_RELATIVE_PATHS, "cache_dir"):
        # A mapping (yaml_git, mixed storage) names its own locations: left as it is.
        # Normalised as Kapitan does (lexically: `a/link/..` is `a`), and absolute so that
        # reclass-ng does not join it to the inventory directory a second time.
        if isinstance(settings.get(key), str) and settings[key]:
            settings[key] = os.path.abspath(os.path.join(inventory_path, settings[key]))
    return settings
