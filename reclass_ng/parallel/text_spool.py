"""Where the forked workers of a `--jobs` render put their nodes' texts: a file in memory that
the coordinator and its workers share (Linux `memfd_create`), not the pool's result pipe.

A worker's chunk of nodes is a few MB of text. Through the pipe, the coordinator's pool thread
read it in pieces of the pipe's size, each time waiting for the interpreter lock while the
coordinator rendered its own lane (up to 5 ms a piece), and the worker waited with it, blocked
on the full pipe: it spent a sixth of its time so on a loaded machine. Now a worker writes a
chunk's texts into the shared file at a place it reserves (one counter in memory shared by the
fork) and sends back only where they are; the coordinator reads them once every worker is
done, in one read a chunk.

The file holds the texts of one render: `reset` empties it before the next (the coordinator has
read them all by then). Where memfd_create does not exist the texts travel through the pipe.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class SharedTextSpool:
    """A file in memory, made before the fork, to which any process of the pool appends."""

    def __init__(self, descriptor: int, context: Any) -> None:
        self.descriptor = descriptor
        self._end: Any = context.RawValue("q", 0)  # bytes reserved so far
        self._lock = context.Lock()

    @classmethod
    def made(cls, context: Any) -> SharedTextSpool | None:
        """A new spool, or None where memory files do not exist (or cannot be made)."""
        make = getattr(os, "memfd_create", None)
        if make is None:
            return None
        try:
            return cls(make("reclass-ng-node-texts", getattr(os, "MFD_CLOEXEC", 0)), context)
        except OSError:
            return None

    def append(self, texts: Sequence[bytes]) -> int:
        """Write `texts` one after the other at a place no other writer gets; their offset."""
        size = sum(len(text) for text in texts)
        with self._lock:
            offset = self._end.value
            self._end.value = offset + size
        at = offset
        pending = [memoryview(text) for text in texts if text]
        while pending:  # a write to a memory file is whole but for a signal: go on after one
            written = os.pwritev(self.descriptor, pending, at)
            at += written
            while pending and written >= len(pending[0]):
                written -= len(pending[0])
                pending.pop(0)
            if pending and written:
                pending[0] = pending[0][written:]
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
        """Empty the file (its memory goes back to the system) for the next render."""
        with self._lock:
            self._end.value = 0
            os.ftruncate(self.descriptor, 0)

    def close(self) -> None:
        os.close(self.descriptor)
