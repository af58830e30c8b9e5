"""What rendering a shared file container tells an observer of writes, recorded once and told
again to each node that reuses the rendered copy.

The rendered-subtree memo (resolve/rendered_subtrees.py) lets nodes that copy the same file
container, whose references read the same values, share one rendered copy. An observed render
could not use it: its observer of writes must be told every value rendered. `SubtreeRecording`
stands for the node's observer while the resolver renders a container for the memo: it passes
every call on and keeps it, and `replay` tells the kept calls to the observer of a later node
that reuses the copy, at the place its own render of the container would have made them.

Only what is the same for every node reusing the copy is kept: a string rendered inside the
container (`reference`, `rendered`, `rendered_directly` of a string), told with the file's own
string and the value stored in the shared copy. Anything else told while the container renders
(a stack folded, whose layers the record pairs with a node's own entity writes; a value rendered
outside the container, which a later node has rendered before) makes the recording
`replayable` False, and the resolver then keeps no copy for the memo
(tests/test_subtree_recording.py compares each node's record with its unshared render's).
"""

from __future__ import annotations

from reclass_ng.observe.seam import WriteObserver
from reclass_ng.syntax.ast import Ref
from reclass_ng.values import Interpolation

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from reclass_ng.values import Layer, Source, Stack

# The kinds of call kept, first in each kept tuple (the order of _CALL_NAMES)
REFERENCE, RENDERED, RENDERED_DIRECTLY = range(3)
_CALL_NAMES = ("reference", "rendered", "rendered_directly")


class SubtreeRecording(WriteObserver):
    """The observer of writes while the file container at `path` renders: `inner`'s calls,
    passed on and kept for `replay`."""

    __slots__ = ("inner", "path", "depth", "calls", "replayable", "digests")

    def __init__(self, inner: WriteObserver, path: tuple) -> None:
        self.inner = inner
        self.path = path
        self.depth = len(path)
        self.calls: list[tuple] = []
        self.replayable = True
        # observer class -> what it makes of the calls, made once for every node reusing
        # the copy (SectionRecorder.rendered_again: its lists, extended in one step)
        self.digests: dict[type, Any] = {}

    def finish(self) -> None:
        """The container is rendered: let go of the observer calls were passed on to (a
        kept recording held the whole record of the node that made it)."""
        self.inner = _FINISHED

    def _kept(self, path: tuple) -> bool:
        """Whether a call at `path` is kept: the recording is still replayable and `path`
        lies inside the container (else nothing is replayable from now on)."""
        if not self.replayable:
            return False  # nothing kept is needed any more
        if len(path) > self.depth and path[:self.depth] == self.path:
            return True
        self.replayable = False
        self.calls = []
        return False

    def replay(self, observer: WriteObserver, path: tuple) -> None:
        """Tell `observer` the calls kept, for the copy reused at `path` (the container's
        path in the reusing node: the same file's keys, so the same path in practice)."""
        handlers = [getattr(observer, name) for name in _CALL_NAMES]
        same, depth = path == self.path, self.depth
        for call in self.calls:
            kind, at = call[0], call[1]
            if not same:
                at = path + at[depth:]
            if kind is RENDERED_DIRECTLY:
                value, new, pointed = call[2], call[3], call[4]
                # one reference alone points at the value itself
                handlers[kind](at, value, new,
                               {value.reference_path: new} if pointed is None else pointed)
            else:
                handlers[kind](at, *call[2:])

    # -- kept and passed on ----------------------------------------------------------------

    def reference(self, path: tuple, target: str) -> None:
        """See the base class."""
        if self._kept(path):
            self.calls.append((REFERENCE, path, target))
        self.inner.reference(path, target)

    def rendered(self, path: tuple, interpolation: Interpolation, value: Any) -> None:
        """See the base class."""
        if self._kept(path):
            self.calls.append((RENDERED, path, interpolation, value))
        self.inner.rendered(path, interpolation, value)

    def rendered_directly(self, path: tuple, value: Interpolation | Stack, new: Any,
                          targets: Mapping[str, Any]) -> None:
        """See the base class. `targets` is the resolver's cache, which changes: what a
        string of several parts points at is kept instead (None for one reference alone:
        `new` itself)."""
        if type(value) is not Interpolation:
            self.replayable = False  # a stack: its layers are paired with a node's writes
            self.calls = []
        elif self._kept(path):
            pointed = None if value.reference_path is not None else {
                ref: targets[ref] for item in value.template.items
                if type(item) is Ref and (ref := item.path) is not None and ref in targets}
            self.calls.append((RENDERED_DIRECTLY, path, value, new, pointed))
        self.inner.rendered_directly(path, value, new, targets)

    # -- passed on only: a copy rendered with any of these is not kept ------------------------

    def entity_written(self, source: Source, value: Any) -> None:
        """See the base class."""
        self.replayable = False
        self.inner.entity_written(source, value)

    def stacked(self, path: tuple, new_layers: Sequence[Layer], wrapped: Layer | None) -> None:
        """See the base class."""
        self.replayable = False
        self.inner.stacked(path, new_layers, wrapped)

    def ignored(self, path: tuple, constant: Layer) -> None:
        """See the base class."""
        self.replayable = False
        self.inner.ignored(path, constant)

    def appended(self, path: tuple) -> None:
        """See the base class."""
        self.replayable = False
        self.inner.appended(path)

    def folded(self, path: tuple, layers: Sequence[Layer], index: int, outcome: str,
               value: Any) -> None:
        """See the base class."""
        self.replayable = False
        self.inner.folded(path, layers, index, outcome, value)

    def fold_merged(self) -> None:
        """See the base class."""
        self.replayable = False
        self.inner.fold_merged()

    def kept_key_read(self, path: tuple, written: str, read: Layer, layer: Layer) -> None:
        """See the base class."""
        self.replayable = False
        self.inner.kept_key_read(path, written, read, layer)


_FINISHED = WriteObserver()  # what a finished recording passes calls on to: nobody
