"""Provenance: who wrote each value of a node, and what the node read, as the engine recorded it.

`Inventory.provenance(node)` renders the node with a ProvenanceRecorder observing it
(reclass_ng.observe.provenance_recorder, through the seam of reclass_ng.observe) and returns the
NodeProvenance defined here: the entities merged in order (with the entity listing each class,
and the class_mappings entry behind a mapped class), what the node read, and for any key path
every write that touched it, in merge order, with what became of it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from reclass_ng.location import Location
from reclass_ng.observe.shared_answers import ContestedBelow
from reclass_ng.storage.positions import KeyPositions
from reclass_ng.values import Interpolation, Source, Stack

if TYPE_CHECKING:
    from reclass_ng.entity import Entity
    from reclass_ng.errors import ReclassError
    from reclass_ng.observe.provenance_recorder import (
        Anchor,
        EntityWrite,
        Kill,
        SectionRecorder,
    )
    from reclass_ng.observe.shared_answers import SharedAnswers

    # What became of an entity write on the way down to a path (SectionRecorder.fate)
    Fate: TypeAlias = tuple[Kill, tuple] | None
    from reclass_ng.settings import Settings

__all__ = ["EFFECTS", "MISSING", "MappedClass", "MergedEntity", "NodeProvenance", "NodeReads",
           "Write", "values_written"]

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


# Effects of a write that nothing ended and that only added to what was there
UNCONTESTED = ("set", "merged")


class Write:
    """One write touching a key path of a node, and what became of it.

    `key` is the key path the file writes (the asked path, or a path above it when the value
    comes from inside a reference there: `via` is then the reference text); `flag` the `~`/`=`
    prefix written on its last key; `written` the value as prepared from the file (a string
    with references is an Interpolation, `.text` as written). `effect` is one of EFFECTS;
    `by` the write that caused it; `final` whether the value is part of the node's result.
    `location` is looked up in `positions` when first asked: finding a key's line reads the
    file again, and a tool reading every write of a node shows the lines of a few.
    """

    __slots__ = ("section", "path", "key", "flag", "written", "source", "order", "effect", "by",
                 "via", "via_keys", "final", "_location", "_positions")

    def __init__(self, section: str, path: tuple, key: tuple, flag: str, written: Any,
                 source: Source, order: int, location: Location | None = None,
                 positions: KeyPositions | None = None) -> None:
        self.section = section
        self.path = path
        self.key = key
        self.flag = flag
        self.written = written
        self.source = source
        self.order = order
        self._location = location
        self._positions = positions if location is None else None
        self.effect = "set"
        self.by: Write | None = None
        self.via: str | None = None
        # With `via`: the keys from `key` down to `path` as the reference's value holds them
        # (a `~b` kept below a prefixed key is read as `b`: WriteObserver.kept_key_read).
        self.via_keys: tuple = ()
        self.final = False

    @property
    def location(self) -> Location | None:
        """Where the key is written (None for automatic parameters and API entities)."""
        if self._positions is not None:
            self._location = self._positions.location(self.source.path,
                                                      (self.section, *self.key))
            self._positions = None
        return self._location

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


class MappedClass:
    """Where a class the node got from `class_mappings` comes from: the first entry of the
    setting (`index`, counted from 0; `entry` as written) that gives the node the class."""

    __slots__ = ("name", "index", "entry")

    def __init__(self, name: str, index: int, entry: str) -> None:
        self.name = name
        self.index = index
        self.entry = entry

    def __repr__(self) -> str:
        return f"MappedClass({self.name!r}, {self.index}, {self.entry!r})"


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
                 reads: NodeReads, sections: dict[str, SectionRecorder],
                 nodeinfo: dict[str, Any] | None, error: ReclassError | None,
                 positions: KeyPositions,
                 class_mappings: dict[str, MappedClass] | None = None) -> None:
        self.node = node
        self.settings = settings
        self.entities = entities
        # class name -> the class_mappings entry giving it (see mapped_class)
        self.class_mappings: dict[str, MappedClass] = class_mappings or {}
        self.reads = reads
        self.nodeinfo = nodeinfo
        self.error = error
        # Whether every entity was merged (then how each value folded is known too, up to the
        # error if there is one); False when the merge itself failed.
        self.merged = nodeinfo is not None
        self._sections = sections
        self._positions = positions

    def mapped_class(self, name: str) -> MappedClass | None:
        """The class_mappings entry that gave the node class `name` (None when no entry
        gives it: the class is listed by a file, or not a class of the node)."""
        return self.class_mappings.get(name)

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
            self._label(recorder, section, entity_write, write, recorder.fate(entity_write, leaf),
                        present, removers)
            found.append(write)
        found.extend(removers.values())
        found.sort(key=lambda w: (w.order, w.effect == "removes"))
        return found

    def key_writes(self, section: str = "parameters") -> Iterator[tuple[tuple, list[Write]]]:
        """Each path of written_paths() with the writes whose key is that path (as writes()
        labels them, in merge order): every write of the node, from one walk of each entity's
        tree. For tools reading every key of many nodes: writes() looks up, per path asked,
        which entity writes may reach it."""
        recorder = self._sections[section]
        written_at: dict[tuple, list[tuple[EntityWrite, Any, str, Fate]]] = {}
        for entity_write in recorder.writes:
            fates: dict[tuple, Fate] = {(): recorder.fate(entity_write, ())}
            for path, value, flag in values_written(entity_write.value):
                fate = fates.get(path[:-1])
                if path in recorder.endings:
                    kill = recorder.kills_at(path).get(id(entity_write))
                    if kill is not None and (fate is None or kill.seq < fate[0].seq):
                        fate = kill, path
                fates[path] = fate
                written_at.setdefault(path, []).append((entity_write, value, flag, fate))
        for path in self.written_paths((), section):
            present = self.value(path, section) is not MISSING
            found = []
            for entity_write, value, flag, fate in written_at.get(path, ()):
                write = Write(section, path, path, flag, value, entity_write.source,
                              entity_write.order, None, self._positions)
                self._label(recorder, section, entity_write, write, fate, present, None)
                found.append(write)
            found.sort(key=lambda w: w.order)
            yield path, found

    def contested_key_writes(self, section: str = "parameters"
                             ) -> Iterator[tuple[tuple, list[Write]]]:
        """The paths of key_writes() where a write did more than set a value or merge a
        mapping (something ended it, or it appended a list), each with every write there,
        in the order found. The other writes of a node are the values_written() of its
        entity_values(), the same on every node merging an entity: a tool reading many nodes
        can take those once per entity, and only these from each node (and, for the nodes of
        one each_provenance, the writes below a key where they record the same facts once:
        observe.shared_answers)."""
        recorder = self._sections[section]
        # The writes that ended others, as Write objects, made once per node (many writes
        # are ended by the same one); never labelled, so sharing them changes nothing.
        enders: dict[tuple[int, tuple], Write | None] = {}
        # (an ending at the root reaches every path: then nothing below a key is shared)
        share = recorder.share if () not in recorder.endings else None
        paths: dict[tuple, ContestedBelow | None]
        if share is not None:
            paths = self._shared_paths(recorder, section, share, enders)
        else:
            paths = {}
            by_id = recorder.writes_by_id()
            for ended_at in recorder.endings:
                _add_paths_ended(recorder, ended_at, by_id, paths)
        for entity_write in recorder.writes:
            if entity_write.notes:
                paths.update((path, None) for path, what in entity_write.notes.items()
                             if what == "appended" and path not in paths)
        for path, answer in paths.items():
            found = self._keyed_at(recorder, section, path, answer, enders) if path else None
            if found is not None and any(write.effect not in UNCONTESTED for write in found):
                yield path, found

    def _keyed_at(self, recorder: SectionRecorder, section: str, path: tuple,
                  answer: ContestedBelow | None, enders: dict[tuple[int, tuple], Write | None]
                  ) -> list[Write] | None:
        """The writes keyed at `path`, labelled (from `answer`'s labels when given), None
        when `path` is not one of written_paths() (a mapping everywhere)."""
        if answer is not None:
            labels = answer.labels.get(path)
            return None if labels is None else \
                self._labelled(recorder, section, path, answer, labels, enders)
        candidates = recorder.candidates(path)
        if not any(_ends_at(entity_write.value, path) for entity_write in candidates):
            return None
        return self._writes_keyed_at(recorder, section, candidates, path, enders)

    def _shared_paths(self, recorder: SectionRecorder, section: str, share: SharedAnswers,
                      enders: dict[tuple[int, tuple], Write | None]
                      ) -> dict[tuple, ContestedBelow | None]:
        """The paths contested_key_writes looks at below the paths that ended, in its order,
        each with the ContestedBelow that labels the writes there (taken from an earlier node
        recording the same facts, or worked out and kept for the next ones), or None where
        they are the node's own."""
        endings = recorder.endings
        names = share.names(recorder)
        # Each path that ended goes with the paths below its first key (the writes reaching
        # a first key are indexed all at once: SectionRecorder.candidates), or below its
        # first two when a write reaching the first key is the node's own (its own value
        # below one second key leaves the others shared) and nothing ended at the first key
        # (what ends there reaches every path below it).
        below_first: dict[tuple, bool] = {}  # first key -> whether its paths go with it
        roots = []
        for ended_at in endings:
            first = ended_at[:1]
            whole = below_first.get(first)
            if whole is None:
                whole = below_first[first] = first in endings or all(
                    names[id(write)] is not None for write in recorder.candidates(first))
            roots.append(first if whole else ended_at[:2])
        ended_below: dict[tuple, list[tuple]] = {}  # root -> the paths below it that ended
        for ended_at, root in zip(endings, roots, strict=True):
            ended_below.setdefault(root, []).append(ended_at)
        answers: dict[tuple, tuple[ContestedBelow, bool]] = {}
        for root, ended in ended_below.items():
            facts = share.facts(recorder, root, ended, names)
            answer = share.answers.get(facts) if facts is not None else None
            if answer is not None:
                share.reused += 1
                answers[root] = answer, True
                continue
            answer, shared = self._contested_below(recorder, section, root, ended, enders,
                                                   facts is not None)
            if shared and facts is not None:
                share.keep(facts, answer, recorder)
            answers[root] = answer, shared
        paths: dict[tuple, ContestedBelow | None] = {}
        for ended_at, root in zip(endings, roots, strict=True):
            answer, shared = answers[root]
            for path in answer.discovered[ended_at]:
                paths.setdefault(path, answer if shared else None)
        return paths

    def _contested_below(self, recorder: SectionRecorder, section: str, root: tuple,
                         ended: list[tuple], enders: dict[tuple[int, tuple], Write | None],
                         labelled: bool) -> tuple[ContestedBelow, bool]:
        """The ContestedBelow below `root` (`ended`: the paths below it where something
        ended) worked out from the node's record, and whether it holds nothing of the node's
        own (see observe.shared_answers); without labels unless `labelled` (its facts are
        not shared: its writes are labelled path by path). `enders` as _label's."""
        by_id = recorder.writes_by_id()
        discovered: dict[tuple, tuple] = {}
        seen: dict[tuple, ContestedBelow | None] = {}
        for ended_at in ended:
            discovered[ended_at] = tuple(_add_paths_ended(recorder, ended_at, by_id, seen))
        if not labelled:
            return ContestedBelow(root, discovered, {}), False
        position = {id(entity_write): number
                    for number, entity_write in enumerate(recorder.candidates(root))}
        labels: dict[tuple, tuple] = {}
        shared = True
        for path in seen:
            candidates = recorder.candidates(path)
            if not any(_ends_at(entity_write.value, path) for entity_write in candidates):
                continue  # not one of written_paths(): a mapping everywhere
            told = self._labels(recorder, section, candidates, path, position, enders)
            if told is None:
                shared = False
            else:
                labels[path] = told
        if shared and recorder.read_own:
            depth = len(root)
            shared = not any(path[:depth] == root for path in recorder.read_own)
        return ContestedBelow(root, discovered, labels), shared

    def _labels(self, recorder: SectionRecorder, section: str, candidates: list[EntityWrite],
                path: tuple, position: dict[int, int],
                enders: dict[tuple[int, tuple], Write | None]) -> tuple | None:
        """The writes keyed at `path` as ContestedBelow.labels holds them (`position`: the
        index of each entity write among those reaching the answer's root); None when one of
        them is the node's own (a write that ended it reaches its path through a reference)."""
        told: list[tuple] = []
        for entity_write, anchor, fate in _keyed_at_path(recorder, candidates, path):
            number = position[id(entity_write)]
            if fate is None:
                told.append((number, anchor[2], anchor[1], None, None, None))
                continue
            kill, at = fate
            write = Write(section, path, path, anchor[2], anchor[1], entity_write.source,
                          entity_write.order, None, self._positions)
            self._label(recorder, section, entity_write, write, fate, False, None, enders)
            by = write.by
            if by is not None and by.via is not None:
                return None
            ending = next(index for index, other in enumerate(recorder.endings[at])
                          if other is kill)
            told.append((number, anchor[2], anchor[1], (len(at), ending), write.effect,
                         None if by is None else (len(by.key), by.written, by.flag)))
        return tuple(told)

    def _labelled(self, recorder: SectionRecorder, section: str, path: tuple,
                  answer: ContestedBelow, labels: tuple,
                  enders: dict[tuple[int, tuple], Write | None]) -> list[Write]:
        """_writes_keyed_at's writes at `path` from `answer`'s labels there, with the node's
        own entity writes and endings, notes and value."""
        writes = recorder.candidates(path[:len(answer.root)])
        endings = recorder.endings
        positions = self._positions
        present: bool | None = None
        found: list[Write] = []
        for number, flag, written, ended, effect, by_anchor in labels:
            entity_write = writes[number]
            write = Write(section, path, path, flag, written, entity_write.source,
                          entity_write.order, None, positions)
            if ended is None:
                # as _label labels a write nothing ended
                notes = entity_write.notes
                write.effect = notes.get(path, "set") if notes else "set"
                if present is None:
                    present = self.value(path, section) is not MISSING
                write.final = present
            else:
                write.effect = effect
                kill = endings[path[:ended[0]]][ended[1]]
                by_write = kill.by_write
                if by_write is not None:
                    piece = (id(by_write), kill.by_path)
                    by = enders.get(piece, MISSING)
                    if by is MISSING:
                        by = enders[piece] = None if by_anchor is None else Write(
                            section, kill.by_path, kill.by_path[:by_anchor[0]], by_anchor[2],
                            by_anchor[1], by_write.source, by_write.order, None, positions)
                    write.by = by
            found.append(write)
        found.sort(key=_merge_order)
        return found

    def _writes_keyed_at(self, recorder: SectionRecorder, section: str,
                         candidates: list[EntityWrite], path: tuple,
                         enders: dict[tuple[int, tuple], Write | None]) -> list[Write]:
        """writes(path) without the writes that reach `path` from above it (through a
        reference: their key is not `path`) and without the removers: the writes whose key is
        `path`, labelled as writes() labels them, in merge order."""
        present = self.value(path, section) is not MISSING
        found: list[Write] = []
        for entity_write, anchor, fate in _keyed_at_path(recorder, candidates, path):
            write = Write(section, path, path, anchor[2], anchor[1], entity_write.source,
                          entity_write.order, None, self._positions)
            self._label(recorder, section, entity_write, write, fate, present, None, enders)
            found.append(write)
        found.sort(key=_merge_order)
        return found

    def entity_values(self, section: str = "parameters") -> list[tuple[Source, Any]]:
        """Each entity merged with what it writes in `section` (its tree as prepared from the
        file, shared by every node merging it), in merge order."""
        return [(entity_write.source, entity_write.value)
                for entity_write in self._sections[section].writes]

    def _label(self, recorder: SectionRecorder, section: str, entity_write: EntityWrite,
               write: Write, fate: Fate, present: bool,
               removers: dict[tuple[int, tuple], Write] | None,
               enders: dict[tuple[int, tuple], Write | None] | None = None) -> None:
        """Set the effect, `by` and `final` of `write` (of `entity_write`, at its path, whose
        `fate` is SectionRecorder.fate's); the writes above the path that removed it are added
        to `removers` (when given). `enders`, when given, keeps the `by` writes made, to be
        shared by the writes the same piece ended."""
        leaf = write.path
        if fate is None:
            write.effect = entity_write.notes.get(leaf, "set") if entity_write.notes else "set"
            write.final = present
            return
        kill, at = fate
        by: Write | None = None
        if kill.by_write is not None:
            if enders is None:
                by = self._write(recorder, section, kill.by_write, kill.by_path)
            else:
                piece = (id(kill.by_write), kill.by_path)
                by = enders.get(piece, MISSING)
                if by is MISSING:
                    by = enders[piece] = self._write(recorder, section, kill.by_write,
                                                     kill.by_path)
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
            if removers is not None and by is not None and kill.by is not None \
                    and recorder.anchor(kill.by[0], leaf) is None:
                self._add_remover(recorder, section, kill, removers)

    def _add_remover(self, recorder: SectionRecorder, section: str, kill: Kill,
                     removers: dict[tuple[int, tuple], Write]) -> None:
        assert kill.by is not None
        remover = self._write(recorder, section, kill.by[0], kill.by[1])
        if remover is not None:
            remover.effect = "removes"
            removers.setdefault((id(kill.by[0]), kill.by[1]), remover)

    def _write(self, recorder: SectionRecorder, section: str, entity_write: EntityWrite,
               path: tuple) -> Write | None:
        anchor = recorder.anchor(entity_write, path)
        if anchor is None:
            return None
        depth, written, flag, via = anchor
        write = Write(section, path, path[:depth], flag, written, entity_write.source,
                      entity_write.order, None, self._positions)
        write.via = via
        if via is not None:
            kept = entity_write.kept_keys or {}
            write.via_keys = tuple(kept[path[:end]][0] if path[:end] in kept else path[end - 1]
                                   for end in range(depth + 1, len(path) + 1))
        return write

    def written_paths(self, prefix: Sequence[object] = (), section: str = "parameters"
                      ) -> list[tuple]:
        """Key paths at or below `prefix` that some entity writes a value at (a mapping is
        followed to its keys; a reference, a list or a scalar ends a path), in merge order."""
        found: dict[tuple, None] = {}
        start = tuple(prefix)
        for entity_write in self._sections[section].writes:
            value = _value_at(entity_write.value, start)
            if value is not MISSING:
                _collect_ending_paths(value, start, found)
        return list(found)

    def references(self, path: Sequence[object], section: str = "parameters") -> list[str]:
        """The reference paths read while rendering the value at `path`, in order."""
        return self._sections[section].references(tuple(path))


def _merge_order(write: Write) -> int:
    return write.order


def _keyed_at_path(recorder: SectionRecorder, candidates: list[EntityWrite], path: tuple
                   ) -> list[tuple[EntityWrite, Anchor, Fate]]:
    """Each of `candidates` (the entity writes reaching `path`) whose key is `path`, not
    above it (a write reaching `path` through a reference written higher up), with how it
    reaches `path` and its fate there."""
    length = len(path)
    on_the_way = recorder.ends_on_the_way(path)
    keyed = []
    for entity_write in candidates:
        anchor = recorder.anchor(entity_write, path)
        if anchor is not None and anchor[0] == length:
            keyed.append((entity_write, anchor, recorder.fate(entity_write, path, on_the_way)))
    return keyed


def _add_paths_ended(recorder: SectionRecorder, ended_at: tuple,
                     by_id: dict[int, EntityWrite], paths: dict[tuple, Any]) -> list[tuple]:
    """Add to `paths` (as keys, None their value) the paths at or below `ended_at` that the
    entity writes ended there write a value at (contested_key_writes' paths); the ones new
    to `paths`, in order."""
    new = []
    for key in recorder.kills_at(ended_at):
        entity_write = by_id.get(key)
        below = _value_at(entity_write.value, ended_at) if entity_write else MISSING
        if below is not MISSING:
            for path, _, _ in values_written(below, ended_at):
                if path not in paths:
                    paths[path] = None
                    new.append(path)
    return new


def values_written(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any, str]]:
    """Every key path at or below `path` at which an entity's prepared tree (`value`, the tree
    at `path`) writes a value itself: a mapping, a reference or any other value, not a path
    inside a reference's rendered value; with the value and its `~`/`=` flags, parents first.
    These are the keys of its writes (Write.key): the paths SectionRecorder.anchor reaches at
    their full length, walked as it walks them (the last layer of a stack)."""
    flag = ""
    while type(value) is Stack:
        layer = value.layers[-1]
        flag = ("~" if layer.override else "") + ("=" if layer.constant else "")
        value = layer.value
    if path:
        yield path, value, flag
    if type(value) is not Interpolation and isinstance(value, dict):
        for key, child in value.items():
            yield from values_written(child, path + (key,))


def _ends_at(value: Any, path: tuple) -> bool:
    """Whether a prepared tree writes a value that ends a path at `path` (anything but a
    non-empty mapping), in any layer of a stack: what makes `path` one of written_paths()."""
    # Down the mappings without a call a key (most trees hold no stack on the way); a stack
    # is walked below, layer by layer.
    for depth, key in enumerate(path):
        if type(value) is Stack:
            return _ends_at_stack(value, path[depth:])
        if not isinstance(value, dict) or key not in value:
            return False
        value = value[key]
    if type(value) is Stack:
        return _ends_at_stack(value, ())
    return not (isinstance(value, dict) and value)


def _ends_at_stack(value: Any, path: tuple) -> bool:
    """_ends_at of a tree that may start with a stack."""
    while type(value) is Stack:
        if any(_ends_at(layer.value, path) for layer in value.layers[:-1]):
            return True
        value = value.layers[-1].value
    if not path:
        return not (isinstance(value, dict) and value)
    if isinstance(value, dict) and path[0] in value:
        return _ends_at(value[path[0]], path[1:])
    return False


def _collect_ending_paths(value: Any, path: tuple, found: dict[tuple, None]) -> None:
    """Add to `found` the paths at or below `path` (the root not itself) where a prepared
    tree ends a path (anything but a non-empty mapping), in every layer of a stack, in
    merge order: NodeProvenance.written_paths' walk."""
    while type(value) is Stack:
        for layer in value.layers[:-1]:
            _collect_ending_paths(layer.value, path, found)
        value = value.layers[-1].value
    if isinstance(value, dict) and value:
        for key, child in value.items():
            _collect_ending_paths(child, path + (key,), found)
    elif path:
        found.setdefault(path, None)


def _value_at(value: Any, path: tuple) -> Any:
    """The part of a prepared tree at `path`, walked as values_written walks (MISSING when the
    tree writes nothing there itself)."""
    for key in path:
        while type(value) is Stack:
            value = value.layers[-1].value
        if type(value) is Interpolation or not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value

