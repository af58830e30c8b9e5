"""Rendered subtrees shared between the nodes of one inventory render (a memo).

Most of a node's tree is file containers (`UnresolvedDict`, `UnresolvedList`) that no other
file merged into: the node copies each one and renders the references inside. Nodes listing
the same classes copy the same containers and, when the values their references read are the
same, end with the same rendered subtree. So a container's rendered copy is kept, keyed by
exactly what produced it:

* the file container itself (the object: it is never changed, and an entry holds it, so its
  identity cannot be reused), and
* every reference its values read outside it, with the value read.

A later node meeting the same container reuses the kept subtree when each of those references
already has, in its own tree, a fully rendered value written the same as the one read (a
scalar of the same type and value, or the same file container). The check renders nothing, so it raises no error, prints no warning and changes no
render order: a node's output, warnings and errors are those of the plain render. A render
that queried other nodes, used a reference default, printed a warning or met an error inside
the container is not kept. The reused subtree is shared, like the file's own plain containers
are: rendered trees are never changed (a reference to it copies it, see `owned_copy`).

`RenderedSubtrees` is the memo of one inventory render (`InventoryRenderer.render_serially`),
bounded; the plain render (without one) is the reference the tests compare it with.
"""

from __future__ import annotations

from reclass_ng.values import OwnedDict, OwnedList

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from reclass_ng.observe.subtree_recording import SubtreeRecording

# min_dirty of the memo of a render that lets go of each node once it is written
# (InventoryRenderer.rendered_nodes: the command line's `--inventory`). A node's own copies of
# the small containers are then freed with the node, so they cost no peak memory (the reason
# the default stays 2: doc/performance.rst), and rendering a container with fewer keys to
# render costs less than the memo's check and bookkeeping now that most values take the fast
# paths. Whole processes, instructions: stacklight 909.0 -> 900.1 M, training-lab 844.4 ->
# 831.3 M, generated mcp 400 nodes 2,785 -> 2,733 M (kapitan 400: 1,826 -> 1,837 M).
STREAMED_MIN_DIRTY = 7

# Values inside a rendered tree that are complete as they are.
_SCALARS = frozenset({str, int, float, bool, type(None)})


class SubtreeReads:
    """What rendering one file container at `path` read outside it (for its memo entry)."""

    __slots__ = ("path", "prefix", "reads", "kept")

    def __init__(self, path: tuple) -> None:
        self.path = path
        # A reference whose keys start with these points inside the container (read again by
        # the copy, not a fact about the node). Paths through list indexes compare as written,
        # so such references are kept as reads: a later node then never matches (safe).
        self.prefix = path if all(type(key) is str for key in path) else None
        # reference path -> the value read there: a rendered value never changes, so a path
        # read again adds nothing to the key of the copy.
        self.reads: dict[str, Any] = {}
        self.kept = True  # False: something the memo cannot replay happened inside

    def read(self, ref_path: str, keys: tuple, value: Any) -> None:
        """A reference inside the container read `value` at `ref_path` (split into `keys`)."""
        prefix = self.prefix
        if prefix is not None and keys[:len(prefix)] == prefix:
            return
        self.reads.setdefault(ref_path, value)


class RenderedSubtrees:
    """The memo of one inventory render: file container -> rendered copies, each under the
    paths its references read and the values they read there (`read_key`).

    Bounded: at most `max_variants` rendered copies a container and `max_entries` in all
    (then nothing more is kept). A container whose first `max_unused` copies were never
    reused (its references read values of each node's own, such as its name) is rendered
    plainly from then on: recording its reads costs more than it saves (4: on `kapitan`,
    where half of the memo's containers read node-specific values, 16 cost 4% of a 500-node
    render; 4 loses the sharing of `mcp` containers first reused after that many copies,
    +6 MB of peak memory at 2,000 nodes, still below the 229 MB the issue started from:
    doc/performance.rst). So is one with
    fewer than `min_dirty` keys to render. (Raised to 7, that saved 4% of the instructions
    of a 2,000-node `mcp` render, but the nodes' own copies of the smaller containers
    raised peak memory by 5 to 20 MB: doc/performance.rst.) Owned by the render that made
    it.
    """

    def __init__(self, max_entries: int = 200_000, max_variants: int = 64,
                 max_unused: int = 4, min_dirty: int = 2) -> None:
        self.min_dirty = min_dirty
        self.max_entries = max_entries
        self.max_variants = max_variants
        self.max_unused = max_unused
        # id(container) -> (container, {read paths: {read_key of the values:
        #                                            (reads, rendered copy, its expansion)}})
        self._entries: dict[int, tuple[Any, dict[tuple[str, ...], dict[tuple, Any]]]] = {}
        self._count = 0
        # What produced a container met once (its dict key only): recorded at the second
        # meeting, as most containers that are met once (a node's own) are never met again.
        self._met: set[Any] = set()
        self._reused: set[Any] = set()  # what produced a kept copy that was reused
        # What produced max_unused copies never reused: ids of file containers (each held by
        # its entry), which the resolver renders plainly without asking the memo.
        self.given_up_files: set[int] = set()
        self.given_up = 0
        self.hits = 0
        self.misses = 0

    # What produced a rendered copy (`made_by`): a file container, keyed by its id. An entry
    # holds the container, so while it exists no other object can have that id: a key found
    # is the same container.

    @staticmethod
    def made_by_file(container: Any) -> Any:
        """The key of what produced a node's copy of a file container."""
        return id(container)

    def read_paths(self, made_by: Any) -> dict[tuple[str, ...], dict[tuple, Any]] | None:
        """The kept rendered copies of what `made_by` produced, by the paths they read
        (None: none kept)."""
        entry = self._entries.get(made_by)
        return None if entry is None else entry[1]

    def reused(self, made_by: Any) -> None:
        """A kept copy of what `made_by` produced was reused."""
        self.hits += 1
        self._reused.add(made_by)

    def met_before(self, made_by: Any) -> bool:
        """Whether something with the key `made_by` was met before (a hint, not a fact: ids
        are reused once their objects are gone); remembers this meeting. False from when it
        was given up on (see the class)."""
        if made_by in self._met:
            return made_by not in self.given_up_files
        if len(self._met) < self.max_entries:
            self._met.add(made_by)
        return False

    def keep(self, made_by: Any, producers: Any, reads: dict[str, Any], rendered: Any,
             expanded: int, told: SubtreeRecording | None = None) -> None:
        """Keep the rendered copy of what `made_by` produced (`producers`: the objects whose
        ids it is), with the references it read (path -> value read), what its own
        references produced (a node reusing it counts that: resolve.MAX_REFERENCE_EXPANSION)
        and, for an observed render, what its render told the observer (`told`: an observed
        render reuses only such a copy)."""
        key = read_key(reads.values())
        if key is None or self._count >= self.max_entries:
            return
        entry = self._entries.get(made_by)
        if entry is None:
            entry = self._entries[made_by] = (producers, {})
        by_paths = entry[1]
        if made_by not in self._reused \
                and sum(map(len, by_paths.values())) >= self.max_unused:
            self.given_up_files.add(made_by)  # the entry stays: it holds the container (its id)
            self.given_up += 1
            self._count -= sum(map(len, by_paths.values()))
            by_paths.clear()
            return
        by_values = by_paths.setdefault(tuple(reads), {})
        if len(by_values) < self.max_variants and key not in by_values:
            by_values[key] = (reads, rendered, expanded, told)
            self._count += 1


def read_key(values: Iterable[Any]) -> tuple | None:
    """A hashable key of the values read, equal only when every value is written the same
    (see read_part); None when a value cannot be keyed."""
    key = []
    for value in values:
        part = read_part(value)
        if part is None:
            return None
        key.append(part)
    return tuple(key)


def read_part(value: Any) -> Any:
    """The part of a read_key for one value: scalars by type and value (floats by their
    text: 0.0 and -0.0 are written apart), a file's plain container by identity (one object
    for every node that has it; the memo entry holding the reads keeps it alive), None for
    anything else (a node's own containers, values not rendered yet)."""
    kind = type(value)
    if kind is float:
        return (kind, repr(value))
    if kind in _SCALARS:
        return (kind, value)
    if kind is dict or kind is list:
        return (kind, id(value))
    return None


def fully_rendered(value: Any) -> bool:
    """Whether nothing is left to render inside a value of a node's tree."""
    kind = type(value)
    if kind in _SCALARS or kind is dict or kind is list:
        return True  # from a file with nothing to interpolate inside, or a scalar
    if kind is OwnedDict:
        return all(fully_rendered(item) for item in value.values())
    if kind is OwnedList:
        return all(fully_rendered(item) for item in value)
    return False  # Interpolation, Stack, UnresolvedDict, UnresolvedList (or unknown)
