"""Where the processes of a `--jobs` render put their nodes' texts: a file that the coordinator
and its forked workers share, not the pool's result pipe.

A worker's chunk of nodes is a few MB of text. Through the pipe, the coordinator's pool thread
read it in pieces of the pipe's size, each time waiting for the interpreter lock while the
coordinator rendered its own lane (up to 5 ms a piece), and the worker waited with it, blocked
on the full pipe: it spent a sixth of its time so on a loaded machine. Now a worker writes a
chunk's texts into the shared file at a place it reserves (one counter in memory shared by the
fork) and sends back only where they are; the coordinator reads them back in one read a chunk
where a caller wants the texts (parallel.render_inventory_bytes).

The file holds the texts of one render: `reset` empties it before the next. The command line
does not read them back at all: it prints each chunk's texts from the file (os.sendfile,
parallel.chunks.SpooledInventory), so its memory does not grow with the output. The file is
an unnamed temporary file in TMPDIR, as the serial render's spool (output.streamed): its pages
can go to disk, where a memory file's (memfd_create) stay in memory, which is used only where
that file cannot be made. The file's first bytes are the locks of the processes sharing it
(parallel.fork_shared). Where no file can be made, or locked, the render has no lanes: a
process pool's tasks carry the texts (parallel.chunks).
"""

from __future__ import annotations

import errno
import os

from reclass_ng.parallel.fork_shared import FileRegionLock, SharedCounters, lockable

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Sequence


_BUFFERS_PER_WRITE = 1024  # IOV_MAX, POSIX's least and Linux's


class SharedTextSpool:
    """A file made before the fork, to which any process of the pool appends; its byte 0 is
    the lock of the bytes reserved so far (a count in shared memory), its other bytes are
    the locks others make of it (lock())."""

    def __init__(self, descriptor: int) -> None:
        self.descriptor = descriptor
        self._end = SharedCounters(1)  # bytes reserved so far
        self._lock = FileRegionLock(descriptor, 0)

    @classmethod
    def made(cls) -> SharedTextSpool | None:
        """A new spool, or None where no file can be made, or locked (the texts go by the
        pipe)."""
        from reclass_ng.output.streamed import unnamed_temporary_file

        descriptor = None
        try:
            with unnamed_temporary_file() as file:
                descriptor = os.dup(file.fileno())
        except OSError:
            make = getattr(os, "memfd_create", None)
            if make is not None:
                try:
                    descriptor = make("reclass-ng-node-texts", getattr(os, "MFD_CLOEXEC", 0))
                except OSError:
                    pass
        if descriptor is None:
            return None
        if not lockable(descriptor):
            os.close(descriptor)
            return None
        return cls(descriptor)

    def lock(self, region: int) -> FileRegionLock:
        """A lock of this spool's processes, apart from its own (`region` 1 and up)."""
        if region < 1:
            raise ValueError("region 0 is the spool's own lock")
        return FileRegionLock(self.descriptor, region)

    def append(self, texts: Sequence[bytes]) -> int:
        """Write `texts` one after the other at a place no other writer gets; their offset."""
        size = sum(len(text) for text in texts)
        with self._lock:
            offset = self._end[0]
            self._end[0] = offset + size
        at = offset
        pending = [memoryview(text) for text in texts if text]
        first = 0  # pending[first:] is left to write
        while first < len(pending):  # a write may be short (a signal, a full disk)
            # At most IOV_MAX buffers a call (1,024 on Linux): a chunk of 600 JSON nodes with
            # their separators was refused (EINVAL) and went through the pipe.
            written = os.pwritev(self.descriptor, pending[first:first + _BUFFERS_PER_WRITE], at)
            if not written:
                raise OSError(errno.ENOSPC, "the node texts' file takes no more")
            at += written
            while first < len(pending) and written >= len(pending[first]):
                written -= len(pending[first])
                first += 1
            if written:
                pending[first] = pending[first][written:]
        return offset

    def read(self, offset: int, size: int) -> bytes:
        """The `size` bytes written at `offset`."""
        parts = []
        while size:
            part = os.pread(self.descriptor, size, offset)
            if not part:
                raise OSError(f"the node texts' memory file ends before byte {offset + size}")
            parts.append(part)
            offset += len(part)
            size -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def reset(self) -> None:
        """Empty the file (its pages go back to the system) for the next render.

        A file nothing was written to is left alone: on ext4 (auto_da_alloc, the default) a
        file truncated to size 0 gets its blocks allocated and its pages sent to disk when
        it is closed, as for a file rewritten in place, and closing it then waits for that
        writing. The command line renders once: the truncation at the start of that render
        cost 0.11 s of its last serial step (closing a 136 MB spool, mcp 2,000 nodes, JSON;
        0.02 s without)."""
        with self._lock:
            if self._end[0]:
                self._end[0] = 0
                os.ftruncate(self.descriptor, 0)

    def close(self) -> None:
        os.close(self.descriptor)
        self._end.close()
