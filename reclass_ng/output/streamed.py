"""`--inventory` written as its nodes render: byte for byte the document `output.write` writes
of the whole inventory, holding one rendered node at a time instead of all of them.

Each node's text is made as soon as the node is rendered, by the writer the whole document
uses at that depth (output.fragments says why a node's text does not depend on what
surrounds it), and spooled; of the node only its class and application lists are kept, for
the indexes. Nothing is printed before every node rendered: kapicorp-reclass prints nothing
on stdout when a node fails, and neither does this (the spool is dropped with the error).
Then come the frame before the nodes (in YAML, whose keys are sorted, the indexes come
first; in JSON they follow the nodes), the spooled texts and the frame after.

The spool keeps up to SPOOL_IN_MEMORY bytes in memory and the rest in an unnamed temporary
file (in TMPDIR), read back in large blocks, so memory is bounded by one node, the indexes
and that limit (doc/performance.rst, "Memory of --inventory").

Flow-style YAML (`-o yaml` without pretty printing) wraps its lines by column across nodes
and is not streamed: `streams()` says which forms are.
"""

from __future__ import annotations

import sys

from reclass_ng.errors import OutputSpoolError
from reclass_ng.output.dispatch import _write_bytes
from reclass_ng.output.fragments import FRAGMENT_FORMS, inventory_frame, node_fragment
from reclass_ng.settings import Speed

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import IO, Any

# Node texts kept in memory before the spool moves to a temporary file: small inventories
# never touch the disk, large ones hold at most this much text.
SPOOL_IN_MEMORY = 8 * 1024 * 1024
_READ_BLOCK = 1024 * 1024

# `import orjson` (with dataclasses, inspect, uuid and platform, which it imports: about 58 M
# instructions) costs as much as the exact pure-Python writer needs for about 11,000 values
# (5 k instructions each; an `mcp` node has about 1,400, a node of reclass-rs's test inventory
# about 30): an inventory whose first node, times the number of nodes, holds at most this many
# values is written by that writer (the same text, which tests/test_cli_reclass.py checks
# against the orjson writer). Counting all values would cost half of what writing them does.
FEW_VALUES_FOR_ORJSON = 10_000


def streams(fmt: str, pretty: bool) -> bool:
    """Whether `--inventory` in this form is written as its nodes render."""
    return (fmt, pretty) in FRAGMENT_FORMS


def has_at_most_values(data: Any, limit: int) -> bool:
    """Whether `data` holds at most `limit` values, containers and scalars alike (a walk over
    its containers that stops once it has counted more)."""
    count = 1
    pending = [data] if isinstance(data, (dict, list, tuple)) else []
    while pending:
        container = pending.pop()
        items = container.values() if isinstance(container, dict) else container
        count += len(items)
        if count > limit:
            return False
        pending += [item for item in items if isinstance(item, (dict, list, tuple))]
    return True


def unnamed_temporary_file() -> IO[bytes]:
    """tempfile.TemporaryFile(): a file without a name (gone once closed) in the directory
    tempfile.gettempdir() chooses, open for reading and writing bytes.

    Made here (Linux's O_TMPFILE, as tempfile makes it) in the first directory tempfile would
    try ($TMPDIR, $TEMP, $TMP, else /tmp) while tempfile is not imported: importing it, with
    shutil, random, bz2 and lzma, costs about 11 M instructions, 0.7% of a 200-node `mcp`
    `--inventory` whose text outgrows the spool's memory. Wherever that fails (no O_TMPFILE,
    a directory that cannot take the file) tempfile makes it, looking further as it does; once
    tempfile is imported (its `tempdir` may be set) it always does."""
    import os

    tmpfile_flag = getattr(os, "O_TMPFILE", 0)
    if tmpfile_flag and "tempfile" not in sys.modules:
        directory = next((value for name in ("TMPDIR", "TEMP", "TMP")
                          if (value := os.environ.get(name))), "/tmp")
        try:
            descriptor = os.open(directory,
                                 os.O_RDWR | os.O_EXCL | os.O_NOFOLLOW | tmpfile_flag, 0o600)
        except OSError:
            pass
        else:
            return open(descriptor, "w+b")  # the spool closes it
    import tempfile

    return tempfile.TemporaryFile()


def binary_target(stream: IO[str]) -> tuple[IO[bytes], int] | None:
    """The binary buffer of `stream` and its descriptor, flushed, where bytes written there
    print unchanged (UTF-8 or ASCII, no newline translation, os.sendfile exists); None
    otherwise."""
    import os

    buffer = getattr(stream, "buffer", None)
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    if buffer is None or encoding not in ("utf8", "ascii", "usascii") or os.linesep != "\n" \
            or not hasattr(os, "sendfile"):
        return None
    try:
        out = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation included
        return None
    stream.flush()
    return buffer, out


def send_range(buffer: IO[bytes], out: int, source: int, offset: int, size: int) -> None:
    """Bytes `offset` to `offset + size` of the file open at descriptor `source` written to
    descriptor `out` after what `buffer` (out's buffer) holds: copied by the kernel
    (os.sendfile), or read and written through this process where it refuses `out`."""
    import errno
    import os

    buffer.flush()
    sent = 0
    try:
        while sent < size:
            done = os.sendfile(out, source, offset + sent, size - sent)
            if done == 0:
                break
            sent += done
    except OSError as err:
        if sent or err.errno not in (errno.EINVAL, errno.ENOSYS):
            raise
    while sent < size:  # sendfile refused this descriptor: copied through this process
        block = os.pread(source, min(_READ_BLOCK, size - sent), offset + sent)
        if not block:
            raise OSError(f"the spooled text ends before byte {offset + size}")
        buffer.write(block)
        sent += len(block)


class NodeTextSpool:
    """Bytes kept until they can be printed: in memory up to `in_memory` bytes (default
    SPOOL_IN_MEMORY), beyond that in an unnamed temporary file (gone when closed, or when the
    process ends)."""

    def __init__(self, in_memory: int | None = None) -> None:
        self.in_memory = SPOOL_IN_MEMORY if in_memory is None else in_memory
        self._pieces: list[bytes | memoryview] = []
        self._size = 0
        self._file: IO[bytes] | None = None

    @property
    def on_disk(self) -> bool:
        """Whether the spool moved to its temporary file."""
        return self._file is not None

    def add(self, piece: bytes | memoryview) -> None:
        """Keep `piece` after the pieces added before."""
        if self._file is not None:
            self._write(piece)
            return
        self._pieces.append(piece)
        self._size += len(piece)
        if self._size > self.in_memory:
            try:
                self._file = unnamed_temporary_file()
            except OSError as err:
                import tempfile

                raise OutputSpoolError(tempfile.gettempdir(), err.strerror or str(err)) from None
            pieces, self._pieces = self._pieces, []
            for kept in pieces:
                self._write(kept)

    def _write(self, piece: bytes | memoryview) -> None:
        assert self._file is not None
        try:
            self._file.write(piece)
        except OSError as err:
            import tempfile

            raise OutputSpoolError(tempfile.gettempdir(), err.strerror or str(err)) from None

    def pieces(self) -> Iterator[bytes | memoryview]:
        """What was added, in order (read back from the file in blocks)."""
        if self._file is None:
            yield from self._pieces
            return
        self._file.flush()
        self._file.seek(0)
        while block := self._file.read(_READ_BLOCK):
            yield block

    def send_to(self, stream: IO[str], before: str, after: str) -> bool:
        """`before`, what was added and `after` written to `stream`, the spooled part copied
        by the kernel from the temporary file to the stream's descriptor (os.sendfile: not
        read back through this process); False, with nothing written, where that cannot be
        done (no temporary file, or a stream send_range cannot write to)."""
        if self._file is None or (target := binary_target(stream)) is None:
            return False
        buffer, out = target
        self._file.flush()
        size = self._file.seek(0, 2)
        buffer.write(before.encode("utf-8"))
        send_range(buffer, out, self._file.fileno(), 0, size)
        buffer.write(after.encode("utf-8"))
        buffer.flush()
        return True

    def close(self) -> None:
        """Drop what was kept."""
        self._pieces = []
        if self._file is not None:
            self._file.close()
            self._file = None


class StreamedInventory:
    """The `--inventory` document of nodes added one at a time, in node order; `write_to`
    prints it once all are in. Only forms for which `streams()` is true. `floats_exact`, when
    given, tells whether every float read so far prints the same through orjson as through
    json (Inventory.floats_json_exact): asked as each node is written."""

    def __init__(self, fmt: str, pretty: bool, node_count: int, *, speed: Speed | None = None,
                 floats_exact: Callable[[], bool] | None = None,
                 spool: NodeTextSpool | None = None) -> None:
        if not streams(fmt, pretty):
            raise ValueError(f"{fmt} output (pretty: {pretty}) is written whole")
        self.fmt, self.pretty = fmt, pretty
        self.node_count = node_count
        self.speed = speed or Speed.from_environment()
        self.floats_exact = floats_exact
        self.spool = spool or NodeTextSpool()
        self._separator = FRAGMENT_FORMS[(fmt, pretty)][2].encode("ascii")
        self._lists: list[tuple[str, list[str], list[str]]] = []  # for the indexes
        self._orjson_member: Any = None  # output.fast_json.node_member, when it writes JSON
        self._block_yaml: Any = None  # one BlockYamlWriter for every node (its memos)

    def add(self, name: str, info: dict[str, Any]) -> None:
        """Spool the text of node `name`, rendered to `info` (its nodeinfo)."""
        if self._lists and self._separator:
            self.spool.add(self._separator)
        self.spool.add(self._node_text(name, info))
        self._lists.append((name, info["classes"], info["applications"]))

    def write_to(self, stream: IO[str], now: str) -> None:
        """Print the document, timestamped `now`, to `stream`; then drop the spool."""
        before, after = inventory_frame(self._lists, self.fmt, self.pretty, now,
                                        fast_json=self._orjson_member is not None)
        try:
            if not (self._lists and self.spool.send_to(stream, before, after)):
                _write_bytes(self._document(before, after), stream)
        finally:
            self.spool.close()

    def close(self) -> None:
        """Drop what was spooled (after an error)."""
        self.spool.close()

    def _document(self, before: str, after: str) -> Iterator[bytes | memoryview]:
        yield before.encode("utf-8")
        if self._lists:
            yield from self.spool.pieces()
        yield after.encode("utf-8")

    def _node_text(self, name: str, info: dict[str, Any]) -> bytes | memoryview:
        if self.fmt == "json" and self.pretty:
            return self._indented_json(name, info)
        if self.fmt == "yaml" and self.speed.block_yaml_writer:
            if self._block_yaml is None:
                from reclass_ng.output.block_yaml import BlockYamlWriter

                self._block_yaml = BlockYamlWriter(streaming=True)
            return self._block_yaml.node_text(name, info).encode("utf-8")
        return node_fragment(name, info, self.fmt, self.pretty, speed=self.speed).encode("utf-8")

    def _indented_json(self, name: str, info: dict[str, Any]) -> bytes | memoryview:
        # The writers output.write and the command line choose for the whole document: orjson
        # (fast_json) unless the speed record turns it off or the inventory is small enough
        # for the exact writer to cost less than importing orjson.
        if not self._lists and self.speed.orjson_json_writer \
                and not has_at_most_values(info, FEW_VALUES_FOR_ORJSON // max(self.node_count, 1)):
            try:
                from reclass_ng.output.fast_json import node_member
            except ImportError:  # a platform without orjson's wheel: the exact writer
                pass
            else:
                self._orjson_member = node_member
        if self._orjson_member is not None:
            # Asked at each node, not once: it tells of the files read so far, and a node's
            # text is made once every file the node read was read (a small float in a file read
            # later must still be checked for).
            exact = self.floats_exact is not None and self.floats_exact()
            return self._orjson_member(name, info, exact)
        from reclass_ng.output.exact import json_key, pretty_json

        return (json_key(name) + ": " + pretty_json(info, "    ")).encode("ascii")
