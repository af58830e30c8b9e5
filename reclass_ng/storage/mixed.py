"""mixed storage: nodes and classes each from yaml_fs or yaml_git, as kapicorp-reclass has it.

::

    storage_type: mixed
    nodes_uri:
      storage_type: yaml_fs
      uri: nodes                      # relative to the inventory base directory
    classes_uri:
      storage_type: yaml_git
      repo: file:///srv/git/classes.git
      branch: __env__
      env_overrides:
        - dev:                        # the options of classes_uri, changed for one environment
            storage_type: yaml_fs
            uri: /home/me/classes

A yaml_fs `uri` is relative to the inventory base directory (kapicorp-reclass took it relative
to the working directory, which is the same when reclass runs from the base directory).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from reclass_ng.errors import ConfigError
from reclass_ng.settings import Settings
from reclass_ng.storage.split import SplitStorage, opened_with
from reclass_ng.storage.yaml_fs import YamlFsStorage
from reclass_ng.storage.yaml_git import (
    GitClassTrees,
    GitRepositories,
    check_repositories,
    environment_overrides,
    node_tree,
)

STORAGE_TYPES = ("yaml_fs", "yaml_git")


class MixedOptions:
    """The options of a mixed `nodes_uri`/`classes_uri`, for environment_overrides."""

    def __init__(self, options: Mapping[str, Any], setting: str) -> None:
        if not isinstance(options, Mapping):
            raise ConfigError(f"Setting {setting}: storage_type mixed needs a mapping with "
                              f"storage_type ({' or '.join(STORAGE_TYPES)}) and its options, "
                              f"got {options!r}")
        self.options = {k: v for k, v in options.items() if k != "env_overrides"}
        self.setting = setting
        self.storage_type = self.options.pop("storage_type", None)
        if self.storage_type not in STORAGE_TYPES:
            raise ConfigError(f"Setting {setting}.storage_type: expected "
                              f"{' or '.join(STORAGE_TYPES)}, got {self.storage_type!r}")
        if self.storage_type == "yaml_fs":
            unknown = set(self.options) - {"uri"}
            if not isinstance(self.options.get("uri"), str) or unknown:
                raise ConfigError(f"Setting {setting}: a yaml_fs part takes `uri`, a "
                                  f"directory, and nothing else; got {dict(options)!r}")

    def updated(self, options: Mapping[str, Any], setting: str) -> MixedOptions:
        """These options with an env_overrides entry's over them (kapicorp's dict update); the
        keys the resulting storage type does not take are dropped, as kapicorp does."""
        changed = {**self.options, "storage_type": self.storage_type, **options}
        if changed["storage_type"] == "yaml_fs":
            changed = {"storage_type": "yaml_fs", "uri": changed.get("uri")}
        else:
            changed.pop("uri", None)
        return MixedOptions(changed, setting)


def _directory(base: str, uri: str) -> str:
    return os.path.join(base, os.path.expanduser(uri))


def _class_source(part: MixedOptions, base: str, repos: GitRepositories
                  ) -> Callable[[str], YamlFsStorage]:
    if part.storage_type == "yaml_fs":
        tree = YamlFsStorage(None, _directory(base, part.options["uri"]))
        return lambda environment: tree
    return GitClassTrees(part.options, repos).classes_for


def open_storage(settings: Settings, reuse: object = None) -> SplitStorage:
    """The mixed storage of `settings`."""
    check_repositories(settings)
    if isinstance(reuse, SplitStorage) and reuse.opened_with == opened_with(settings):
        return reuse
    base = os.path.expanduser(settings.inventory_base_uri or os.getcwd())
    repos = GitRepositories()
    nodes_part = MixedOptions(settings.nodes_uri, "nodes_uri")  # type: ignore[arg-type]
    if nodes_part.storage_type == "yaml_fs":
        nodes = YamlFsStorage(_directory(base, nodes_part.options["uri"]), None,
                              settings.compose_node_name)
    else:
        nodes = node_tree(nodes_part.options, repos, settings.compose_node_name)
    classes_options = settings.classes_uri
    classes_part = MixedOptions(classes_options, "classes_uri")  # type: ignore[arg-type]
    default = _class_source(classes_part, base, repos)
    by_environment = {
        environment: _class_source(part, base, repos)
        for environment, part in environment_overrides(
            classes_options, classes_part, "classes_uri", branch_default=False).items()}  # type: ignore[arg-type]

    def classes_for(environment: str) -> YamlFsStorage:
        return by_environment.get(environment, default)(environment)

    where = f"mixed {classes_part.storage_type} " + str(
        classes_part.options.get("uri") or classes_part.options.get("repo"))
    return SplitStorage(nodes, classes_for, where, settings)
