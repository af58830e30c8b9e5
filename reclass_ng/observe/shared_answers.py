"""The contested writes below a key, worked out once for the nodes recording the same facts
there (NodeProvenance.contested_key_writes, which lint reads for every node).

Which entity writes end at the paths below a key of a section (its first key, or its first two
when nothing ended at the first), and how the writes keyed at each of those paths are labelled,
follow from a few recorded facts: the entity writes reaching the key (their entities and trees)
and what ended values below it (each ending's path, kind, the writes it names and the order of
the endings). Nodes merging the same classes record the same facts below most keys (the folds of
their classes' own stacks), and a tool reading every node's record worked the same answer out
again for each node. `SharedAnswers` (one per Inventory.each_provenance) keeps each answer under
its facts, written without the objects of one node's record (an entity write is its position
among the writes reaching the key, an ending its path and position there); a node recording the
same facts takes the answer and puts its own objects back. What a node may hold of its own is
read from its record each time: what its folds noted of a write (EntityWrite.notes) and whether
it holds a value at a path.

Facts are shared only when they name class writes alone: a node's own entity and its automatic
parameters are its own, while a class's source and prepared tree are the same objects on every
node merging the class (held here, so that no id in a kept key is reused). An answer is not kept
when working it out read a reference's rendered value (a write reaching a path through a
reference above it: that value is the node's own) or a key kept below a prefixed key (told by
the node's own folds, WriteObserver.kept_key_read). tests/test_walk_recording.py compares every
node's contested writes with those of its own render.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

    from reclass_ng.observe.provenance_recorder import Kill, SectionRecorder


class ContestedBelow:
    """The contested writes below `root` (a key path of one or two keys) of a node's
    section, without the node's objects: `discovered` (path that ended -> the paths below it
    first found there, in order) and `labels` (path -> the writes keyed there, each as (index
    among the writes reaching `root`, its `~`/`=` flags, the value written, the ending that
    ended it as (length of its path, index there) or None, its effect when ended, how the
    write that ended it reaches its own path as (length of the key path, value, flags) or
    None))."""

    __slots__ = ("root", "discovered", "labels")

    def __init__(self, root: tuple, discovered: dict[tuple, tuple],
                 labels: dict[tuple, tuple]) -> None:
        self.root = root
        self.discovered = discovered
        self.labels = labels


class SharedAnswers:
    """The ContestedBelow of the nodes recorded so far, under their facts (see the module)."""

    __slots__ = ("answers", "_held", "reused", "kept")

    def __init__(self) -> None:
        self.answers: dict[tuple, ContestedBelow] = {}
        self._held: dict[int, Any] = {}  # id -> a source or tree some kept facts name
        self.reused = 0  # answers taken from an earlier node (tests, measurements)
        self.kept = 0  # answers worked out and kept

    def facts(self, recorder: SectionRecorder, root: tuple, ended: list[tuple],
              names: dict[int, tuple[int, int] | None]) -> tuple | None:
        """The facts the contested writes below `root` follow from (`ended`: the paths
        below it where something ended, in the record's order; `names`: see `names`), or
        None when they are not shared."""
        writes = []
        for write in recorder.candidates(root):
            name = names[id(write)]
            if name is None:
                return None
            writes.append(name)
        endings = recorder.endings
        ends: list[tuple[int, tuple]] = []
        for path in ended:
            for kill in endings[path]:
                named = _ending_facts(kill, path, names)
                if named is None:
                    return None
                ends.append((kill.seq, named))
        # what an ending ends depends on the endings before it: their order, not their seq
        # (no two are equal: the tuples after them are never compared)
        ends.sort()
        return root, tuple(writes), tuple(end for _, end in ends)

    def names(self, recorder: SectionRecorder) -> dict[int, tuple[int, int] | None]:
        """id(entity write) -> the write as facts name it (its source's and tree's ids), None
        for a write whose facts are not shared (see the module)."""
        found: dict[int, tuple[int, int] | None] = {}
        for write in recorder.writes:
            source = write.source
            found[id(write)] = (id(source), id(write.value)) \
                if source.kind == "class" and write.kept_keys is None else None
        return found

    def keep(self, facts: tuple, answer: ContestedBelow, recorder: SectionRecorder) -> None:
        """Keep `answer` under `facts`, with the sources and trees of the class writes of
        `recorder`'s node (the ones facts name among them) held: once a node."""
        if recorder.shared_held is False:
            held = self._held
            for write in recorder.writes:
                if write.source.kind == "class":
                    held[id(write.source)] = write.source
                    held[id(write.value)] = write.value
            recorder.shared_held = True
        self.answers[facts] = answer
        self.kept += 1


def _ending_facts(kill: Kill, path: tuple, names: dict[int, tuple[int, int] | None]
                  ) -> tuple | None:
    """An ending at `path` as facts name it (its seq aside), None when it names a write
    whose facts are not shared."""
    by = keep = target = None
    if kill.by_write is not None:
        by = names[id(kill.by_write)]
        if by is None:
            return None
    if kill.target is not None:
        target = names[id(kill.target)]
        if target is None:
            return None
    if kill.keep:
        keep = tuple(names[key] for key in kill.keep)
        if None in keep:
            return None
    return path, kill.kind, by, kill.by_path, kill.override, target, keep
