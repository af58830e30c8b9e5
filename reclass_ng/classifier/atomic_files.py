"""Replacing files and directories so a reader (or a crash) sees the old state or the new one.

The files people keep in the inventory or configuration are written here (the service's group
and node files, the class catalogue, the tokens file, an imported group hierarchy): a temporary file (or
directory) next to the target, written and fsynced, renamed over it, then the directory fsynced
so that the rename itself survives a power cut.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

# Temporary files of a write start with this (hidden, so no loader reads them); one left behind
# by a killed process is removed by the service (server/yaml_files.remove_stale_temp_files).
TEMP_PREFIX = ".reclass-ng-tmp."


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Flush a directory's entries (a rename into it) to disk. Where a directory cannot be
    opened for that (not POSIX), the rename is still atomic, only its durability is the
    system's."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except (OSError, AttributeError):
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Replace `path` with `text` (UTF-8): temp file in the same directory, fsync, os.replace,
    fsync of the directory. The file keeps its permissions and, where the system lets us, its
    owner and group (new files: 0644). A symbolic link is written through: its target is
    replaced and the link stays, so a shared file stays shared and the link's target keeps its
    mode (replacing the link would turn it into a copy)."""
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        _copy_owner_and_mode(path, temp)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    fsync_directory(path.parent)


def _copy_owner_and_mode(original: Path, temp: str) -> None:
    """Give `temp` the mode of `original` (0644 when there is none) and its owner and group as
    far as this process may (root: both; the owner: a group it belongs to). The owner goes
    first: chown clears set-id bits, which the chmod then restores."""
    try:
        info = original.stat()
    except FileNotFoundError:
        os.chmod(temp, 0o644)
        return
    for uid, gid in ((info.st_uid, info.st_gid), (-1, info.st_gid)):
        try:
            os.chown(temp, uid, gid)
            break
        except OSError:
            continue
    os.chmod(temp, info.st_mode & 0o777)  # set-id and sticky bits are not carried over


def replace_directory(target: str | os.PathLike[str], files: dict[str, str | bytes]) -> None:
    """Make directory `target` hold exactly `files` (relative path -> text or bytes).

    The new tree is written to a hidden sibling directory first, then swapped with the old one
    in a single renameat2(RENAME_EXCHANGE) on Linux, so a reader sees the old set or the new
    one, never a mix. Where that call is missing, the old directory is renamed aside and the
    new one into place (a reader may then briefly find no directory, never a mix). If anything
    fails before the swap, the old directory is untouched.
    """
    target = Path(target)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new.", dir=target.parent))
    try:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as stream:
                stream.write(text.encode("utf-8") if isinstance(text, str) else text)
                stream.flush()
                os.fsync(stream.fileno())
        for directory in {staging, *((staging / relative).parent for relative in files)}:
            fsync_directory(directory)
        os.chmod(staging, target.stat().st_mode & 0o777 if target.exists() else 0o755)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists() and _exchange(staging, target):
        fsync_directory(target.parent)
        shutil.rmtree(staging, ignore_errors=True)  # it now holds the old tree
        return
    old = target.parent / f".{target.name}.old.{os.getpid()}"
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    fsync_directory(target.parent)
    shutil.rmtree(old, ignore_errors=True)


_RENAME_EXCHANGE = 2  # linux/fs.h


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one step with Linux's renameat2(RENAME_EXCHANGE); False where the
    system call is unavailable (other systems, old kernels, some file systems)."""
    import ctypes  # only for imports of a hierarchy

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    result = renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second),
                       _RENAME_EXCHANGE)
    return result == 0
