"""The files of the on-disk cache (disk_cache.py): their layout, reading and writing them.

A cache is an *index* file and one or more *segment* files beside it:

- the index (`inventory-<hash>.cache`) is a line naming the format, the CRC-32 of everything
  after it (8 hex digits: the whole record, the header included, so that no byte of it can
  change unnoticed), then three lines of JSON:

  1. the header: the key (version, settings, output form), the moment the run that wrote it
     started taking file stamps, the listing (node name -> file, class name -> file), the
     table of every listed file with its digest and stamp (file_stamps.py), the warnings of
     the whole run in the order a fresh run prints them, whether every node is in the cache,
     the segments (name, size, CRC-32, the offsets of the timestamps in it), the *layout* of
     the output (the ranges of segments it is made of, in order), the sizes of the other two
     lines;
  2. the entries, decoded only when something changed: a table of (class, file) pairs, where
     the output's frame lies (the text before the first node and after the last one) and per
     node its warnings, the inputs it read (indexes into the two tables), a digest of its
     classes and applications and where its text lies (segment, start, end);
  3. the listing, decoded only when a node's classes or applications changed (the frame is
     dumped again): each node's classes and applications;

- a segment (`inventory-<hash>-<token>.out`) holds output text without its timestamps, never
  changed once written. A run after a change writes only the texts it rendered into a new
  segment and refers to the texts it kept where they are, so that it writes and checksums a
  few megabytes, not the whole output again. A segment whose live texts fill less than half of
  it, or one segment too many (more than MAX_SEGMENTS), is compacted: its live texts are copied
  into the new segment and it is deleted.

An unchanged inventory prints the layout's ranges with the current time in the timestamps'
places; a changed one prints the kept nodes' texts from their segments, as bytes. Segments are
mapped into memory (mmap), not read.

Writes: a new segment is written under a fresh name, the index to a temporary file renamed over
the old one (readers see an old or a new index, never a part of one). Under an exclusive lock
(`inventory-<hash>.cache.lock`, where fcntl exists; opened without following a symbolic link,
never truncated) the writer checks that every segment its index
refers to still exists, renames the index, then deletes the segments of that hash no index
refers to any more; a run that finds a segment gone (a concurrent run compacted it) leaves the
other run's cache in place. A mapping keeps the file it mapped after it is deleted.

Anything wrong (unreadable, another key, sizes, a CRC, a segment missing, a value of the wrong
type or out of range) makes the cache ignored with a warning.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import mmap
import os
import re
import secrets
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple, Union

import attrs
import orjson

from reclass_ng.storage.regular_file import open_regular_file, read_regular_file

Piece = Union[bytes, memoryview, None]  # noqa: UP007 (a runtime alias on 3.10)  # None: the timestamp's place

MAX_SEGMENTS = 8
# The largest cache index or result store read (a segment is mapped, not read): far past any
# real inventory's, but a sparse or swapped-in file of a shared cache dir is not read whole.
MAX_CACHE_FILE_BYTES = 1 << 31
_MAGIC = b"reclass-ng render cache\n"
_CRC_LINE = 9  # the CRC-32 of the rest of the index, 8 hex digits and a newline
_OPEN_ATTEMPTS = 3  # a segment deleted between reading the index and opening it: read again


class Span(NamedTuple):
    """Bytes [start, end) of segment `segment` of a cache read (never across a timestamp)."""

    segment: int
    start: int
    end: int


Part = Union[bytes, memoryview, Span, None]  # noqa: UP007  # output to store: new bytes, stored bytes, a timestamp


class MalformedCache(ValueError):
    """A cache whose content does not hold together."""


class Segment:
    """One mapped segment file: its bytes and the offsets of its timestamps."""

    def __init__(self, name: str, view: memoryview, slots: list[int], mapping: Any) -> None:
        self.name, self.view, self.slots, self._mapping = name, view, slots, mapping

    def close(self) -> None:
        self.view.release()
        if isinstance(self._mapping, mmap.mmap):
            with contextlib.suppress(BufferError):  # a view of it is still alive: the
                self._mapping.close()               # mapping goes when the last one does


class CacheFile:
    """A cache's index and its mapped segments: the header, the entries (decoded on first use)
    and the output as spans and pieces."""

    def __init__(self, header: dict[str, Any], entries_line: bytes, listing_line: bytes,
                 segments: list[Segment]) -> None:
        self.header = header
        self.entries_line, self.listing_line = entries_line, listing_line
        self.segments = segments
        self._entries: dict[str, Any] | None = None
        self.layout = [Span(*item) for item in header["layout"]]
        for span in self.layout:
            self.check_span(span)

    @classmethod
    def open(cls, path: str, key: str) -> CacheFile | None:
        """The cache whose index is at `path` if it exists; MalformedCache (or OSError) when it
        is unusable."""
        for attempt in range(_OPEN_ATTEMPTS):
            try:
                content = read_regular_file(path, MAX_CACHE_FILE_BYTES)[0]
            except FileNotFoundError:
                return None
            header, entries_line, listing_line = _index(content, key)
            try:
                segments = _open_segments(path, header)
            except FileNotFoundError:
                if attempt == _OPEN_ATTEMPTS - 1:
                    raise
                continue
            try:
                return cls(header, entries_line, listing_line, segments)
            except (TypeError, ValueError) as err:
                for segment in segments:
                    segment.close()
                if isinstance(err, MalformedCache):
                    raise
                raise MalformedCache(f"its layout is malformed ({err})") from None
        raise AssertionError("unreachable")

    def check_span(self, span: Any) -> Span:
        """`span` as a Span when it lies in a segment; MalformedCache otherwise."""
        if type(span) not in (list, Span) or len(span) != 3 or any(
                type(value) is not int for value in span):
            raise MalformedCache(f"{span!r} is not a (segment, start, end) range")
        segment, start, end = span
        if not (0 <= segment < len(self.segments)
                and 0 <= start <= end <= len(self.segments[segment].view)):
            raise MalformedCache(f"the range {list(span)!r} is out of its segment")
        return Span(segment, start, end)

    def entries(self) -> dict[str, Any]:
        """The entries line, decoded."""
        if self._entries is None:
            self._entries = _mapping(self.entries_line, "entries")
        return self._entries

    def listing(self) -> dict[str, Any]:
        """The listing line, decoded (not kept: decoded once per run at most)."""
        return _mapping(self.listing_line, "listing")

    def spans(self, span: Span) -> list[Part]:
        """The range as parts: spans between its timestamps, None in their places."""
        segment, start, end = span
        slots = self.segments[segment].slots
        parts: list[Part] = []
        for at in range(bisect.bisect_right(slots, start), bisect.bisect_left(slots, end)):
            parts += (Span(segment, start, slots[at]), None)
            start = slots[at]
        parts.append(Span(segment, start, end))
        return parts

    def output_parts(self) -> list[Part]:
        """The whole stored output, as parts."""
        parts: list[Part] = []
        for span in self.layout:
            parts += self.spans(span)
        return parts

    def pieces(self, parts: Iterable[Part]) -> Iterator[Piece]:
        """The parts as pieces to print (spans as views of their segments)."""
        segments = self.segments
        for part in parts:
            if type(part) is Span:
                yield segments[part.segment].view[part.start:part.end]
            else:
                yield part  # type: ignore[misc]

    def close(self) -> None:
        """Release the mappings (after the last piece was used)."""
        for segment in self.segments:
            segment.close()


def _mapping(line: bytes, what: str) -> dict[str, Any]:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as err:
        raise MalformedCache(f"its {what} are not JSON ({err})") from None
    if not isinstance(value, dict):
        raise MalformedCache(f"its {what} are not a mapping")
    return value


def _index(content: bytes, key: str) -> tuple[dict[str, Any], bytes, bytes]:
    """The header, the entries line and the listing line of an index file's content."""
    if not content.startswith(_MAGIC):
        raise MalformedCache("it is not a reclass-ng render cache of this format")
    checked = len(_MAGIC) + _CRC_LINE
    if content[len(_MAGIC):checked] != b"%08x\n" % zlib.crc32(memoryview(content)[checked:]):
        raise MalformedCache("its content does not match its checksum (a changed or partial "
                             "file)")
    line_end = content.find(b"\n", checked)
    if line_end < 0:
        raise MalformedCache("no header line")
    try:
        header = orjson.loads(content[checked:line_end])
    except orjson.JSONDecodeError as err:
        raise MalformedCache(f"the header is not JSON ({err})") from None
    if not isinstance(header, dict) or header.get("key") != key:
        raise MalformedCache("it was written by another version of reclass-ng, for "
                             "other settings or is not a reclass-ng cache")
    rest = content[line_end + 1:]
    try:
        entries_size = _int(header["entries_size"], len(rest))
        if len(rest) != entries_size + 1 + _int(header["listing_size"], len(rest)) + 1 \
                or not rest.endswith(b"\n") or rest[entries_size:entries_size + 1] != b"\n":
            raise MalformedCache("its size is not the size its header gives")
        entries_line, listing_line = rest[:entries_size], rest[entries_size + 1:-1]
        if type(header["segments"]) is not list or type(header["layout"]) is not list:
            raise MalformedCache("its segments or layout are not lists")
    except KeyError as err:
        raise MalformedCache(f"its header lacks {err}") from None
    return header, entries_line, listing_line


def _segment_pattern(path: str) -> re.Pattern[str]:
    stem = re.escape(os.path.basename(path).removesuffix(".cache"))
    return re.compile(stem + r"-[0-9a-f]{16}\.out")


def _open_segments(path: str, header: dict[str, Any]) -> list[Segment]:
    """Map and check every segment the header names; FileNotFoundError when one is gone."""
    pattern = _segment_pattern(path)
    directory = os.path.dirname(path)
    segments: list[Segment] = []
    try:
        for item in header["segments"]:
            if type(item) is not list or len(item) != 4 or type(item[0]) is not str \
                    or not pattern.fullmatch(item[0]):
                raise MalformedCache(f"{item!r} is not a segment of this cache")
            name, size, crc, slots = item
            fd, info = open_regular_file(os.path.join(directory, name))  # a FIFO: refused
            try:
                actual = info.st_size
                mapping: Any = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if actual else b""
            finally:
                os.close(fd)
            segment = Segment(name, memoryview(mapping), [], mapping)
            segments.append(segment)
            if actual != size:
                raise MalformedCache(f"segment {name} is not the size its header gives")
            if zlib.crc32(segment.view) != crc:
                raise MalformedCache(f"segment {name} does not match its checksum")
            segment.slots = _offsets(slots, actual)
    except BaseException:
        for segment in segments:
            segment.close()
        raise
    return segments


def write_cache_file(path: str, header: dict[str, Any], entries: dict[str, Any] | bytes,
                     listing: dict[str, Any] | bytes, parts: list[Part], old: CacheFile | None,
                     warn: Callable[[str], None]) -> None:
    """Write a cache: the new bytes of `parts` into a new segment (with the stored bytes of
    segments compacted), the index (header completed with segments, layout, size and CRC)
    atomically; then delete the segments no longer referred to. A failure is a warning.

    `entries` as a mapping: each node's "text" is the (first, end) indexes of its parts, made
    (segment, start, end) here. As bytes (an unchanged run storing new stamps): written as
    they are, and nothing is written unless every old segment is kept in its place.
    """
    old_segments = old.segments if old is not None else []
    new_bytes = any(isinstance(part, (bytes, memoryview)) for part in parts)
    kept = _segments_kept(parts, old_segments, MAX_SEGMENTS - new_bytes)
    if isinstance(entries, bytes) and kept != list(range(len(old_segments))):
        return  # the stored entries' ranges would move: keep the old cache
    laid = _lay_out(parts, old_segments, kept)
    if not isinstance(entries, bytes):
        for entry in entries["nodes"].values():
            entry["text"] = _placed(entry["text"], laid.places)
        entries["frame"] = [_placed(item, laid.places) for item in entries["frame"]]
    segments = [[old_segments[at].name, len(old_segments[at].view),
                 old.header["segments"][at][2], old_segments[at].slots]  # type: ignore[union-attr]
                for at in kept]
    _write_files(path, header, segments, laid,
                 entries if isinstance(entries, bytes) else orjson.dumps(entries),
                 listing if isinstance(listing, bytes) else orjson.dumps(listing), warn)


@attrs.define
class _Layout:
    """Where the parts of a new cache go: each part's (segment, start, end) or None for a
    timestamp, the runs of the index's layout, and the new segment's bytes, size, CRC and
    timestamp slots."""

    new_index: int  # the new segment's, after the kept ones
    places: list[tuple[int, int, int] | None] = attrs.Factory(list)
    layout: list[list[int]] = attrs.Factory(list)
    chunks: list[bytes | memoryview] = attrs.Factory(list)
    size: int = 0
    crc: int = 0
    slots: list[int] = attrs.Factory(list)

    def add_timestamp(self, previous: Part, old_segments: list[Segment]) -> None:
        """A timestamp's place: after the new bytes just written, or at a slot that ends the
        stored text before it."""
        if isinstance(previous, (bytes, memoryview)):
            self.slots.append(self.size)
        elif not _ends_at_slot(previous, old_segments):
            raise ValueError("a timestamp's place that is not in a stored text")
        self.places.append(None)

    def add_new(self, part: bytes | memoryview) -> None:
        self.chunks.append(part)
        self.crc = zlib.crc32(part, self.crc)
        self.add_place((self.new_index, self.size, self.size + len(part)))
        self.size += len(part)

    def add_place(self, place: tuple[int, int, int]) -> None:
        self.places.append(place)
        if self.layout and self.layout[-1][0] == place[0] and self.layout[-1][2] == place[1]:
            self.layout[-1][2] = place[2]  # continues the run before it
        else:
            self.layout.append(list(place))


def _lay_out(parts: list[Part], old_segments: list[Segment], kept: list[int]) -> _Layout:
    """The places of `parts` when the `kept` old segments stay (renumbered in order) and the
    live bytes of the others are copied into the new segment."""
    renumbered = {old_at: new_at for new_at, old_at in enumerate(kept)}
    laid = _Layout(len(kept))
    previous: Part = None
    for part in parts:
        if type(part) is Span and part.segment not in renumbered:  # compacted: copied
            part = old_segments[part.segment].view[part.start:part.end]
        if part is None:
            laid.add_timestamp(previous, old_segments)
        elif type(part) is Span:
            laid.add_place((renumbered[part.segment], part.start, part.end))
        else:
            laid.add_new(part)  # type: ignore[arg-type]
        previous = part
    return laid


def _write_files(path: str, header: dict[str, Any], segments: list[list[Any]], laid: _Layout,
                 entries: bytes, listing: bytes, warn: Callable[[str], None]) -> None:
    """Write the new segment (when there are new bytes) and the index, and put them in place
    (_commit); remove what is left of them when that fails."""
    directory = os.path.dirname(path)
    new_name = None
    temporary = None
    try:
        os.makedirs(directory, exist_ok=True)
        if laid.chunks:
            new_name = _new_segment_name(path)
            _write_segment(os.path.join(directory, new_name), laid.chunks)
            segments.append([new_name, laid.size, laid.crc, laid.slots])
        header_line = orjson.dumps(dict(
            header, segments=segments, layout=laid.layout, entries_size=len(entries),
            listing_size=len(listing))) + b"\n"
        rest = entries + b"\n" + listing + b"\n"
        index_crc = zlib.crc32(rest, zlib.crc32(header_line))
        import tempfile  # only runs that write import it (an unchanged one seldom does)

        handle, temporary = tempfile.mkstemp(prefix=".inventory-", suffix=".tmp", dir=directory)
        with os.fdopen(handle, "wb") as stream:
            stream.writelines([_MAGIC, b"%08x\n" % index_crc, header_line, rest])
        if _commit(path, temporary, {item[0] for item in segments}):
            temporary = new_name = None
    except OSError as err:
        warn(f"[WARNING] reclass-ng: cannot write the cache file {path}: {err}")
    finally:
        for leftover in (temporary, new_name and os.path.join(directory, new_name)):
            if leftover:
                with contextlib.suppress(OSError):
                    os.unlink(leftover)


def _new_segment_name(path: str) -> str:
    """A fresh name for a new segment of the cache at `path`."""
    return f"{os.path.basename(path).removesuffix('.cache')}-{secrets.token_hex(8)}.out"


def _write_segment(segment_path: str, chunks: list[bytes | memoryview]) -> None:
    handle = os.open(segment_path,
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    with os.fdopen(handle, "wb") as stream:
        stream.writelines(chunks)


def _placed(indexes: tuple[int, int], places: list[tuple[int, int, int] | None]
            ) -> list[int] | None:
    """Where parts [first, end) (one text, in one segment) were stored; None when empty."""
    first, end = indexes
    if first == end:
        return None
    start_place, end_place = places[first], places[end - 1]
    if start_place is None or end_place is None or start_place[0] != end_place[0]:
        raise ValueError("a text that does not lie in one segment")
    return [start_place[0], start_place[1], end_place[2]]


def _segments_kept(parts: list[Part], old_segments: list[Segment], limit: int) -> list[int]:
    """The old segments the new cache refers to (the others are copied): those whose live
    bytes fill at least half of them, at most `limit`, the fullest first."""
    live = [0] * len(old_segments)
    for part in parts:
        if type(part) is Span:
            live[part.segment] += part.end - part.start
    kept = [at for at, segment in enumerate(old_segments)
            if live[at] and 2 * live[at] >= len(segment.view)]
    kept.sort(key=lambda at: -live[at])
    return sorted(kept[:limit])


def _ends_at_slot(part: Part, old_segments: list[Segment]) -> bool:
    if type(part) is not Span:
        return False
    slots = old_segments[part.segment].slots
    at = bisect.bisect_left(slots, part.end)
    return at < len(slots) and slots[at] == part.end


def _commit(path: str, temporary: str, segment_names: set[str]) -> bool:
    """Rename the new index into place unless a segment it names is gone; delete the
    segments no index names. False when the index was not put in place."""
    directory = os.path.dirname(path)
    with _locked(path + ".lock"):
        for name in segment_names:
            if not os.path.exists(os.path.join(directory, name)):
                return False  # compacted away by a concurrent run, whose cache stays
        os.replace(temporary, path)
        pattern = _segment_pattern(path)
        for name in os.listdir(directory):
            if pattern.fullmatch(name) and name not in segment_names:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(directory, name))
    return True


@contextlib.contextmanager
def _locked(lock_path: str) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): unlocked, a concurrent compaction may cost
        yield            # the next run a full render (a segment gone: the cache is ignored)
        return
    # Not through a symbolic link: one planted there would have us create, or lock, a file
    # elsewhere (ELOOP, an OSError: the write is skipped with a warning). Never truncated, and
    # non-blocking should a FIFO stand there.
    handle = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                     | os.O_CLOEXEC, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(errno.EINVAL, f"the lock file {lock_path} is not a regular file")
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


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
