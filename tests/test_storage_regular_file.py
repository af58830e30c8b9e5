"""storage/regular_file.py: the guarded read of a file, past the size fstat gave.

A render reads each file in one read, which returns the size fstat gave; a file whose size
fstat does not give (it grows while it is read, or is one of /proc's, whose size is 0), or
whose file system returns a short read, is read on until its end or past the limit. These
guard that second way, which no inventory file takes.
"""

from __future__ import annotations

import os

import pytest

from reclass_ng.storage.regular_file import UnreadableFile, read_regular_file

# A regular file whose fstat size (0) is not its length (megabytes), read in many pieces.
PROC_FILE = "/proc/kallsyms"
needs_proc_file = pytest.mark.skipif(
    not os.access(PROC_FILE, os.R_OK) or os.path.getsize(PROC_FILE) != 0,
    reason="needs Linux's /proc/kallsyms")


def _whole(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


@needs_proc_file
def test_a_file_longer_than_its_fstat_size_is_read_to_its_end():
    data, info = read_regular_file(PROC_FILE, 100_000_000)
    assert info.st_size == 0
    assert len(data) > 2 * 65536  # more than the first two reads give
    assert data == _whole(PROC_FILE)


@needs_proc_file
def test_a_file_growing_past_the_limit_while_read_is_refused_or_cut_at_its_head():
    with pytest.raises(UnreadableFile, match="grew past the limit of 200000 bytes") as caught:
        read_regular_file(PROC_FILE, 200_000)
    assert caught.value.too_large and caught.value.size is None
    head, _ = read_regular_file(PROC_FILE, 200_000, head=True)
    assert head == _whole(PROC_FILE)[:200_000]


def test_a_file_is_read_whole_and_an_empty_one_as_nothing(tmp_path):
    for content in (b"", b"a: 1\n", b"x" * 65536, b"y" * 200_000):
        path = tmp_path / "file.yml"
        path.write_bytes(content)
        assert read_regular_file(str(path), 1_000_000)[0] == content
    with pytest.raises(UnreadableFile, match="200000 bytes, more than the limit of 1000"):
        read_regular_file(str(path), 1000)
    assert read_regular_file(str(path), 1000, head=True)[0] == b"y" * 1000


def test_short_reads_are_read_on_to_the_end(tmp_path, monkeypatch):
    # A file system that returns less than asked (FUSE with direct_io, some network ones):
    # only a read of exactly the size fstat gave is taken as the whole file.
    from reclass_ng.storage import regular_file

    class ShortReads:  # the os module as regular_file sees it, reading at most `most` bytes
        def __init__(self, most: int) -> None:
            self.most = most

        def __getattr__(self, name: str) -> object:
            return getattr(os, name)

        def read(self, fd: int, size: int) -> bytes:
            return os.read(fd, min(size, self.most))

    content = bytes(range(256)) * 40
    path = tmp_path / "file.yml"
    path.write_bytes(content)
    for most in (1000, 4096, len(content)):
        monkeypatch.setattr(regular_file, "os", ShortReads(most))
        assert read_regular_file(str(path), 1_000_000)[0] == content
