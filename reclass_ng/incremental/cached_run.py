"""A `reclass --inventory --cache-dir` run whose inventory changed since the cache was written
(disk_cache.py): nodes whose inputs are unchanged keep their stored text, the others are
rendered, and the output and the next cache file's entries are assembled.

Imported only by such a run: an unchanged one prints the stored output without the render's
modules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import orjson

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
    render_results,
)
from reclass_ng.incremental.snapshot import InventorySnapshot
from reclass_ng.observe.inputs import InputsRecorder
from reclass_ng.output.block_yaml import BlockYamlWriter
from reclass_ng.output.fragments import FRAGMENT_FORMS, inventory_frame, node_fragment
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
        self.class_at: dict[tuple[str, str], int] = {}
        self.old_files: list[str] = []
        self.renumbered_files: list[int] | None = None  # old file index -> new ([]: the same)
        self.old_nodes: dict[str, Any] = {}
        self.listed: dict[str, tuple[list[str], list[str]]] = {}  # rendered: classes, apps
        self.writer = BlockYamlWriter() if self.fmt == "yaml" and self.pretty \
            and inventory.speed.block_yaml_writer else None

    def render(self) -> tuple[list[Part], dict[str, Any], dict[str, Any] | bytes]:
        """The output, in parts; the entries of the new cache file (texts and frame as
        (first, end) indexes of their parts, placed by write_cache_file); its listing (the
        stored one, as bytes, when it holds)."""
        names = sorted(self.snapshot.nodes)
        kept = self._kept()
        rendered = self._render([name for name in names if name not in kept])
        merge, interpolation = _replay(names, kept, rendered, self.warn)
        texts: dict[str, list[Part]] = {}
        entries: dict[str, dict[str, Any] | None] = {}
        for name in names:
            if name in kept:
                texts[name] = self.cached.spans(kept[name]["text"])  # type: ignore[union-attr]
                entries[name] = self._moved(kept[name])
            else:
                texts[name], entries[name] = self._rendered(rendered[name])
        old = self.old_nodes
        stored_frame = self._stored_frame() if self.cached is not None and list(old) == names and all(
            name in kept or (entry is not None and entry["listed"] == old[name]["listed"])
            for name, entry in entries.items()) else None
        listing: dict[str, Any] | bytes
        if stored_frame is not None:
            prefix, suffix = stored_frame
            listing = self.cached.listing_line  # type: ignore[union-attr]
        else:
            stored = self._stored_listing(kept)
            if stored is None:  # unusable: the kept nodes are rendered too (their warnings
                for name, result in self._render(list(kept)).items():  # were printed)
                    texts[name], entries[name] = self._rendered(result)
                stored = {}
            listing = {name: list(self.listed[name]) if name in self.listed else stored[name]
                       for name, entry in entries.items() if entry is not None}
            prefix, suffix = self._dumped_frame(names, stored)
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
        return output, {"classes": self._used_classes(nodes), "nodes": nodes,
                        "frame": frame}, listing

    def _render(self, names: list[str]) -> dict[str, NodeResult]:
        capture = WarningCapture(self.warn)
        generation = InventoryRenderer(self.inventory.settings, warn=capture.warn,
                                       storage=self.inventory.storage,
                                       speed=self.inventory.speed)
        return render_results(generation, InputsRecorder(), self.snapshot, names, capture)

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
            self.class_at = {pair: index for index, pair in enumerate(self.class_table)}
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
            self.old_nodes, self.class_table, self.class_at = {}, [], {}
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

    def _rendered(self, result: NodeResult) -> tuple[list[Part], dict[str, Any] | None]:
        """A rendered node's text, and its entry (None when it is not cached: its timestamp
        cannot be found in its text, which only a node named like a date could cause)."""
        info = result.value
        if self.writer is not None:
            text = self.writer.node_text(result.name, info)
        else:
            text = node_fragment(result.name, info, self.fmt, self.pretty)
        listed = self.listed[result.name] = (list(info["classes"]), list(info["applications"]))
        stamp = info["__reclass__"]["timestamp"]
        at = text.find(stamp, text.find(_TIMESTAMP_KEY))
        if at < 0 or text.find(_TIMESTAMP_KEY) < 0:
            return [text.encode("utf-8")], None
        pieces: list[Part] = [text[:at].encode("utf-8"), None,
                              text[at + len(stamp):].encode("utf-8")]
        return pieces, {"listed": listed_digest(*listed),
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
        table, class_at = self.class_table, self.class_at
        classes = []
        for pair in deps.classes:
            index = class_at.get(pair)
            if index is None:
                index = class_at[pair] = len(table)
                table.append(pair)
            classes.append(index)
        return {"node_file": deps.node_file, "files": files, "classes": classes,
                "missing": list(deps.missing), "class_names_key": _hex(deps.class_names_key),
                "nodes_key": _hex(deps.nodes_key)}

    def _used_classes(self, nodes: dict[str, dict[str, Any]]) -> list[list[str]]:
        """The class table; when a quarter of its pairs is used by no entry any more, only the
        pairs some entry uses, with the entries renumbered."""
        table = self.class_table
        used = set().union(*(entry["deps"]["classes"] for entry in nodes.values()))
        if 4 * len(used) >= 3 * len(table):
            return [list(pair) for pair in table]
        renumber = {index: at for at, index in enumerate(sorted(used))}
        for entry in nodes.values():
            deps = entry["deps"] = dict(entry["deps"])
            deps["classes"] = [renumber[index] for index in deps["classes"]]
        return [list(table[index]) for index in sorted(used)]

    def _stored_frame(self) -> tuple[list[Part], list[Part]] | None:
        """The stored output before the first node's text and after the last one."""
        cached = self.cached
        assert cached is not None
        try:
            prefix, suffix = cached.entries()["frame"]
            return ([] if prefix is None else cached.spans(cached.check_span(prefix)),
                    [] if suffix is None else cached.spans(cached.check_span(suffix)))
        except (KeyError, TypeError, ValueError):  # MalformedCache too: dumped again
            return None

    def _stored_listing(self, kept: dict[str, Any]) -> dict[str, list[list[str]]] | None:
        """The stored classes and applications of the kept nodes; None (with a warning) when
        the listing is malformed."""
        if not kept:
            return {}
        try:
            listing = self.cached.listing()  # type: ignore[union-attr]
            for name in kept:
                classes, applications = listing[name]
                checked_strs(classes)
                checked_strs(applications)
            return listing
        except (KeyError, TypeError, ValueError) as err:  # MalformedCache too
            ignored(self.path, f"its listing is malformed ({err})", self.warn)
            return None

    def _dumped_frame(self, names: list[str], stored: dict[str, list[list[str]]]
                      ) -> tuple[list[Part], list[Part]]:
        """The output before the first node's text and after the last one, dumped."""
        nodes = [(name, *(self.listed[name] if name in self.listed else stored[name]))
                 for name in names]
        before, after = inventory_frame(nodes, self.fmt, self.pretty, self.now)
        at = before.find(self.now, before.find(_TIMESTAMP_KEY))
        return ([before[:at].encode("utf-8"), None, before[at + len(self.now):].encode("utf-8")],
                [after.encode("utf-8")] if after else [])


def listed_digest(classes: list[str], applications: list[str]) -> str:
    """What the stored frame depends on of a node: its classes and applications."""
    return hashlib.blake2b(orjson.dumps([classes, applications]), digest_size=8).hexdigest()


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
        for field in ("merge_warnings", "interpolation_warnings"):
            checked_strs(entry[field])
        if type(entry["listed"]) is not str:
            raise TypeError("listed is not a string")
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
