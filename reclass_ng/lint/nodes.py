"""Rendering every node once for lint, keeping what each node merged and how it failed."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from reclass_ng.api import Inventory
from reclass_ng.entity import Entity
from reclass_ng.errors import ReclassError
from reclass_ng.lint.layers import RecordingMerger, Write, attach_recorder, writes_of


@attrs.define
class NodeRun:
    """One node: the entities merged (in order) and the error that stopped it, if any."""

    name: str
    entities: list[Entity]
    file: str = ""  # the node's file
    error: ReclassError | None = None
    internal: str | None = None  # an unexpected failure, as text


class WriteCache:
    """`writes_of` once per entity (class entities are shared by every node using them)."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Entity, dict[tuple, Write]]] = {}

    def __call__(self, entity: Entity) -> dict[tuple, Write]:
        cached = self._cache.get(id(entity))
        if cached is None:
            cached = self._cache[id(entity)] = (entity, writes_of(entity))
        return cached[1]


def render_nodes(inventory: Inventory, progress: Callable[[str], None] | None = None
                 ) -> list[NodeRun]:
    """Merge and interpolate every node; a failing node is recorded, never fatal."""
    recorder: RecordingMerger = attach_recorder(inventory)
    renderer = inventory.renderer
    runs: list[NodeRun] = []
    for name in inventory.node_names:
        if progress:
            progress(name)
        recorder.entities = []
        node_file = inventory.storage.nodes.get(name)
        run = NodeRun(name, recorder.entities, node_file.path if node_file else "")
        runs.append(run)
        try:
            node = renderer.merge(name)
            # Queries may merge other nodes while this one interpolates: record those elsewhere.
            recorder.entities = []
            renderer.interpolate(node, inventory.queries.evaluator_for(node))
        except ReclassError as err:
            run.error = err
        except Exception as err:  # noqa: BLE001 - lint reports every node, whatever happens
            run.internal = f"{type(err).__name__}: {err}"
    return runs
