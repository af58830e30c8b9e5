"""`explain`: where a node's parameter value came from, replayed from the node's own files.

The tracer merges the node once more with the real engine, through a ClassExpander subclass that
only records which entity was merged, in which order, and who included it (no engine change).
It then looks at the value each entity wrote at the asked path (as prepared from its file, `~`
and `=` flags included) and replays reclass's merge rules on those writes to label each one:
set, merged, appended, overridden, replaced (by `~`), ignored (constant `=`) or removed. The
final value always comes from the real engine (`Inventory.nodeinfo`), never from the replay.

Because references bind late, every `${...}` sees the final merged tree; the tracer therefore
resolves references against the final parameters to learn their types and values, and follows
them recursively (bounded) to show the reference chain.
"""

from __future__ import annotations

import copy
import difflib
import functools
import os
from typing import Any

import attrs

from reclass_ng.api import Inventory
from reclass_ng.classes import ClassExpander
from reclass_ng.entity import Entity
from reclass_ng.errors import NodeNotFound, NotFoundError, ReclassError
from reclass_ng.explain.replay import MISSING, Contribution, Replay, layers_of, lookup, value_kind
from reclass_ng.merge import MergedNode
from reclass_ng.storage.yaml_load import key_line
from reclass_ng.syntax.ast import Query, Ref, Text
from reclass_ng.values import Interpolation, Stack, to_plain

MAX_REFERENCE_DEPTH = 8  # links followed below one contribution; real chains are short


class ExplainNotFound(NotFoundError):
    """A node, parameter, class or application the node does not have."""


@attrs.define(eq=False)
class Visit:
    """One entity the class walk reached and merged, with the entity that listed it."""

    entity: Entity
    parent: Visit | None
    order: int = -1  # position in merge order, set once merged

    @property
    def kind(self) -> str:
        return self.entity.source.kind if self.entity.source else "extra"

    @property
    def path(self) -> str | None:
        return self.entity.source.path if self.entity.source else None


class TracingExpander(ClassExpander):
    """A ClassExpander that records every entity it merges, in merge order, and its includer."""

    def __init__(self, base: ClassExpander) -> None:
        super().__init__(base.loader, base.merger, base.settings, base.preparer, base.warn)
        self.merged: list[Visit] = []
        self._walking: list[Visit] = []

    def walk(self, node: MergedNode, entity: Entity, seen: set[str], walking: list[str],
             *args: Any) -> None:
        visit = Visit(entity, self._walking[-1] if self._walking else None)
        self._walking.append(visit)
        try:
            super().walk(node, entity, seen, walking, *args)
        finally:
            self._walking.pop()
        visit.order = len(self.merged)
        self.merged.append(visit)


def did_you_mean(word: str, candidates: list[str]) -> str:
    """` (did you mean: a, b?)` for the nearest candidates, or an empty string."""
    close = difflib.get_close_matches(word, candidates, n=3, cutoff=0.6)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


def as_written(value: Any) -> Any:
    """A prepared value back in the form its file wrote it (references as their text, `~`/`=`
    keys with their prefix again)."""
    if type(value) is Interpolation:
        return value.text
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, child in value.items():
            for written, override, constant in layers_of(child):
                prefix = ("~" if override else "") + ("=" if constant else "")
                out[prefix + str(key)] = as_written(written)
        return out
    if isinstance(value, list):
        return [as_written(v) for v in value]
    return value


class NodeTrace:
    """One node's entities in merge order, its final nodeinfo, and the explanations built on them."""

    def __init__(self, inventory: Inventory, node: str) -> None:
        self.inventory = inventory
        self.node = node
        self.settings = inventory.settings
        self.delimiter = inventory.settings.delimiter
        if node not in inventory.storage.nodes:
            raise ExplainNotFound(
                f"Node '{node}' not found under {inventory.storage.nodes_uri}"
                + did_you_mean(node, inventory.node_names))
        try:
            self.info = inventory.nodeinfo(node)  # the real engine: errors surface as they are
        except NodeNotFound as err:
            raise ExplainNotFound(err.text) from None
        renderer = copy.copy(inventory.renderer)
        renderer.expander = TracingExpander(inventory.renderer.expander)
        renderer.merge(node)
        self.visits: list[Visit] = renderer.expander.merged
        if not self.visits:  # the renderer no longer walks through `expander` (e.g. a cache)
            raise ReclassError(f"explain: could not replay the merge of node '{node}'",
                               node=node)
        self.renderer = renderer
        self.params: dict = self.info["parameters"]
        self.trees: dict[str, dict] = {"parameters": self.params, "exports": self.info["exports"]}
        base = inventory.settings.inventory_base_uri or os.getcwd()
        self.base_dir = os.path.abspath(os.path.expanduser(base))
        self._traces: dict[tuple, list[Contribution]] = {}

    # -- places ---------------------------------------------------------------------------

    def display_file(self, path: str | None) -> str | None:
        if path is None:
            return None
        relative = os.path.relpath(path, self.base_dir)
        return path if relative.startswith("..") else relative

    def line_of(self, path: str | None, keys: tuple) -> int | None:
        return None if path is None else _cached_key_line(path, keys)

    def split(self, path: str) -> tuple:
        return tuple(path.split(self.delimiter)) if path else ()

    def join(self, keys: tuple) -> str:
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
                inner = self.ref_value(item)
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

    def kind_of(self, value: Any, at: tuple, section: str) -> str:
        """The kind a value written at `at` has once rendered (a lone reference: its target's)."""
        if type(value) is Interpolation:
            single = value.template.single
            if type(single) is Ref:
                target = self.ref_value(single)
                return "scalar" if target is MISSING else value_kind(target)
            if type(single) is Query:  # its result is not kept apart: judge by the final value
                target = lookup(self.trees[section], at)
                return "scalar" if target is MISSING else value_kind(target)
            return "scalar"
        return value_kind(value)

    def resolved_mapping(self, value: Any, at: tuple, section: str) -> dict | None:
        """The final mapping a lone reference (or query) written at `at` gives, else None."""
        if type(value) is not Interpolation:
            return None
        single = value.template.single
        if type(single) is Ref:
            target = self.ref_value(single)
        elif type(single) is Query:
            # A query's result is not kept apart; the final mapping at its key stands for it.
            target = lookup(self.trees[section], at)
        else:
            return None
        return target if isinstance(target, dict) else None

    # -- the replay -----------------------------------------------------------------------

    def trace(self, leaf: tuple, section: str = "parameters") -> list[Contribution]:
        """Every write touching `leaf`, in merge order, labelled with what became of it."""
        cached = self._traces.get((section, leaf))
        if cached is None:
            cached = self._traces[(section, leaf)] = Replay(self, leaf, section).run()
        return cached

    def written_leaves(self, prefix: tuple, section: str = "parameters") -> list[tuple]:
        """Leaf paths at or below `prefix` that some entity writes, in merge order."""
        found: dict[tuple, None] = {}

        def collect(value: Any, path: tuple) -> None:
            for written, _, _ in layers_of(value):
                if isinstance(written, dict) and written:
                    for key, child in written.items():
                        collect(child, path + (key,))
                elif path:
                    found.setdefault(path, None)

        for visit in self.visits:
            for value in _values_at(getattr(visit.entity, section), prefix):
                collect(value, prefix)
        return list(found)


def _values_at(params: Any, prefix: tuple) -> list[Any]:
    """Every prepared value an entity writes exactly at `prefix` (through `~`/`=` layers)."""
    values = [params]
    for key in prefix:
        below = []
        for value in values:
            for written, _, _ in layers_of(value):
                if isinstance(written, dict) and key in written:
                    below.append(written[key])
        values = below
    return values


@functools.lru_cache(maxsize=4096)
def _cached_key_line(path: str, keys: tuple) -> int | None:
    return key_line(path, keys)


def references_in(value: Any) -> list[Ref | Query]:
    """The top-level references and queries in a written value, in order."""
    found: list[Ref | Query] = []
    if type(value) is Interpolation:
        found.extend(item for item in value.template.items if type(item) in (Ref, Query))
    elif type(value) is Stack:
        for layer in value.layers:
            found.extend(references_in(layer.value))
    elif isinstance(value, dict):
        for child in value.values():
            found.extend(references_in(child))
    elif isinstance(value, list):
        for child in value:
            found.extend(references_in(child))
    return found


def plain(value: Any) -> Any:
    """A rendered value as plain data for output."""
    return to_plain(value)
