"""Diagnostics of one file: its YAML syntax, the render errors written in it, the schema
violations whose bad value is written in it, lint's file rules and the findings of lint's
write rules located in it (once reclass_ng.lsp.lint_pass ran them for the file).

A render error is published for the file the problem is written in (`ReclassError.file()`, or
each file a merge conflict names), not the node that tripped on it; the same error met by many
nodes is one diagnostic that says how many.
"""

from __future__ import annotations

import os
from typing import Any

from reclass_ng.errors import ClassNotFound, ReclassError, YamlFileError
from reclass_ng.lint.findings import Finding
from reclass_ng.lint.yaml_pass import LineIndex, check_files
from reclass_ng.lsp.documents import Outline, Span
from reclass_ng.lsp.live import EditedInventory
from reclass_ng.prepare import absolute_class_name
from reclass_ng.schemas import Violation, group_violations
from reclass_ng.suggestions import did_you_mean

ERROR, WARNING = 1, 2  # LSP DiagnosticSeverity
NODES_NAMED = 5  # nodes a message names before "and N more"


class FileDiagnostic:
    """One diagnostic: span, message, severity, and the class names a quick fix may write."""

    __slots__ = ("span", "message", "severity", "replacements", "code")

    def __init__(self, span: Span, message: str, severity: int, code: str,
                 replacements: list[str] | None = None) -> None:
        self.span = span
        self.message = message
        self.severity = severity
        self.code = code
        self.replacements = replacements or []


def _files_of(err: ReclassError) -> list[str]:
    path = err.file()
    if path:
        return [path]
    return sorted({origin.path for origin in err.origins if origin is not None and origin.path})


def _error_span(err: ReclassError, outline: Outline, class_name: str | None) -> Span:
    if isinstance(err, ClassNotFound):
        for listed, span in outline.class_items():
            if listed == err.name or absolute_class_name(listed, class_name or "") == err.name:
                return span
    keys = err.yaml_keys()
    if keys:
        found = outline.key_span(tuple(str(key) for key in keys))
        if found is not None:
            return found
    position = err.position() if isinstance(err.file(), str) else None
    if position is not None:
        return ((position[0] - 1, position[1] - 1), (position[0] - 1, position[1] - 1))
    return ((0, 0), (0, 0))


def _error_message(err: ReclassError) -> str:
    lines = err.detail_lines() if hasattr(err, "detail_lines") else [str(err)]
    text = " ".join(line for line in lines if not line.startswith("In "))
    return text or err.text or str(err)


def _nodes_phrase(nodes: list[str]) -> str:
    shown = ", ".join(nodes[:NODES_NAMED])
    more = f" and {len(nodes) - NODES_NAMED} more" if len(nodes) > NODES_NAMED else ""
    return f"{len(nodes)} node{'s' if len(nodes) != 1 else ''} affected: {shown}{more}"


def file_diagnostics(live: EditedInventory | None, path: str, text: str,
                     lint_file: bool = True) -> list[FileDiagnostic]:
    """Every diagnostic of `path` (whose text the user sees is `text`)."""
    path = os.path.abspath(path)
    outline = Outline(text, path)
    found: list[FileDiagnostic] = []
    if outline.problem is not None:
        at = outline.problem.position
        found.append(FileDiagnostic((at, (at[0], at[1] + 1)), outline.problem.message, ERROR,
                                    "yaml-syntax"))
    if live is None:
        return found
    if live.failure is not None:
        found.append(FileDiagnostic(((0, 0), (0, 0)), f"inventory cannot be read: "
                                    f"{live.failure.message}", ERROR, "load-error"))
        return found
    found.extend(_render_error_diagnostics(live, path, outline))
    found.extend(_schema_diagnostics(live, path, outline))
    if lint_file and outline.problem is None and os.path.isfile(path) \
            and path not in live.buffers:
        found.extend(_lint_findings(live, path, outline))
    if outline.problem is None:
        found.extend(_finding_diagnostic(item, outline)
                     for item in live.current.write_findings.get(path, ()))
    return found


def _render_error_diagnostics(live: EditedInventory, path: str, outline: Outline
                              ) -> list[FileDiagnostic]:
    """The render errors written in `path`, one diagnostic per error and place, saying
    which nodes it breaks."""
    class_name = live.class_name_of(path)
    grouped: dict[tuple[Span, str], tuple[ReclassError, list[str]]] = {}
    for state in list(live.nodes.values()):
        for err in state.errors:
            if path not in _files_of(err):
                continue
            if outline.problem is not None and isinstance(err, YamlFileError):
                continue  # the buffer's own syntax error says it, at its place
            span = _error_span(err, outline, class_name) if outline.problem is None \
                else ((0, 0), (0, 0))
            key = (span, _error_message(err))
            grouped.setdefault(key, (err, []))[1].append(state.name)
    found = []
    for (span, message), (err, nodes) in sorted(grouped.items(), key=lambda item: item[0]):
        suggestions = err.suggestions() if isinstance(err, ClassNotFound) else []
        found.append(FileDiagnostic(
            span, f"{message}{did_you_mean(suggestions)} [{_nodes_phrase(sorted(nodes))}]",
            ERROR, err.error_kind, suggestions))
    return found


def _schema_diagnostics(live: EditedInventory, path: str, outline: Outline
                        ) -> list[FileDiagnostic]:
    """The schema violations whose value is written in `path`, at the write (one diagnostic
    per violation shared by nodes), and a schema that cannot be used on reclass-config.yml."""
    found = []
    failure = live.current.schema_failure
    if failure is not None and os.path.basename(path) == "reclass-config.yml":
        found.append(FileDiagnostic(((0, 0), (0, 0)), failure.message, ERROR, "schema"))
    mine = [v for state in list(live.nodes.values()) for v in state.violations
            if v.write_file == path]
    for group in group_violations(mine):
        violation = group.violation
        found.append(FileDiagnostic(_write_span(violation, outline),
                                    f"{violation.text()} [{_nodes_phrase(list(group.nodes))}]",
                                    ERROR, "schema"))
    return found


def _write_span(violation: Violation, outline: Outline) -> Span:
    """From the write's line:column to the end of its line (the file's first character
    when the engine kept no line)."""
    if not violation.write_line:
        return ((0, 0), (0, 0))
    line = violation.write_line - 1
    column = max((violation.write_column or 1) - 1, 0)
    width = len(outline.lines[line]) if line < len(outline.lines) else column
    return ((line, column), (line, max(width, column)))


def _lint_findings(live: EditedInventory, path: str, outline: Outline) -> list[FileDiagnostic]:
    """lint's file rules (duplicate keys, delimiters in keys) of the file as saved."""
    settings = live.settings
    if settings is None:
        return []
    prefixes = settings.dict_key_override_prefix + settings.dict_key_constant_prefix
    return [_finding_diagnostic(item, outline)
            for item in check_files([path], settings.delimiter, prefixes,
                                    LineIndex(live.root.path))
            if item.rule != "yaml-syntax"]  # the buffer's own syntax error is reported above


def _finding_diagnostic(item: Finding, outline: Outline) -> FileDiagnostic:
    """A lint finding on its whole line."""
    line = max((item.line or 1) - 1, 0)
    width = len(outline.lines[line]) if line < len(outline.lines) else 0
    return FileDiagnostic(((line, 0), (line, width)), f"{item.message} (lint)",
                          ERROR if item.severity == "error" else WARNING, item.rule)


def diagnostic_data(diagnostic: FileDiagnostic) -> dict[str, Any] | None:
    """What a quick fix needs of a diagnostic, carried through the client."""
    return {"replacements": diagnostic.replacements} if diagnostic.replacements else None
