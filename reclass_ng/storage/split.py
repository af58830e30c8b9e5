"""Nodes from one tree, classes from a tree chosen by each node's environment.

The shape of the yaml_git and mixed storages: `classes_for(environment)` gives the class tree
a node of that environment reads (a git branch, a directory), each opened once and kept for
the life of the storage (there are as many as the inventory has environments).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from reclass_ng.settings import Settings
from reclass_ng.storage.yaml_fs import NodeFile, YamlFsStorage


def opened_with(settings: Settings) -> tuple[Any, ...]:
    """The settings a split storage is made from: another Inventory of the same process with
    these settings (the preloaded inventory of `--jobs`) reuses it instead of fetching again."""
    base = os.path.abspath(os.path.expanduser(settings.inventory_base_uri or os.getcwd()))
    return (settings.storage_type, base, settings.nodes_uri, settings.classes_uri,
            settings.compose_node_name, settings.default_environment)


class SplitStorage:
    """A Storage (storage/base.py) whose class tree depends on the environment."""

    def __init__(self, nodes: YamlFsStorage, open_classes: Callable[[str], YamlFsStorage],
                 classes_uri: str, settings: Settings) -> None:
        self.opened_with = opened_with(settings)
        self.node_tree = nodes
        self.nodes: Mapping[str, NodeFile] = nodes.nodes
        self.compose_node_name = nodes.compose_node_name
        self._open_classes = open_classes
        self._classes_uri = classes_uri
        self._default_environment = settings.default_environment
        self._trees: dict[str, YamlFsStorage] = {}
        self._lock = threading.Lock()

    @property
    def nodes_uri(self) -> str:
        return self.node_tree.nodes_uri

    @property
    def classes_uri(self) -> str:
        return self._classes_uri

    def classes_for(self, environment: str) -> YamlFsStorage:
        """The class tree of `environment`, opened on first use."""
        tree = self._trees.get(environment)
        if tree is None:
            with self._lock:
                tree = self._trees.get(environment)
                if tree is None:
                    tree = self._trees[environment] = self._open_classes(environment)
        return tree

    def opened_environments(self) -> list[str]:
        """The environments whose class trees were opened so far, in opening order."""
        with self._lock:
            return list(self._trees)

    # The default environment's class tree, for tools that look at "the" classes.
    @property
    def default_classes(self) -> YamlFsStorage:
        return self.classes_for(self._default_environment)

    @property
    def class_paths(self) -> dict[str, str]:
        return self.default_classes.class_paths

    def class_path(self, name: str) -> str | None:
        return self.default_classes.class_path(name)

    def check_classes(self) -> None:
        for tree in list(self._trees.values()):
            tree.check_classes()

    def origin(self, path: str) -> str:
        return self.node_tree.origin(path)  # every tree is a yaml_fs tree

    @property
    def floats_json_exact(self) -> bool:
        """Whether every float of the files parsed so far, in any tree, prints the same
        through orjson as through json (storage.yaml_load.YamlLoader)."""
        with self._lock:
            trees = [self.node_tree, *self._trees.values()]
        return all(tree.floats_json_exact for tree in trees)

    def parsed(self, path: str) -> Any:
        """A file of any of the trees, parsed once (node files through the nodes tree)."""
        return self._tree_of(path).parsed(path)

    def forget_parsed(self, path: str) -> None:
        """Drop the parsed document of a file of any of the trees."""
        self._tree_of(path).forget_parsed(path)

    def _tree_of(self, path: str) -> YamlFsStorage:
        """The tree that reads file `path`: the class tree holding it, else the nodes'."""
        for tree in list(self._trees.values()):
            if tree.classes_dir and path.startswith(tree.classes_dir + os.sep):
                return tree
        return self.node_tree
