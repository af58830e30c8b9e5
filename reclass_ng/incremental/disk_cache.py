"""The on-disk cache of `reclass --inventory --cache-dir DIR` (setting `cache_dir`).

One cache per inventory, settings, output form and reclass-ng version (cache_file.py gives its
layout: an index and segments of output): the output of the last run, where each node's text
lies in it, each node's classes, applications, warnings and the inputs it read, and a digest
and stamp of every file listed.

A run lists the directories and takes every file's digest, from the stored one where the
file's stamp proves its content unchanged (file_stamps.py: git's racy rule), hashing it
otherwise. Nothing changed (the same listing, every digest the same, every node cached): it
prints the stored output with the current time in its timestamps, without decoding anything
else. Otherwise (cached_run.py) it keeps the stored text of each node whose inputs are
unchanged (as bytes of the mapped segments), renders the others, prints the assembled output
and writes the rendered texts into a new segment and a new index.

Nodes that failed are never cached. Only block YAML and JSON are cached (flow YAML is dumped as
one piece).
"""

from __future__ import annotations

import codecs
import hashlib
import os
from collections.abc import Callable, Iterable
from typing import Any, TextIO, cast

from reclass_ng.incremental.cache_file import (
    CacheFile,
    MalformedCache,
    Piece,
    checked_strs,
    ignored,
    write_cache_file,
)
from reclass_ng.incremental.file_stamps import Stamp, StampedDigests
from reclass_ng.incremental.snapshot import Digest, InventorySnapshot, yaml_fs
from reclass_ng.render import InventoryRenderer, timestamp
from reclass_ng.settings import Settings
from reclass_ng.version import __version__

CACHE_FORMAT = 5  # 5: the index's checksum covers its header too


def cache_key(settings: Settings, fmt: str, pretty: bool) -> str:
    """What a cache file is valid for: version, settings (but the cache directory), output."""
    relevant = {name: value for name, value in settings.as_mapping().items()
                if name != "cache_dir"}
    relevant["inventory_base_uri"] = os.path.abspath(settings.inventory_base_uri or os.getcwd())
    return repr((CACHE_FORMAT, __version__, sorted(relevant.items()), fmt, pretty))


def cache_path(cache_dir: str, key: str) -> str:
    name = hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()
    return os.path.join(os.path.expanduser(cache_dir), f"inventory-{name}.cache")


# The forms whose per-node text does not depend on other nodes (output.fragments'
# FRAGMENT_FORMS; not imported from there, which would import the process pool's modules).
CACHED_FORMS = frozenset({("json", True), ("json", False), ("yaml", True)})


def supports(fmt: str, pretty: bool) -> bool:
    """Whether the output form is cached (its per-node text does not depend on other nodes)."""
    return (fmt, pretty) in CACHED_FORMS


def write_inventory(inventory: InventoryRenderer, cache_dir: str,
                    warn: Callable[[str], None], stream: TextIO) -> None:
    """Write the dumped `--inventory` of `inventory` to `stream`, using and updating the cache.

    The same text a serial render dumps (timestamps aside), the same warnings in the same
    order, and the same first error (raised).
    """
    settings = inventory.settings
    key = cache_key(settings, settings.output, settings.pretty_print)
    path = cache_path(cache_dir, key)
    cached = _open(path, key, warn)
    try:
        known, taken_at = _known_files(cached, path, warn) if cached is not None else ({}, 0)
        if not known and cached is not None:
            cached.close()
            cached = None
        digests = StampedDigests(known, taken_at)
        snapshot = InventorySnapshot(settings, yaml_fs(inventory.storage), digest=digests.digest)
        if cached is not None and _unchanged(cached.header, known, snapshot):
            for message in cached.header["warnings"]:
                warn(message)
            parts = cached.output_parts()
            _write(stream, cached.pieces(parts), timestamp())
            if digests.worth_storing():
                write_cache_file(path, _header(key, digests, snapshot, cached.header, ()),
                                 cached.entries_line, cached.listing_line, parts, cached, warn)
            return
        from reclass_ng.incremental.cached_run import CachedRun  # the render's modules

        run = CachedRun(inventory, snapshot, cached, path, warn)
        parts, entries, listing = run.render()
        _write(stream, cached.pieces(parts) if cached is not None
               else cast("list[Piece]", parts), run.now)  # no span without a cache read
        write_cache_file(path, _header(key, digests, snapshot, run.header, run.extra_files),
                         entries, listing, parts, cached, warn)
    finally:
        _closed(cached)


def _open(path: str, key: str, warn: Callable[[str], None]) -> CacheFile | None:
    try:
        return CacheFile.open(path, key)
    except (OSError, MalformedCache) as err:
        ignored(path, str(err) if isinstance(err, MalformedCache) else f"cannot be read ({err})",
                 warn)
        return None


def _closed(cached: CacheFile | None) -> None:
    if cached is not None:
        cached.close()


def _known_files(cached: CacheFile, path: str, warn: Callable[[str], None]
                 ) -> tuple[dict[str, tuple[Digest | None, Stamp | None]], int]:
    """The stored digest and stamp of every file, and when the stamps were taken; nothing
    (with a warning) when the header does not hold them."""
    header = cached.header
    try:
        known = {}
        for name, digest, stamp in header["files"]:
            if type(name) is not str or (stamp is not None and (
                    type(stamp) is not list or len(stamp) != 5
                    or any(type(value) is not int for value in stamp))):
                raise TypeError(f"bad file entry {name!r}")
            known[name] = (None if digest is None else bytes.fromhex(digest),
                           None if stamp is None else tuple(stamp))
        taken_at = header["taken_at"]
        if type(taken_at) is not int:
            raise TypeError("taken_at is not an integer")
        for field in ("nodes", "classes"):
            if type(header[field]) is not dict:
                raise TypeError(f"{field} is not a mapping")
        checked_strs(header["warnings"])
        return known, taken_at
    except (KeyError, TypeError, ValueError) as err:
        ignored(path, f"its content is malformed ({err})", warn)
        return {}, 0


def _unchanged(header: dict[str, Any], known: dict[str, tuple[Digest | None, Stamp | None]],
               snapshot: InventorySnapshot) -> bool:
    """True when the stored output is that of this snapshot: every node cached, the same
    listing and every file's digest the same."""
    if header.get("complete") is not True or len(known) != len(snapshot.digests):
        return False
    if header["nodes"] != snapshot.nodes or header["classes"] != snapshot.classes:
        return False
    digests = snapshot.digests
    return all(digests.get(path, b"") == entry[0] for path, entry in known.items())


def _header(key: str, digests: StampedDigests, snapshot: InventorySnapshot,
            extra: dict[str, Any], extra_files: Iterable[str]) -> dict[str, Any]:
    """A cache file's header: the file table in the snapshot's order then `extra_files` (files
    nodes read that the listing does not hold; node entries index the table), the listing,
    and from `extra` the warnings and whether every node is cached."""
    entries = digests.entries
    files = [[path, None if digest is None else digest.hex(),
              entries.get(path, (None, None))[1]] for path, digest in snapshot.digests.items()]
    files += [[path, None, None] for path in extra_files]
    return {"key": key, "taken_at": digests.taken_at, "files": files,
            "nodes": snapshot.nodes, "classes": snapshot.classes,
            "warnings": extra["warnings"], "complete": extra["complete"]}


def _write(stream: TextIO, pieces: Iterable[Piece], now: str) -> None:
    """Write the output pieces, `now` in the timestamps' places (bytes straight to the
    stream's buffer when it writes UTF-8)."""
    buffer = getattr(stream, "buffer", None)
    encoding = getattr(stream, "encoding", None) or ""
    try:
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        utf8 = False
    if buffer is not None and utf8:
        stream.flush()
        stamp = now.encode("utf-8")
        buffer.writelines(stamp if piece is None else piece for piece in pieces)
        return
    for piece in pieces:
        stream.write(now if piece is None else str(piece, "utf-8"))
