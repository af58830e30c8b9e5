"""State the processes of a forked `--jobs` render share: counters in shared memory and a
lock on a shared file, made before the fork and inherited by every worker.

What multiprocessing's RawArray and Lock gave, without importing multiprocessing and ctypes:
with concurrent.futures, 16 to 20 ms of the serial part of every `--jobs` render before the
fork (parallel.forked_lanes forks its workers itself). The lock is a POSIX record lock
(fcntl.lockf) on one byte of a file the processes share: the kernel releases it when the
process holding it ends, so a worker killed in the middle of taking a chunk leaves no lock
held for ever (a semaphore would stay taken).
"""

from __future__ import annotations

import mmap

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any


class SharedCounters:
    """Signed 64-bit integers in memory shared by the processes forked after they were made
    (an anonymous shared mapping); indexed and sliced as a list, slices set from a sequence."""

    def __init__(self, count: int) -> None:
        self._memory = mmap.mmap(-1, max(8, 8 * count))
        self._values = memoryview(self._memory).cast("q")
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self._values[:self._count][index].tolist()
        if not -self._count <= index < self._count:
            raise IndexError("counter index out of range")
        return self._values[index % self._count]

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            places = range(*index.indices(self._count))
            for place, number in zip(places, value, strict=True):
                self._values[place] = number
            return
        if not -self._count <= index < self._count:
            raise IndexError("counter index out of range")
        self._values[index % self._count] = value

    def close(self) -> None:
        self._values.release()
        self._memory.close()


class FileRegionLock:
    """One byte (`region`) of the open file `descriptor`, locked while held (`with lock:`):
    by one process at a time of those that share the file. Not between the threads of one
    process (POSIX record locks are a process's): each process takes it from one thread."""

    __slots__ = ("descriptor", "region")

    def __init__(self, descriptor: int, region: int) -> None:
        self.descriptor = descriptor
        self.region = region

    def __enter__(self) -> None:
        import fcntl

        fcntl.lockf(self.descriptor, fcntl.LOCK_EX, 1, self.region)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        import fcntl

        fcntl.lockf(self.descriptor, fcntl.LOCK_UN, 1, self.region)


def lockable(descriptor: int) -> bool:
    """Whether record locks can be taken on the file `descriptor` (not on every file system:
    some network ones refuse them)."""
    try:
        import fcntl

        fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        fcntl.lockf(descriptor, fcntl.LOCK_UN, 1, 0)
    except (ImportError, OSError):
        return False
    return True
