"""One node's rendered result, the inputs it was rendered from, and rendering a set of nodes
the way a serial `--inventory` render does (every merge first, then every interpolation).

A result is a nodeinfo or the error of its merge or of its interpolation, plus the warnings
each phase printed, so that serving results again gives what a fresh render gives: the same
data, the same first error, the same warnings in the same order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Union

from reclass_ng.collector import cycle_collection_paused
from reclass_ng.errors import ReclassError
from reclass_ng.incremental.snapshot import Digest, InventorySnapshot
from reclass_ng.observe.inputs import InputsObserver, InputsRecorder, NodeInputs
from reclass_ng.records import Record
from reclass_ng.render import MERGE, InventoryRenderer, inventory_document, render_nodes
from reclass_ng.render import timestamp as render_timestamp
from reclass_ng.resolve.rendered_subtrees import RenderedSubtrees

if TYPE_CHECKING:  # git_trees' imports are only needed for yaml_git and mixed inventories
    from reclass_ng.incremental.split_snapshot import SplitSnapshot

Snapshot = Union[InventorySnapshot, "SplitSnapshot"]

OK, MERGE_FAILED, INTERPOLATION_FAILED = "ok", "merge", "interpolation"


class NodeDeps(Record):
    """What a node's result depends on besides the settings, as found when it was rendered."""

    __slots__ = ("node_file", "files", "classes", "missing", "class_names_key", "nodes_key")
    _fields = __slots__
    node_file: str | None
    files: tuple[tuple[str, Digest | None], ...]  # every file read, with its digest
    classes: tuple[tuple[str, str], ...]  # class name -> the file it was found in
    missing: tuple[str, ...]  # class names looked up and not found
    class_names_key: Digest | None  # all class names (suggestions), when a class was missing
    nodes_key: Digest | None  # all node files and their digests (query scope), for queries

    def __init__(self, node_file: str | None, files: tuple[tuple[str, Digest | None], ...],
                 classes: tuple[tuple[str, str], ...], missing: tuple[str, ...],
                 class_names_key: Digest | None, nodes_key: Digest | None) -> None:
        _set = object.__setattr__
        _set(self, "node_file", node_file)
        _set(self, "files", files)
        _set(self, "classes", classes)
        _set(self, "missing", missing)
        _set(self, "class_names_key", class_names_key)
        _set(self, "nodes_key", nodes_key)

    def current(self, name: str, snapshot: Snapshot) -> bool:
        """True when `snapshot` (same settings) holds exactly the inputs this result read."""
        if snapshot.nodes.get(name) != self.node_file:
            return False
        digests = snapshot.digests
        for path, digest in self.files:
            if digests.get(path, b"") != digest:
                return False
        classes = snapshot.classes
        for class_name, path in self.classes:
            if classes.get(class_name) != path:
                return False
        if self.missing and (self.class_names_key != snapshot.class_names_key
                             or any(name in classes for name in self.missing)):
            return False
        return self.nodes_key is None or self.nodes_key == snapshot.nodes_key


def node_deps(inputs: NodeInputs | None, recorder: InputsRecorder, name: str,
              snapshot: Snapshot) -> NodeDeps:
    """A node's NodeDeps from its NodeInputs, with the inputs of the nodes its queries read
    (files named as the snapshot names them)."""
    if inputs is None:  # failed before its merge started (cannot happen with yaml_fs)
        node_file = snapshot.nodes.get(name)
        return NodeDeps(node_file, (), (), (), snapshot.class_names_key, snapshot.nodes_key)
    snapshot.include_opened_trees()
    parts = [inputs]
    for queried in inputs.queried_nodes or ():
        other = recorder.inputs(queried)
        if other is not None:
            parts.append(other)
    # A yaml_fs snapshot names every file by its path and every class by its name
    # (InventorySnapshot.logical_paths, class_keys): the same dicts, built in C.
    same_names = isinstance(snapshot, InventorySnapshot)
    classes: dict[str, str] = {}
    missing: dict[str, None] = {}
    files: dict[str, None] = {}
    for part in parts:
        if part.node_file is not None:
            files.update(dict.fromkeys(snapshot.logical_paths(part.node_file)))
        if same_names:
            classes.update(part.class_files)
            files.update(dict.fromkeys(map(itemgetter(1), part.class_files)))
        else:
            for class_name, path in part.class_files:
                for key, logical in snapshot.class_keys(class_name, path):
                    classes[key] = logical
                    files[logical] = None
        missing.update(dict.fromkeys(part.missing_classes))
    digests = snapshot.digests
    node_file = None if inputs.node_file is None else snapshot.logical_paths(inputs.node_file)[0]
    return NodeDeps(
        node_file, tuple(zip(files, map(digests.get, files), strict=True)),
        tuple(classes.items()), tuple(missing),
        snapshot.class_names_key if missing else None,
        snapshot.nodes_key if inputs.queried_nodes is not None else None)


class NodeResult(Record):
    """A node's nodeinfo (or the error of its merge or interpolation) and its warnings."""

    __slots__ = ("name", "phase", "value", "merge_warnings", "interpolation_warnings", "deps")
    _fields = __slots__
    name: str
    phase: str  # OK, MERGE_FAILED or INTERPOLATION_FAILED
    value: Any  # the nodeinfo, or the ReclassError
    merge_warnings: tuple[str, ...]
    interpolation_warnings: tuple[str, ...]
    deps: NodeDeps

    def __init__(self, name: str, phase: str, value: Any, merge_warnings: tuple[str, ...],
                 interpolation_warnings: tuple[str, ...], deps: NodeDeps) -> None:
        _set = object.__setattr__
        _set(self, "name", name)
        _set(self, "phase", phase)
        _set(self, "value", value)
        _set(self, "merge_warnings", merge_warnings)
        _set(self, "interpolation_warnings", interpolation_warnings)
        _set(self, "deps", deps)


class WarningCapture:
    """The warn callback of a generation: into the list being collected, else to `warn`."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.forward = warn
        self._collected: list[str] | None = None

    def warn(self, message: str) -> None:
        if self._collected is not None:
            self._collected.append(message)
        else:
            self.forward(message)

    @contextlib.contextmanager
    def collecting(self) -> Iterator[list[str]]:
        outer, self._collected = self._collected, []
        try:
            yield self._collected
        finally:
            self._collected = outer


def render_results(generation: InventoryRenderer, recorder: InputsRecorder,
                   snapshot: Snapshot, names: Sequence[str],
                   capture: WarningCapture, collect: bool = True, *,
                   memo: RenderedSubtrees | None = None) -> dict[str, NodeResult]:
    """Render `names` (in this order) as a serial `--inventory` render renders them
    (render.render_nodes, under the generation's Speed), each node's result with the inputs
    it read; the cycle collector collects first unless `collect` is False (collector.py).

    Each node's observer only records reads, which a subtree reused from the memo
    (`memo`, else the loop's own) does not hide (NodeRenderer.interpolate)."""
    merge_warnings: dict[str, tuple[str, ...]] = {}
    results: dict[str, NodeResult] = {}

    def observer_of(name: str) -> InputsObserver:
        recorder.forget(name)
        return recorder.observer(name)

    def around(name: str, phase: str) -> Any:
        return capture.collecting()

    with cycle_collection_paused(collect):
        for phase, name, value, warnings in render_nodes(
                generation, names, observer_of=observer_of, around=around, memo=memo):
            if phase is MERGE:
                merge_warnings[name] = tuple(warnings)
                if isinstance(value, ReclassError):
                    results[name] = NodeResult(
                        name, MERGE_FAILED, value, merge_warnings[name], (),
                        node_deps(recorder.inputs(name), recorder, name, snapshot))
                continue
            results[name] = NodeResult(
                name, INTERPOLATION_FAILED if isinstance(value, ReclassError) else OK, value,
                merge_warnings[name], tuple(warnings),
                node_deps(recorder.inputs(name), recorder, name, snapshot))
    return {name: results[name] for name in names}


def timestamped(info: dict[str, Any]) -> dict[str, Any]:
    """A nodeinfo served again: the same data with the time of this render."""
    served = dict(info)
    served["__reclass__"] = dict(info["__reclass__"], timestamp=render_timestamp())
    return served


def served_nodeinfo(result: NodeResult, warn: Callable[[str], None]) -> dict[str, Any]:
    """A node's nodeinfo as `--nodeinfo` gives it: its warnings, then its data or its error."""
    for message in result.merge_warnings + result.interpolation_warnings:
        warn(message)
    if result.phase != OK:
        raise result.value.with_traceback(None)  # not one traceback longer per serve
    return timestamped(result.value)


def served_inventory(results: Sequence[NodeResult], warn: Callable[[str], None]
                     ) -> dict[str, Any]:
    """The `--inventory` structure from every node's result (in node order), with the
    warnings and the first error a serial render gives."""
    for result in results:
        for message in result.merge_warnings:
            warn(message)
        if result.phase == MERGE_FAILED:
            raise result.value.with_traceback(None)  # not one traceback longer per serve
    for result in results:
        for message in result.interpolation_warnings:
            warn(message)
        if result.phase == INTERPOLATION_FAILED:
            raise result.value.with_traceback(None)  # not one traceback longer per serve
    return inventory_document({result.name: timestamped(result.value) for result in results})
