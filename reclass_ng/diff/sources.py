"""The two sides of `reclass-ng diff`: a directory as it is, or a git revision of it.

A revision is exported with `git archive` (only the inventory's sub-directory) into a temporary
directory that is removed afterwards: the repository, its index and its worktrees are never
touched, so diffing is safe while someone else works in the same checkout.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator

from reclass_ng.errors import NotFoundError, UsageError

# Messages name the command that asked (`diff` and `affected` both export revisions).
DEFAULT_COMMAND = "reclass-ng diff"


def _git(args: list[str], cwd: str, command: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise UsageError(f"{command}: --from/--to need git, which is not installed") from None


def _git_text(args: list[str], cwd: str, what: str, command: str) -> str:
    proc = _git(args, cwd, command)
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        raise UsageError(f"{command}: {what}: {message[-1] if message else 'git failed'}")
    return proc.stdout.decode().strip()


def repository_of(directory: str, command: str = DEFAULT_COMMAND) -> tuple[str, str]:
    """(top level of the git work tree holding `directory`, its path inside it, '' for top)."""
    if not os.path.isdir(directory):
        raise NotFoundError(f"No such directory: {directory}", path=str(directory))
    top = _git_text(["rev-parse", "--show-toplevel"], directory,
                    f"{directory} is not inside a git repository", command)
    prefix = _git_text(["rev-parse", "--show-prefix"], directory, "cannot locate the directory",
                       command)
    return top, prefix.rstrip("/")


def short_revision(directory: str, revision: str, command: str = DEFAULT_COMMAND) -> str:
    """The abbreviated commit id a revision names (checked to exist)."""
    return _git_text(["rev-parse", "--short", "--verify", "--end-of-options",
                      f"{revision}^{{commit}}"], directory, f"unknown revision {revision!r}",
                     command)


@contextlib.contextmanager
def exported_revision(directory: str, revision: str, command: str = DEFAULT_COMMAND
                      ) -> Iterator[str]:
    """The inventory `directory` as it was at `revision`, in a temporary directory."""
    top, prefix = repository_of(directory, command)
    # The commit id rev-parse checked, not the user's text: a revision spelt like an option
    # (`--output=...`) must never reach `git archive`.
    args = ["archive", "--format=tar", short_revision(directory, revision, command)]
    if prefix:
        args += ["--", prefix]
    proc = _git(args, top, command)
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip()
        raise UsageError(f"{command}: cannot export {prefix or 'the repository'} at "
                         f"{revision}: {message}")
    target = tempfile.mkdtemp(prefix="reclass-ng-diff-")
    try:
        with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as archive:
            if hasattr(tarfile, "data_filter"):
                # Refuse links and paths that would leave the temporary directory.
                archive.extractall(target, filter="data")
            else:  # pragma: no cover - Python before 3.10.12
                archive.extractall(target)  # noqa: S202
        yield os.path.join(target, prefix) if prefix else target
    finally:
        shutil.rmtree(target, ignore_errors=True)
