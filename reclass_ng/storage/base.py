"""The storage interface the engine reads an inventory through, and how a storage is chosen.

A storage lists node files and, for each environment, class files; files are read and parsed
through it (`parsed`), each file named by its path, which is also its origin in messages. The
`storage_type` setting names a module of this package (`yaml_fs`, `yaml_git`, `mixed`) whose
`open_storage(settings, reuse)` returns one, so a new storage is one module.
"""

from __future__ import annotations

from reclass_ng.errors import ConfigError
from reclass_ng.settings import Settings

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Protocol
else:  # nothing checks these at run time: they describe what the engine calls
    Protocol = object

# What a storage type may be: a module name of [a-z][a-z0-9_]* (no dots, no path).
_STORAGE_MODULE_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


class NodeRecord(Protocol):
    """One node file: its node name, path, path below the nodes tree (no extension), URI (its
    origin, as `__reclass__:uri` shows it)."""

    name: str
    path: str
    pathname: str

    @property
    def uri(self) -> str: ...


class ClassTree(Protocol):
    """The class files one environment reads."""

    @property
    def classes_uri(self) -> str: ...

    @property
    def class_paths(self) -> Mapping[str, str]:
        """Class name -> file, for every class of the tree."""

    def class_path(self, name: str) -> str | None:
        """The file of a class, or None."""

    def check_classes(self) -> None:
        """Raise the error of the class listing (a duplicate class name anywhere), if any."""

    def parsed(self, path: str) -> Any:
        """The YAML document of a file of this tree, parsed once."""

    def forget_parsed(self, path: str) -> None:
        """Drop the parsed document of a file (it is parsed again when asked for)."""

    def origin(self, path: str) -> str:
        """The URI naming a file of this tree in messages (`yaml_fs://<path>`)."""


class Storage(ClassTree, Protocol):
    """Node files plus class trees. As a ClassTree itself it is the default environment's."""

    nodes: Mapping[str, NodeRecord]

    @property
    def nodes_uri(self) -> str: ...

    def classes_for(self, environment: str) -> ClassTree:
        """The class tree of nodes in `environment` (the storage itself if there is one tree)."""


def floats_json_exact(storage: ClassTree) -> bool:
    """Whether every float `storage` has read so far prints the same through orjson as through
    json (no float below 1e-4, NaN or infinity: storage.yaml_load.YamlLoader), so that a JSON
    writer may skip checking for them. A storage may say so with a `floats_json_exact`
    attribute; one that does not is taken to hold such floats."""
    return getattr(storage, "floats_json_exact", False) is True


def open_storage(settings: Settings, reuse: object = None) -> Storage:
    """The storage `settings.storage_type` names; `reuse` is an open storage it may return when
    it reads the same files (the yaml_fs trees of a long-running process)."""
    name = settings.storage_type
    if not (name[:1].isalpha() and _STORAGE_MODULE_CHARACTERS.issuperset(name)) \
            or name in ("base", "split", "git_trees", "yaml_load"):
        raise ConfigError(f"Storage type {name!r} is not supported; reclass-ng reads yaml_fs, "
                          "yaml_git and mixed inventories")
    try:
        # __import__ with a fromlist returns the submodule itself; importlib.import_module
        # would import importlib (and warnings) into every start.
        module = __import__(f"reclass_ng.storage.{name}", fromlist=["open_storage"])
    except ModuleNotFoundError as err:
        if err.name != f"reclass_ng.storage.{name}":
            raise
        raise ConfigError(f"Storage type {name!r} is not supported; reclass-ng reads yaml_fs, "
                          "yaml_git and mixed inventories") from None
    storage: Storage = module.open_storage(settings, reuse)
    return storage
