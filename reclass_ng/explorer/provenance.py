"""Where a node's values, classes and applications came from, read from `explain`'s data.

Nothing here re-derives a merge: the writes of each leaf and what became of them come from
`NodeTrace.trace` (the engine's provenance record `reclass-ng explain` prints), include chains from
`explain_class`/`explain_application`, and the history of a key from `explain_parameter`, the
very report `reclass-ng explain -o json` writes.
"""

from __future__ import annotations

from typing import Any

import attrs

import reclass_ng
from reclass_ng.explain import (
    NodeTrace,
    explain_application,
    explain_class,
    explain_parameter,
)
from reclass_ng.explain.origin import Origin


@attrs.frozen
class Leaf:
    """A rendered value (a scalar, a list or an empty mapping) and the writes it is made of."""

    keys: tuple
    value: Any
    origins: tuple[Origin, ...]


class NodeExplanation:
    """One node's trace, and the views of it the node page shows."""

    def __init__(self, inventory: reclass_ng.Inventory, node: str) -> None:
        self.trace = NodeTrace(inventory, node)  # raises the engine's error for a broken node
        self.node = node
        self.info = self.trace.info
        self.delimiter = self.trace.delimiter
        self._shown_files: dict[str, str | None] = {}

    @property
    def node_file(self) -> str | None:
        """The node's file, relative to the inventory directory."""
        found = self.trace.inventory.storage.nodes.get(self.node)
        return self.display_file(found.path) if found is not None else None

    def line_of(self, path: str | None, keys: tuple) -> int | None:
        """The line of `keys` in a file (the inventory's key positions: each file read once)."""
        return self.trace.line_of(path, keys)

    def display_file(self, path: str | None) -> str | None:
        if path is None:
            return None
        if path not in self._shown_files:
            self._shown_files[path] = self.trace.display_file(path)
        return self._shown_files[path]

    def origins(self, keys: tuple, section: str = "parameters") -> tuple[Origin, ...]:
        """The writes the final value at `keys` is made of, in merge order."""
        trace = self.trace
        found = []
        for contribution in trace.trace(keys, section):
            if not contribution.final:
                continue
            found.append(Origin(
                kind=contribution.source.kind, name=contribution.source.name,
                file=self.display_file(contribution.file),
                line=self.line_of(contribution.file, (section, *contribution.key)),
                via=contribution.via))
        return tuple(found)

    def leaves(self, section: str = "parameters", under: tuple = ()) -> list[Leaf]:
        """Every leaf of the rendered tree (or of the mapping at `under`), depth first in key
        order, with its origins."""
        out: list[Leaf] = []

        def walk(value: Any, keys: tuple) -> None:
            if isinstance(value, dict) and value:
                for key, child in value.items():
                    walk(child, (*keys, key))
            elif keys:
                out.append(Leaf(keys, value, self.origins(keys, section)))

        start: Any = self.info[section]
        for key in under:
            start = start.get(key) if isinstance(start, dict) else None
        if start is not None:
            walk(start, under)
        return out

    def history(self, path: str, section: str = "parameters") -> dict[str, Any]:
        """Every write of the key in merge order, what happened to it, reference chains: the
        report `reclass-ng explain -o json NODE PATH` prints."""
        return explain_parameter(self.trace, path, section)

    def class_chains(self) -> list[dict[str, Any]]:
        """For each class of the node, in merge order, the chain of includes that brought it."""
        return [explain_class(self.trace, name) for name in self.info["classes"]]

    def application_chains(self) -> list[dict[str, Any]]:
        return [explain_application(self.trace, name) for name in self.info["applications"]]

    def join(self, keys: tuple) -> str:
        return self.delimiter.join(str(k) for k in keys)
