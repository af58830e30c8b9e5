"""`reclass-ng serve --git-commit`: every API write also becomes a git commit in the inventory's
repository, authored by the token's name with the activity log's message, so the history the
team reviews shows who changed what through the API.

The commit is made under the inventory lock, once the write's log entries are final
(activity_log.py), and names only the files the write changed: whatever else is staged or
modified in the work tree is left alone. A failing commit (no repository, a broken index) is
logged and does not undo the write, which is already on disk and in the activity log.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("reclass_ng.server")

GIT_TIMEOUT_SECONDS = 30
# The service commits; the author is the token that asked for the write.
_COMMITTER = {"GIT_COMMITTER_NAME": "reclass-ng serve",
              "GIT_COMMITTER_EMAIL": "reclass-ng-serve@localhost"}


def author_of(subject: str) -> str:
    """`Name <email>` for a token name (git needs both; the address is never delivered)."""
    name = "".join(c for c in subject if c.isprintable() and c not in "<>\n") or "unknown"
    email = "".join(c for c in name.lower() if c.isalnum() or c in "-_.") or "token"
    return f"{name} <{email}@reclass-ng.invalid>"


def commit_message(entries: Sequence[dict[str, Any]]) -> str:
    """The first entry's message as the subject; every entry (and its changed fields) below."""
    lines = [entries[0]["message"], ""]
    for entry in entries:
        lines.append(f"- {entry['message']}")
    lines.append("")
    lines.append(f"Written through the classifier API (write {entries[0]['write_id']}).")
    return "\n".join(lines) + "\n"


class GitCommits:
    """Commits the files of one write in the repository holding `inventory_dir`."""

    def __init__(self, inventory_dir: str | os.PathLike[str]) -> None:
        self.inventory_dir = Path(inventory_dir)

    def _git(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        # --literal-pathspecs: file names are never patterns; `--` before them everywhere.
        return subprocess.run(["git", "--literal-pathspecs", *args], cwd=self.inventory_dir,
                              input=stdin, capture_output=True, timeout=GIT_TIMEOUT_SECONDS,
                              check=False, env={**os.environ, **_COMMITTER})

    def commit(self, entries: Sequence[dict[str, Any]]) -> None:
        """One commit with the files of `entries` (one API write)."""
        if not entries:
            return
        files = list(dict.fromkeys(entry["file"] for entry in entries))
        try:
            added = self._git("add", "-A", "--", *files)
            if added.returncode != 0:
                raise RuntimeError(added.stderr.decode("utf-8", "replace").strip())
            done = self._git("commit", "--quiet", "--no-verify", "--no-gpg-sign",
                             f"--author={author_of(entries[0]['subject']['name'])}",
                             "--file=-", "--", *files, stdin=commit_message(entries).encode())
            if done.returncode != 0:
                raise RuntimeError(done.stderr.decode("utf-8", "replace").strip()
                                   or done.stdout.decode("utf-8", "replace").strip())
        except (OSError, subprocess.SubprocessError, RuntimeError) as err:
            log.warning("reclass-ng serve: could not commit write %s to git in %s: %s",
                        entries[0]["write_id"], self.inventory_dir, err)
