"""Real git repositories for the yaml_git tests: a bare repository whose branches hold given
files, and pushing a change to one branch, both through the `git` command."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from inventory_writer import write_inventory

# Tests run with an empty HOME: no user identity or default branch configured there.
GIT_IDENTITY = ["-c", "user.name=reclass-ng tests", "-c", "user.email=tests@reclass-ng.invalid",
                "-c", "init.defaultBranch=master", "-c", "commit.gpgsign=false"]


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *GIT_IDENTITY, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def bare_repository(path: Path, branches: Mapping[str, Mapping[str, str]]) -> str:
    """A bare repository at `path` with one commit per branch holding exactly the given files
    (relative path -> text); returns its file:// URL."""
    git("init", "--quiet", "--bare", str(path))
    work = path.with_name(path.name + "-work")
    git("init", "--quiet", str(work))
    for branch, files in branches.items():
        git("checkout", "--quiet", "--orphan", branch, cwd=work)
        git("rm", "-r", "--quiet", "--force", "--ignore-unmatch", ".", cwd=work)
        write_files(work, files)
        git("add", "--all", cwd=work)
        git("commit", "--quiet", "--allow-empty", "-m", f"{branch}: files", cwd=work)
        git("push", "--quiet", str(path), f"{branch}:{branch}", cwd=work)
    return path.resolve().as_uri()


def push_change(url: str, branch: str, files: Mapping[str, str], scratch: Path) -> None:
    """Clone `branch`, change or add the given files, commit and push, as a user would."""
    git("clone", "--quiet", "--branch", branch, url, str(scratch))
    write_files(scratch, files)
    git("add", "--all", cwd=scratch)
    git("commit", "--quiet", "-m", "change", cwd=scratch)
    git("push", "--quiet", "origin", branch, cwd=scratch)


def write_files(root: Path, files: Mapping[str, str]) -> None:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


__all__ = ["bare_repository", "git", "push_change", "write_files", "write_inventory"]
