"""Rendering every node once for lint, with the engine's provenance record of each.

Nodes are rendered one at a time and handed to the rules as they come (`node_runs`): a rule
keeps what it needs of a node and the record goes, so lint's memory does not grow with the
inventory's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs

from reclass_ng.api import Inventory
from reclass_ng.entity import Entity
from reclass_ng.errors import ReclassError
from reclass_ng.observe.provenance import NodeProvenance


@attrs.define
class NodeRun:
    """One node: its provenance record (what it merged, who wrote what) and how it failed."""

    name: str
    provenance: NodeProvenance | None
    file: str = ""  # the node's file
    error: ReclassError | None = None
    internal: str | None = None  # an unexpected failure, as text

    @property
    def entities(self) -> list[Entity]:
        """The entities merged, in merge order (until the error, if any)."""
        if self.provenance is None:
            return []
        return [merged.entity for merged in self.provenance.entities]


def node_runs(inventory: Inventory, progress: Callable[[int, int], None] | None = None
              ) -> Iterator[NodeRun]:
    """Every node rendered with provenance recording, one at a time (the class walks nodes
    share recorded once: Inventory.each_provenance); a failing node is recorded, never fatal.
    `progress(done, total)` is told as each node is handed over, and at the end."""
    names = inventory.node_names
    for done, (name, provenance) in enumerate(inventory.each_provenance(names)):
        if progress:
            progress(done, len(names))
        node_file = inventory.storage.nodes.get(name)
        path = node_file.path if node_file else ""
        if isinstance(provenance, Exception):
            # lint reports every node, whatever happens
            yield NodeRun(name, None, path,
                          internal=f"{type(provenance).__name__}: {provenance}")
            continue
        yield NodeRun(name, provenance, path, provenance.error)
    if progress:
        progress(len(names), len(names))
