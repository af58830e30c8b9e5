"""`explain`: where a node's parameter value came from, read from the engine's provenance record.

`NodeTrace` renders the node once with provenance recording on (`Inventory.provenance`): the
entities merged in order with the entity listing each class, and for every key path the writes
that touched it, labelled by the engine with what became of them (set, merged, appended,
overridden, replaced by `~`, ignored because of a constant `=`, removed). Nothing here knows a
merge rule.

References bind late: every `${...}` sees the final merged tree. The tracer follows them against
the final parameters (recursively, bounded) to show the chain of writes behind a value.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from reclass_ng.api import Inventory
from reclass_ng.errors import NodeNotFound, NotFoundError
from reclass_ng.location import display_path
from reclass_ng.observe.provenance import MISSING, MergedEntity, Write
from reclass_ng.suggestions import did_you_mean, similar_node_names
from reclass_ng.syntax.ast import Query, Ref, Text
from reclass_ng.values import Interpolation, Stack, as_written, to_plain

MAX_REFERENCE_DEPTH = 8  # links followed below one contribution; real chains are short

__all__ = ["MAX_REFERENCE_DEPTH", "MISSING", "ExplainNotFound", "NodeTrace", "as_written",
           "located_references", "lookup", "plain", "references_in"]


class ExplainNotFound(NotFoundError):
    """A node, parameter, class or application the node does not have.

    The nearest existing names are part of the message (`(did you mean a, b?)`) and are the
    record's suggestions; the record names the node asked about.
    """

    def __init__(self, text: str, node: str | None = None,
                 suggestions: Sequence[str] = ()) -> None:
        close = list(suggestions)
        super().__init__(text + did_you_mean(close),
                         suggest=lambda: close)
        self.asked_node = node

    def context_lines(self) -> list[str]:
        """None: the suggestions are part of the message."""
        return []

    def record(self, node: str | None = None) -> dict[str, Any]:
        """The error's record, naming the node asked about."""
        return super().record(node or self.asked_node)


class NodeTrace:
    """One node's provenance record and final nodeinfo, and the explanations built on them."""

    def __init__(self, inventory: Inventory, node: str) -> None:
        self.inventory = inventory
        self.node = node
        self.settings = inventory.settings
        self.delimiter = inventory.settings.delimiter
        if node not in inventory.storage.nodes:
            raise ExplainNotFound(
                f"Node '{node}' not found under {inventory.storage.nodes_uri}", node,
                similar_node_names(node, inventory.node_names))
        self.provenance = inventory.provenance(node)
        error = self.provenance.error
        if error is not None:  # the real engine's error, as it reports it
            if isinstance(error, NodeNotFound):
                raise ExplainNotFound(error.text, node, error.suggestions()) from None
            raise error
        assert self.provenance.nodeinfo is not None
        self.info: dict[str, Any] = self.provenance.nodeinfo
        self.visits: list[MergedEntity] = self.provenance.entities
        self.params: dict = self.info["parameters"]
        self.trees: dict[str, dict] = {"parameters": self.params, "exports": self.info["exports"]}
        base = inventory.settings.inventory_base_uri or os.getcwd()
        self.base_dir = os.path.abspath(os.path.expanduser(base))
        self._traces: dict[tuple, list[Write]] = {}

    # -- places ---------------------------------------------------------------------------

    def display_file(self, path: str | None) -> str | None:
        """A file as the output shows it: relative to the inventory when it lies inside."""
        return None if path is None else display_path(path, self.base_dir)

    def line_of(self, path: str | None, keys: tuple) -> int | None:
        """The line of the deepest of `keys` written in file `path`."""
        return self.inventory.key_positions.line(path, keys)

    def split(self, path: str) -> tuple:
        """A parameter path split on the inventory's delimiter."""
        return tuple(path.split(self.delimiter)) if path else ()

    def join(self, keys: tuple) -> str:
        """Keys joined with the inventory's delimiter."""
        return self.delimiter.join(str(k) for k in keys)

    # -- references -----------------------------------------------------------------------

    def ref_path(self, ref: Ref) -> str:
        """The path a reference points at; nested references take their final values."""
        if ref.is_simple:
            return ref.simple_path
        parts = []
        for item in ref.items:
            if type(item) is Text:
                parts.append(item.value)
            else:
                inner = self.ref_value(item)  # type: ignore[arg-type]
                parts.append("" if inner is MISSING else str(inner))
        return "".join(parts)

    def ref_target(self, ref: Ref) -> tuple[str, str | None]:
        """(path, default text) a reference reads; the default only with reference_defaults."""
        path = self.ref_path(ref)
        if getattr(self.settings, "reference_defaults", False) and "::" in path:
            path, default = path.split("::", 1)
            return path, default
        return path, None

    def ref_value(self, ref: Ref) -> Any:
        """The final value at the reference's path, or MISSING."""
        return lookup(self.params, self.split(self.ref_target(ref)[0]))

    # -- the record -----------------------------------------------------------------------

    def trace(self, leaf: tuple, section: str = "parameters") -> list[Write]:
        """Every write touching `leaf`, in merge order, labelled with what became of it."""
        cached = self._traces.get((section, leaf))
        if cached is None:
            cached = self._traces[(section, leaf)] = self.provenance.writes(leaf, section)
        return cached

    def written_leaves(self, prefix: tuple, section: str = "parameters") -> list[tuple]:
        """Leaf paths at or below `prefix` that some entity writes, in merge order."""
        return self.provenance.written_paths(prefix, section)


def lookup(tree: Any, keys: tuple) -> Any:
    """The value at `keys` in a rendered tree (list positions as numbers), or MISSING."""
    node = tree
    for key in keys:
        if isinstance(node, dict):
            if key not in node:
                return MISSING
            node = node[key]
        elif isinstance(node, list):
            try:
                node = node[int(key)]
            except (ValueError, IndexError):
                return MISSING
        else:
            return MISSING
    return node


def references_in(value: Any) -> list[Ref | Query]:
    """The top-level references and queries in a written value, in order."""
    return [ref for _, ref in located_references(value)]


def located_references(value: Any, within: tuple = ()) -> list[tuple[tuple, Ref | Query]]:
    """The top-level references and queries in a written value, in order, each with the keys
    (list positions, mapping keys) leading to it inside the value."""
    found: list[tuple[tuple, Ref | Query]] = []
    if type(value) is Interpolation:
        found.extend((within, item) for item in value.template.items
                     if isinstance(item, (Ref, Query)))
    elif type(value) is Stack:
        for layer in value.layers:
            found.extend(located_references(layer.value, within))
    elif isinstance(value, dict):
        for key, child in value.items():
            found.extend(located_references(child, within + (key,)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(located_references(child, within + (index,)))
    return found


plain = to_plain  # rendered values as plain data for output
