"""The on-disk copy of a live inventory's node results (setting `cache_dir`), so that a
restarted long-lived process (a Salt master, the classifier service) starts warm.

A live inventory (live.py) whose settings set `cache_dir` writes, whenever every node of its
current generation has a result, one file per inventory and settings under that directory:
each node's nodeinfo as JSON with the inputs it was rendered from (NodeDeps: the node file,
every file read with its content digest, the classes, the classes not found, the query scope).
The first refresh of a new process takes, from that file, the result of every node whose
inputs have the digests the files have now (NodeDeps.current, the check a refresh applies
to the results it keeps); every other node is rendered.

Only what JSON gives back exactly is stored: results without errors or warnings whose
nodeinfo survives a JSON round trip unchanged (no dates, no keys that are not text, no
integers beyond 64 bits, no NaN or infinity, no tuples); other nodes are rendered after a
restart. A file that cannot be read, is malformed, or was written for another inventory,
other settings or another version of reclass-ng is ignored with a warning. Files are written
to a temporary name and renamed, so a reader never sees half a file.

Layout: a line naming the format, the CRC-32 of the rest of the file, one line of JSON (the key, a table of every file read with
its digest, and every node's entry: its span in the body and its inputs, files as indexes
into the table), then the body: the nodeinfo JSON of each node, one after the other.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from reclass_ng.collector import cycle_collection_paused
from reclass_ng.incremental.cache_file import MAX_CACHE_FILE_BYTES, ignored
from reclass_ng.incremental.node_results import OK, NodeDeps, NodeResult
from reclass_ng.incremental.snapshot import InventorySnapshot
from reclass_ng.settings import Settings
from reclass_ng.storage.regular_file import read_regular_file
from reclass_ng.version import __version__

STORE_FORMAT = 1
_MAGIC = b"reclass-ng live results\n"
_CRC_LINE = 9  # the CRC-32 of the rest of the file, 8 hex digits and a newline
# Dates and dataclass instances go to _refuse: JSON would turn them into text or mappings.
_JSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


def exact_json(value: Any, compare: bool = True) -> bytes | None:
    """`value` as JSON when `orjson.loads` of it equals `value` with the same types (dicts and
    their subclasses alike), else None.

    orjson keeps str, int, float and bool apart and refuses keys that are not text and dates;
    what it changes silently is NaN and infinities (to null) and tuples (to lists), which read
    back compare unequal. The comparison is made when `compare` is true; a caller may leave
    it out where neither can occur (see save_results)."""
    try:
        data = orjson.dumps(value, default=_refuse, option=_JSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    if compare and orjson.loads(data) != value:
        return None
    return data


def store_path(settings: Settings) -> str | None:
    """Where the results of this inventory and settings are kept; None without `cache_dir`."""
    if not settings.cache_dir:
        return None
    return os.path.join(os.path.expanduser(settings.cache_dir),
                        f"live-{hashlib.blake2b(store_key(settings).encode('utf-8', 'surrogateescape'), digest_size=12).hexdigest()}.cache")


def store_key(settings: Settings) -> str:
    """What a stored file is valid for: format, version, the settings but the cache directory."""
    relevant = {name: value for name, value in settings.as_mapping().items()
                if name != "cache_dir"}
    relevant["inventory_base_uri"] = os.path.abspath(
        os.path.expanduser(settings.inventory_base_uri or os.getcwd()))
    return repr((STORE_FORMAT, __version__, sorted(relevant.items())))


def load_results(settings: Settings, snapshot: InventorySnapshot,
                 warn: Callable[[str], None]) -> dict[str, NodeResult]:
    """The stored results still current for `snapshot` (nothing when there is no usable file)."""
    path = store_path(settings)
    if path is None:
        return {}
    try:
        content = read_regular_file(path, MAX_CACHE_FILE_BYTES)[0]
    except FileNotFoundError:
        return {}
    except OSError as err:
        ignored(path, f"cannot be read ({err})", warn)
        return {}
    try:
        with cycle_collection_paused(collect=False):  # many containers, no cycles
            return _current(content, store_key(settings), snapshot)
    except (KeyError, TypeError, ValueError, IndexError) as err:  # JSONDecodeError too
        ignored(path, f"its content is malformed ({err})", warn)
        return {}


def _current(content: bytes, key: str, snapshot: InventorySnapshot) -> dict[str, NodeResult]:
    header, body = _header_and_body(content, key)
    # Every file once: (path, digest) as NodeDeps holds it, and whether it changed since.
    files = [(_str(path), _digest(digest)) for path, digest in header["files"]]
    digests = snapshot.digests
    changed = {index for index, (path, digest) in enumerate(files)
               if digests.get(path, b"") != digest}
    entries = header["nodes"]
    if type(entries) is not dict:
        raise TypeError("nodes is not a mapping")
    results = {}
    for name, entry in entries.items():
        node_file, indexes, classes, missing, class_names_key, nodes_key = entry["deps"]
        if name not in snapshot.nodes or not changed.isdisjoint(indexes):
            continue
        if node_file is not None and type(node_file) is not str:
            raise TypeError("node_file is not a string")
        deps = NodeDeps(node_file, tuple(files[index] for index in _indexes(indexes, files)),
                        tuple((_str(name), _str(path)) for name, path in classes),
                        tuple(_str(name) for name in missing),
                        _digest(class_names_key), _digest(nodes_key))
        if deps.current(name, snapshot):
            results[name] = NodeResult(name, OK, _nodeinfo(name, entry["at"], body), (), (),
                                       deps)
    return results


def _header_and_body(content: bytes, key: str) -> tuple[dict[str, Any], memoryview]:
    """The header of a results file written for `key`, and the body after it."""
    if not content.startswith(_MAGIC):
        raise ValueError("not a reclass-ng live results file")
    checked = len(_MAGIC) + _CRC_LINE
    if content[len(_MAGIC):checked] != b"%08x\n" % zlib.crc32(memoryview(content)[checked:]):
        raise ValueError("its checksum does not match (a partial or changed file)")
    end = content.index(b"\n", checked)
    header = orjson.loads(content[checked:end])
    if type(header) is not dict or header.get("key") != key:
        raise ValueError("written for another inventory, other settings or another version")
    return header, memoryview(content)[end + 1:]


def _nodeinfo(name: str, span: Any, body: memoryview) -> dict[str, Any]:
    """The stored nodeinfo of node `name` at `span` (start, stop) of the body."""
    start, stop = span
    if type(start) is not int or type(stop) is not int or not 0 <= start <= stop <= len(body):
        raise ValueError(f"bad span of node {name}")
    value = orjson.loads(body[start:stop])
    if type(value) is not dict or value.get("__reclass__", {}).get("node") != name:
        raise ValueError(f"the stored nodeinfo of {name} is not that node's")
    return value


def _indexes(values: Any, table: list[Any]) -> Any:
    if type(values) is not list or not all(type(value) is int and 0 <= value < len(table)
                                           for value in values):
        raise ValueError("bad file indexes")
    return values


def _str(value: Any) -> str:
    if type(value) is not str:
        raise TypeError(f"expected a string, not {type(value).__name__}")
    return value


def _digest(value: Any) -> bytes | None:
    return None if value is None else bytes.fromhex(_str(value))


def _hex(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def save_results(settings: Settings, results: Mapping[str, NodeResult],
                 warn: Callable[[str], None], floats_exact: bool = False) -> None:
    """Write the storable results (see the module's docstring) for the next process; a file
    that cannot be written is reported and skipped. `floats_exact`: the files the results
    were rendered from hold no float that orjson and json print differently
    (storage.base.floats_json_exact), so a result's JSON is not read back to compare."""
    path = store_path(settings)
    if path is None:
        return
    # Tuples (YAML's !!omap and !!pairs), NaN and infinities come only from files PyYAML's own
    # constructor read, which makes its storage's floats inexact (storage.yaml_load.
    # YamlLoader); a node with inventory queries is compared anyway.
    entries: dict[str, Any] = {}
    file_at: dict[tuple[str, bytes | None], int] = {}
    body: list[bytes] = []
    at = 0
    for name, result in results.items():
        if result.phase != OK or result.merge_warnings or result.interpolation_warnings:
            continue
        deps = result.deps
        data = exact_json(result.value, not floats_exact or deps.nodes_key is not None)
        if data is None:
            continue
        files = [file_at.setdefault(item, len(file_at)) for item in deps.files]
        entries[name] = {"at": (at, at + len(data)), "deps": (
            deps.node_file, files, deps.classes, deps.missing, _hex(deps.class_names_key),
            _hex(deps.nodes_key))}
        body.append(data)
        at += len(data)
    header = orjson.dumps({"key": store_key(settings), "nodes": entries,
                           "files": [(file, _hex(digest)) for file, digest in file_at]})
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".live-", suffix=".tmp", dir=directory)
        try:
            crc = zlib.crc32(b"\n", zlib.crc32(header))
            for data in body:
                crc = zlib.crc32(data, crc)
            with os.fdopen(handle, "wb") as stream:
                stream.writelines([_MAGIC, b"%08x\n" % crc, header, b"\n", *body])
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as err:
        warn(f"[WARNING] reclass-ng: cannot write the cache file {path}: {err}")
