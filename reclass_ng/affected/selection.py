"""The nodes a set of changed files affects, from the dependencies each node's render recorded.

A node is affected when it read a changed file (its node file, a class file), when a class it
looked for (found or not) is named by a changed file (a missing class that now exists, a class
moved between `x.yml` and `x/init.yml`), when the settings file changed, when its queries read
the exports of an affected node (followed until nothing is added), or when its queries read the
list of nodes and a node was added or removed. Over-approximate on purpose: a node listed may
render the same; a node not listed renders the same (tests/test_affected.py checks that with
random edits).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from reclass_ng.affected.dependencies import InventoryLayout, NodeDependencies
from reclass_ng.storage.yaml_fs import class_name_for

YAML_SUFFIXES = (".yml", ".yaml")

Side = tuple[InventoryLayout, dict[str, NodeDependencies]]


@attrs.frozen
class AffectedNodes:
    """The affected nodes (name -> why, in name order) and how the changed files were read."""

    nodes: dict[str, tuple[str, ...]]
    changed_files: tuple[str, ...]
    unread_files: tuple[str, ...]  # changed files no node reads (nor the settings)
    settings_changed: bool


def _below(path: str, directory: str | None) -> str | None:
    if directory is None:
        return None
    if directory == ".":
        return path
    prefix = directory.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def affected_nodes(sides: Sequence[Side], changed: Iterable[str],
                   node_list_changed: bool | None = None) -> AffectedNodes:
    """The nodes of any side that the `changed` files (relative to the inventory directory,
    with `/`) affect. `node_list_changed`: whether a node was added or removed (None: unknown,
    taken as yes when a file below the nodes directory changed)."""
    files = tuple(sorted(set(changed)))
    reasons: dict[str, list[str]] = {}
    read: set[str] = set()

    def because(node: str, why: str) -> None:
        listed = reasons.setdefault(node, [])
        if why not in listed:
            listed.append(why)

    settings_changed = False
    for layout, dependencies in sides:
        changed_classes: dict[str, str] = {}
        changed_node_files: set[str] = set()
        for path in files:
            if path == layout.config_file:
                settings_changed = True
                read.add(path)
                for node in dependencies:
                    because(node, f"the settings file {path} changed")
            below = _below(path, layout.classes_dir)
            if below is not None and below.endswith(YAML_SUFFIXES):
                changed_classes[class_name_for(below)] = path
            below = _below(path, layout.nodes_dir)
            if below is not None and below.endswith(YAML_SUFFIXES):
                changed_node_files.add(path)
        list_changed = (bool(changed_node_files) if node_list_changed is None
                        else node_list_changed)
        inventory_changed = bool(changed_classes or changed_node_files)
        for node, reads in dependencies.items():
            if reads.node_file in changed_node_files:
                read.add(reads.node_file)
                because(node, f"its node file {reads.node_file} changed")
            named = {changed_classes[name]: name
                     for name in reads.classes & changed_classes.keys()}
            for path in sorted(reads.class_files.intersection(files) | named.keys()):
                read.add(path)
                because(node, f"class {named[path]} ({path}) changed" if path in named
                        else f"its class file {path} changed")
            if not reads.complete and inventory_changed:
                because(node, "it failed to render before its inputs were recorded, and "
                              "an inventory file changed")
            if reads.reads_node_list and list_changed:
                because(node, "its queries read the list of nodes, which changed")
    # Exports: a node whose queries read an affected node's exports is affected, and so on.
    growing = True
    while growing:
        growing = False
        for _, dependencies in sides:
            for node, reads in dependencies.items():
                for other in sorted((reads.queried_nodes - {node}) & reasons.keys()):
                    why = f"its queries read the exports of {other}"
                    if why not in reasons.get(node, ()):
                        because(node, why)
                        growing = True
    return AffectedNodes({node: tuple(reasons[node]) for node in sorted(reasons)}, files,
                         tuple(path for path in files if path not in read), settings_changed)
