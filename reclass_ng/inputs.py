"""What rendering a node read: its node file, the class files its expansion read, the class
names it tried and did not find, and the nodes whose exports its queries read.

The engine records these facts while it renders, but only when asked: a NodeRenderer without an
`InputsRecorder` (the default) records nothing and pays one `is None` test per class. The
incremental render (reclass_ng.incremental) uses the records to know which nodes a changed file
affects. The settings are an input of every node and are not repeated per node.
"""

from __future__ import annotations

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


class _MergeReads:
    __slots__ = ("node_file", "class_files", "missing")

    def __init__(self) -> None:
        self.node_file: str | None = None
        self.class_files: dict[str, str] = {}
        self.missing: dict[str, None] = {}


class InputsRecorder:
    """Collects, per node, what its merge read and which nodes its queries read.

    Merges nest (a query merges the nodes it reads while the querying node is interpolated),
    so reads go to the innermost merge in progress. One recorder serves one thread.
    """

    def __init__(self) -> None:
        self._merges: dict[str, _MergeReads] = {}
        self._stack: list[_MergeReads] = []
        self._queried: dict[str, dict[str, None]] = {}

    def merge_started(self, node: str, node_file: str | None) -> None:
        reads = _MergeReads()
        reads.node_file = node_file
        self._merges[node] = reads
        self._stack.append(reads)

    def merge_ended(self) -> None:
        self._stack.pop()

    def class_read(self, name: str, path: str | None) -> None:
        """A class the merge in progress looked up: its file, or None when there is none."""
        if not self._stack:
            return
        reads = self._stack[-1]
        if path is None:
            reads.missing[name] = None
        else:
            reads.class_files[name] = path

    def node_queried(self, node: str, queried: str) -> None:
        """`node`'s queries read the exports of `queried`."""
        self._queried.setdefault(node, {})[queried] = None

    def queries_started(self, node: str) -> None:
        """`node` has a query (even one whose scope is empty)."""
        self._queried.setdefault(node, {})

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
