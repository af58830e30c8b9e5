"""What each node of an inventory depends on, read from the engine's provenance record.

Paths are kept relative to the inventory directory, so two sides of a change (a git export and
the working tree, two directories) compare by the same names.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import attrs

import reclass_ng
from reclass_ng.api import Inventory
from reclass_ng.errors import ReclassError


@attrs.frozen
class NodeDependencies:
    """The inputs of one node's render. `complete` is False when the render stopped before
    the record was made (then every inventory file is taken as a possible input)."""

    node: str
    node_file: str | None  # relative to the inventory directory
    classes: frozenset[str]  # class names read, found or not
    class_files: frozenset[str]  # relative paths
    queried_nodes: frozenset[str]  # nodes whose exports its queries read
    reads_node_list: bool  # a query read the list of nodes
    complete: bool = True


@attrs.frozen
class InventoryLayout:
    """Where an inventory keeps what: directories relative to the inventory directory
    (None when outside it, or not a directory: git or mixed storage)."""

    base: str
    nodes_dir: str | None
    classes_dir: str | None
    config_file: str | None  # the reclass-config.yml read, relative
    compose_node_name: bool

    def relative(self, path: str) -> str | None:
        """`path` relative to the inventory directory, None when outside it."""
        for root in dict.fromkeys((os.path.abspath(self.base), os.path.realpath(self.base))):
            for candidate in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
                relative = os.path.relpath(candidate, root)
                if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
                    return relative.replace(os.sep, "/")
        return None


def load_for_dependencies(base: str, kapitan: bool = False,
                          warn: Callable[[str], None] | None = None) -> Inventory:
    """The inventory in `base`, as reclass reads it, or as Kapitan's reclass backend reads an
    inventory directory (targets/ as nodes, Kapitan's defaults under reclass-config.yml)."""
    return reclass_ng.load(base, warn=warn, kapitan=kapitan)


def layout_of(inventory: Inventory, base: str) -> InventoryLayout:
    """Where `inventory` (opened on `base`) keeps its nodes, classes and settings."""
    settings = inventory.settings
    partial = InventoryLayout(base, None, None, None, bool(settings.compose_node_name))

    def directory(uri: object) -> str | None:
        if settings.storage_type != "yaml_fs" or not isinstance(uri, str):
            return None
        return partial.relative(os.path.join(base, uri))

    config = partial.relative(settings.config_file) if settings.config_file else None
    return InventoryLayout(base, directory(settings.nodes_uri), directory(settings.classes_uri),
                           config, partial.compose_node_name)


def record_dependencies(inventory: Inventory, base: str
                        ) -> tuple[InventoryLayout, dict[str, NodeDependencies]]:
    """Each node's dependencies, by rendering it once with its provenance recorded."""
    layout = layout_of(inventory, base)
    found: dict[str, NodeDependencies] = {}
    for name in inventory.node_names:
        try:
            record = inventory.provenance(name)
            reads = record.reads
        except ReclassError:
            node_file = inventory.storage.nodes.get(name)
            path = getattr(node_file, "path", None)
            found[name] = NodeDependencies(name, layout.relative(path) if path else None,
                                           frozenset(), frozenset(), frozenset(), True,
                                           complete=False)
            continue
        class_files = frozenset(filter(None, (layout.relative(path)
                                              for path in reads.classes.values() if path)))
        found[name] = NodeDependencies(
            name, layout.relative(reads.node_file) if reads.node_file else None,
            frozenset(reads.classes), class_files, frozenset(reads.exports), reads.node_list,
            # A render that failed (a duplicate class name anywhere fails every node, as in
            # kapicorp) may have read less than it would have: listed on any inventory change.
            complete=record.error is None)
    return layout, found
