"""Branches of a git repository as directory trees, for the yaml_git storage.

The repository is mirrored into a bare repository in the cache directory (`git fetch` of every
branch each time an inventory is opened), and a branch is read from a directory holding the files
of its head commit, exported once per commit (`git archive`) and never changed afterwards: two
renders that see different heads read different directories, and a render never sees a
half-updated tree. Fetches and exports of one repository are serialised between processes by a
lock file in the lock directory.

The `git` command does the work (not pygit2): it is present wherever repositories are, it uses
the user's own transports, ssh configuration, agent and credential helpers, and it does not tie
reclass-ng to one libgit2 build.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator

from reclass_ng.errors import ConfigError, NotFoundError
from reclass_ng.location import is_hex

LOCK_TIMEOUT = 120.0  # seconds to wait for another process's fetch, as kapicorp-reclass does
GIT_TIMEOUT = 600.0  # seconds a fetch or an export may take
STALE_TREE_AGE = 24 * 3600.0  # a tree no branch head uses is removed after a day unused

DEFAULT_CACHE_DIR = "~/.reclass/cache/git"
DEFAULT_LOCK_DIR = "~/.reclass/cache/lock"


def cache_name(url: str) -> str:
    """The name of a repository's cache entries: its URL without the scheme, `/` made `_`."""
    return url.partition("://")[2].replace("/", "_") if "://" in url else url.replace("/", "_")


@contextlib.contextmanager
def locked(path: str) -> Iterator[None]:
    """An exclusive lock on `path` (created) for the duration; ConfigError after LOCK_TIMEOUT."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        # Not through a symbolic link (it would create or lock a file elsewhere); never
        # blocking on a FIFO put in its place.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                     | os.O_CLOEXEC, 0o600)
    except OSError as err:
        raise ConfigError(f"yaml_git: cannot open the lock file {path}: {err.strerror}"
                          + (" (a symbolic link or no regular file)"
                             if err.errno in (errno.ELOOP, errno.EISDIR) else "")) from None
    with os.fdopen(fd, "r+b") as handle:
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as err:
                if err.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() > deadline:
                    raise ConfigError(f"yaml_git: timed out after {LOCK_TIMEOUT:.0f} s waiting "
                                      f"for the lock file {path}") from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class GitTrees:
    """One remote repository's branches as directories (see the module docstring)."""

    def __init__(self, url: str, cache_dir: str | None = None, lock_dir: str | None = None,
                 private_key: str | None = None) -> None:
        self.url = url
        name = cache_name(url)
        if url.startswith("-") or name.strip(".") == "":  # yaml_git.check_repositories says why
            raise ConfigError(f"yaml_git: {url!r} is not a repository git may be given")
        # Absolute, so that no argument of git starts with `-` (a relative cache_dir could).
        cache_root = os.path.abspath(os.path.expanduser(cache_dir or DEFAULT_CACHE_DIR))
        self.mirror = os.path.join(cache_root, name + ".git")
        self.trees_dir = os.path.join(cache_root, name + ".trees")
        self.lock_file = os.path.join(
            os.path.abspath(os.path.expanduser(lock_dir or DEFAULT_LOCK_DIR)), name)
        self._env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
        if private_key:
            self._env["GIT_SSH_COMMAND"] = (
                f"ssh -i {_shell_word(os.path.expanduser(private_key))} -o IdentitiesOnly=yes")
        with locked(self.lock_file):
            self._fetch()
            self.heads = self._branch_heads()
            self._remove_stale_trees()

    def branches(self) -> list[str]:
        return sorted(self.heads)

    def tree(self, branch: str) -> str:
        """The directory with the files of `branch` as fetched when this object was made."""
        commit = self.heads.get(branch)
        if commit is None:
            known = ", ".join(self.branches()) or "none"
            raise NotFoundError(f"yaml_git: branch {branch!r} missing from {self.url} "
                                f"(branches: {known})")
        directory = os.path.join(self.trees_dir, commit)
        if not os.path.isdir(directory):
            with locked(self.lock_file):
                if not os.path.isdir(directory):
                    self._export(commit, directory)
        with contextlib.suppress(OSError):
            os.utime(directory)  # in use: not stale
        return directory

    def _git(self, *args: str, capture: bool = True) -> subprocess.CompletedProcess[bytes]:
        command = ["git", *args]
        try:
            done = subprocess.run(command, env=self._env, stdin=subprocess.DEVNULL,
                                  capture_output=capture, timeout=GIT_TIMEOUT, check=False)
        except FileNotFoundError:
            raise ConfigError("yaml_git storage needs the git command, which is not "
                              "installed (or not on PATH)") from None
        except subprocess.TimeoutExpired:
            raise ConfigError(f"yaml_git: `git {_subcommand(args)}` for {self.url} took more than "
                              f"{GIT_TIMEOUT:.0f} s") from None
        if done.returncode != 0:
            message = (done.stderr or b"").decode("utf-8", "replace").strip()
            raise ConfigError(f"yaml_git: `git {_subcommand(args)}` failed for {self.url}: "
                              f"{message}")
        return done

    def _fetch(self) -> None:
        if not os.path.isdir(self.mirror):
            os.makedirs(os.path.dirname(self.mirror), exist_ok=True)
            self._git("init", "--quiet", "--bare", "--", self.mirror)
        # Every branch of the remote becomes the branch of that name here; branches deleted
        # there are deleted here (--prune), so a removed environment is not read stale.
        # `--` before the URL: a URL read as an option (`--upload-pack=...`) runs a command.
        self._git(f"--git-dir={self.mirror}", "fetch", "--quiet", "--prune", "--no-tags",
                  "--", self.url, "+refs/heads/*:refs/heads/*")

    def _branch_heads(self) -> dict[str, str]:
        listing = self._git(f"--git-dir={self.mirror}", "for-each-ref",
                            "--format=%(objectname) %(refname)", "refs/heads/").stdout
        heads = {}
        for line in listing.decode("utf-8", "replace").splitlines():
            commit, _, ref = line.partition(" ")
            heads[ref[len("refs/heads/"):]] = commit
        return heads

    def _export(self, commit: str, directory: str) -> None:
        os.makedirs(self.trees_dir, exist_ok=True)
        partial = tempfile.mkdtemp(prefix=".export-", dir=self.trees_dir)
        try:
            with tempfile.TemporaryFile() as archive:
                process = subprocess.run(
                    ["git", f"--git-dir={self.mirror}", "archive", "--format=tar",
                     _object_id(commit)],
                    env=self._env, stdin=subprocess.DEVNULL, stdout=archive,
                    stderr=subprocess.PIPE, timeout=GIT_TIMEOUT, check=False)
                if process.returncode != 0:
                    message = process.stderr.decode("utf-8", "replace").strip()
                    raise ConfigError(f"yaml_git: `git archive` of {commit} failed for "
                                      f"{self.url}: {message}")
                archive.seek(0)
                try:
                    with tarfile.open(fileobj=archive, mode="r:") as tar:
                        # The "data" filter refuses links out of the tree and device files.
                        tar.extractall(partial, filter="data")
                except tarfile.TarError as err:
                    raise ConfigError(f"yaml_git: cannot export {commit} of {self.url}: "
                                      f"{err}") from None
            os.rename(partial, directory)  # atomic: a tree is complete or absent
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise

    def _remove_stale_trees(self) -> None:
        if not os.path.isdir(self.trees_dir):
            return
        current = set(self.heads.values())
        now = time.time()
        for entry in os.scandir(self.trees_dir):
            if entry.name in current:
                continue
            with contextlib.suppress(OSError):
                if now - entry.stat(follow_symlinks=False).st_mtime > STALE_TREE_AGE:
                    shutil.rmtree(entry.path)


def _subcommand(args: tuple[str, ...]) -> str:
    return args[1] if args[0].startswith("--git-dir=") else args[0]


def _object_id(text: str) -> str:
    """`text`, a commit id git gave; ConfigError for anything else (never an option)."""
    if len(text) not in (40, 64) or not is_hex(text):
        raise ConfigError(f"yaml_git: {text!r} is not a commit id")
    return text


def _shell_word(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def root_directory(tree: str, root: str | None, what: str, where: str) -> str:
    """The directory `root` names inside a tree; NotFoundError if it is not there."""
    directory = os.path.join(tree, root.strip("/")) if root else tree
    if not os.path.isdir(directory):
        raise NotFoundError(f"yaml_git: {what} root {root!r} is not a directory in {where}")
    return directory


def blob_ids(mirror: str, commit: str) -> dict[str, str]:
    """Path inside `commit` -> git's object id of that file's content (`git ls-tree`): the
    content digests of an exported tree, without reading its files. Symbolic links are left
    out (their object id is the link's target, not the content it leads to)."""
    done = subprocess.run(["git", f"--git-dir={os.path.abspath(mirror)}", "ls-tree", "-r",
                           "-z", "--full-tree", _object_id(commit)],
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT,
                          check=False, env=dict(os.environ, LC_ALL="C"))
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise ConfigError(f"yaml_git: `git ls-tree` of {commit} failed in {mirror}: {message}")
    found = {}
    for entry in done.stdout.split(b"\0"):
        info, _, path = entry.partition(b"\t")
        fields = info.split()
        if len(fields) == 3 and fields[1] == b"blob" and fields[0] != b"120000":
            found[os.fsdecode(path)] = fields[2].decode("ascii")
    return found
