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


class _Findings:
    """Why each node is affected (reasons in the order found, each once), and the changed
    files some node read."""

    def __init__(self) -> None:
        self.reasons: dict[str, list[str]] = {}
        self.read: set[str] = set()

    def because(self, node: str, why: str, read: str | None = None) -> bool:
        """Note `why` for `node` (and that it read the file `read`); True when it is new."""
        if read is not None:
            self.read.add(read)
        listed = self.reasons.setdefault(node, [])
        if why in listed:
            return False
        listed.append(why)
        return True


@attrs.frozen
class _SideChanges:
    """The changed files as one side's layout places them."""

    settings_file: str | None  # the side's settings file, when it changed
    classes: dict[str, str]  # class name -> its changed file
    node_files: frozenset[str]

    def node_list_changed(self, known: bool | None) -> bool:
        """`known`, or when it is unknown, whether a file below the nodes directory changed."""
        return bool(self.node_files) if known is None else known


def _side_changes(layout: InventoryLayout, files: tuple[str, ...]) -> _SideChanges:
    classes: dict[str, str] = {}
    node_files: set[str] = set()
    for path in files:
        below = _below(path, layout.classes_dir)
        if below is not None and below.endswith(YAML_SUFFIXES):
            classes[class_name_for(below)] = path
        below = _below(path, layout.nodes_dir)
        if below is not None and below.endswith(YAML_SUFFIXES):
            node_files.add(path)
    settings_file = layout.config_file if layout.config_file in files else None
    return _SideChanges(settings_file, classes, frozenset(node_files))


def _note_file_reads(found: _Findings, node: str, reads: NodeDependencies,
                     changes: _SideChanges, files: tuple[str, ...]) -> None:
    """The node's reasons from the files it read or the classes it looked for."""
    if reads.node_file in changes.node_files:
        found.because(node, f"its node file {reads.node_file} changed", reads.node_file)
    named = {changes.classes[name]: name for name in reads.classes & changes.classes.keys()}
    for path in sorted(reads.class_files.intersection(files) | named.keys()):
        found.because(node, f"class {named[path]} ({path}) changed" if path in named
                      else f"its class file {path} changed", path)


def _follow_exports(found: _Findings, sides: Sequence[Side]) -> None:
    """A node whose queries read an affected node's exports is affected, and so on."""
    growing = True
    while growing:
        growing = False
        for _, dependencies in sides:
            for node, reads in dependencies.items():
                for other in sorted((reads.queried_nodes - {node}) & found.reasons.keys()):
                    growing |= found.because(node, f"its queries read the exports of {other}")


def affected_nodes(sides: Sequence[Side], changed: Iterable[str],
                   node_list_changed: bool | None = None) -> AffectedNodes:
    """The nodes of any side that the `changed` files (relative to the inventory directory,
    with `/`) affect. `node_list_changed`: whether a node was added or removed (None: unknown,
    taken as yes when a file below the nodes directory changed)."""
    files = tuple(sorted(set(changed)))
    found = _Findings()
    settings_changed = False
    for layout, dependencies in sides:
        changes = _side_changes(layout, files)
        if changes.settings_file is not None:
            settings_changed = True
            found.read.add(changes.settings_file)  # read by the settings, node or not
            for node in dependencies:
                found.because(node, f"the settings file {changes.settings_file} changed")
        list_changed = changes.node_list_changed(node_list_changed)
        inventory_changed = bool(changes.classes or changes.node_files)
        for node, reads in dependencies.items():
            _note_file_reads(found, node, reads, changes, files)
            if not reads.complete and inventory_changed:
                found.because(node, "it failed to render before its inputs were recorded, and "
                                    "an inventory file changed")
            if reads.reads_node_list and list_changed:
                found.because(node, "its queries read the list of nodes, which changed")
    _follow_exports(found, sides)
    return AffectedNodes({node: tuple(found.reasons[node]) for node in sorted(found.reasons)},
                         files, tuple(path for path in files if path not in found.read),
                         settings_changed)
