"""A `reclass --inventory --cache-dir` run whose inventory changed since the cache was written
(disk_cache.py): nodes whose inputs are unchanged keep their stored text, the others are
rendered, and the output and the next cache file's entries are assembled.

Imported only by such a run: an unchanged one prints the stored output without the render's
modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reclass_ng.incremental.cache_file import (
    CacheFile,
    Part,
    Span,
    checked_indexes,
    checked_strs,
    ignored,
)
from reclass_ng.incremental.node_results import (
    INTERPOLATION_FAILED,
    MERGE_FAILED,
    NodeDeps,
    NodeResult,
    WarningCapture,
    render_nodes,
)
from reclass_ng.incremental.snapshot import InventorySnapshot
from reclass_ng.inputs import InputsRecorder
from reclass_ng.output_yaml import BlockYamlWriter
from reclass_ng.parallel.fragments import FRAGMENT_FORMS, inventory_frame, node_fragment
from reclass_ng.render import InventoryRenderer, timestamp

_TIMESTAMP_KEY = "timestamp"


class CachedRun:
    """A run whose inventory changed since the cache was written: the nodes whose inputs are
    unchanged keep their stored text, the others are rendered."""

    def __init__(self, inventory: InventoryRenderer, snapshot: InventorySnapshot,
                 cached: CacheFile | None, path: str, warn: Callable[[str], None]) -> None:
        self.inventory, self.snapshot, self.cached = inventory, snapshot, cached
        self.path, self.warn = path, warn
        self.fmt, self.pretty = inventory.settings.output, inventory.settings.pretty_print
        self.now = timestamp()
        self.header: dict[str, Any] = {}
        self.extra_files: list[str] = []
        self.file_at = {path: index for index, path in enumerate(snapshot.digests)}
        self.class_table: list[tuple[str, str]] = []
        self.old_files: list[str] = []
        self.renumbered_files: list[int] | None = None  # old file index -> new ([]: the same)
        self.old_nodes: dict[str, Any] = {}
        self.uncached: dict[str, tuple[list[str], list[str]]] = {}  # classes, applications

    def render(self) -> tuple[list[Part], dict[str, Any]]:
        """The output, in parts, and the entries of the new cache file (texts and frame as
        (first, end) indexes of their parts, placed by write_cache_file)."""
        snapshot = self.snapshot
        names = sorted(snapshot.nodes)
        kept = self._kept()
        capture = WarningCapture(self.warn)
        generation = InventoryRenderer(self.inventory.settings, warn=capture.warn,
                                       storage=self.inventory.storage)
        rendered = render_nodes(generation, InputsRecorder(), snapshot,
                                [name for name in names if name not in kept], capture)
        merge, interpolation = _replay(names, kept, rendered, self.warn)
        texts: dict[str, list[Part]] = {}
        entries: dict[str, dict[str, Any] | None] = {}
        writer = BlockYamlWriter() if self.fmt == "yaml" and self.pretty else None
        for name in names:
            if name in kept:
                texts[name] = self.cached.spans(kept[name]["text"])  # type: ignore[union-attr]
                entries[name] = self._moved(kept[name])
            else:
                texts[name], entries[name] = self._rendered(rendered[name], writer)
        prefix, suffix = self._frame(names, kept, entries)
        output: list[Part] = list(prefix)
        frame = [[0, len(output)]]
        separator = FRAGMENT_FORMS[(self.fmt, self.pretty)][2].encode("utf-8")
        for index, name in enumerate(names):
            if index and separator:
                output.append(self._separator(output[-1], separator))
            start = len(output)
            output += texts[name]
            entry = entries[name]
            if entry is not None:
                entry["text"] = (start, len(output))
        frame.append([len(output), len(output) + len(suffix)])
        output += suffix
        nodes = {name: entry for name, entry in entries.items() if entry is not None}
        self.header = {"warnings": merge + interpolation, "complete": len(nodes) == len(names)}
        return output, {"classes": self._compact_classes(nodes), "nodes": nodes,
                        "frame": frame}

    def _separator(self, before: Part, separator: bytes) -> Part:
        """The separator after a text: the stored one when the text is stored and followed by
        it (so that stored texts next to each other stay one range), else new bytes."""
        cached = self.cached
        if type(before) is Span and cached is not None:
            view = cached.segments[before.segment].view
            end = before.end + len(separator)
            if view[before.end:end] == separator:
                return Span(before.segment, before.end, end)
        return separator

    def _kept(self) -> dict[str, dict[str, Any]]:
        """The stored entries of nodes whose inputs are unchanged."""
        cached, snapshot = self.cached, self.snapshot
        if cached is None:
            return {}
        try:
            entries = cached.entries()
            self.old_files = [item[0] for item in cached.header["files"]]
            digests = snapshot.digests
            changed_files = {
                index for index, (path, digest, _) in enumerate(cached.header["files"])
                if digests.get(path, b"") != (None if digest is None else bytes.fromhex(digest))}
            for pair in entries["classes"]:
                checked_strs(pair)
                if len(pair) != 2:
                    raise ValueError("a class entry is not a (class, file) pair")
            self.class_table = [tuple(pair) for pair in entries["classes"]]
            changed_classes = {index for index, (name, path) in enumerate(self.class_table)
                               if snapshot.classes.get(name) != path}
            nodes = entries["nodes"]
            if type(nodes) is not dict:
                raise TypeError("nodes is not a mapping")
            self.old_nodes = nodes
            check = NodeCheck(snapshot, changed_files, len(self.old_files), changed_classes,
                              len(self.class_table), cached)
            return {name: entry for name, entry in nodes.items()
                    if name in snapshot.nodes and check.current(name, entry)}
        except (KeyError, TypeError, ValueError, AttributeError) as err:  # MalformedCache too
            ignored(self.path, f"its content is malformed ({err})", self.warn)
            self.old_nodes, self.class_table = {}, []
            return {}

    def _moved(self, entry: dict[str, Any]) -> dict[str, Any]:
        """A kept entry with its file indexes into the new file table."""
        deps = dict(entry["deps"])
        if self.renumbered_files is None:
            file_at = self.file_at
            self.renumbered_files = ([] if list(file_at) == self.old_files
                                     else [file_at.get(path, -1) for path in self.old_files])
        if self.renumbered_files:
            renumbered = self.renumbered_files
            deps["files"] = [renumbered[index] for index in deps["files"]]
        return dict(entry, deps=deps)

    def _rendered(self, result: NodeResult, writer: BlockYamlWriter | None
                  ) -> tuple[list[Part], dict[str, Any] | None]:
        """A rendered node's text, and its entry (None when it is not cached: its timestamp
        cannot be found in its text, which only a node named like a date could cause)."""
        info = result.value
        if writer is not None:
            text = writer.node_text(result.name, info)
        else:
            text = node_fragment(result.name, info, self.fmt, self.pretty)
        stamp = info["__reclass__"]["timestamp"]
        at = text.find(stamp, text.find(_TIMESTAMP_KEY))
        if at < 0 or text.find(_TIMESTAMP_KEY) < 0:
            self.uncached[result.name] = (list(info["classes"]), list(info["applications"]))
            return [text.encode("utf-8")], None
        pieces: list[Part] = [text[:at].encode("utf-8"), None,
                               text[at + len(stamp):].encode("utf-8")]
        return pieces, {"classes": list(info["classes"]),
                        "applications": list(info["applications"]),
                        "merge_warnings": list(result.merge_warnings),
                        "interpolation_warnings": list(result.interpolation_warnings),
                        "deps": self._deps(result.deps)}

    def _deps(self, deps: NodeDeps) -> dict[str, Any]:
        files = []
        for path, _ in deps.files:
            index = self.file_at.get(path)
            if index is None:  # read, but not listed: stored without a digest (never current)
                index = self.file_at[path] = len(self.file_at)
                self.extra_files.append(path)
            files.append(index)
        table = self.class_table
        classes = []
        for pair in deps.classes:
            table.append(pair)  # duplicates are merged by _compact_classes
            classes.append(len(table) - 1)
        return {"node_file": deps.node_file, "files": files, "classes": classes,
                "missing": list(deps.missing), "class_names_key": _hex(deps.class_names_key),
                "nodes_key": _hex(deps.nodes_key)}

    def _compact_classes(self, nodes: dict[str, dict[str, Any]]) -> list[list[str]]:
        """The class table with only the pairs some entry uses, each once; entries renumbered."""
        table = self.class_table
        new_at: dict[tuple[str, str], int] = {}
        renumber = {}
        for entry in nodes.values():
            for index in entry["deps"]["classes"]:
                if index not in renumber:
                    renumber[index] = new_at.setdefault(table[index], len(new_at))
        for entry in nodes.values():
            deps = entry["deps"] = dict(entry["deps"])
            deps["classes"] = [renumber[index] for index in deps["classes"]]
        return [list(pair) for pair in new_at]

    def _frame(self, names: list[str], kept: dict[str, Any],
               entries: dict[str, dict[str, Any] | None]) -> tuple[list[Part], list[Part]]:
        """The output before the first node's text and after the last one: the stored one when
        the same nodes have the same classes and applications, else dumped again."""
        cached, old = self.cached, self.old_nodes
        if cached is not None and list(old) == names and all(
                name in kept or (entry is not None
                                 and (entry["classes"], entry["applications"])
                                 == (old[name]["classes"], old[name]["applications"]))
                for name, entry in entries.items()):
            try:
                prefix, suffix = cached.entries()["frame"]
                return ([] if prefix is None else cached.spans(cached.check_span(prefix)),
                        [] if suffix is None else cached.spans(cached.check_span(suffix)))
            except (KeyError, TypeError, ValueError):  # MalformedCache too
                pass  # dumped again
        nodes = []
        for name in names:
            entry = entries[name]
            if entry is None:
                nodes.append((name, *self.uncached[name]))
            else:
                nodes.append((name, entry["classes"], entry["applications"]))
        before, after = inventory_frame(nodes, self.fmt, self.pretty, self.now)
        at = before.find(self.now, before.find(_TIMESTAMP_KEY))
        return ([before[:at].encode("utf-8"), None, before[at + len(self.now):].encode("utf-8")],
                [after.encode("utf-8")] if after else [])


class NodeCheck:
    """Whether a stored entry's inputs are unchanged: NodeDeps.current on the tables' indexes
    (a file or class pair changed once is a set member; a node is one set test per table)."""

    def __init__(self, snapshot: InventorySnapshot, changed_files: set[int], files: int,
                 changed_classes: set[int], classes: int, cached: CacheFile) -> None:
        self.snapshot = snapshot
        self.changed_files, self.files = changed_files, files
        self.changed_classes, self.classes = changed_classes, classes
        self.cached = cached

    def current(self, name: str, entry: dict[str, Any]) -> bool:
        """True when the entry may be kept; TypeError/ValueError when it is malformed."""
        deps = entry["deps"]
        files, classes, missing = deps["files"], deps["classes"], checked_strs(deps["missing"])
        checked_indexes(files, self.files)
        checked_indexes(classes, self.classes)
        for field in ("classes", "applications", "merge_warnings", "interpolation_warnings"):
            checked_strs(entry[field])
        entry["text"] = self.cached.check_span(entry["text"])
        snapshot = self.snapshot
        if snapshot.nodes.get(name) != deps["node_file"]:
            return False
        if not (self.changed_files.isdisjoint(files)
                and self.changed_classes.isdisjoint(classes)):
            return False
        if missing and (_bytes(deps["class_names_key"]) != snapshot.class_names_key
                        or any(item in snapshot.classes for item in missing)):
            return False
        nodes_key = deps["nodes_key"]
        return nodes_key is None or _bytes(nodes_key) == snapshot.nodes_key


def _hex(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


def _replay(names: list[str], kept: dict[str, dict[str, Any]],
            rendered: dict[str, NodeResult], warn: Callable[[str], None]
            ) -> tuple[list[str], list[str]]:
    """Print the warnings in serial order: every merge, then every interpolation; raise the
    first error. The merge and the interpolation warnings printed."""
    merge: list[str] = []
    for name in names:
        messages = kept[name]["merge_warnings"] if name in kept else rendered[name].merge_warnings
        for message in messages:
            warn(message)
        merge += messages
        if name in rendered and rendered[name].phase == MERGE_FAILED:
            raise rendered[name].value.with_traceback(None)
    interpolation: list[str] = []
    for name in names:
        messages = (kept[name]["interpolation_warnings"] if name in kept
                    else rendered[name].interpolation_warnings)
        for message in messages:
            warn(message)
        interpolation += messages
        if name in rendered and rendered[name].phase == INTERPOLATION_FAILED:
            raise rendered[name].value.with_traceback(None)
    return merge, interpolation
