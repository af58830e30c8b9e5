"""Provenance: who wrote each value of a node, and what the node read, recorded as it renders.

`Inventory.provenance(node)` renders the node with a ProvenanceRecorder observing it (see
reclass_ng.observe) and returns a NodeProvenance: the entities merged in order, and for any key
path every write that touched it, in merge order, with what became of it.

How the record is kept, cheaply: an entity's parameters (or exports) are one *entity write*,
its tree as prepared from the file; nothing is copied per key. The engine then reports only the
decisions that end or combine values: a layer stack made at a key (`stacked`), a value ignored
because of a constant, a list appended, and how each layer of a stack folded (replaced, replaced
by `~`, merged, appended). A fold that replaces kills, at that path, every part of an earlier
entity write still alive there; the kill is kept on that entity write. Questions about one path
are answered from those facts: which entity writes reach the path (through their trees, or
through a reference whose rendered value holds it), and the first kill on the way to it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reclass_ng.location import Location
from reclass_ng.observe import RenderObserver, WriteObserver
from reclass_ng.positions import KeyPositions
from reclass_ng.values import Interpolation, Layer, Source, Stack

if TYPE_CHECKING:
    from reclass_ng.entity import Entity
    from reclass_ng.errors import ReclassError
    from reclass_ng.settings import Settings

SECTIONS = ("parameters", "exports")
CANDIDATE_DEPTH = 2  # key paths indexed this deep for the entity writes reaching them
MISSING: Any = object()  # what value() returns for a path the node does not have

# Effects of a write, as NodeProvenance.writes() labels them.
EFFECTS = {
    "set": "the first value at the key (or the value after a null)",
    "merged": "a mapping merged key by key into the mapping there",
    "appended": "a list appended to the list there",
    "overridden": "replaced by a later write at the same key",
    "replaced": "replaced by a later write with `~`",
    "ignored": "not applied: the key (or one above it) is a constant (`=`)",
    "removed": "dropped: a later write above the key replaced the mapping holding it",
    "removes": "a write above the key that dropped what earlier writes put below it",
}


class _Kill:
    """The end of (part of) an entity write at one path, by the write of `by` (a piece)."""

    __slots__ = ("seq", "kind", "by", "override")

    def __init__(self, seq: int, kind: str, by: tuple[_EntityWrite, tuple] | None,
                 override: bool) -> None:
        self.seq = seq
        self.kind = kind  # "ignored" or "replaced"
        self.by = by
        self.override = override


class _Ending:
    """A decision that ends values at one path, as the engine reported it: a constant that
    ignored `target` (kind "ignored"), or a fold that replaced everything alive there but the
    entity writes in `keep` (kind "replaced"). Which writes a "replaced" ended is worked out
    only when a path at or below it is asked about (SectionRecorder.kills_at)."""

    __slots__ = ("kill", "target", "keep")

    def __init__(self, kill: _Kill, target: _EntityWrite | None, keep: frozenset[int]) -> None:
        self.kill = kill
        self.target = target
        self.keep = keep


class _EntityWrite:
    """One entity's section as merged: its prepared tree, and what became of parts of it."""

    __slots__ = ("source", "value", "order", "notes")

    def __init__(self, source: Source, value: Any, order: int) -> None:
        self.source = source
        self.value = value
        self.order = order
        self.notes: dict[tuple, str] = {}  # path -> "appended" or "merged"


Piece = tuple[_EntityWrite, tuple]


class _SectionRecorder(WriteObserver):
    """Keeps the writes of one section of one node (see the module docstring)."""

    def __init__(self, counter: itertools.count) -> None:
        self.counter = counter
        self.writes: list[_EntityWrite] = []
        self.by_source: dict[int, _EntityWrite] = {}
        self.reaching: dict[tuple, list[_EntityWrite]] = {}  # key path -> writes that may reach it
        self.layer_pieces: dict[int, tuple[Layer, _EntityWrite, tuple]] = {}
        self.resolved: dict[int, tuple[Interpolation, Any]] = {}
        self.reference_log: list[tuple[tuple, str]] = []  # (path rendered, reference path read)
        self.endings: dict[tuple, list[_Ending]] = {}  # path -> what ended values there, in order
        self.kills: dict[tuple, dict[int, _Kill]] = {}  # path -> id(entity write) -> its end there
        self.current: _EntityWrite | None = None
        self.merging: list[_EntityWrite | None] = []
        self.next_order = 0

    # -- what the engine reports ------------------------------------------------------------

    def entity_written(self, source: Source, value: Any) -> None:
        write = _EntityWrite(source, value, self.next_order)
        self.writes.append(write)
        self.by_source[id(source)] = write
        if self.reaching:
            self.reaching.clear()
        self.current = write

    def stacked(self, path: tuple, new_layers: Sequence[Layer], wrapped: Layer | None) -> None:
        if self.current is not None:
            for layer in new_layers:
                self.layer_pieces[id(layer)] = (layer, self.current, path)

    def ignored(self, path: tuple, constant: Layer) -> None:
        if self.current is not None:
            kill = _Kill(next(self.counter), "ignored", self.piece_of(constant, path), False)
            self._end(path, _Ending(kill, self.current, frozenset()))

    def appended(self, path: tuple) -> None:
        if self.current is not None:
            self.current.notes.setdefault(path, "appended")

    def folded(self, path: tuple, layers: Sequence[Layer], index: int, outcome: str,
               value: Any) -> None:
        layer = layers[index]
        if type(layer.value) is Interpolation:
            self.resolved[id(layer.value)] = (layer.value, value)
        if index == 0:
            return  # the first layer: nothing before it to replace
        piece = self.piece_of(layer, path)
        if outcome == "replace" or outcome == "override":
            # Which earlier writes this ends is worked out when a path is asked (kills_at):
            # most replaced paths are never asked about.
            keep = []
            for later in layers[index:]:
                later_piece = self.piece_of(later, path)
                if later_piece is not None:
                    keep.append(id(later_piece[0]))
            kill = _Kill(next(self.counter), "replaced", piece, outcome == "override")
            self._end(path, _Ending(kill, None, frozenset(keep)))
            return
        if piece is not None:
            if outcome == "merge":
                piece[0].notes.setdefault(path, "merged")
            elif outcome == "append":
                piece[0].notes.setdefault(path, "appended")
        if outcome == "merge":
            self.merging.append(self.current)
            self.current = piece[0] if piece is not None else None

    def fold_merged(self) -> None:
        self.current = self.merging.pop()

    def rendered(self, path: tuple, interpolation: Interpolation, value: Any) -> None:
        self.resolved[id(interpolation)] = (interpolation, value)

    def reference(self, path: tuple, target: str) -> None:
        self.reference_log.append((path, target))

    def candidates(self, path: tuple) -> list[_EntityWrite]:
        """The entity writes that may reach `path` (a superset: checked with `anchor`), from
        an index of the first keys of the paths asked so far."""
        prefix = path[:CANDIDATE_DEPTH]
        found = self.reaching.get(prefix)
        if found is None:
            wider = self.candidates(prefix[:-1]) if prefix else self.writes
            found = self.reaching[prefix] = [write for write in wider
                                             if _may_reach(write.value, prefix)]
        return found

    # -- bookkeeping ------------------------------------------------------------------------

    def piece_of(self, layer: Layer, path: tuple) -> Piece | None:
        """The entity write (and path) a layer of a stack at `path` comes from."""
        known = self.layer_pieces.get(id(layer))
        if known is not None and known[0] is layer:
            return known[1], known[2]
        write = self.by_source.get(id(layer.source)) if layer.source is not None else None
        return (write, path) if write is not None else None

    def _end(self, path: tuple, ending: _Ending) -> None:
        endings = self.endings.get(path)
        if endings is None:
            self.endings[path] = [ending]
        else:
            endings.append(ending)

    def kills_at(self, path: tuple) -> dict[int, _Kill]:
        """The entity writes (by id) that ended at `path` exactly, and how: the first ending
        there of a write still alive (not ended above `path` before it) that reaches `path`.
        Only asked once the render is over (the record is complete); kept per path."""
        found = self.kills.get(path)
        if found is not None:
            return found
        found = {}
        endings = self.endings.get(path)
        if endings:
            above = [self.kills_at(path[:length]) for length in range(len(path))]
            for ending in endings:
                kill = ending.kill
                if ending.target is not None:  # an ignored write: ended whether alive or not
                    found.setdefault(id(ending.target), kill)
                    continue
                for write in self.candidates(path):
                    key = id(write)
                    if key in ending.keep or key in found:
                        continue
                    if any((earlier := kills.get(key)) is not None and earlier.seq < kill.seq
                           for kills in above):
                        continue  # ended above before: nothing of it was alive here
                    if self.anchor(write, path) is not None:
                        found[key] = kill
        self.kills[path] = found
        return found

    def fate(self, write: _EntityWrite, path: tuple) -> tuple[_Kill, tuple] | None:
        """The first end on the way from the entity write down to `path`, and where it was."""
        best: tuple[_Kill, tuple] | None = None
        key = id(write)
        for length in range(len(path) + 1):
            kill = self.kills_at(path[:length]).get(key)
            if kill is not None and (best is None or kill.seq < best[0].seq):
                best = kill, path[:length]
        return best

    def anchor(self, write: _EntityWrite, path: tuple) -> tuple[int, Any, str, str | None] | None:
        """How `write` reaches `path`: (length of the key path written, the value written
        there, its `~`/`=` flags, the reference text when the path lies inside the rendered
        value of a reference written above it), or None when the write does not reach it."""
        node = write.value
        through: tuple[int, Interpolation, str] | None = None  # a reference on the way
        flag = ""
        for depth in range(len(path) + 1):
            if through is None:
                flag = ""
                while type(node) is Stack:
                    layer = node.layers[-1]
                    flag = ("~" if layer.override else "") + ("=" if layer.constant else "")
                    node = layer.value
                if type(node) is Interpolation:
                    if depth == len(path):
                        return depth, node, flag, None
                    resolved = self.resolved.get(id(node))
                    if resolved is None or resolved[0] is not node:
                        return None  # never rendered: its value reached nothing
                    through = (depth, node, flag)
                    node = resolved[1]
            if depth == len(path):
                break
            if isinstance(node, dict) and path[depth] in node:
                node = node[path[depth]]
            else:
                return None
        if through is None:
            return len(path), node, flag, None
        return through[0], through[1], through[2], through[1].text


def _may_reach(value: Any, path: tuple) -> bool:
    """Whether a prepared tree may hold `path` (a reference or a stack on the way may)."""
    node = value
    for key in path:
        kind = type(node)
        if kind is Stack or kind is Interpolation:
            return True
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


class Write:
    """One write touching a key path of a node, and what became of it.

    `key` is the key path the file writes (the asked path, or a path above it when the value
    comes from inside a reference there: `via` is then the reference text); `flag` the `~`/`=`
    prefix written on its last key; `written` the value as prepared from the file (a string
    with references is an Interpolation, `.text` as written). `effect` is one of EFFECTS;
    `by` the write that caused it; `final` whether the value is part of the node's result.
    """

    __slots__ = ("section", "path", "key", "flag", "written", "source", "order", "effect", "by",
                 "via", "final", "location")

    def __init__(self, section: str, path: tuple, key: tuple, flag: str, written: Any,
                 source: Source, order: int, location: Location | None) -> None:
        self.section = section
        self.path = path
        self.key = key
        self.flag = flag
        self.written = written
        self.source = source
        self.order = order
        self.location = location
        self.effect = "set"
        self.by: Write | None = None
        self.via: str | None = None
        self.final = False

    @property
    def file(self) -> str | None:
        """The file written in (None for automatic parameters and API entities)."""
        return self.source.path

    @property
    def line(self) -> int | None:
        """The line of the written key in `file`."""
        return self.location.line if self.location else None

    def __repr__(self) -> str:
        return (f"Write({self.source.name}, {':'.join(map(str, self.key))}, {self.effect}"
                f"{', final' if self.final else ''})")


class MergedEntity:
    """An entity the node merged: its position in merge order and the entity listing it."""

    __slots__ = ("entity", "listed_by", "order")

    def __init__(self, entity: Entity, listed_by: MergedEntity | None, order: int) -> None:
        self.entity = entity
        self.listed_by = listed_by
        self.order = order

    @property
    def kind(self) -> str:
        """"class", "node", "automatic" (automatic parameters and class mappings) or "extra"."""
        return self.entity.source.kind if self.entity.source else "extra"

    @property
    def file(self) -> str | None:
        """The file of the entity (None for automatic parameters and API entities)."""
        return self.entity.source.path if self.entity.source else None


class NodeReads:
    """What a node's render read: for incremental re-rendering, the facts that, when they
    change, change the node."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.node_file: str | None = None
        self.classes: dict[str, str | None] = {}  # class name -> file, None: not found
        self.exports: dict[str, set[tuple[str, ...] | None]] = {}  # node -> paths its queries read
        # A query reads the list of nodes (and their environments) too: a node added or
        # removed can change its result.
        self.node_list = False

    @property
    def files(self) -> list[str]:
        """Every file read: the node's and its classes'."""
        found = [self.node_file] if self.node_file else []
        return found + [path for path in self.classes.values() if path]


class NodeProvenance:
    """The record of one node's render: entities, writes, references and reads.

    `nodeinfo` is the rendered node (None when it failed: `error` says why; what was merged
    until then is still recorded).
    """

    def __init__(self, node: str, settings: Settings, entities: list[MergedEntity],
                 reads: NodeReads, sections: dict[str, _SectionRecorder],
                 nodeinfo: dict[str, Any] | None, error: ReclassError | None,
                 positions: KeyPositions) -> None:
        self.node = node
        self.settings = settings
        self.entities = entities
        self.reads = reads
        self.nodeinfo = nodeinfo
        self.error = error
        # Whether every entity was merged (then how each value folded is known too, up to the
        # error if there is one); False when the merge itself failed.
        self.merged = nodeinfo is not None
        self._sections = sections
        self._positions = positions

    def value(self, path: Sequence[object], section: str = "parameters") -> Any:
        """The rendered value at `path` (list items by position), or MISSING."""
        if self.nodeinfo is None:
            return MISSING
        node: Any = self.nodeinfo[section]
        for key in path:
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and not isinstance(key, bool):
                try:
                    node = node[int(key)]  # type: ignore[call-overload]
                except (ValueError, IndexError):
                    return MISSING
            else:
                return MISSING
        return node

    def writes(self, path: Sequence[object], section: str = "parameters") -> list[Write]:
        """Every write reaching `path` (a key, or a key below it), in merge order, labelled."""
        recorder = self._sections[section]
        leaf = tuple(path)
        present = self.value(leaf, section) is not MISSING
        found: list[Write] = []
        removers: dict[tuple[int, tuple], Write] = {}
        for entity_write in recorder.candidates(leaf):
            write = self._write(recorder, section, entity_write, leaf)
            if write is None:
                continue
            fate = recorder.fate(entity_write, leaf)
            if fate is None:
                write.effect = entity_write.notes.get(leaf, "set")
                write.final = present
            else:
                kill, at = fate
                by = self._write(recorder, section, kill.by[0], kill.by[1]) \
                    if kill.by is not None else None
                write.by = by
                if kill.kind == "ignored":
                    write.effect = "ignored"
                elif at == leaf:
                    write.effect = "replaced" if kill.override else "overridden"
                elif kill.override and kill.by is not None \
                        and recorder.anchor(kill.by[0], leaf) is not None:
                    write.effect = "replaced"
                else:
                    write.effect = "removed"
                    if by is not None and kill.by is not None \
                            and recorder.anchor(kill.by[0], leaf) is None:
                        remover = self._write(recorder, section, kill.by[0], kill.by[1])
                        if remover is not None:
                            remover.effect = "removes"
                            removers.setdefault((id(kill.by[0]), kill.by[1]), remover)
            found.append(write)
        found.extend(removers.values())
        found.sort(key=lambda w: (w.order, w.effect == "removes"))
        return found

    def _write(self, recorder: _SectionRecorder, section: str, entity_write: _EntityWrite,
               path: tuple) -> Write | None:
        anchor = recorder.anchor(entity_write, path)
        if anchor is None:
            return None
        depth, written, flag, via = anchor
        key = path[:depth]
        location = self._positions.location(entity_write.source.path, (section, *key))
        write = Write(section, path, key, flag, written, entity_write.source,
                      entity_write.order, location)
        write.via = via
        return write

    def written_paths(self, prefix: Sequence[object] = (), section: str = "parameters"
                      ) -> list[tuple]:
        """Key paths at or below `prefix` that some entity writes a value at (a mapping is
        followed to its keys; a reference, a list or a scalar ends a path), in merge order."""
        found: dict[tuple, None] = {}
        start = tuple(prefix)

        def collect(value: Any, path: tuple) -> None:
            while type(value) is Stack:
                for layer in value.layers[:-1]:
                    collect(layer.value, path)
                value = value.layers[-1].value
            if isinstance(value, dict) and value:
                for key, child in value.items():
                    collect(child, path + (key,))
            elif path:
                found.setdefault(path, None)

        for entity_write in self._sections[section].writes:
            value: Any = entity_write.value
            for key in start:
                while type(value) is Stack:
                    value = value.layers[-1].value
                value = value.get(key, MISSING) if isinstance(value, dict) else MISSING
            if value is not MISSING:
                collect(value, start)
        return list(found)

    def references(self, path: Sequence[object], section: str = "parameters") -> list[str]:
        """The reference paths read while rendering the value at `path`, in order."""
        wanted = tuple(path)
        return [target for at, target in self._sections[section].reference_log if at == wanted]


class ProvenanceRecorder(RenderObserver):
    """The observer behind NodeProvenance: records one node's render."""

    def __init__(self, node: str, settings: Settings,
                 positions: KeyPositions | None = None) -> None:
        self.node = node
        self.settings = settings
        self.positions = positions or KeyPositions()
        counter = itertools.count()
        self.sections = {section: _SectionRecorder(counter) for section in SECTIONS}
        self.merged_entities: list[tuple[Entity, Entity | None]] = []
        self.merged = False  # set by whoever drives the render, once the merge completed
        self.reads = NodeReads(settings)

    def writes(self, section: str) -> WriteObserver | None:
        """See the base class."""
        return self.sections[section]

    def node_read(self, name: str, path: str | None) -> None:
        """See the base class."""
        self.reads.node_file = path

    def class_read(self, name: str, path: str | None) -> None:
        """See the base class."""
        self.reads.classes.setdefault(name, path)

    def entity_merged(self, entity: Entity, listed_by: Entity | None) -> None:
        """See the base class."""
        self.merged_entities.append((entity, listed_by))
        for section in self.sections.values():
            section.next_order = len(self.merged_entities)

    def export_read(self, node: str, path: tuple[str, ...] | None) -> None:
        """See the base class."""
        self.reads.exports.setdefault(node, set()).add(path)
        self.reads.node_list = True

    def query_run(self) -> None:
        """See the base class."""
        self.reads.node_list = True

    def result(self, nodeinfo: dict[str, Any] | None, error: ReclassError | None
               ) -> NodeProvenance:
        """The NodeProvenance of what was recorded."""
        by_entity: dict[int, MergedEntity] = {}
        entities = []
        for order, (entity, _) in enumerate(self.merged_entities):
            merged = MergedEntity(entity, None, order)
            by_entity[id(entity)] = merged
            entities.append(merged)
        for merged, (_, listed_by) in zip(entities, self.merged_entities, strict=True):
            if listed_by is not None:
                merged.listed_by = by_entity.get(id(listed_by))
        provenance = NodeProvenance(self.node, self.settings, entities, self.reads,
                                    self.sections, nodeinfo, error, self.positions)
        provenance.merged = self.merged
        return provenance
