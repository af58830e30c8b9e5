"""Settings: their defaults, where `reclass-config.yml` is found, and how values are checked.

Precedence, lowest first: built-in defaults, the first `reclass-config.yml` found (inventory base
directory, working directory, home directory, /etc/reclass), then explicit values (command-line
flags or keyword arguments of `reclass_ng.load`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs
import yaml

from reclass_ng.errors import ConfigError

CONFIG_FILE_NAME = "reclass-config.yml"
DEFAULT_CONFIG_DIRS = ("~", "/etc/reclass")

_TRUE_WORDS = {"true", "yes", "on", "1"}
_FALSE_WORDS = {"false", "no", "off", "0", ""}


def parse_bool(value: Any, name: str) -> bool:
    """A boolean from YAML or the command line; `-z False` means off, unlike kapicorp (D3)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str) and value.strip().lower() in _TRUE_WORDS | _FALSE_WORDS:
        return value.strip().lower() in _TRUE_WORDS
    raise ConfigError(f"Setting {name}: expected true or false, got {value!r}")


def _string_list(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"Setting {name}: expected a string or a list of strings, got {value!r}")


def _sentinels(value: Any, name: str) -> tuple[str, str]:
    pair = _string_list(value, name)
    if len(pair) != 2 or not all(pair):
        raise ConfigError(f"Setting {name}: expected two non-empty strings, got {value!r}")
    return pair[0], pair[1]


def _string(value: Any, name: str) -> str:
    if isinstance(value, str):
        return value
    raise ConfigError(f"Setting {name}: expected a string, got {value!r}")


def _optional_string(value: Any, name: str) -> str | None:
    return None if value is None else _string(value, name)


def _char(value: Any, name: str) -> str:
    if isinstance(value, str) and len(value) == 1:
        return value
    raise ConfigError(f"Setting {name}: expected a single character, got {value!r}")


@attrs.frozen
class Settings:
    """Every setting of reclass-config.yml; attribute names are the file's keys."""

    storage_type: str = "yaml_fs"
    inventory_base_uri: str | None = None
    nodes_uri: str = "nodes"
    classes_uri: str = "classes"
    class_mappings: tuple[str, ...] = ()
    class_mappings_match_path: bool = False
    compose_node_name: bool = False
    ignore_class_notfound: bool = False
    ignore_class_notfound_regexp: tuple[str, ...] = (".*",)
    ignore_class_notfound_warning: bool = True
    ignore_overwritten_missing_references: bool = True
    group_errors: bool = True
    strict_constant_parameters: bool = True
    allow_scalar_over_dict: bool = False
    allow_scalar_over_list: bool = False
    allow_list_over_scalar: bool = False
    allow_dict_over_scalar: bool = False
    allow_none_override: bool = False
    automatic_parameters: bool = True
    default_environment: str = "base"
    inventory_ignore_failed_node: bool = False
    inventory_ignore_failed_render: bool = False
    delimiter: str = ":"
    reference_sentinels: tuple[str, str] = ("${", "}")
    export_sentinels: tuple[str, str] = ("$[", "]")
    escape_character: str = "\\"
    dict_key_override_prefix: str = "~"
    dict_key_constant_prefix: str = "="
    output: str = "yaml"
    pretty_print: bool = True
    no_refs: bool = False
    applications_postfix: str = "_hosts"
    # reclass-ng settings (off by default where they would change how an inventory renders)
    reference_defaults: bool = False
    config_file: str | None = None  # the reclass-config.yml that was read, for messages

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Settings:
        """Settings from a mapping of config keys; unknown keys are ignored, as reclass does."""
        checked: dict[str, Any] = {}
        for name, value in values.items():
            if name in _CHECKS:
                checked[name] = _CHECKS[name](value, name)
        return cls(**checked)

    def updated(self, values: Mapping[str, Any]) -> Settings:
        """A copy with the given config keys changed (checked like a config file's values)."""
        merged = attrs.asdict(self, recurse=False)
        merged.update(values)
        return Settings.from_mapping(merged)

    def as_mapping(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=False)


_BOOLS = [f.name for f in attrs.fields(Settings) if f.type in ("bool", bool)]
_CHECKS: dict[str, Any] = {name: parse_bool for name in _BOOLS}
_CHECKS.update(
    storage_type=_string, inventory_base_uri=_optional_string,
    nodes_uri=lambda v, n: "nodes" if v in (None, "") else _string(v, n),
    classes_uri=lambda v, n: "classes" if v in (None, "") else _string(v, n),
    class_mappings=_string_list, ignore_class_notfound_regexp=_string_list,
    default_environment=_string, delimiter=_string, escape_character=_char,
    reference_sentinels=_sentinels, export_sentinels=_sentinels,
    dict_key_override_prefix=_char, dict_key_constant_prefix=_char,
    output=_string, applications_postfix=lambda v, n: "" if v is None else _string(v, n),
    config_file=_optional_string,
)


def find_config_file(base_dir: str | None) -> str | None:
    """The first reclass-config.yml in the base directory, cwd, home and /etc/reclass."""
    candidates = [base_dir] if base_dir else []
    candidates += [os.getcwd(), *DEFAULT_CONFIG_DIRS]
    for directory in candidates:
        path = os.path.join(os.path.expanduser(directory), CONFIG_FILE_NAME)
        if os.path.isfile(path):
            return path
    return None


def read_config_file(path: str) -> dict[str, Any]:
    """The mapping in a config file; an unreadable or malformed file is a configuration error."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except OSError as err:
        raise ConfigError(f"Cannot read configuration file {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        raise ConfigError(f"{where}: invalid YAML in configuration file") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a configuration file must be a mapping of settings")
    return data


def load_settings(base_dir: str | None, overrides: Mapping[str, Any], read_config: bool = True
                  ) -> Settings:
    """Defaults, then the first config file found, then explicit overrides."""
    values: dict[str, Any] = {}
    if read_config:
        path = find_config_file(base_dir)
        if path:
            values.update(read_config_file(path))
            values["config_file"] = path
    values.update({k: v for k, v in overrides.items() if v is not None})
    if base_dir is not None:
        values["inventory_base_uri"] = base_dir
    return Settings.from_mapping(values)
