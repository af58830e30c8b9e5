"""Every node of the inventory rendered once, for the node list and its filters.

The catalogue is built by the engine (`Inventory.nodeinfo` for each node, so a node that fails to
render keeps the message the CLI prints) and by the classifier (the groups each node matches with
the facts the service stores). It belongs to one snapshot of the inventory's files: the explorer
builds a new one when a file changes, never edits one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

import reclass_ng
from reclass_ng.classifier.classification import matching_groups
from reclass_ng.classifier.facts import trusted_with_certname
from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.classifier.rule_evaluator import node_map
from reclass_ng.errors import ReclassError

PAGE_SIZE = 50  # nodes a page of the list shows


def error_text(err: Exception) -> str:
    """The message the CLI prints for an error (reclass_ng.cli.failures.report, text form)."""
    if isinstance(err, ReclassError):
        return "\n".join(err.report_lines())
    return f"reclass-ng: internal error: {type(err).__name__}: {err}"


@attrs.frozen
class NodeSummary:
    """One node as the list shows it; `info` is its `--nodeinfo`, None when it failed."""

    name: str
    info: dict[str, Any] | None
    error: str | None
    groups: tuple[str, ...]  # names of the groups it matches
    listed: tuple[str, ...] = ()  # the classes its own file lists, as written
    declared_environment: str = ""  # what its own file says (else the default)

    @property
    def environment(self) -> str:
        """The rendered environment; for a node that fails, the one its file declares (so
        filtering by environment keeps failing nodes, shown as failing)."""
        return str(self.info["environment"]) if self.info else self.declared_environment

    @property
    def classes(self) -> list[str]:
        return list(self.info["classes"]) if self.info else []

    @property
    def applications(self) -> list[str]:
        return list(self.info["applications"]) if self.info else []


@attrs.frozen
class NodeFilter:
    """What the list was asked for; empty fields do not filter."""

    text: str = ""  # a substring of the name, the environment, a class or a group
    environment: str = ""
    class_name: str = ""
    application: str = ""
    group: str = ""
    parameter: str = ""  # `path` (the node has it) or `path=value` (its value, as text)
    failing: bool = False  # only the nodes that fail to render


def parameter_value(parameters: dict[str, Any], path: str, delimiter: str) -> tuple[bool, Any]:
    """(found, value) at a `delimiter`-separated path of rendered parameters."""
    node: Any = parameters
    for key in path.split(delimiter):
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isascii() and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False, None
    return True, node


def value_text(value: Any) -> str:
    """A value as the list filter compares it: strings as they are, the rest as YAML would
    write a scalar (true, 80, null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


class NodeCatalogue:
    """The rendered nodes of one snapshot, with indexes by class and application."""

    def __init__(self, nodes: list[NodeSummary], delimiter: str) -> None:
        self.nodes = nodes
        self.delimiter = delimiter
        self.class_nodes: dict[str, list[str]] = {}
        self.application_nodes: dict[str, list[str]] = {}
        for node in nodes:
            for name in node.classes:
                self.class_nodes.setdefault(name, []).append(node.name)
            for name in node.applications:
                self.application_nodes.setdefault(name, []).append(node.name)

    @classmethod
    def build(cls, inventory: reclass_ng.Inventory, tree: GroupTree | None,
              facts_of: Callable[[str], dict[str, Any] | None]) -> NodeCatalogue:
        """Render every node with the engine and match it against the groups."""
        summaries = []
        for name in inventory.node_names:
            try:
                info, error = inventory.nodeinfo(name), None
            except Exception as err:  # noqa: BLE001 - one broken node must not hide the others
                info, error = None, error_text(err)
            own = _node_file(inventory, name)
            declared = own.get("environment") if isinstance(own.get("environment"), str) else None
            summaries.append(NodeSummary(
                name, info, error, _group_names(tree, name, facts_of), _listed_classes(own),
                declared or inventory.settings.default_environment))
        return cls(summaries, inventory.settings.delimiter)

    def select(self, wanted: NodeFilter) -> list[NodeSummary]:
        """The nodes that pass every field of the filter, in name order."""
        return [node for node in self.nodes if self._passes(node, wanted)]

    def _passes(self, node: NodeSummary, wanted: NodeFilter) -> bool:
        if wanted.failing and node.error is None:
            return False
        if wanted.text and not _mentions(node, wanted.text):
            return False
        if not _has_named(node, wanted):
            return False
        return not wanted.parameter or self._has_parameter(node, wanted.parameter)

    def _has_parameter(self, node: NodeSummary, wanted: str) -> bool:
        """Whether the node has the parameter `path`, or `path=value` (as the page shows it)."""
        if node.info is None:
            return False
        path, has_value, expected = wanted.partition("=")
        found, value = parameter_value(node.info["parameters"], path.strip(), self.delimiter)
        return found and (not has_value or value_text(value) == expected.strip())

    def group_names(self) -> list[str]:
        return sorted({group for node in self.nodes for group in node.groups})

    def environments(self) -> list[str]:
        return sorted({node.environment for node in self.nodes if node.environment})

    def failed(self) -> list[NodeSummary]:
        return [node for node in self.nodes if node.error is not None]


def _mentions(node: NodeSummary, text: str) -> bool:
    """Whether `text` is in the node's name, environment, a class or a group, in any case."""
    needle = text.lower()
    haystack: Iterable[str] = (node.name, node.environment, *node.classes, *node.groups)
    return any(needle in item.lower() for item in haystack)


def _has_named(node: NodeSummary, wanted: NodeFilter) -> bool:
    """Whether the node has the environment, class, application and group the filter names."""
    return ((not wanted.environment or node.environment == wanted.environment)
            and (not wanted.class_name or wanted.class_name in node.classes)
            and (not wanted.application or wanted.application in node.applications)
            and (not wanted.group or wanted.group in node.groups))


def _node_file(inventory: reclass_ng.Inventory, name: str) -> dict[str, Any]:
    """The node's own file as parsed (empty when it cannot be read or is no mapping)."""
    storage = inventory.storage
    try:
        raw = storage.parsed(storage.nodes[name].path)
    except ReclassError:
        return {}
    return raw if isinstance(raw, dict) else {}


def _listed_classes(own: dict[str, Any]) -> tuple[str, ...]:
    entries = own.get("classes")
    return tuple(e for e in entries if isinstance(e, str)) if isinstance(entries, list) else ()


def groups_matching(tree: GroupTree, name: str, stored: dict[str, Any] | None) -> list[Group]:
    """The groups a node matches with the facts the service stores for it (none: by name and
    certname), as `reclass-ng classify` and the API classify it."""
    facts = stored or {}
    return matching_groups(tree, node_map(name, facts.get("fact"),
                                          trusted_with_certname(name, facts.get("trusted"))))


def _group_names(tree: GroupTree | None, name: str,
                 facts_of: Callable[[str], dict[str, Any] | None]) -> tuple[str, ...]:
    if tree is None:
        return ()
    return tuple(group.name for group in groups_matching(tree, name, facts_of(name)))


def page_of(items: list[Any], page: int, size: int = PAGE_SIZE) -> tuple[list[Any], int, int]:
    """(items of page `page` counted from 1, the page shown, number of pages)."""
    pages = max(1, -(-len(items) // size))
    page = min(max(page, 1), pages)
    return items[(page - 1) * size: page * size], page, pages
