"""The public entry points: `load()` and the Inventory it returns."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from reclass_ng.classes import parse_class_mapping
from reclass_ng.entity import Entity, EntityPreparer
from reclass_ng.errors import ConfigError, ReclassError
from reclass_ng.queries import QueryEngine
from reclass_ng.render import NodeRenderer, cycle_collection_paused, timestamp
from reclass_ng.settings import Settings, load_settings
from reclass_ng.storage.yaml_fs import YamlFsStorage
from reclass_ng.syntax.grammar import ValueParser

if TYPE_CHECKING:  # concurrent.futures costs ~10 ms to import; only parallel renders need it
    from concurrent.futures import Executor

__all__ = ["Entity", "Inventory", "load"]


def _print_warning(message: str) -> None:
    print(message, file=sys.stderr)


class Inventory:
    """A reclass inventory: nodes, classes and settings, rendered on demand."""

    def __init__(self, settings: Settings, warn: Callable[[str], None] | None = None,
                 storage: YamlFsStorage | None = None) -> None:
        self.settings = settings
        self.warn = warn or _print_warning
        if settings.storage_type != "yaml_fs":
            raise ConfigError(f"Storage type {settings.storage_type!r} is not supported; "
                              "reclass-ng reads yaml_fs inventories")
        base = settings.inventory_base_uri or os.getcwd()
        nodes_dir = os.path.join(os.path.expanduser(base), os.path.expanduser(settings.nodes_uri))
        classes_dir = os.path.join(os.path.expanduser(base),
                                   os.path.expanduser(settings.classes_uri))
        _check_distinct(nodes_dir, classes_dir)
        if storage is None or (storage.nodes_dir, storage.classes_dir,
                               storage.compose_node_name) != (
                os.path.abspath(nodes_dir), os.path.abspath(classes_dir),
                settings.compose_node_name):
            storage = YamlFsStorage(nodes_dir, classes_dir, settings.compose_node_name)
        self.storage = storage  # shared by the inventories of one process: files parsed once
        parser = ValueParser(settings.reference_sentinels, settings.export_sentinels,
                             settings.escape_character)
        mappings = [parse_class_mapping(m) for m in settings.class_mappings]
        self.renderer = NodeRenderer(self.storage, settings, EntityPreparer(settings, parser),
                                     mappings, self.warn)
        self.queries = QueryEngine(self.renderer)

    @property
    def node_names(self) -> list[str]:
        return sorted(self.storage.nodes)

    def nodeinfo(self, name: str, extra: Sequence[Entity] = (), node_optional: bool = False
                 ) -> dict[str, Any]:
        """The `--nodeinfo` structure of one node."""
        node = self.renderer.merge(name, extra, node_optional)
        self.renderer.interpolate(node, self.queries.evaluator_for(node))
        return self.renderer.nodeinfo(node)

    def inventory(self, executor: Executor | None = None, *,
                  progress: Callable[[int, int], None] | None = None,
                  chunk_size: int | None = None) -> dict[str, Any]:
        """The `--inventory` structure: every node, and which nodes have each class/application.

        With an `executor` (a process pool, a Dask client's executor, ...) the nodes are
        rendered by its workers, in chunks of `chunk_size` (see reclass_ng.parallel); the result
        is the same. `progress(done, total)` is told how far the render is, two steps a node.
        """
        if executor is not None:
            from reclass_ng.parallel import render_inventory

            return render_inventory(self, executor, chunk_size=chunk_size, progress=progress)
        with cycle_collection_paused():
            return self._inventory_serially(progress)

    def _inventory_serially(self, progress: Callable[[int, int], None] | None
                            ) -> dict[str, Any]:
        names = self.node_names
        total = 2 * len(names)
        # Every node's classes are expanded before any is interpolated, so class errors come
        # first, in node order, as with reclass.
        merged = []
        self.renderer.expect_nodes(names)
        for name in names:
            merged.append(self.renderer.merge(name))
            if progress is not None:
                progress(len(merged), total)
        nodes = {}
        for node in merged:
            nodes[node.name] = self._interpolated(node)
            if progress is not None:
                progress(len(merged) + len(nodes), total)
        return inventory_document(nodes)

    def _interpolated(self, node: Any) -> dict[str, Any]:
        self.renderer.interpolate(node, self.queries.evaluator_for(node, inventory_mode=True))
        return self.renderer.nodeinfo(node)


def inventory_document(nodes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    classes: dict[str, list[str]] = {}
    applications: dict[str, list[str]] = {}
    for name, info in nodes.items():
        for app in info["applications"]:
            applications.setdefault(app, []).append(name)
        for cls in info["classes"]:
            classes.setdefault(cls, []).append(name)
    return {"__reclass__": {"timestamp": timestamp()}, "nodes": nodes, "classes": classes,
            "applications": applications}


def _check_distinct(nodes_dir: str, classes_dir: str) -> None:
    nodes_dir, classes_dir = os.path.abspath(nodes_dir), os.path.abspath(classes_dir)
    if nodes_dir == classes_dir:
        raise ConfigError(f"The inventory URIs must not be the same for nodes and classes: "
                          f"{nodes_dir}")
    if os.path.commonpath([nodes_dir, classes_dir]) in (nodes_dir, classes_dir):
        raise ConfigError(f"The nodes and classes directories must not contain each other: "
                          f"{nodes_dir}, {classes_dir}")


def load(inventory_base_uri: str | None = None, *, read_config: bool = True,
         warn: Callable[[str], None] | None = None, **settings: Any) -> Inventory:
    """Open an inventory. Settings are reclass-config.yml keys; keyword values win over the file."""
    try:
        resolved = load_settings(inventory_base_uri, settings, read_config=read_config)
    except ReclassError:
        raise
    return Inventory(resolved, warn=warn)
