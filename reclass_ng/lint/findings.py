"""What a lint rule reports: a Finding, and the catalogue of rules with their severities."""

from __future__ import annotations

from typing import Any

import attrs

from reclass_ng.location import display_path

ERROR = "error"
WARNING = "warning"

# name -> (severity, what it finds). Every rule can be disabled by name.
RULES: dict[str, tuple[str, str]] = {
    "yaml-syntax": (ERROR, "a file that is not valid YAML"),
    "load-error": (ERROR, "the inventory cannot be opened (configuration, duplicate names)"),
    "duplicate-key": (ERROR, "a key written twice in one YAML mapping (YAML keeps the last)"),
    "delimiter-in-key": (WARNING, "a parameter key containing the reference delimiter"),
    "unreachable-class": (WARNING, "a class that no node can reach"),
    "dead-value": (WARNING, "a class value that every node using the class overrides"),
    "type-change": (WARNING, "a key whose type changes between layers"),
    "constant-ignored": (ERROR, "a write to a key an earlier `=` constant fixed"),
    "failing-reference": (ERROR, "a reference that cannot be resolved on some nodes"),
    "node-error": (ERROR, "a node that cannot be rendered for another reason"),
    "schema": (ERROR, "a parameter value that breaks the JSON Schema the `schemas` setting "
                      "attaches"),
}


@attrs.frozen
class Finding:
    """One problem at one place."""

    rule: str
    severity: str
    path: str  # the file, or "" when no file is concerned
    line: int | None
    message: str

    def location(self, base: str | None = None) -> str:
        """`file:line` (the file relative to `base`)."""
        shown = display_path(self.path, base) if self.path else self.path
        if not shown:
            return "<inventory>"
        return f"{shown}:{self.line}" if self.line else shown

    def text(self, base: str | None = None) -> str:
        """The finding as one line of text output."""
        return f"{self.location(base)}: {self.severity} {self.rule}: {self.message}"

    def as_dict(self, base: str | None = None) -> dict[str, Any]:
        """The finding as plain data (the JSON output)."""
        file = display_path(self.path, base) if self.path else self.path
        return {"file": file, "line": self.line, "severity": self.severity, "rule": self.rule,
                "message": self.message}


def finding(rule: str, path: str | None, line: int | None, message: str,
            severity: str | None = None) -> Finding:
    """A Finding with the rule's default severity unless one is given."""
    return Finding(rule, severity or RULES[rule][0], path or "", line, message)
