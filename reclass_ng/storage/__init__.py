"""Finding and reading node and class files, and the settings of an inventory: defaults, its
`reclass-config.yml` (read here, as every inventory file is: within the loader's limits) and
explicit overrides. settings.py only checks values, so it sits below storage."""

from __future__ import annotations

from reclass_ng.errors import ConfigError, ConfigFileError, YamlFileError
from reclass_ng.errors.base import register_value_locator
from reclass_ng.settings import (
    Settings,
    check_config_values,
    check_setting_names,
    find_config_file,
    unknown_config_keys,
)
from reclass_ng.storage.yaml_fs import YamlFsStorage
from reclass_ng.storage.yaml_load import parse_yaml_bytes, read_input_file

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

__all__ = ["YamlFsStorage", "load_settings", "read_config_file"]


def _value_position(path: str, keys: Sequence[object], needle: str | None,
                    pick: Callable[[object], bool] | None) -> tuple[int, int] | None:
    # Errors ask this for the line of a value they name (errors cannot import storage); the
    # positions module and PyYAML are imported only when an error is reported.
    from reclass_ng.storage.positions import value_position

    return value_position(path, keys, needle, pick)


register_value_locator(_value_position)


def read_config_file(path: str) -> dict[str, Any]:
    """The mapping in a config file; an unreadable or malformed file is a configuration error."""
    try:
        content = read_input_file(path)  # a FIFO or device swapped in is refused, never read
    except YamlFileError as err:
        raise ConfigError(f"Cannot read configuration file {path}: {err.problem}") from None
    try:
        data = parse_yaml_bytes(content, path)
    except YamlFileError as err:
        reason = err.problem.removeprefix("invalid YAML: ")
        raise ConfigFileError(f"invalid YAML in configuration file: {reason}", path,
                              err.line or None, err.column) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigFileError("a configuration file must be a mapping of settings", path)
    return data


def load_settings(base_dir: str | None, overrides: Mapping[str, Any], read_config: bool = True,
                  warn: Callable[[str], None] | None = None) -> Settings:
    """Defaults, then the first config file found, then explicit overrides.

    Overrides must be setting names (ConfigError with a "did you mean" otherwise); unknown keys
    of the config file are passed to `warn`, when given, and ignored.
    """
    check_setting_names(overrides)
    values: dict[str, Any] = {}
    if read_config:
        path = find_config_file(base_dir)
        if path:
            values.update(read_config_file(path))
            check_config_values(values, path,
                                [name for name, value in overrides.items() if value is not None])
            if warn is not None:
                for message in unknown_config_keys(values, path):
                    warn(message)
            values["config_file"] = path
    values.update({k: v for k, v in overrides.items() if v is not None})
    if base_dir is not None:
        values["inventory_base_uri"] = base_dir
    return Settings.from_mapping(values)
