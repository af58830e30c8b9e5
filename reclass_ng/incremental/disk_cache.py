"""The on-disk cache of `reclass --inventory --cache-dir DIR` (setting `cache_dir`).

One file per inventory, settings, output form and reclass-ng version: every node's dumped text
(the fragment a parallel render assembles too, reclass_ng.parallel.fragments), its classes and
applications, its warnings and the inputs it read (NodeDeps, with file digests). The file is
one line of JSON (the key, a table of the files and classes nodes read, each node's entry with
indexes into the tables and the byte offsets of its text) followed by the nodes' texts as they
are: 2,000 nodes read 120,000 (file, digest) pairs of 3,500 files, and their texts are about
the size of the output, which JSON would have to escape and unescape. A run lists
the directories, takes a digest of every file, keeps the cached text of each node whose inputs
are unchanged and renders the others; then it writes the cache again.

Safety: the file is written to a temporary file in the same directory and renamed over the old
one, so a reader sees an old or a new cache, never a partial one, and concurrent runs only
race for which complete file stays. A file that cannot be read, is not valid JSON, was written
by another version or for other settings is ignored with a warning (the run renders
everything). Nodes that failed are never cached. Only block YAML and JSON are cached (flow
YAML is dumped as one piece).
"""

from __future__ import annotations

import contextlib
import hashlib
import operator
import os
import tempfile
from collections.abc import Callable
from typing import Any

import orjson

from reclass_ng.incremental.node_results import (
    INTERPOLATION_FAILED,
    MERGE_FAILED,
    NodeDeps,
    NodeResult,
    WarningCapture,
    render_nodes,
)
from reclass_ng.incremental.snapshot import InventorySnapshot, yaml_fs
from reclass_ng.inputs import InputsRecorder
from reclass_ng.output_yaml import BlockYamlWriter
from reclass_ng.parallel.fragments import FRAGMENT_FORMS, assemble_inventory, node_fragment
from reclass_ng.render import InventoryRenderer, timestamp
from reclass_ng.settings import Settings
from reclass_ng.version import __version__

CACHE_FORMAT = 2
_TIMESTAMP_KEY = "timestamp"


class CachedNode:
    """A node's dumped text around its timestamp, and what the inventory indexes need."""

    __slots__ = ("before", "after", "classes", "applications", "merge_warnings",
                 "interpolation_warnings", "deps")

    def __init__(self, before: str, after: str, classes: list[str], applications: list[str],
                 merge_warnings: list[str], interpolation_warnings: list[str],
                 deps: NodeDeps) -> None:
        self.before, self.after = before, after
        self.classes, self.applications = classes, applications
        self.merge_warnings, self.interpolation_warnings = merge_warnings, interpolation_warnings
        self.deps = deps

    def text(self, now: str) -> str:
        return self.before + now + self.after

    def to_json(self, tables: CacheTables, texts: list[bytes], offset: int) -> dict[str, Any]:
        """The node's header entry, its text appended to `texts` (at byte `offset`)."""
        before, after = self.before.encode("utf-8"), self.after.encode("utf-8")
        texts += (before, after)
        deps = self.deps
        return {"text": [offset, offset + len(before), offset + len(before) + len(after)],
                "classes": self.classes, "applications": self.applications,
                "merge_warnings": self.merge_warnings,
                "interpolation_warnings": self.interpolation_warnings,
                "deps": {"node_file": deps.node_file,
                         "files": [tables.file_index(item) for item in deps.files],
                         "classes": [tables.class_index(item) for item in deps.classes],
                         "missing": list(deps.missing),
                         "class_names_key": _hex(deps.class_names_key),
                         "nodes_key": _hex(deps.nodes_key)}}

    @classmethod
    def from_json(cls, data: dict[str, Any], tables: CacheTables, texts: bytes) -> CachedNode:
        deps = data["deps"]
        node_deps = NodeDeps(
            _str_or_none(deps["node_file"]),
            _items(tables.files, deps["files"]),
            _items(tables.classes, deps["classes"]),
            tuple(_str(name) for name in deps["missing"]),
            _bytes(deps["class_names_key"]), _bytes(deps["nodes_key"]))
        start, cut, end = (_index(at, len(texts) + 1) for at in data["text"])
        if not start <= cut <= end:
            raise ValueError(f"text offsets out of order: {data['text']!r}")
        return cls(texts[start:cut].decode("utf-8"), texts[cut:end].decode("utf-8"),
                   _strs(data["classes"]), _strs(data["applications"]),
                   _strs(data["merge_warnings"]), _strs(data["interpolation_warnings"]),
                   node_deps)


class CacheTables:
    """The (file, digest) and (class, file) pairs nodes read, each stored once."""

    def __init__(self, files: list[tuple[str, bytes | None]] | None = None,
                 classes: list[tuple[str, str]] | None = None) -> None:
        self.files = files or []
        self.classes = classes or []
        self._file_at = {item: index for index, item in enumerate(self.files)}
        self._class_at = {item: index for index, item in enumerate(self.classes)}

    def file_index(self, item: tuple[str, bytes | None]) -> int:
        index = self._file_at.get(item)
        if index is None:
            index = self._file_at[item] = len(self.files)
            self.files.append(item)
        return index

    def class_index(self, item: tuple[str, str]) -> int:
        index = self._class_at.get(item)
        if index is None:
            index = self._class_at[item] = len(self.classes)
            self.classes.append(item)
        return index

    def to_json(self) -> dict[str, Any]:
        return {"files": [[path, _hex(digest)] for path, digest in self.files],
                "classes": [list(item) for item in self.classes]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CacheTables:
        return cls([(_str(path), _bytes(digest)) for path, digest in data["files"]],
                   [(_str(name), _str(path)) for name, path in data["classes"]])


def _items(table: list[Any], indexes: Any) -> tuple[Any, ...]:
    """The entries of `table` at `indexes` (a list of ints, each checked to be in range)."""
    if type(indexes) is not list:
        raise TypeError(f"expected a list of indexes, found {type(indexes).__name__}")
    if not indexes:
        return ()
    if min(indexes) < 0 or max(indexes) >= len(table):
        raise ValueError("an index out of range")
    if len(indexes) == 1:
        return (table[indexes[0]],)
    return operator.itemgetter(*indexes)(table)


def _index(value: Any, size: int) -> int:
    if type(value) is not int or not 0 <= value < size:
        raise ValueError(f"index {value!r} out of range")
    return value


def _hex(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


def _str(value: Any) -> str:
    if type(value) is not str:
        raise TypeError(f"expected a string, found {type(value).__name__}")
    return value


def _str_or_none(value: Any) -> str | None:
    return None if value is None else _str(value)


def _strs(value: Any) -> list[str]:
    if type(value) is not list:
        raise TypeError(f"expected a list, found {type(value).__name__}")
    return [_str(item) for item in value]


def cache_key(settings: Settings, fmt: str, pretty: bool) -> str:
    """What a cache file is valid for: version, settings (but the cache directory), output."""
    relevant = {name: value for name, value in settings.as_mapping().items()
                if name != "cache_dir"}
    relevant["inventory_base_uri"] = os.path.abspath(settings.inventory_base_uri or os.getcwd())
    return repr((CACHE_FORMAT, __version__, sorted(relevant.items()), fmt, pretty))


def cache_path(cache_dir: str, key: str) -> str:
    name = hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()
    return os.path.join(os.path.expanduser(cache_dir), f"inventory-{name}.cache")


def supports(fmt: str, pretty: bool) -> bool:
    """Whether the output form is cached (its per-node text does not depend on other nodes)."""
    return (fmt, pretty) in FRAGMENT_FORMS


class InventoryCache:
    """The cache file of one inventory, settings and output form."""

    def __init__(self, cache_dir: str, settings: Settings, fmt: str, pretty: bool,
                 warn: Callable[[str], None]) -> None:
        self.key = cache_key(settings, fmt, pretty)
        self.path = cache_path(cache_dir, self.key)
        self.fmt, self.pretty = fmt, pretty
        self.warn = warn

    def load(self) -> dict[str, CachedNode]:
        """The cached nodes; empty (with a warning) when the file is unusable."""
        try:
            with open(self.path, "rb") as stream:
                content = stream.read()
            line_end = content.find(b"\n")
            header, texts = (content, b"") if line_end < 0 else (
                content[:line_end], content[line_end + 1:])
            data = orjson.loads(header)
        except FileNotFoundError:
            return {}
        except (OSError, orjson.JSONDecodeError) as err:
            self._ignored(f"cannot be read ({err})")
            return {}
        if not isinstance(data, dict) or data.get("key") != self.key:
            self._ignored("it was written by another version of reclass-ng, for other "
                          "settings or is not a reclass-ng cache")
            return {}
        try:
            tables = CacheTables.from_json(data["tables"])
            return {_str(name): CachedNode.from_json(entry, tables, texts)
                    for name, entry in data["nodes"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            self._ignored(f"its content is malformed ({err})")
            return {}

    def _ignored(self, why: str) -> None:
        self.warn(f"[WARNING] reclass-ng: ignoring the cache file {self.path}: {why}")

    def save(self, nodes: dict[str, CachedNode]) -> None:
        """Replace the cache file (atomically); a failure to write is a warning."""
        tables = CacheTables()
        texts: list[bytes] = []
        entries = {}
        offset = 0
        for name, node in nodes.items():
            entries[name] = node.to_json(tables, texts, offset)
            offset = entries[name]["text"][2]
        header = orjson.dumps({"key": self.key, "tables": tables.to_json(), "nodes": entries})
        directory = os.path.dirname(self.path)
        temporary = None
        try:
            os.makedirs(directory, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=".inventory-", suffix=".tmp",
                                                 dir=directory)
            with os.fdopen(handle, "wb") as stream:
                stream.write(header + b"\n")
                stream.writelines(texts)
            os.replace(temporary, self.path)
            temporary = None
        except OSError as err:
            self.warn(f"[WARNING] reclass-ng: cannot write the cache file {self.path}: {err}")
        finally:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)


def cached_node(result: NodeResult, fmt: str, pretty: bool,
                yaml_writer: BlockYamlWriter | None = None) -> tuple[str, CachedNode | None]:
    """A rendered node's text, and its cache entry (None when its timestamp cannot be found
    in the text, which only a node named like a date could cause). Block YAML is written by
    `yaml_writer`, shared by the nodes of a run (it asks PyYAML once per distinct value)."""
    info = result.value
    if yaml_writer is not None and fmt == "yaml" and pretty:
        text = yaml_writer.node_text(result.name, info)
    else:
        text = node_fragment(result.name, info, fmt, pretty)
    stamp = info["__reclass__"]["timestamp"]
    at = text.find(stamp, text.find(_TIMESTAMP_KEY))
    if at < 0 or text.find(_TIMESTAMP_KEY) < 0:
        return text, None
    return text, CachedNode(text[:at], text[at + len(stamp):], list(info["classes"]),
                            list(info["applications"]), list(result.merge_warnings),
                            list(result.interpolation_warnings), result.deps)


def render_inventory_pieces(inventory: InventoryRenderer, cache_dir: str,
                            warn: Callable[[str], None]) -> list[str]:
    """The dumped `--inventory` of `inventory`, in pieces, using and updating the cache.

    The same text a serial render dumps (timestamps aside), the same warnings in the same
    order, and the same first error (raised).
    """
    settings = inventory.settings
    fmt, pretty = settings.output, settings.pretty_print
    cache = InventoryCache(cache_dir, settings, fmt, pretty, warn)
    capture = WarningCapture(warn)
    recorder = InputsRecorder()
    generation = InventoryRenderer(settings, warn=capture.warn, storage=inventory.storage)
    snapshot = InventorySnapshot(settings, yaml_fs(generation.storage))
    names = sorted(snapshot.nodes)
    loaded = cache.load()
    cached = {name: node for name, node in loaded.items()
              if name in snapshot.nodes and node.deps.current(name, snapshot)}
    rendered = render_nodes(generation, recorder, snapshot,
                            [name for name in names if name not in cached], capture)
    _replay(names, cached, rendered, warn)
    now = timestamp()
    parts: list[tuple[str, list[str], list[str], str]] = []
    kept: dict[str, CachedNode] = {}
    yaml_writer = BlockYamlWriter() if fmt == "yaml" and pretty else None
    for name in names:
        entry = cached.get(name)
        if entry is not None:
            text = entry.text(now)
        else:
            text, entry = cached_node(rendered[name], fmt, pretty, yaml_writer)
        if entry is not None:
            kept[name] = entry
            parts.append((name, entry.classes, entry.applications, text))
        else:
            info = rendered[name].value
            parts.append((name, list(info["classes"]), list(info["applications"]), text))
    if rendered or len(kept) != len(loaded) or not os.path.exists(cache.path):
        cache.save(kept)
    return assemble_inventory(parts, fmt, pretty)


def _replay(names: list[str], cached: dict[str, CachedNode], rendered: dict[str, NodeResult],
            warn: Callable[[str], None]) -> None:
    """Warnings in serial order: every merge, then every interpolation; the first error."""
    for name in names:
        if name in cached:
            messages = cached[name].merge_warnings
        else:
            messages = list(rendered[name].merge_warnings)
        for message in messages:
            warn(message)
        if name in rendered and rendered[name].phase == MERGE_FAILED:
            raise rendered[name].value.with_traceback(None)
    for name in names:
        if name in cached:
            messages = cached[name].interpolation_warnings
        else:
            messages = list(rendered[name].interpolation_warnings)
        for message in messages:
            warn(message)
        if name in rendered and rendered[name].phase == INTERPOLATION_FAILED:
            raise rendered[name].value.with_traceback(None)
