"""The provenance recorder: the observer that keeps, while a node renders, the raw facts a
NodeProvenance (reclass_ng.observe.provenance) answers questions from.

How the facts are kept, cheaply: an entity's parameters (or exports) are one *entity write*,
its tree as prepared from the file; nothing is copied per key. The engine then reports only the
decisions that end or combine values: a layer stack made at a key (`stacked`), a value ignored
because of a constant, a list appended, and how each layer of a stack folded (replaced, replaced
by `~`, merged, appended). A fold that replaces is kept as one *ending* at its path: which
earlier entity writes it ended is worked out only when a path at or below it is asked about
(most never are), from which entity writes reach that path (through their trees, or through a
reference whose rendered value holds it) and the endings above it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reclass_ng.observe.provenance import MappedClass, MergedEntity, NodeProvenance, NodeReads
from reclass_ng.observe.seam import RenderObserver, WriteObserver, replacing_outcome
from reclass_ng.storage.positions import KeyPositions
from reclass_ng.syntax.ast import Ref
from reclass_ng.values import Interpolation, Layer, Source, Stack

if TYPE_CHECKING:
    from reclass_ng.entity import Entity
    from reclass_ng.errors import ReclassError
    from reclass_ng.observe.shared_answers import SharedAnswers
    from reclass_ng.observe.subtree_recording import SubtreeRecording
    from reclass_ng.settings import Settings

SECTIONS = ("parameters", "exports")
CANDIDATE_DEPTH = 2  # key paths indexed this deep for the entity writes reaching them
_NEVER: Any = object()  # SectionRecorder.resolved's answer for a reference never rendered


class Kill:
    """A decision that ends values at one path, as the engine reported it, made by the write
    of `by` (a piece): a constant that ignored `target` (kind "ignored"), or a fold that
    replaced everything alive there but the entity writes in `keep` (ids; kind "replaced").
    Which writes a "replaced" ended is worked out only when a path at or below it is asked
    about (SectionRecorder.kills_at). One object a decision, `by` in two slots and `keep` a
    tuple of ints: what a render keeps until it ends costs the cycle collector's passes."""

    __slots__ = ("seq", "kind", "by_write", "by_path", "override", "target", "keep")

    def __init__(self, seq: int, kind: str, by: tuple[EntityWrite, tuple] | None,
                 override: bool, target: EntityWrite | None = None,
                 keep: tuple[int, ...] = ()) -> None:
        self.seq = seq
        self.kind = kind  # "ignored" or "replaced"
        self.by_write: EntityWrite | None = by[0] if by is not None else None
        self.by_path: tuple = by[1] if by is not None else ()
        self.override = override
        self.target = target
        self.keep = keep

    @property
    def by(self) -> tuple[EntityWrite, tuple] | None:
        """The piece (entity write, path) whose write made the decision, if known."""
        return None if self.by_write is None else (self.by_write, self.by_path)


class EntityWrite:
    """One entity's section as merged: its prepared tree, and what became of parts of it."""

    __slots__ = ("source", "value", "order", "notes", "kept_keys")

    def __init__(self, source: Source, value: Any, order: int) -> None:
        self.source = source
        self.value = value
        self.order = order
        self.notes: dict[tuple, str] | None = None  # path -> "appended" or "merged"
        # path -> the key written there as kept (`~b` below a prefixed key) and the flagged
        # layer the fold read it as (WriteObserver.kept_key_read): how the tree reaches path
        self.kept_keys: dict[tuple, tuple[str, Stack]] | None = None

    def note(self, path: tuple, what: str) -> None:
        """Say what became of the value at `path` ("appended", "merged"; the first said wins)."""
        if self.notes is None:
            self.notes = {path: what}
        else:
            self.notes.setdefault(path, what)


Piece = tuple[EntityWrite, tuple]
# anchor(): the length of the key path written, the value there, its flags, a reference's text
Anchor = tuple[int, Any, str, str | None]


class SectionRecorder(WriteObserver):
    """Keeps the writes of one section of one node (see the module docstring)."""

    def __init__(self, counter: itertools.count, share: SharedAnswers | None = None) -> None:
        self.counter = counter
        # the contested writes of other nodes recorded with this one, under the facts they
        # follow from (Inventory.each_provenance; observe.shared_answers)
        self.share = share
        # the paths where `anchor` read what is the node's own: a reference's rendered value,
        # or a key kept below a prefixed key (an answer read there is not shared)
        self.read_own: set[tuple] = set()
        self.shared_held = False  # whether `share` holds this node's class writes (keep)
        self._by_id: dict[int, EntityWrite] | None = None
        self.writes: list[EntityWrite] = []
        self.by_source: dict[int, EntityWrite] = {}
        self.reaching: dict[tuple, list[EntityWrite]] = {}  # key path -> writes that may reach it
        self.first_keys_indexed = False  # whether `reaching` holds every first key written
        # id(layer) -> the entity write and path it was stacked from (every such layer kept
        # alive by `stacked_layers`, so no id is reused; no tuple a layer: see `resolved`)
        self.layer_writes: dict[int, EntityWrite] = {}
        self.layer_paths: dict[int, tuple] = {}
        self.stacked_layers: list[Layer] = []
        # The rendered value of each reference written (by id: every one is kept alive by
        # `rendered_references`, so no id is reused). Kept without a tuple a value, and so is
        # the reference log: objects that outlive a collection make the collector's later
        # passes longer (they were the larger part of what recording cost).
        self.resolved: dict[int, Any] = {}
        self.rendered_references: list[Interpolation] = []
        self.reference_paths: list[tuple] = []  # path rendered ...
        self.reference_targets: list[str] = []  # ... and the reference path it read
        self.endings: dict[tuple, list[Kill]] = {}  # path -> what ended values there, in order
        self.kills: dict[tuple, dict[int, Kill]] = {}  # path -> id(entity write) -> its end there
        # path -> id(entity write) -> anchor(): asked once the record is complete, and again
        # for the same write and path by kills_at, the contested writes and their labels
        # (about 4 in 10 calls in a 100-node `mcp` lint)
        self.anchors: dict[tuple, dict[int, Anchor | None]] = {}
        self.current: EntityWrite | None = None
        self.merging: list[EntityWrite | None] = []
        self.next_order = 0

    # -- what the engine reports ------------------------------------------------------------

    def entity_written(self, source: Source, value: Any) -> None:
        """See the base class."""
        write = EntityWrite(source, value, self.next_order)
        self.writes.append(write)
        self.by_source[id(source)] = write
        if self.reaching:
            self.reaching.clear()
            self.first_keys_indexed = False
        self.current = write

    def stacked(self, path: tuple, new_layers: Sequence[Layer], wrapped: Layer | None) -> None:
        """See the base class."""
        if self.current is not None:
            for layer in new_layers:
                key = id(layer)
                if key not in self.layer_writes:
                    self.stacked_layers.append(layer)
                self.layer_writes[key] = self.current
                self.layer_paths[key] = path

    def ignored(self, path: tuple, constant: Layer) -> None:
        """See the base class."""
        if self.current is not None:
            self._end(path, Kill(next(self.counter), "ignored", self.piece_of(constant, path),
                                 False, self.current))

    def appended(self, path: tuple) -> None:
        """See the base class."""
        if self.current is not None:
            self.current.note(path, "appended")

    def folded(self, path: tuple, layers: Sequence[Layer], index: int, outcome: str,
               value: Any) -> None:
        """See the base class."""
        layer = layers[index]
        if type(layer.value) is Interpolation:
            self._resolved(layer.value, value)
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
            self._end(path, Kill(next(self.counter), "replaced", piece, outcome == "override",
                                 None, tuple(keep)))
            return
        if piece is not None:
            if outcome == "merge":
                piece[0].note(path, "merged")
            elif outcome == "append":
                piece[0].note(path, "appended")
        if outcome == "merge":
            self.merging.append(self.current)
            self.current = piece[0] if piece is not None else None

    def fold_merged(self) -> None:
        """See the base class."""
        self.current = self.merging.pop()

    def kept_key_read(self, path: tuple, written: str, read: Layer, layer: Layer) -> None:
        """See the base class."""
        piece = self.piece_of(layer, path[:-1])
        if piece is None:
            return
        write = piece[0]
        if write.kept_keys is None:
            write.kept_keys = {}
        write.kept_keys[path] = (written, Stack([read]))
        self.layer_writes[id(read)] = write
        self.layer_paths[id(read)] = path
        self.stacked_layers.append(read)

    def rendered(self, path: tuple, interpolation: Interpolation, value: Any) -> None:
        """See the base class."""
        self._resolved(interpolation, value)

    def reference(self, path: tuple, target: str) -> None:
        """See the base class."""
        self.reference_paths.append(path)
        self.reference_targets.append(target)

    def rendered_directly(self, path: tuple, value: Interpolation | Stack, new: Any,
                          targets: Mapping[str, Any]) -> None:
        """See the base class: its calls, inlined for the commonest cases (one reference, a
        stack)."""
        if type(value) is Interpolation:
            single = value.template.single
            if type(single) is Ref:
                self.reference_paths.append(path)
                self.reference_targets.append(single.path)  # type: ignore[arg-type]
                key = id(value)  # _resolved(value, new), without the call
                if key not in self.resolved:
                    self.rendered_references.append(value)
                self.resolved[key] = new
                return
            WriteObserver.rendered_directly(self, path, value, new, targets)
            return
        self._stack_folded(path, value.layers, targets)  # type: ignore[union-attr]

    def _stack_folded(self, path: tuple, layers: Sequence[Layer],
                      targets: Mapping[str, Any]) -> None:
        """The base class's calls for a stack the fast path rendered (each layer's reference,
        then its fold, every layer replacing the one before) as `folded` records them, with
        the pieces of the layers found once: `folded` finds those of every later layer for
        each layer, and a stack was a tenth of a recorded render's time."""
        pieces = [self.piece_of(layer, path) for layer in layers]
        for index, layer in enumerate(layers):
            written = layer.value
            if type(written) is Interpolation:
                ref_path: str = written.template.single.path  # type: ignore[union-attr, assignment]
                self.reference_paths.append(path)
                self.reference_targets.append(ref_path)
                self._resolved(written, targets[ref_path])
            if index:
                keep = tuple(id(piece[0]) for piece in pieces[index:] if piece is not None)
                self._end(path, Kill(next(self.counter), "replaced", pieces[index],
                                     replacing_outcome(layer) == "override", None, keep))

    def rendered_again(self, path: tuple, told: SubtreeRecording) -> None:
        """See the base class: what the calls told leave in a recorder's lists, found once
        (in a recorder of their own) and added in a few steps. A shared copy holds hundreds
        of strings: a call each was most of what reusing it cost a recorded render."""
        if path != told.path:
            told.replay(self, path)
            return
        digest = told.digests.get(SectionRecorder)
        if digest is None:
            alone = SectionRecorder(itertools.count())
            told.replay(alone, path)
            digest = told.digests[SectionRecorder] = (
                alone.reference_paths, alone.reference_targets, alone.rendered_references,
                alone.resolved)
        paths, targets, references, resolved = digest
        self.reference_paths.extend(paths)
        self.reference_targets.extend(targets)
        if self.resolved.keys().isdisjoint(resolved):
            self.rendered_references.extend(references)
        else:  # a string rendered before in this node is not listed again (_resolved)
            self.rendered_references.extend(interpolation for interpolation in references
                                            if id(interpolation) not in self.resolved)
        self.resolved.update(resolved)

    def _resolved(self, interpolation: Interpolation, value: Any) -> None:
        key = id(interpolation)
        if key not in self.resolved:
            self.rendered_references.append(interpolation)
        self.resolved[key] = value

    def references(self, path: tuple) -> list[str]:
        """The reference paths read while rendering the value at `path`, in order."""
        return [target for at, target in zip(self.reference_paths, self.reference_targets,
                                             strict=True) if at == path]

    def candidates(self, path: tuple) -> list[EntityWrite]:
        """The entity writes that may reach `path` (a superset: checked with `anchor`), from
        an index of the first keys of the paths asked so far."""
        prefix = path[:CANDIDATE_DEPTH]
        found = self.reaching.get(prefix)
        if found is None:
            if len(prefix) == 1 and (self.first_keys_indexed or self._index_first_keys()):
                return self.reaching.setdefault(prefix, [])  # no write has that first key
            wider = self.candidates(prefix[:-1]) if prefix else self.writes
            # Whether the tree may hold the prefix (a reference or a stack on the way may),
            # without a call a write: this runs for every write of a node per prefix asked,
            # and a call each was most of its cost.
            found = self.reaching[prefix] = []
            for write in wider:
                node = write.value
                for key in prefix:
                    kind = type(node)
                    if kind is Stack or kind is Interpolation:
                        break
                    if not isinstance(node, dict) or key not in node:
                        node = _NEVER
                        break
                    node = node[key]
                if node is not _NEVER:
                    found.append(write)
        return found

    def _index_first_keys(self) -> bool:
        """The writes reaching each first key, all at once, from the keys of each write's
        tree: asked key by key, each scanned every write of the node (most of what finding
        candidates cost). False, and nothing indexed, when a write's tree is a reference or
        a stack (it may reach any key: candidates scans)."""
        index: dict[tuple, list[EntityWrite]] = {}
        for write in self.writes:
            value = write.value
            kind = type(value)
            if kind is Stack or kind is Interpolation:
                return False
            if isinstance(value, dict):
                for key in value:
                    found = index.get((key,))
                    if found is None:
                        index[(key,)] = [write]
                    else:
                        found.append(write)
        self.reaching.update(index)
        self.first_keys_indexed = True
        return True

    # -- bookkeeping ------------------------------------------------------------------------

    def piece_of(self, layer: Layer, path: tuple) -> Piece | None:
        """The entity write (and path) a layer of a stack at `path` comes from."""
        known = self.layer_writes.get(id(layer))
        if known is not None:
            return known, self.layer_paths[id(layer)]
        write = self.by_source.get(id(layer.source)) if layer.source is not None else None
        return (write, path) if write is not None else None

    def _end(self, path: tuple, ending: Kill) -> None:
        endings = self.endings.get(path)
        if endings is None:
            self.endings[path] = [ending]
        else:
            endings.append(ending)

    def writes_by_id(self) -> dict[int, EntityWrite]:
        """id(entity write) -> entity write, for every write (once the record is complete)."""
        if self._by_id is None:
            self._by_id = {id(write): write for write in self.writes}
        return self._by_id

    def kills_at(self, path: tuple) -> dict[int, Kill]:
        """The entity writes (by id) that ended at `path` exactly, and how: the first ending
        there of a write still alive (not ended above `path` before it) that reaches `path`.
        Only asked once the render is over (the record is complete); kept per path."""
        found = self.kills.get(path)
        if found is not None:
            return found
        found = {}
        endings = self.endings.get(path)
        if endings:
            above = self._kills_above(path)
            for ending in endings:
                kill = ending
                if ending.target is not None:  # an ignored write: ended whether alive or not
                    found.setdefault(id(ending.target), kill)
                    continue
                keep, seq = ending.keep, ending.seq
                for write in self.candidates(path):
                    key = id(write)
                    if key in keep or key in found:
                        continue
                    if above and any((earlier := kills.get(key)) is not None
                                     and earlier.seq < seq for kills in above):
                        continue  # ended above before: nothing of it was alive here
                    if self.anchor(write, path) is not None:
                        found[key] = kill
        self.kills[path] = found
        return found

    def _kills_above(self, path: tuple) -> list[dict[int, Kill]]:
        """kills_at of each path above `path` where some write ended."""
        above = []
        for length in range(len(path)):
            kills = self.kills.get(path[:length])
            if kills is None:
                kills = self.kills_at(path[:length])
            if kills:
                above.append(kills)
        return above

    def ends_on_the_way(self, path: tuple) -> list[tuple[tuple, dict[int, Kill]]]:
        """Each path from the root down to `path` where something ended, with its kills_at:
        what `fate` reads, found once for all the writes asked about at one path."""
        endings = self.endings
        return [(path[:length], self.kills_at(path[:length])) for length in range(len(path) + 1)
                if path[:length] in endings]  # elsewhere nothing ended (kills_at is empty)

    def fate(self, write: EntityWrite, path: tuple,
             on_the_way: list[tuple[tuple, dict[int, Kill]]] | None = None
             ) -> tuple[Kill, tuple] | None:
        """The first end on the way from the entity write down to `path`, and where it was
        (`on_the_way`: ends_on_the_way(path), when the caller has it)."""
        best: tuple[Kill, tuple] | None = None
        key = id(write)
        for at, kills in self.ends_on_the_way(path) if on_the_way is None else on_the_way:
            kill = kills.get(key)
            if kill is not None and (best is None or kill.seq < best[0].seq):
                best = kill, at
        return best

    def anchor(self, write: EntityWrite, path: tuple) -> Anchor | None:
        """How `write` reaches `path`: (length of the key path written, the value written
        there, its `~`/`=` flags, the reference text when the path lies inside the rendered
        value of a reference written above it), or None when the write does not reach it.
        Only asked once the render is over (the record is complete); kept per path."""
        known = self.anchors.get(path)
        if known is None:
            known = self.anchors[path] = {}
        key = id(write)  # every entity write is kept alive by `writes`: no id is reused
        found = known.get(key, _NEVER)
        if found is _NEVER:
            found = known[key] = self._find_anchor(write, path)
        return found

    # One loop, _key_below's commonest step inline: anchor runs for every candidate write of
    # every path asked, and a call a key was a fifth of its cost.
    def _find_anchor(self, write: EntityWrite, path: tuple) -> Anchor | None:  # noqa: C901
        """anchor(), worked out."""
        node = write.value
        through: tuple[int, Interpolation, str] | None = None  # a reference on the way
        flag = ""
        length = len(path)
        if write.kept_keys is not None:
            self.read_own.add(path)
        for depth in range(length + 1):
            if through is None:
                flag = ""
                while type(node) is Stack:
                    layer = node.layers[-1]
                    flag = ("~" if layer.override else "") + ("=" if layer.constant else "")
                    node = layer.value
                if type(node) is Interpolation:
                    if depth == length:
                        return depth, node, flag, None
                    self.read_own.add(path)
                    resolved = self.resolved.get(id(node), _NEVER)
                    if resolved is _NEVER:
                        return None  # never rendered: its value reached nothing
                    through = (depth, node, flag)
                    node = resolved
            if depth == length:
                break
            key = path[depth]
            if isinstance(node, dict) and key in node:
                node = node[key]
                continue
            node = _key_below(write, node, path, depth, through is None)
            if node is _NEVER:
                return None
        if through is None:
            return len(path), node, flag, None
        return through[0], through[1], through[2], through[1].text


def _key_below(write: EntityWrite, node: Any, path: tuple, depth: int, as_read: bool) -> Any:
    """anchor's step down from `node` to key `path[depth]` of what `write` wrote (_NEVER where
    it holds no such key): a key kept as written below a prefixed key (`~b` under `~a`) is
    reached by the key it is read as, as what fold read (`as_read`) or as written (inside a
    reference's rendered value)."""
    if not isinstance(node, dict):
        return _NEVER
    if path[depth] in node:
        return node[path[depth]]
    kept = write.kept_keys
    if kept is None or path[:depth + 1] not in kept:
        return _NEVER
    written, read = kept[path[:depth + 1]]
    if written not in node:
        return _NEVER
    return read if as_read else node[written]


class ProvenanceRecorder(RenderObserver):
    """The observer behind NodeProvenance: records one node's render."""

    def __init__(self, node: str, settings: Settings,
                 positions: KeyPositions | None = None,
                 share: SharedAnswers | None = None) -> None:
        self.node = node
        self.settings = settings
        self.positions = positions or KeyPositions()
        counter = itertools.count()
        self.sections = {section: SectionRecorder(counter, share) for section in SECTIONS}
        # the entities merged, in order, and the entity listing each (no tuple each: see
        # SectionRecorder.resolved)
        self.merged_entities: list[Entity] = []
        self.listed_by: list[Entity | None] = []
        self.merged = False  # set by whoever drives the render, once the merge completed
        # class name -> the class_mappings entry giving it, told by whoever drives the render
        self.class_mappings: dict[str, MappedClass] = {}
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
        self.merged_entities.append(entity)
        self.listed_by.append(listed_by)
        order = len(self.merged_entities)
        for section in self.sections.values():
            section.next_order = order

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
        for order, entity in enumerate(self.merged_entities):
            merged = MergedEntity(entity, None, order)
            by_entity[id(entity)] = merged
            entities.append(merged)
        for merged, listed_by in zip(entities, self.listed_by, strict=True):
            if listed_by is not None:
                merged.listed_by = by_entity.get(id(listed_by))
        provenance = NodeProvenance(self.node, self.settings, entities, self.reads,
                                    self.sections, nodeinfo, error, self.positions,
                                    self.class_mappings)
        provenance.merged = self.merged
        return provenance
