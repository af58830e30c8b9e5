"""File digests that an earlier run's stat data may stand for, by git's "racy git" rule.

A file's stamp is (device, inode, size, mtime_ns, ctime_ns), taken with fstat on the open file
before its bytes are read and hashed. The next run takes a file's digest from the stored one,
without reading the file, only when all of these hold:

- the file's stamp now equals the stored stamp (any write changes the ctime, and users cannot
  set the ctime back: an edit of the same size whose mtime was restored with os.utime is seen);
- the stored stamp's mtime and ctime are older than the moment the earlier run started taking
  stamps, by more than RACY_NS: a file changed in the same clock tick as it was hashed (file
  system clocks are coarse: the kernel's tick, a second or two on some file systems) could
  carry the same stamp after a second change, so a stamp that recent proves nothing;
- the file lies on a local file system (the device's type in /proc/self/mountinfo is in
  LOCAL_FILE_SYSTEMS). Network file systems cache attributes for many seconds and a change made
  on another host may not show in them: their files are always hashed, as on systems without
  /proc/self/mountinfo.

Everything else is hashed (and its stamp stored for the next run).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping

from reclass_ng.errors import YamlFileError
from reclass_ng.incremental.snapshot import RACY_SECONDS, Digest, local_devices
from reclass_ng.storage.yaml_load import read_input_file_stat

RACY_NS = int(RACY_SECONDS * 1e9)

Stamp = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns


def stamp_of(stat: os.stat_result) -> Stamp:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def stamped_digest(path: str) -> tuple[Digest | None, Stamp | None]:
    """A file's digest and its stamp, taken before its bytes are read; (None, None) when it
    cannot be read."""
    try:
        data, stat = read_input_file_stat(path)  # never blocks on a FIFO, nor reads /dev/zero
    except YamlFileError:
        return None, None
    return hashlib.blake2b(data, digest_size=16).digest(), stamp_of(stat)


class StampedDigests:
    """The digests of one run: trusted from `known` (path -> (digest, stamp) stored by a run
    that started taking stamps at `known_taken_at`, ns since the epoch) where the rule above
    allows, hashed otherwise. `entries` is what this run stores for the next one."""

    def __init__(self, known: Mapping[str, tuple[Digest | None, Stamp | None]] | None = None,
                 known_taken_at: int = 0) -> None:
        self.taken_at = time.time_ns()
        self.known = known or {}
        self.trusted_before = known_taken_at - RACY_NS
        self.local = local_devices()
        self.entries: dict[str, tuple[Digest | None, Stamp | None]] = {}
        self.hashed: list[str] = []  # files read and hashed by this run

    def digest(self, path: str) -> Digest | None:
        entry = self.known.get(path)
        if entry is not None and entry[1] is not None and self._trusted(path, entry[1]):
            self.entries[path] = entry
            return entry[0]
        self.hashed.append(path)
        entry = self.entries[path] = stamped_digest(path)
        return entry[0]

    def _trusted(self, path: str, stamp: Stamp) -> bool:
        if max(stamp[3], stamp[4]) >= self.trusted_before:
            return False  # racy: changed too close to the moment it was hashed
        try:
            now = stamp_of(os.stat(path))
        except OSError:
            return False
        return now == stamp and (os.major(now[0]), os.minor(now[0])) in self.local

    def worth_storing(self) -> bool:
        """True when a file was hashed that the next run could trust if this run's stamps
        were stored (a file touched without a change, or one racy for the earlier run)."""
        for path in self.hashed:
            stamp = self.entries[path][1]
            if (stamp is not None and max(stamp[3], stamp[4]) < self.taken_at - RACY_NS
                    and (os.major(stamp[0]), os.minor(stamp[0])) in self.local):
                return True
        return False
