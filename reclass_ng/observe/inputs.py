"""What rendering a node read: its node file, the class files its expansion read, the class
names it tried and did not find, and the nodes whose exports its queries read.

The engine tells these facts to a `RenderObserver` (reclass_ng.observe), the one seam through
which a render is watched; `InputsRecorder` makes the observers and keeps what they were told.
A render without an observer records nothing. The incremental render (reclass_ng.incremental)
uses the records to know which nodes a changed file affects. The settings are an input of every
node and are not repeated per node.
"""

from __future__ import annotations

from reclass_ng.observe.seam import RenderObserver
from reclass_ng.records import Record


class NodeInputs(Record):
    """The inputs of one node's render (of its merge, plus what its queries read)."""

    __slots__ = ("node", "node_file", "class_files", "missing_classes", "queried_nodes")
    _fields = __slots__
    node: str
    node_file: str | None  # absolute path; None for a node given only through the API
    class_files: tuple[tuple[str, str], ...]  # (class name, absolute path), in reading order
    missing_classes: tuple[str, ...]  # class names tried and not found
    queried_nodes: tuple[str, ...] | None  # nodes whose exports queries read; None: no query

    def __init__(self, node: str, node_file: str | None,
                 class_files: tuple[tuple[str, str], ...] = (),
                 missing_classes: tuple[str, ...] = (),
                 queried_nodes: tuple[str, ...] | None = None) -> None:
        _set = object.__setattr__
        _set(self, "node", node)
        _set(self, "node_file", node_file)
        _set(self, "class_files", class_files)
        _set(self, "missing_classes", missing_classes)
        _set(self, "queried_nodes", queried_nodes)


class InputsObserver(RenderObserver):
    """Observes one node's render for an InputsRecorder: reads only, so shared class walks
    keep their speed (the engine reports the classes a shared walk contains)."""

    reads_only = True

    def __init__(self, recorder: InputsRecorder, node: str) -> None:
        self.recorder = recorder
        self.node = node
        self.node_file: str | None = None
        self.class_files: dict[str, str] = {}
        self.missing: dict[str, None] = {}

    def node_read(self, name: str, path: str | None) -> None:
        """See the base class."""
        self.node_file = path

    def class_read(self, name: str, path: str | None) -> None:
        """See the base class."""
        if path is None:
            self.missing[name] = None
        else:
            self.class_files[name] = path

    def export_read(self, node: str, path: tuple[str, ...] | None) -> None:
        """See the base class."""
        self.recorder.queried(self.node, node)

    def query_run(self) -> None:
        """See the base class."""
        self.recorder.queried(self.node, None)

    def queried_merge(self, node: str) -> RenderObserver | None:
        """See the base class: the queried node's merge is recorded as its own (its inputs
        join the querying node's through `NodeInputs.queried_nodes`)."""
        return self.recorder.observer(node)


class InputsRecorder:
    """Collects, per node, what its merge read and which nodes its queries read.

    `observer(node)` gives the RenderObserver to pass to the node's merge and interpolation.
    A query merges the nodes it reads while the querying node is interpolated; those merges
    are recorded as the queried nodes' own. One recorder serves one thread.
    """

    def __init__(self) -> None:
        self._merges: dict[str, InputsObserver] = {}
        self._queried: dict[str, dict[str, None]] = {}

    def observer(self, node: str) -> InputsObserver:
        """A fresh record of `node`'s merge (replacing the last one) and its observer."""
        made = self._merges[node] = InputsObserver(self, node)
        return made

    def queried(self, node: str, other: str | None) -> None:
        """`node`'s queries read the exports of `other` (None: a query ran, maybe over no
        node at all)."""
        reads = self._queried.setdefault(node, {})
        if other is not None:
            reads[other] = None

    def inputs(self, node: str) -> NodeInputs | None:
        """What the last merge of `node` (and its queries) read; None if it was not merged."""
        reads = self._merges.get(node)
        if reads is None:
            return None
        queried = self._queried.get(node)
        return NodeInputs(node, reads.node_file, tuple(reads.class_files.items()),
                          tuple(reads.missing), None if queried is None else tuple(queried))

    def forget(self, node: str) -> None:
        """Drop the records of `node` before it is rendered again."""
        self._merges.pop(node, None)
        self._queried.pop(node, None)
