"""The one guarded read of a file a user or a repository controls: inventory files, schemas,
the roles file, cache files, the trees a diff compares.

A path can name a FIFO (a plain open waits for a writer forever), a device (/dev/zero never
ends) or a symbolic link to one, and a `git pull` or a shared directory can swap one in. So the
file is opened non-blocking and checked with fstat on the open descriptor (what is read is what
was checked: a link is followed once, into the check, never into a read), and read up to a limit.
"""

from __future__ import annotations

import os
import stat

NOT_REGULAR = "not a regular file (a FIFO, device or socket); only regular files are read"


class UnreadableFile(OSError):
    """A file refused before or while it was read: not a regular file (`not_regular`), or
    larger than `limit` bytes (`size` None: it grew past the limit while it was read).
    An OSError, so a caller's `except OSError` and `err.strerror` wording keep working."""

    def __init__(self, path: str, problem: str, *, not_regular: bool = False,
                 size: int | None = None, limit: int | None = None) -> None:
        super().__init__(None, problem, path)
        self.not_regular = not_regular
        self.size, self.limit = size, limit

    @property
    def too_large(self) -> bool:
        return self.limit is not None

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


# Read-only, never waiting for a writer (a FIFO), not inherited by a child process.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def open_regular_file(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """A read-only descriptor of `path` and its fstat, if it is a regular file (the caller
    closes it); UnreadableFile when it is not, the OSError of the open when it cannot be
    opened. Never blocks: opened O_NONBLOCK, so a FIFO without a writer is refused at once."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(os.fspath(path), NOT_REGULAR, not_regular=True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_regular_file(path: str | os.PathLike[str], limit: int, *, head: bool = False
                      ) -> tuple[bytes, os.stat_result]:
    """The bytes of `path` and its fstat taken before they were read, if it is a regular file
    (open_regular_file). A file of more than `limit` bytes is refused (UnreadableFile), or,
    with `head`, only its first `limit` bytes are read (a `#!` line). Other failures are the
    OSError the system gave (FileNotFoundError, PermissionError...)."""
    fd, info = open_regular_file(path)
    try:
        size = info.st_size
        if size > limit and not head:
            raise UnreadableFile(os.fspath(path), f"{size} bytes, more than the limit "
                                 f"of {limit}", size=size, limit=limit)
        # The size fstat gave is a hint: the file may grow (or shrink) while it is read, so
        # it is read up to an empty read (the end) or past the limit. Nearly always that is
        # one read of the whole file, taken here without the loop (every inventory file a
        # render reads comes this way: the loop's bytecode was a third of the cost of
        # reading a class file). A first read that returns exactly the size fstat gave,
        # asked for more, met the end the open saw: a read of the end would only race a
        # writer that is still writing (a read never waits for one), so it is not made (one
        # system call a file). Any other length (a file that grew or shrank, a file system
        # that returns short reads) reads on to an empty read.
        data = os.read(fd, min(size + 65536, limit + 1))
        if data and len(data) != size and len(data) <= limit:
            end = os.read(fd, min(max(size - len(data), 0) + 65536, limit + 1 - len(data)))
            if end:
                data = _read_on(fd, [data, end], size, limit)
    finally:
        os.close(fd)
    if len(data) > limit:
        if head:
            return data[:limit], info
        raise UnreadableFile(os.fspath(path), f"grew past the limit of {limit} bytes while "
                             "it was read", limit=limit)
    return data, info


def _read_on(fd: int, chunks: list[bytes], size: int, limit: int) -> bytes:
    """The bytes of `chunks` (read from `fd`) and the rest of the file up to an empty read or
    past `limit` bytes in all; `size` is what fstat gave."""
    read = sum(map(len, chunks))
    while read <= limit:
        chunk = os.read(fd, min(max(size - read, 0) + 65536, limit + 1 - read))
        if not chunk:
            break
        chunks.append(chunk)
        read += len(chunk)
    return b"".join(chunks)
