"""Settings: their defaults, where `reclass-config.yml` is found, and how values are checked
(`storage.load_settings` reads the file: reading files is storage's, which builds on this).

Precedence, lowest first: built-in defaults, the first `reclass-config.yml` found (inventory base
directory, working directory, home directory, /etc/reclass), then explicit values (command-line
flags or keyword arguments of `reclass_ng.load`).
"""

from __future__ import annotations

import os
from _collections_abc import Mapping  # collections.abc without `collections` (6 M)

from reclass_ng.errors import ConfigError, ConfigFileError
from reclass_ng.errors.base import value_position
from reclass_ng.records import Record

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

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


# The storages reclass-ng reads (reclass_ng/storage/): checked with the other settings, so a
# config file's misspelt storage_type is reported at its file and line.
STORAGE_TYPES = ("yaml_fs", "yaml_git", "mixed")


def _storage_type(value: Any, name: str) -> str:
    text = _string(value, name)
    # A misspelling of a known storage fails here, at its file and line. Any other name is a
    # storage module's (reclass_ng.storage.<name>, the plug-in contract of storage.base): it
    # is looked up when the storage opens, which reports a name no module answers to.
    hint = did_you_mean(text, STORAGE_TYPES) if text not in STORAGE_TYPES else ""
    if hint:
        raise ConfigError(f"Storage type {text!r} is not supported; reclass-ng reads yaml_fs, "
                          f"yaml_git and mixed inventories{hint}")
    return text


def _optional_string(value: Any, name: str) -> str | None:
    return None if value is None else _string(value, name)


class FrozenMapping(dict):  # type: ignore[type-arg,unused-ignore]
    """A mapping setting (yaml_git/mixed `nodes_uri`, `classes_uri`) that Settings can hash."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted((repr(k), repr(v)) for k, v in self.items())))


def frozen(value: Any) -> Any:
    """Mappings and lists of a config value as hashable FrozenMapping and tuple."""
    if isinstance(value, Mapping):
        return FrozenMapping((k, frozen(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    return value


def _storage_uri(default: str) -> Any:
    # A directory for yaml_fs; a mapping of options for yaml_git and mixed (their modules
    # check the keys).
    def check(value: Any, name: str) -> Any:
        if value in (None, ""):
            return default
        if isinstance(value, Mapping):
            return frozen(value)
        return _string(value, name)
    return check


def _char(value: Any, name: str) -> str:
    if isinstance(value, str) and len(value) == 1:
        return value
    raise ConfigError(f"Setting {name}: expected a single character, got {value!r}")


# Every setting of reclass-config.yml with its default; attribute names are the file's keys.
DEFAULTS: dict[str, Any] = {
    "storage_type": "yaml_fs",
    "inventory_base_uri": None,
    "nodes_uri": "nodes",
    "classes_uri": "classes",
    "class_mappings": (),
    "class_mappings_match_path": False,
    "compose_node_name": False,
    "ignore_class_notfound": False,
    "ignore_class_notfound_regexp": (".*",),
    "ignore_class_notfound_warning": True,
    "ignore_overwritten_missing_references": True,
    "group_errors": True,
    "strict_constant_parameters": True,
    "allow_scalar_over_dict": False,
    "allow_scalar_over_list": False,
    "allow_list_over_scalar": False,
    "allow_dict_over_scalar": False,
    "allow_none_override": False,
    "automatic_parameters": True,
    "default_environment": "base",
    "inventory_ignore_failed_node": False,
    "inventory_ignore_failed_render": False,
    "delimiter": ":",
    "reference_sentinels": ("${", "}"),
    "export_sentinels": ("$[", "]"),
    "escape_character": "\\",
    "dict_key_override_prefix": "~",
    "dict_key_constant_prefix": "=",
    "output": "yaml",
    "pretty_print": True,
    "no_refs": False,
    "applications_postfix": "_hosts",
    # reclass-ng settings (off by default where they would change how an inventory renders)
    "reference_defaults": False,
    # salt-formulas reclass: Salt's saltenv/pillarenv replaces the node's environment
    "allow_adapter_env_override": False,
    "cache_dir": None,  # on-disk cache of `reclass --inventory` (doc/incremental.rst)
    "config_file": None,  # the reclass-config.yml that was read, for messages
}

# Keys kapicorp-reclass's own configuration reads that change nothing here (it reads them, so
# a config file written for it is no mistake): not warned about.
KAPICORP_ONLY_SETTINGS = frozenset({"ignore_class_regexp", "scalar_parameters",
                                    "verbose", "check_ignore_class_notfound_regexp"})
# Keys reclass-ng's tools read from reclass-config.yml themselves (the render never does):
# `schemas` (reclass_ng.schemas). Not warned about.
TOOL_SETTINGS = frozenset({"schemas"})


class Settings(Record):
    """Every setting of reclass-config.yml (see DEFAULTS); immutable, compared by value.

    A plain record rather than an attrs class: this is imported by every `reclass --nodeinfo`,
    and generating the methods of a 34-field attrs class cost more than rendering a node.
    """

    __slots__ = tuple(DEFAULTS)
    _fields = __slots__

    storage_type: str
    inventory_base_uri: str | None
    nodes_uri: str | Mapping[str, Any]  # a mapping for yaml_git and mixed
    classes_uri: str | Mapping[str, Any]
    class_mappings: tuple[str, ...]
    class_mappings_match_path: bool
    compose_node_name: bool
    ignore_class_notfound: bool
    ignore_class_notfound_regexp: tuple[str, ...]
    ignore_class_notfound_warning: bool
    ignore_overwritten_missing_references: bool
    group_errors: bool
    strict_constant_parameters: bool
    allow_scalar_over_dict: bool
    allow_scalar_over_list: bool
    allow_list_over_scalar: bool
    allow_dict_over_scalar: bool
    allow_none_override: bool
    automatic_parameters: bool
    default_environment: str
    inventory_ignore_failed_node: bool
    inventory_ignore_failed_render: bool
    delimiter: str
    reference_sentinels: tuple[str, str]
    export_sentinels: tuple[str, str]
    escape_character: str
    dict_key_override_prefix: str
    dict_key_constant_prefix: str
    output: str
    pretty_print: bool
    no_refs: bool
    applications_postfix: str
    reference_defaults: bool
    allow_adapter_env_override: bool
    cache_dir: str | None
    config_file: str | None

    def __init__(self, **values: Any) -> None:
        unknown = set(values) - set(DEFAULTS)
        if unknown:
            raise TypeError(f"Settings() got unknown settings: {', '.join(sorted(unknown))}")
        for name, default in DEFAULTS.items():
            object.__setattr__(self, name, values.get(name, default))

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
        merged = self.as_mapping()
        merged.update(values)
        return Settings.from_mapping(merged)

    def replace(self, **values: Any) -> Settings:
        """A copy with the given settings changed, unchecked (for values already checked)."""
        return Settings(**{**self.as_mapping(), **values})

    def as_mapping(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in DEFAULTS}


_BOOLS = [name for name, default in DEFAULTS.items() if isinstance(default, bool)]
_CHECKS: dict[str, Any] = {name: parse_bool for name in _BOOLS}
_CHECKS.update(
    storage_type=_storage_type, inventory_base_uri=_optional_string,
    nodes_uri=_storage_uri("nodes"), classes_uri=_storage_uri("classes"),
    class_mappings=_string_list, ignore_class_notfound_regexp=_string_list,
    default_environment=_string, delimiter=_string, escape_character=_char,
    reference_sentinels=_sentinels, export_sentinels=_sentinels,
    dict_key_override_prefix=_char, dict_key_constant_prefix=_char,
    output=_string, applications_postfix=lambda v, n: "" if v is None else _string(v, n),
    config_file=_optional_string, cache_dir=_optional_string,
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


def check_config_values(values: Mapping[str, Any], path: str,
                        overridden: Iterable[str] = ()) -> None:
    """A config file's values checked as settings (those `overridden` excepted): a bad value is
    an error naming the file and the line of the setting."""
    skipped = set(overridden)
    for name, value in values.items():
        check = _CHECKS.get(name)
        if check is None or name in skipped:
            continue
        try:
            check(value, name)
        except ConfigError as err:
            position = value_position(path, (name,))
            raise ConfigFileError(err.text, path, position[0] if position else None,
                                  setting=name) from None


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """` (did you mean x?)` naming the closest of `candidates` to `name`, or an empty string."""
    from reclass_ng import suggestions  # only when a name is unknown

    return suggestions.did_you_mean(suggestions.similar_names(name, candidates)[:1])


def check_setting_names(names: Iterable[str]) -> None:
    """Refuse setting names that do not exist (a misspelt keyword of `reclass_ng.load`)."""
    unknown = [name for name in names if name not in DEFAULTS]
    if unknown:
        raise ConfigError("; ".join(f"Unknown setting {name!r}{did_you_mean(name, DEFAULTS)}"
                                    for name in unknown))


def unknown_config_keys(values: Mapping[str, Any], path: str) -> list[str]:
    """Warnings for keys of a config file that are no setting: kapicorp-reclass ignores them,
    so they are ignored here too (an inventory written for it keeps working), but said."""
    return [f"{path}: unknown setting {name!r} ignored{did_you_mean(str(name), DEFAULTS)}"
            for name in values if name not in DEFAULTS and name not in KAPICORP_ONLY_SETTINGS
            and name not in TOOL_SETTINGS]


# -- which fast paths are on ----------------------------------------------------------------

# `RECLASS_NG_SPEED=reference` runs a whole process (the CLI included) on the references of
# every fast path, as MarkupSafe's pure-Python mode does; unset, or `fast`, all are on.
SPEED_VARIABLE = "RECLASS_NG_SPEED"
_SPEED_WORDS = ("fast", "reference")


class Speed(Record):
    """Which fast paths a render takes: each field turns one on (doc/performance.rst lists
    each fast path with its reference and the test comparing the two).

    Not a setting: no field changes any output, error or warning, only how fast they come.
    `Speed()` is every fast path, `Speed.reference()` none of them (the references the tests
    compare the fast paths with)."""

    __slots__ = ("block_yaml_reader", "shared_class_walks", "inlined_merge",
                 "rendered_references", "rendered_subtrees", "block_yaml_writer",
                 "orjson_json_writer", "shared_file_mappings", "json_tree_compare",
                 "block_key_positions")
    _fields = __slots__

    block_yaml_reader: bool  # storage/yaml_block.py, else storage/yaml_full.py (PyYAML)
    shared_class_walks: bool  # classes.SharedClassWalks, else each node walks its classes
    inlined_merge: bool  # Merger.merge_mapping's inlined case, else merge_value for each key
    rendered_references: bool  # resolve/fast_paths.py, else Resolver._render_at for each value
    rendered_subtrees: bool  # resolve/rendered_subtrees.py in inventory renders, else none
    block_yaml_writer: bool  # output/block_yaml.py, else PyYAML (output.pyyaml_text)
    orjson_json_writer: bool  # output/fast_json.py (orjson), else output.pretty_json
    # prepare.py keeps a file's mapping that needs no change as parsed, else copies each one
    shared_file_mappings: bool
    # diff/compare.py: equal rendered trees told apart by orjson, else walked in Python
    json_tree_compare: bool
    # storage/block_positions.py: key tables read off a block YAML file's lines, else composed
    block_key_positions: bool

    def __init__(self, block_yaml_reader: bool = True, shared_class_walks: bool = True,
                 inlined_merge: bool = True, rendered_references: bool = True,
                 rendered_subtrees: bool = True, block_yaml_writer: bool = True,
                 orjson_json_writer: bool = True, shared_file_mappings: bool = True,
                 json_tree_compare: bool = True, block_key_positions: bool = True) -> None:
        _set = object.__setattr__
        _set(self, "block_yaml_reader", block_yaml_reader)
        _set(self, "shared_class_walks", shared_class_walks)
        _set(self, "inlined_merge", inlined_merge)
        _set(self, "rendered_references", rendered_references)
        _set(self, "rendered_subtrees", rendered_subtrees)
        _set(self, "block_yaml_writer", block_yaml_writer)
        _set(self, "orjson_json_writer", orjson_json_writer)
        _set(self, "shared_file_mappings", shared_file_mappings)
        _set(self, "json_tree_compare", json_tree_compare)
        _set(self, "block_key_positions", block_key_positions)

    @classmethod
    def reference(cls) -> Speed:
        """Every fast path off: the references alone."""
        return cls(**dict.fromkeys(cls._fields, False))

    def replace(self, **fields: bool) -> Speed:
        """A copy with the given fast paths turned on or off."""
        unknown = set(fields) - set(self._fields)
        if unknown:
            raise TypeError(f"Speed has no fast path {', '.join(sorted(unknown))}")
        return Speed(**{**{name: getattr(self, name) for name in self._fields}, **fields})

    @classmethod
    def from_environment(cls) -> Speed:
        """The speed RECLASS_NG_SPEED asks for (unset: every fast path)."""
        word = os.environ.get(SPEED_VARIABLE, "")
        if not word or word == "fast":
            return _FAST
        if word == "reference":
            return _REFERENCE
        raise ConfigError(f"Environment variable {SPEED_VARIABLE}={word!r}: expected "
                          f"{' or '.join(_SPEED_WORDS)}{did_you_mean(word, _SPEED_WORDS)}")


_FAST = Speed()
_REFERENCE = Speed.reference()
