"""Where something is written: a file, line and column, and how a file is shown to a user.

A Location is a value that errors, provenance records and tools pass around; it becomes text
only where it is shown (`Location.text`), with the file relative to the inventory when it lies
inside (`display_path`, the one place that decides how a file is shown).
"""

from __future__ import annotations

import os

from reclass_ng.records import Record


class Location(Record):
    """A place in a file: 1-based line and column (None when unknown)."""

    __slots__ = ("file", "line", "column")
    _fields = __slots__
    file: str
    line: int | None
    column: int | None

    def __init__(self, file: str, line: int | None = None, column: int | None = None) -> None:
        _set = object.__setattr__
        _set(self, "file", file)
        _set(self, "line", line)
        _set(self, "column", column)

    def text(self, base: str | None = None) -> str:
        """`file:line:column` (the file relative to `base` when it lies inside)."""
        shown = display_path(self.file, base)
        if self.line is None:
            return shown
        return f"{shown}:{self.line}" + (f":{self.column}" if self.column is not None else "")


def display_path(path: str, base: str | None) -> str:
    """`path` as messages show it: relative to the inventory `base` when it lies inside, as
    `COMMIT:PATH` in its repository when it is a file of a yaml_git branch (not the cache)."""
    if not base or not os.path.isabs(path):
        return path
    relative = os.path.relpath(path, base)
    if not relative.startswith(".."):
        return relative
    if ".trees" + os.sep in path:  # a yaml_git file: where it is in its repository
        exported = exported_commit(path)
        if exported is not None:
            _, commit, inside = exported
            return f"{commit[:12]}:{inside}"  # git's REV:PATH (`git show` takes it)
    return path


def exported_commit(directory: str) -> tuple[str, str, str] | None:
    """(mirror repository, commit, path inside the commit) of a directory inside a tree that
    storage/git_trees.py exported (`<cache>/<name>.trees/<commit>/...`); None for any other
    directory. Here, below storage, because `display_path` shows such files by commit."""
    parts = os.path.abspath(directory).split(os.sep)
    for index in range(len(parts) - 1, 0, -1):
        commit, parent = parts[index], parts[index - 1]
        if parent.endswith(".trees") and len(commit) in (40, 64) and is_hex(commit):
            mirror = os.sep.join(parts[:index - 1] + [parent[:-len(".trees")] + ".git"])
            return mirror, commit, "/".join(parts[index + 1:])
    return None


def is_hex(text: str) -> bool:
    return all(char in "0123456789abcdef" for char in text)
