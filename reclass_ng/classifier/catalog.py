"""The class catalogue: which Puppet classes each environment has, with their parameters.

Two files next to `groups/`, kept apart as the classifier's architecture asks ("track the
difference so we don't remove manually added classes when doing automated updates"):

* `puppet-classes.yml`: classes declared by hand, `{environment: {class: {param: default}}}`.
  Only `PUT /v1/environments/<name>` writes it (adding an environment, comments kept).
* `puppet-classes.synced.yml`: the result of the last sync from Puppet code (`reclass-ng
  classes sync`, `POST /v1/update-classes`); a sync replaces it whole.

A parameter whose default is `null` is required, as in the classifier. The catalogue of an
environment is the union of both files; for a class in both, the parameters are merged and the
hand-declared default wins (so a parameter Hiera provides can be declared optional by hand).
Without either file there is no catalogue, and no check uses one.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from reclass_ng.classifier.atomic_files import atomic_write_text
from reclass_ng.errors import EX_DATAERR, ReclassError, YamlFileError
from reclass_ng.storage.yaml_load import read_input_file

MANUAL_FILE_NAME = "puppet-classes.yml"
SYNCED_FILE_NAME = "puppet-classes.synced.yml"

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SafeDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class CatalogError(ReclassError):
    """A catalogue file (or the Puppet code it is synced from) that cannot be read or has the
    wrong shape; `path` (and `line`, `column` where known) say where, for the record."""

    exit_code = EX_DATAERR

    def __init__(self, text: str, path: str | os.PathLike[str] | None = None,
                 line: int | None = None, column: int | None = None) -> None:
        super().__init__(text)
        self.path = None if path is None else str(path)
        self.line, self.column = line, column

    def file(self) -> str | None:
        """The file (or directory) the problem is about, when known."""
        return self.path

    def position(self) -> tuple[int, int] | None:
        """(line, column) of the problem, when known."""
        return None if self.line is None else (self.line, self.column or 1)

    def context_lines(self) -> list[str]:
        """None: the message starts with the file (and line) already."""
        return []


@attrs.frozen
class PuppetClass:
    """One class of one environment; `parameters` maps name -> default (None: required)."""

    name: str
    environment: str
    parameters: dict[str, Any]

    def to_data(self) -> dict[str, Any]:
        """The classifier's class object."""
        return {"name": self.name, "environment": self.environment,
                "parameters": dict(self.parameters)}

    def required(self) -> list[str]:
        return [p for p, default in self.parameters.items() if default is None]


@attrs.frozen
class SyncedCatalog:
    """The content of puppet-classes.synced.yml."""

    environments: dict[str, dict[str, dict[str, Any]]]
    errors: dict[str, list[dict[str, str]]] = attrs.field(factory=dict)
    last_update: str | None = None
    code_dir: str | None = None
    puppet_version: str | None = None

    def to_data(self) -> dict[str, Any]:
        return {"last_update": self.last_update, "code_dir": self.code_dir,
                "puppet_version": self.puppet_version, "errors": self.errors,
                "environments": self.environments}


@attrs.frozen
class ClassCatalog:
    """Both files merged: the classes of every known environment."""

    classes_by_environment: dict[str, dict[str, PuppetClass]]
    synced: SyncedCatalog | None = None

    @property
    def last_update(self) -> str | None:
        return self.synced.last_update if self.synced is not None else None

    def environments(self) -> list[str]:
        return sorted(self.classes_by_environment)

    def has_environment(self, environment: str) -> bool:
        return environment in self.classes_by_environment

    def classes(self, environment: str) -> dict[str, PuppetClass]:
        return self.classes_by_environment.get(environment, {})

    def get(self, environment: str, name: str) -> PuppetClass | None:
        return self.classes(environment).get(name)

    def sync_succeeded(self, environment: str) -> bool | None:
        """Whether the last sync read every file of the environment; None if never synced."""
        if self.synced is None or environment not in self.synced.environments:
            return None
        return not self.synced.errors.get(environment)


def _read_yaml(path: Path) -> Any:
    try:
        # Bytes: PyYAML decodes them as UTF-8 (or by their BOM), as it decoded the stream.
        return yaml.load(read_input_file(str(path)), Loader=_SafeLoader)
    except YamlFileError as err:  # no regular file, or over the loader's size limit
        raise CatalogError(err.message, path) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise CatalogError(f"{where}: not valid YAML ({err.problem})", path,
                           *((mark.line + 1, mark.column + 1) if mark else ())) from err
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise CatalogError(f"{path}: cannot read: {err}", path) from err


def _environment_map(data: Any, where: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Check `{environment: {class: {param: default}}}`; a class may map to null (no params)."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise CatalogError(f"{where}: expected a mapping of environment -> classes", where)
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for environment, classes in data.items():
        if not isinstance(environment, str):
            raise CatalogError(f"{where}: environment names must be strings, got {environment!r}",
                               where)
        if classes is None:
            classes = {}
        if not isinstance(classes, Mapping):
            raise CatalogError(f"{where}: {environment}: expected a mapping of class -> "
                               "parameters", where)
        checked: dict[str, dict[str, Any]] = {}
        for name, params in classes.items():
            if params is None:
                params = {}
            if not isinstance(name, str) or not isinstance(params, Mapping) or \
                    not all(isinstance(p, str) for p in params):
                raise CatalogError(f"{where}: {environment}.{name}: expected a class name "
                                   "mapping to parameter -> default (null: required)", where)
            checked[name] = dict(params)
        result[environment] = checked
    return result


def read_synced(inventory_dir: str | os.PathLike[str]) -> SyncedCatalog | None:
    """puppet-classes.synced.yml, or None when there is none."""
    path = Path(inventory_dir) / SYNCED_FILE_NAME
    if not path.is_file():
        return None
    data = _read_yaml(path)
    if not isinstance(data, Mapping):
        raise CatalogError(f"{path}: expected the mapping `reclass-ng classes sync` writes",
                           path)
    errors = data.get("errors") or {}
    return SyncedCatalog(_environment_map(data.get("environments"), str(path)),
                         errors if isinstance(errors, dict) else {},
                         data.get("last_update"), data.get("code_dir"),
                         data.get("puppet_version"))


def load_catalog(inventory_dir: str | os.PathLike[str]) -> ClassCatalog | None:
    """The inventory's class catalogue; None when neither catalogue file exists."""
    manual_path = Path(inventory_dir) / MANUAL_FILE_NAME
    synced = read_synced(inventory_dir)
    manual = _environment_map(_read_yaml(manual_path), str(manual_path)) \
        if manual_path.is_file() else None
    if synced is None and manual is None:
        return None
    merged: dict[str, dict[str, dict[str, Any]]] = {}
    for source in (synced.environments if synced else {}, manual or {}):
        for environment, classes in source.items():
            target = merged.setdefault(environment, {})
            for name, params in classes.items():
                target[name] = {**target.get(name, {}), **params}
    return ClassCatalog({env: {name: PuppetClass(name, env, params)
                               for name, params in sorted(classes.items())}
                         for env, classes in merged.items()}, synced)


def now_iso() -> str:
    """The current time as the classifier writes `last_update` (ISO-8601, UTC, with zone)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def write_synced(inventory_dir: str | os.PathLike[str], synced: SyncedCatalog) -> Path:
    """Replace puppet-classes.synced.yml atomically."""
    path = Path(inventory_dir) / SYNCED_FILE_NAME
    header = ("# Written by `reclass-ng classes sync` (or POST /v1/update-classes) from the "
              "Puppet code;\n# every sync replaces it. Declare classes by hand in "
              f"{MANUAL_FILE_NAME}.\n")
    body = yaml.dump(synced.to_data(), Dumper=_SafeDumper, default_flow_style=False,
                     sort_keys=False, allow_unicode=True)
    atomic_write_text(path, header + body)
    return path
