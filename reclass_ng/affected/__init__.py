"""`affected`: which nodes a change to an inventory's files affects, before rendering them
again, from what each node's render read (its provenance record: node file, classes found and
not found, the nodes whose exports its queries read)."""

from reclass_ng.affected.dependencies import (
    InventoryLayout,
    NodeDependencies,
    load_for_dependencies,
    record_dependencies,
)
from reclass_ng.affected.selection import AffectedNodes, affected_nodes

__all__ = ["AffectedNodes", "InventoryLayout", "NodeDependencies", "affected_nodes",
           "load_for_dependencies", "record_dependencies"]
