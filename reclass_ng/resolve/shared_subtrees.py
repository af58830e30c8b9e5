"""The resolver's side of the rendered-subtree memo (reclass_ng.resolve.rendered_subtrees).

A file container with enough keys to render is first looked up in the memo: a copy kept by an
earlier node is reused when every reference it read has, in this node, a rendered value
written the same (`_reuse`; the check renders nothing). Otherwise it is rendered plainly,
recording what its references read outside it (`_render_for_memo`), and kept for later nodes
unless something the memo cannot replay happened inside (a query, a missing reference, a
warning, an error: `_unkeep`). `Resolver` (reclass_ng.resolve) mixes this in; a render without
a memo (`Resolver(subtrees=None)`) is the reference tests/test_subtrees.py compares it with.
"""

from __future__ import annotations

from reclass_ng.resolve.fast_paths import (
    MAX_REFERENCE_EXPANSION,
    NOT_RENDERED,
    FastPaths,
    value_at,
)
from reclass_ng.resolve.rendered_subtrees import SubtreeReads, fully_rendered, read_part
from reclass_ng.values import OwnedDict, OwnedList, UnresolvedDict

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from reclass_ng.observe.seam import WriteObserver
    from reclass_ng.resolve.rendered_subtrees import RenderedSubtrees


class SharedSubtrees(FastPaths):
    """The memo side of `Resolver`, which provides what is declared here: the memo, the
    tree and its split paths, the file containers being rendered for the memo and the read
    parts found in this node, and the plain render of keys. One chain of bases (Resolver,
    SharedSubtrees, FastPaths), not two mixins: the compiled build makes each an extension
    type (shared_subtrees.pxd), and an extension type has at most one base with a C layout."""

    subtrees: RenderedSubtrees | None
    root: Any
    delimiter: str
    list_index_last: bool
    _split: dict[str, tuple[str, ...]]
    _reading: list[SubtreeReads]
    _read_parts: dict[str, Any]
    _print_warning: Callable[[str], None]
    record: WriteObserver | None  # set by Resolver; declared here for the compiled build

    if TYPE_CHECKING:  # provided by Resolver; no stub to shadow it
        def _render_keys(self, container: Any, keys: tuple | list, path: tuple) -> None: ...

    def _render_file_container(self, container: Any, key: Any, value: Any, path: tuple) -> None:
        """Render the copy of a file container at container[key]: a kept copy whose reads
        match this node's rendered values, else a plain render, kept for later nodes."""
        made_by = self.subtrees.made_by_file(value)  # type: ignore[union-attr]
        if self._reuse(made_by, container, key, path):
            return
        copy = container[key] = OwnedDict(value) if type(value) is UnresolvedDict \
            else OwnedList(value)
        if not self.subtrees.met_before(made_by):  # type: ignore[union-attr]
            self._render_keys(copy, value.dirty, path)
            return
        self._render_for_memo(made_by, value, copy, path)

    def _reuse(self, made_by: Any, container: Any, key: Any, path: tuple) -> bool:
        """Put a kept rendered copy made by `made_by` at container[key] (`path`), when the
        values its references read are this node's (True). An observed render takes only a
        copy whose render was recorded, and tells its record what that render told."""
        subtrees = self.subtrees
        assert subtrees is not None
        by_paths = subtrees.read_paths(made_by)
        if by_paths is not None:
            for paths, by_values in by_paths.items():
                values_key = self._read_key_now(paths)
                kept = by_values.get(values_key) if values_key is not None else None
                if kept is not None and self.record is not None and kept[3] is None:
                    kept = None  # rendered unobserved: nothing to tell this node's record
                # What its references produced (mostly nothing) counts in this node too.
                if kept is not None and (not kept[2] or self._count_reused(kept[2])):
                    container[key] = kept[1]
                    subtrees.reused(made_by)
                    if self.record is not None:
                        self.record.rendered_again(path, kept[3])
                    for outer in self._reading:  # containers around it read what it read
                        for ref_path, read in kept[0].items():
                            outer.read(ref_path, self._split[ref_path], read)
                    return True
        subtrees.misses += 1
        return False

    def _count_reused(self, expanded: int) -> bool:
        """Count what a reused copy's references produced; False when that would cross
        MAX_REFERENCE_EXPANSION: the copy is then rendered plainly, which reports the error
        where it crosses."""
        if self.expanded + expanded > MAX_REFERENCE_EXPANSION:
            return False
        self.expanded += expanded
        return True

    def _render_for_memo(self, made_by: Any, producers: Any, rendered: Any, path: tuple
                         ) -> None:
        """Render `rendered`, the copy at `path` of the file container `producers`, recording
        what it reads; keep it when nothing the memo cannot replay happened."""
        reading = SubtreeReads(path)
        self._reading.append(reading)
        expanded = self.expanded
        record = self.record
        # An observed render keeps what its record is told, for the nodes reusing the copy
        told = None
        if record is not None:
            # imported here: a plain render never loads reclass_ng.observe (start-up)
            from reclass_ng.observe.subtree_recording import SubtreeRecording
            told = SubtreeRecording(record, path)
            self.record = told
        try:
            self._render_keys(rendered, producers.dirty, path)
        finally:
            self._reading.pop()
            if told is not None:
                told.finish()
                self.record = record
        if reading.kept and (told is None or told.replayable):
            self.subtrees.keep(made_by, producers, reading.reads,  # type: ignore[union-attr]
                               rendered, self.expanded - expanded, told)

    def _read_key_now(self, paths: tuple[str, ...]) -> tuple | None:
        """The read_key of the values at `paths` in this tree, when all are rendered already
        (None otherwise)."""
        # One pass (paths are short: 2-4 mostly): a part found before in this node, else
        # the value's, found and kept now.
        parts = self._read_parts
        key = []
        for ref_path in paths:
            part = parts.get(ref_path)  # a non-empty tuple when found
            if part is None:
                value = self._rendered_target(ref_path)  # the common case, found quickly
                part = read_part(self._rendered_value(ref_path) if value is NOT_RENDERED
                                 else value)
                if part is None:
                    return None
                parts[ref_path] = part  # a rendered value never changes
            key.append(part)
        return tuple(key)

    def _rendered_value(self, ref_path: str) -> Any:
        """The value `lookup(ref_path)` returns, when it is rendered completely already (it
        renders nothing, fails nowhere); else NOT_RENDERED."""
        keys = self._split.get(ref_path)
        if keys is None:
            keys = self._split_path(ref_path)
        # Through a file's container still to render too: lookup would walk its owned copy,
        # whose items are the same objects.
        node = value_at(self.root, keys, self.list_index_last)
        return node if node is not NOT_RENDERED and fully_rendered(node) else NOT_RENDERED

    def _split_path(self, ref_path: str) -> tuple[str, ...]:
        """The keys of `ref_path`, split on the delimiter once for the inventory's resolvers
        (Merger.split_paths)."""
        keys = self._split[ref_path] = tuple(ref_path.split(self.delimiter))
        return keys

    def _note_read(self, ref_path: str, value: Any, path: tuple) -> None:
        """The value at `path` read `value` at `ref_path`: a read of each file container
        being rendered around `path`."""
        keys = self._split[ref_path]
        for reading in self._reading:
            if path[:len(reading.path)] == reading.path:
                reading.read(ref_path, keys, value)

    def _unkeep(self) -> None:
        """Something a kept copy could not replay happened: keep none of the containers
        being rendered now."""
        for reading in self._reading:
            reading.kept = False

    def _warn_unkept(self, message: str) -> None:
        """A warning (a kept copy would not print it again): see _unkeep."""
        self._unkeep()
        self._print_warning(message)
