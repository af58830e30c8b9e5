"""Rendering every node once for lint, with the engine's provenance record of each."""

from __future__ import annotations

from collections.abc import Callable

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


def render_nodes(inventory: Inventory, progress: Callable[[str], None] | None = None
                 ) -> list[NodeRun]:
    """Render every node with provenance recording; a failing node is recorded, never fatal."""
    runs: list[NodeRun] = []
    for name in inventory.node_names:
        if progress:
            progress(name)
        node_file = inventory.storage.nodes.get(name)
        path = node_file.path if node_file else ""
        try:
            provenance = inventory.provenance(name)
        except Exception as err:  # noqa: BLE001 - lint reports every node, whatever happens
            runs.append(NodeRun(name, None, path, internal=f"{type(err).__name__}: {err}"))
            continue
        runs.append(NodeRun(name, provenance, path, provenance.error))
    return runs
