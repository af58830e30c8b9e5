"""The file of the on-disk cache (disk_cache.py): its layout, reading it and writing it.

A cache file is three parts:

1. a header, one line of JSON: the key (version, settings, output form), the moment the run
   that wrote it started taking file stamps, the listing (node name -> file, class name ->
   file), the table of every listed file with its digest and stamp (file_stamps.py), the
   warnings of the whole run in the order a fresh run prints them, whether every node is in
   the file, the sizes of the next two parts, the offsets of the timestamps in the output and
   a CRC-32 of the rest of the file;
2. the entries, one line of JSON, decoded only when something changed: a table of (class,
   file) pairs and per node its classes, applications, warnings, the inputs it read (indexes
   into the two tables) and where its text lies in the output;
3. the output the run printed, without its timestamps.

An unchanged inventory prints part 3 with the current time in the timestamps' places; a
changed one prints the kept nodes' texts from it, as bytes. The file is mapped into memory
(mmap), not read. It is written to a temporary file in the same directory and renamed over the
old one (readers see an old or a new file, never a part of one; a mapping keeps the file it
mapped). Anything wrong (unreadable, another key, sizes, CRC, a value of the wrong type or out
of range) makes the file ignored with a warning.
"""

from __future__ import annotations

import bisect
import contextlib
import mmap
import os
import zlib
from collections.abc import Callable, Iterable
from typing import Any, Union

import orjson

Piece = Union[bytes, memoryview, None]  # noqa: UP007 (a runtime alias on 3.10)  # None: the timestamp's place


class MalformedCache(ValueError):
    """A cache file whose content does not hold together."""


class CacheFile:
    """A cache file mapped into memory: its header, its entries (decoded on first use) and its
    output as pieces."""

    def __init__(self, header: dict[str, Any], body: memoryview, closer: Any) -> None:
        self.header = header
        self.body = body
        self._closer = closer
        self._entries: dict[str, Any] | None = None
        entries_size = _int(header["entries_size"], len(body) + 1)
        self.output = body[entries_size + 1:]
        self.slots = _offsets(header["slots"], len(self.output))

    @classmethod
    def open(cls, path: str, key: str) -> CacheFile | None:
        """The file at `path` if it exists; MalformedCache (or OSError) when it is unusable."""
        try:
            stream = open(path, "rb")
        except FileNotFoundError:
            return None
        with stream:
            size = os.fstat(stream.fileno()).st_size
            mapped: Any = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        view = memoryview(mapped)
        try:
            line_end = mapped.find(b"\n")
            if line_end < 0:
                raise MalformedCache("no header line")
            try:
                header = orjson.loads(view[:line_end])
            except orjson.JSONDecodeError as err:
                raise MalformedCache(f"the header is not JSON ({err})") from None
            if not isinstance(header, dict) or header.get("key") != key:
                raise MalformedCache("it was written by another version of reclass-ng, for "
                                     "other settings or is not a reclass-ng cache")
            body = view[line_end + 1:]
            if len(body) != (_int(header.get("entries_size"), len(body))
                             + 1 + _int(header.get("output_size"), len(body))):
                raise MalformedCache("its size is not the size its header gives")
            if zlib.crc32(body) != header.get("crc"):
                raise MalformedCache("its content does not match its checksum")
            return cls(header, body, mapped)
        except (KeyError, TypeError, ValueError) as err:
            if isinstance(mapped, mmap.mmap):
                with contextlib.suppress(BufferError):  # a view of it is still alive: the
                    mapped.close()                      # mapping goes when the last one does
            if isinstance(err, MalformedCache):
                raise
            raise MalformedCache(f"its content is malformed ({err})") from None

    def entries(self) -> dict[str, Any]:
        """The entries part, decoded."""
        if self._entries is None:
            try:
                entries = orjson.loads(self.body[:_int(self.header["entries_size"],
                                                       len(self.body))])
            except orjson.JSONDecodeError as err:
                raise MalformedCache(f"its entries are not JSON ({err})") from None
            if not isinstance(entries, dict):
                raise MalformedCache("its entries are not a mapping")
            self._entries = entries
        return self._entries

    def pieces(self, start: int, end: int) -> list[Piece]:
        """The output between byte offsets `start` and `end`, timestamps as None."""
        pieces: list[Piece] = []
        slots = self.slots
        for at in range(bisect.bisect_left(slots, start), bisect.bisect_right(slots, end)):
            pieces += (self.output[start:slots[at]], None)
            start = slots[at]
        pieces.append(self.output[start:end])
        return pieces

    def close(self) -> None:
        """Release the mapping (after the last piece was used)."""
        self.output.release()
        self.body.release()
        if isinstance(self._closer, mmap.mmap):
            with contextlib.suppress(BufferError):
                self._closer.close()


def write_cache_file(path: str, header: dict[str, Any], entries: dict[str, Any] | bytes,
                     output: Iterable[Piece], warn: Callable[[str], None]) -> None:
    """Write a cache file atomically (header completed with sizes, slots and CRC); a failure to
    write is a warning."""
    entries_bytes = entries if isinstance(entries, bytes) else orjson.dumps(entries)
    chunks: list[bytes | memoryview] = []
    slots = []
    size = 0
    crc = zlib.crc32(entries_bytes + b"\n")
    for piece in output:
        if piece is None:
            slots.append(size)
            continue
        chunks.append(piece)
        size += len(piece)
        crc = zlib.crc32(piece, crc)
    header = dict(header, entries_size=len(entries_bytes), output_size=size, slots=slots,
                  crc=crc)
    import tempfile  # only runs that write import it (an unchanged one does not)

    directory = os.path.dirname(path)
    temporary = None
    try:
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".inventory-", suffix=".tmp", dir=directory)
        with os.fdopen(handle, "wb") as stream:
            stream.write(orjson.dumps(header) + b"\n")
            stream.write(entries_bytes + b"\n")
            stream.writelines(chunks)
        os.replace(temporary, path)
        temporary = None
    except OSError as err:
        warn(f"[WARNING] reclass-ng: cannot write the cache file {path}: {err}")
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def ignored(path: str, why: str, warn: Callable[[str], None]) -> None:
    """Say that the cache file at `path` is not used, and why."""
    warn(f"[WARNING] reclass-ng: ignoring the cache file {path}: {why}")


_STR_ONLY = frozenset({str})
_INT_ONLY = frozenset({int})


def checked_strs(value: Any) -> list[str]:
    """`value` when it is a list of strings; TypeError otherwise."""
    if type(value) is not list or not _STR_ONLY.issuperset(map(type, value)):
        raise TypeError("expected a list of strings")
    return value


def checked_indexes(values: Any, size: int) -> list[int]:
    """`values` when it is a list of indexes into a table of `size` items; TypeError or
    ValueError otherwise."""
    if type(values) is not list or not _INT_ONLY.issuperset(map(type, values)):
        raise TypeError("expected a list of indexes")
    if values and (min(values) < 0 or max(values) >= size):
        raise ValueError("an index out of range")
    return values


def _int(value: Any, limit: int) -> int:
    if type(value) is not int or not 0 <= value <= limit:
        raise MalformedCache(f"{value!r} is not an offset in the file")
    return value


def _offsets(values: Any, limit: int) -> list[int]:
    if type(values) is not list:
        raise MalformedCache("the timestamps' offsets are not a list")
    offsets = [_int(value, limit) for value in values]
    if offsets != sorted(offsets):
        raise MalformedCache("the timestamps' offsets are out of order")
    return offsets
