"""Which entities a node merges, in order, and what each of them writes at which key path.

The engine merges entities without keeping the list; a Merger subclass put into the class
expander records it, so lint and diff see exactly the order the engine used (class mappings,
relative and templated class names included) without a second implementation of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from reclass_ng.api import Inventory
from reclass_ng.entity import Entity
from reclass_ng.merge import MergedNode, Merger
from reclass_ng.values import Interpolation, Stack, UnresolvedDict, UnresolvedList


class RecordingMerger(Merger):
    """A Merger that also appends every entity it merges to `entities`."""

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.entities: list[Entity] = []

    def merge_entity(self, node: MergedNode, entity: Entity, *args: Any) -> None:
        self.entities.append(entity)
        super().merge_entity(node, entity, *args)


def attach_recorder(inventory: Inventory) -> RecordingMerger:
    """Make the inventory's class expander record merged entities (for this Inventory only)."""
    recorder = RecordingMerger(inventory.settings)
    inventory.renderer.expander.merger = recorder
    return recorder


@attrs.frozen
class Write:
    """One entity's value at one key path."""

    kind: str  # "dict", "list", "scalar", "null" or "reference"
    override: bool  # `~key` (here or on the key itself)
    constant: bool  # `=key`
    value: Any


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if type(value) is Interpolation:
        return "reference"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, list):
        return "list"
    return "scalar"


def writes_of(entity: Entity, section: str = "parameters") -> dict[tuple, Write]:
    """Every key path the entity's parameters (or exports) write, top down (dicts and keys)."""
    out: dict[tuple, Write] = {}
    _flatten(entity.exports if section == "exports" else entity.parameters, (), out)
    return out


def _flatten(mapping: Any, prefix: tuple, out: dict[tuple, Write]) -> None:
    for key, value in mapping.items():
        override = constant = False
        if type(value) is Stack:
            override = any(layer.override for layer in value.layers)
            constant = any(layer.constant for layer in value.layers)
            value = value.layers[-1].value
        path = prefix + (key,)
        out[path] = Write(kind_of(value), override, constant, value)
        if isinstance(value, dict):
            _flatten(value, path, out)


def plain(value: Any) -> Any:
    """A value as a user wrote it (references as their text), for messages."""
    if type(value) is Interpolation:
        return value.text
    if type(value) is Stack:
        return plain(value.layers[-1].value)
    if isinstance(value, (dict, UnresolvedDict)):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, UnresolvedList)):
        return [plain(v) for v in value]
    return value


def prefixes(path: tuple) -> Iterator[tuple]:
    """`path` and each of its prefixes, longest first."""
    for length in range(len(path), 0, -1):
        yield path[:length]


def entity_label(entity: Entity) -> str:
    source = entity.source
    kind = source.kind if source else "extra"
    return f"{kind} {entity.name}" if kind in ("class", "node") else kind
