"""Classifier problems and errors, named with the Node Classifier's error kinds.

A `GroupProblem` is one thing wrong with the group tree (a value, so loading can collect them
all); `GroupValidationError` carries the whole list. Each problem can render itself as the
classifier's JSON error object `{kind, msg, details}` for the HTTP API.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import attrs

from reclass_ng.errors import EX_DATAERR, EX_IOERR, INDENT, ReclassError

# Node Classifier error kinds used for group problems.
SCHEMA_VIOLATION = "schema-violation"
MALFORMED_UUID = "malformed-uuid"
MISSING_PARENT = "missing-parent"
INHERITANCE_CYCLE = "inheritance-cycle"
UNIQUENESS_VIOLATION = "uniqueness-violation"
UNREACHABLE_GROUPS = "unreachable-groups"
ROOT_RULE_EDIT = "root-rule-edit"
# reclass-ng's own kind: the classifier's database always has a root, a directory may not.
MISSING_ROOT = "missing-root"
CLASSIFICATION_CONFLICT = "classification-conflict"
# reclass-ng's own kind: a group's references expand past the engine's limit (a bomb).
REFERENCE_EXPANSION = "reference-expansion"


@attrs.frozen
class GroupProblem:
    """One problem in the group tree: its kind, a message, and where it was found."""

    kind: str
    message: str
    file: str | None = None
    group_id: str | None = None
    group_name: str | None = None
    details: Any = None
    key: tuple[str, ...] | None = None  # the field of the group file the problem is about

    def line(self, base: str | None = None) -> int | None:
        """The line of the problem's field in its file (`file` is relative to the inventory
        directory `base`), when both are known; looked up only when a problem is shown."""
        if not self.file or not self.key:
            return None
        from reclass_ng.storage.positions import value_position

        position = value_position(os.path.join(base or "", self.file), self.key)
        return position[0] if position else None

    def describe(self, base: str | None = None) -> str:
        """One line for a terminal: `file:line: kind: message`."""
        where = self.file or (f"group {self.group_name!r}" if self.group_name else "groups")
        line = self.line(base)
        return f"{where}{f':{line}' if line else ''}: {self.kind}: {self.message}"

    def record(self, base: str | None = None) -> dict[str, Any]:
        """This problem as an entry of `--errors json`."""
        return {"node": None, "class": None, "file": self.file, "line": self.line(base),
                "column": None, "key_path": ":".join(self.key) if self.key else None,
                "message": self.message, "kind": self.kind, "suggestions": [],
                "reference_chain": [], "group": self.group_name}

    def to_error(self) -> dict[str, Any]:
        """The classifier's error object for this problem."""
        return {"kind": self.kind, "msg": self.message, "details": self.details}


class GroupValidationError(ReclassError):
    """The group tree has problems; all of them are listed, not just the first."""

    exit_code = EX_DATAERR

    def __init__(self, problems: Sequence[GroupProblem], where: str = "groups") -> None:
        super().__init__(f"{len(problems)} problem(s) in {where}")
        self.problems = list(problems)
        self.where = where
        self.base = os.path.dirname(where)  # the problems' files are `groups/...` below it

    def records(self) -> list[dict[str, Any]]:
        """One entry per problem, with its file and line."""
        return [problem.record(self.base) for problem in self.problems]

    def detail_lines(self) -> list[str]:
        count = len(self.problems)
        head = f"Invalid node groups in {self.where}: {count} problem{'s' if count != 1 else ''}"
        return [head] + [INDENT + problem.describe(self.base) for problem in self.problems]


class ClassificationConflictError(ReclassError):
    """Unrelated matching groups set different values; `details` says which and where."""

    exit_code = EX_DATAERR

    def __init__(self, node: str, msg: str, details: dict[str, Any]) -> None:
        super().__init__(msg)
        self.node_name = node
        self.msg = msg
        self.details = details

    def to_error(self) -> dict[str, Any]:
        """The classifier's `classification-conflict` error object."""
        return {"kind": CLASSIFICATION_CONFLICT, "msg": self.msg, "details": self.details}


class FactsError(ReclassError):
    """A facts file that cannot be read or is not a mapping of facts."""

    exit_code = EX_DATAERR


class FactsNotFoundError(FactsError):
    """The node's facts are needed by the group rules but there is no facts file."""

    exit_code = EX_IOERR
