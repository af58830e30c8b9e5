"""Where an adapter finds its inventory, and which settings it accepts.

Every adapter (the three commands, Salt's ext_pillar and master_tops, the Ansible plugin) takes the
inventory the same way: an explicit directory (`-b DIR`, `inventory_base_uri`), else the
environment variable RECLASS_NG_INVENTORY, else the `inventory_base_uri` of the reclass-config.yml
that `reclass` itself would read (working directory, home, /etc/reclass).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import reclass_ng
from reclass_ng.errors import ConfigError
from reclass_ng.settings import DEFAULTS, did_you_mean
from reclass_ng.storage import load_settings

INVENTORY_ENV_VAR = "RECLASS_NG_INVENTORY"

# Settings an adapter caller may pass; the file-only bookkeeping field is not one of them.
_SETTING_NAMES = frozenset(DEFAULTS) - {"config_file"}


def inventory_base(base_uri: str | None) -> str | None:
    """The inventory directory chosen by the caller or the environment; None lets the config decide."""
    if base_uri:
        return os.path.expanduser(str(base_uri))
    from_env = os.environ.get(INVENTORY_ENV_VAR, "").strip()
    if from_env:
        return os.path.expanduser(from_env)
    return None


def checked_settings(options: Mapping[str, Any], caller: str) -> dict[str, Any]:
    """The options that are settings, without unset (None) values; anything else is an error.

    reclass ignores unknown keys in its config file, but an option given to an adapter (a Salt
    master config entry, a plugin option) is a deliberate choice, so a typo must not pass silently.
    """
    unknown = sorted(str(name) for name in options if name not in _SETTING_NAMES)
    if unknown:
        named = ", ".join(name + did_you_mean(name, _SETTING_NAMES) for name in unknown)
        raise ConfigError(
            f"{caller}: unexpected option: {named} "
            "(options are reclass-config.yml settings, see doc/configuration.rst)"
        )
    return {name: value for name, value in options.items() if value is not None}


def open_inventory(base_uri: str | None = None, **settings: Any) -> reclass_ng.Inventory:
    """Load the inventory for an adapter: `base_uri`, else $RECLASS_NG_INVENTORY, else the config."""
    base = inventory_base(base_uri)
    # reclass_ng.load falls back to the working directory, which for a program run by Puppet or
    # Salt is rarely the inventory; say what to configure instead of "No such directory: /nodes".
    if base is None and load_settings(None, settings).inventory_base_uri is None:
        raise ConfigError(
            "No inventory given: pass the inventory directory (-b DIR, or the "
            f"inventory_base_uri option), set the environment variable {INVENTORY_ENV_VAR}, "
            "or set inventory_base_uri in a reclass-config.yml (looked for in the working "
            "directory, ~ and /etc/reclass)")
    return reclass_ng.load(base, **settings)
