"""The replay behind `explain`: reclass's merge rules applied to the writes of one leaf path.

Each entity's prepared parameters (or exports) are read along the leaf path; what an entity wrote
there, or above it, becomes Events, and the Replay labels every write the way Merger.merge_value
and Merger.fold would treat it: set, merged, appended, overridden, replaced (`~`), ignored (a
constant `=` at the key or above it), removed (a `~` mapping or a non-mapping written above).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from reclass_ng.values import Stack

if TYPE_CHECKING:
    from reclass_ng.explain.trace import NodeTrace, Visit

MISSING: Any = object()


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


def value_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, list):
        return "list"
    return "none" if value is None else "scalar"


def layers_of(value: Any) -> list[tuple[Any, bool, bool]]:
    """(value, override, constant) of each write a prepared key holds (`~`/`=` keys are Stacks)."""
    if type(value) is not Stack:
        return [(value, False, False)]
    out = []
    for layer in value.layers:
        if type(layer.value) is Stack:  # `a` and `~a` in one mapping nest one Stack in another
            out.extend(layers_of(layer.value))
        else:
            out.append((layer.value, layer.override, layer.constant))
    return out


@attrs.define(eq=False)
class Event:
    """Something one entity wrote on the way to (or at) a leaf path."""

    kind: str  # "leaf", "ancestor" (a non-mapping above the leaf), "enter"/"exit" (flagged mapping)
    level: int  # index in the leaf path of the key written
    value: Any = None
    override: bool = False
    constant: bool = False
    has_leaf: bool = False  # enter: the flagged mapping contains the leaf path


def events_at(params: Any, leaf: tuple) -> list[Event]:
    """Writes of one entity's prepared parameters that touch `leaf`, in the order merging meets them."""
    events: list[Event] = []
    last = len(leaf) - 1

    def descend(container: Any, level: int) -> None:
        key = leaf[level]
        if not isinstance(container, dict) or key not in container:
            return
        for value, override, constant in layers_of(container[key]):
            if level == last:
                events.append(Event("leaf", level, value, override, constant))
            elif isinstance(value, dict):
                flagged = override or constant
                if flagged:
                    inside = lookup(value, leaf[level + 1:]) is not MISSING
                    events.append(Event("enter", level, value, override, constant, inside))
                descend(value, level + 1)
                if flagged:
                    events.append(Event("exit", level, value, override, constant))
            else:
                events.append(Event("ancestor", level, value, override, constant))

    descend(params, 0)
    return events


@attrs.define(eq=False)
class Contribution:
    """One write at (or above) a leaf path, and what became of it."""

    visit: Visit
    key: tuple  # the keys written: the leaf path, or an ancestor of it
    flag: str  # "", "~", "=" or "~=" as written before the last key
    written: Any  # the prepared value written at `key`
    section: str  # "parameters" or "exports"
    leaf: tuple  # the leaf path being explained (`key` or below it)
    effect: str = "set"
    by: Contribution | None = None
    via: str | None = None  # a reference above the leaf through which the value came
    final: bool = False


class Replay:
    """reclass's merge rules applied to the writes of one leaf path (see merge.Merger)."""

    def __init__(self, trace: NodeTrace, leaf: tuple, section: str = "parameters") -> None:
        self.trace = trace
        self.leaf = leaf
        self.section = section
        self.out: list[Contribution] = []
        self.live: list[Contribution] = []  # the writes the current value is made of
        self.kind: str | None = None  # kind of the current value
        self.guard: tuple[int, Contribution] | None = None  # a constant at that level
        self.allow_list_over_scalar = trace.settings.allow_list_over_scalar

    def run(self) -> list[Contribution]:
        for visit in self.trace.visits:
            ignoring: int | None = None
            for event in events_at(getattr(visit.entity, self.section), self.leaf):
                if ignoring is not None:
                    if event.kind == "exit" and event.level == ignoring:
                        ignoring = None
                    elif event.kind == "leaf":
                        self._ignored(self._contribution(visit, event))
                    continue
                guarded = self.guard is not None and event.level >= self.guard[0]
                if event.kind == "enter":
                    if guarded:
                        ignoring = event.level
                    elif event.override:
                        self._replace_all(self._contribution(visit, event), event.has_leaf)
                elif event.kind == "exit":
                    if event.constant:
                        self.guard = (event.level, self._contribution(visit, event))
                elif event.kind == "leaf":
                    contribution = self._contribution(visit, event)
                    if guarded:
                        self._ignored(contribution)
                        continue
                    self._apply(contribution, self.trace.kind_of(event.value, self.leaf, self.section),
                                event.override)
                    if event.constant:
                        self.guard = (event.level, contribution)
                elif guarded:
                    self._ignored(self._contribution(visit, event))
                else:
                    self._ancestor(visit, event)
        for contribution in self.live:
            contribution.final = True
        return self.out

    def _contribution(self, visit: Visit, event: Event) -> Contribution:
        flag = ("~" if event.override else "") + ("=" if event.constant else "")
        return Contribution(visit, self.leaf[: event.level + 1], flag, event.value, self.section,
                            self.leaf)

    def _ignored(self, contribution: Contribution) -> None:
        contribution.effect = "ignored"
        contribution.by = self.guard[1] if self.guard else None
        self.out.append(contribution)

    def _replace_all(self, by: Contribution, replaced: bool) -> None:
        """A `~` mapping above the leaf: what was there goes (replaced, or removed if absent)."""
        if self.live and not replaced:
            by.effect = "removes"
            self.out.append(by)
        for old in self.live:
            old.effect, old.by = ("replaced" if replaced else "removed"), by
        self.live, self.kind, self.guard = [], None, None

    def _ancestor(self, visit: Visit, event: Event) -> None:
        """A non-mapping written above the leaf: a reference to a mapping merges, else removes."""
        contribution = self._contribution(visit, event)
        mapping = self.trace.resolved_mapping(event.value, self.leaf[: event.level + 1],
                                              self.section)
        if mapping is None:
            self._remove_live(contribution)
        else:
            contribution.via = event.value.text
            found, value, level = _inside(mapping, self.leaf, event.level)
            if event.override:
                self._replace_all(contribution, found == "leaf")
            if found == "leaf":
                # A mapping merging down to the leaf stops at any constant on the way.
                if self.guard is not None:
                    self._ignored(contribution)
                else:
                    self._apply(contribution, value_kind(value), False)
            elif found == "blocked":
                if self.guard is not None and self.guard[0] <= level:
                    self._ignored(contribution)
                else:
                    self._remove_live(contribution)
        if event.constant:
            self.guard = (event.level, contribution)

    def _remove_live(self, by: Contribution) -> None:
        """A non-mapping above the leaf replaces the mapping holding it (and any constant in it)."""
        if self.live:
            by.effect = "removes"
            self.out.append(by)
            for old in self.live:
                old.effect, old.by = "removed", by
        self.live, self.kind, self.guard = [], None, None

    def _apply(self, new: Contribution, kind: str, override: bool) -> None:
        self.out.append(new)
        current = self.kind
        if not override and self.live and current != "none":
            if current == kind == "dict":
                new.effect = "merged"
                self.live.append(new)
                return
            if kind == "list" and (current == "list" or
                                   (current == "scalar" and self.allow_list_over_scalar)):
                new.effect = "appended"
                self.live.append(new)
                self.kind = "list"
                return
        for old in self.live:
            old.effect, old.by = ("replaced" if override else "overridden"), new
        new.effect = "set"
        self.live, self.kind = [new], kind


def _inside(mapping: dict, leaf: tuple, level: int) -> tuple[str, Any, int]:
    """Follow `leaf` below a mapping standing at `level`: ("leaf", value, _), ("absent", ...),
    or ("blocked", value, level of the non-mapping met on the way)."""
    node: Any = mapping
    for depth in range(level + 1, len(leaf)):
        if not isinstance(node, dict):
            return "blocked", node, depth - 1
        if leaf[depth] not in node:
            return "absent", None, depth
        node = node[leaf[depth]]
    return "leaf", node, len(leaf) - 1
