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
        from reclass_ng.storage.git_trees import exported_commit

        exported = exported_commit(path)
        if exported is not None:
            _, commit, inside = exported
            return f"{commit[:12]}:{inside}"  # git's REV:PATH (`git show` takes it)
    return path
