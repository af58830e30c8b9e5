"""Errors about one value of a node: `<text>, at <path>, in <uri>`: missing and bad references,
merges that cannot be made, changed constants, reference loops, parse errors, failing inventory
queries."""

from __future__ import annotations

from reclass_ng.errors.base import (
    INDENT,
    ReclassError,
    _entity_text,
    _origins,
    format_path,
    origin_text,
    value_position,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from reclass_ng.values import Source


class ValueAtPathError(ReclassError):
    """Base for errors about one value: `<text>, at <path>, in <uri>`.

    `origins` are the values.Source records of the files involved (one, or every layer of a
    merge), shown as their URIs; `section` ("parameters" or "exports") when the raiser knows
    which one the path is in."""

    def __init__(self, text: str, path: Sequence[object], origins: Source | Sequence[Source | None]
                 | None, *, section: str | None = None, **context: Any) -> None:
        super().__init__(text, **context)
        self.path = tuple(path)
        self.origins = _origins(origins)
        self.section = section

    @property
    def uri(self) -> str | None:
        """The URIs of the files involved, as the message shows them (None when unknown)."""
        return origin_text(self.origins) or None

    def key_path(self) -> str | None:
        """The key path the error is about, as text."""
        return format_path(self.path) if self.path else None

    def yaml_keys(self) -> tuple | None:
        """The keys leading to the error's place in its YAML file."""
        if not self.path:
            return None
        if self.section:
            return (self.section, *self.path)
        # Paths from reading a file name their section when it is not `parameters`.
        if self.path[0] in ("exports", "classes"):
            return self.path
        return ("parameters", *self.path)

    def location(self) -> str:
        """Where the value is written, as the message shows it."""
        where = f", at {format_path(self.path)}" if self.path else ""
        uri = self.uri
        return where + (f", in {uri}" if uri else "")

    def detail_lines(self) -> list[str]:
        """The lines describing this error, without the node header."""
        return [self.text + self.location()]


class ResolveError(ValueAtPathError):
    """A reference whose path does not exist."""

    kind = "missing_reference"

    def __init__(self, ref: str, path: Sequence[object] = (), origin: Source | None = None,
                 hint: str | None = None, **context: Any) -> None:
        super().__init__(f"Cannot resolve {ref}", path, origin, **context)
        self.ref = ref
        self.hint = hint

    def detail_lines(self) -> list[str]:
        """The lines describing this error, without the node header."""
        line = self.text + self.location()
        return [line + (f" ({self.hint})" if self.hint else "")]


class ResolveErrorList(ReclassError):
    """Several missing references of one node, reported together (group_errors)."""

    kind = "missing_reference"

    def __init__(self, errors: Sequence[ResolveError]) -> None:
        super().__init__("")
        self.errors = list(errors)

    def detail_lines(self) -> list[str]:
        """The lines of every error in the list."""
        return [line for err in self.errors for line in err.detail_lines()]

    def described_lines(self) -> list[str]:
        """The details of every error, each followed by its context lines."""
        return [line for err in self.errors for line in err.described_lines()]

    def records(self) -> list[dict[str, Any]]:
        """Every error of the list as a machine-readable entry."""
        return [err.record(self.node) for err in self.errors]

    def problem_reports(self) -> list[tuple[list[str], dict[str, Any]]]:
        """Each missing reference with its report lines and record."""
        return [(err.described_lines(), err.record(self.node)) for err in self.errors]


class BadReferencesError(ValueAtPathError):
    kind = "bad_reference"

    def __init__(self, refs: Iterable[str], path: Sequence[object], origin: Source | None,
                 **context: Any) -> None:
        super().__init__("Bad references", path, origin, **context)
        self.refs = list(refs)

    def detail_lines(self) -> list[str]:
        """The lines describing this error, without the node header."""
        return [self.text + self.location()] + [INDENT + ref for ref in self.refs]


class TwoSidedError(ValueAtPathError):
    """An error between two writes of one key (a merge, a constant): both are pointed at.

    `origins` are the files kapicorp's message lists; `sides` are (label, values.Source) pairs,
    the later write first; each becomes a context line `<label> FILE:LINE:COLUMN (class NAME)`
    under kapicorp's message."""

    def __init__(self, text: str, path: Sequence[object], origins: Sequence[Source | None],
                 sides: Sequence[tuple[str, Source | None]] = ()) -> None:
        known = [(label, source) for label, source in sides if source is not None]
        super().__init__(text, path, origins, source=known[0][1] if known else None)
        self.sides = known

    def side_lines(self) -> list[str]:
        from reclass_ng.location import Location  # only when reported: not every start

        lines = []
        keys = self.yaml_keys() or ()
        for label, source in self.sides:
            if not source.path:
                continue
            position = value_position(source.path, keys) or ()
            lines.append(f"{label} {Location(source.path, *position).text()}"
                         + _entity_text(source))
        return lines

    def context_lines(self) -> list[str]:
        if "sides" not in self._found:
            self._found["sides"] = self.side_lines()
        rest = [line for line in super().context_lines() if not line.startswith("written at ")]
        return self._found["sides"] + rest

    def __reduce__(self) -> Any:
        self.context_lines()  # positions are worked out before the error travels
        return super().__reduce__()


class TypeMergeError(TwoSidedError):
    def __init__(self, new_kind: str, old_kind: str, path: Sequence[object],
                 origins: Sequence[Source | None], new_source: Source | None = None,
                 old_source: Source | None = None) -> None:
        super().__init__(f"Cannot merge {new_kind} over {old_kind}", path, origins,
                         [("written at", new_source), (f"merged over the {old_kind} at", old_source)])


class ChangedConstantError(TwoSidedError):
    def __init__(self, path: Sequence[object], origins: Sequence[Source | None],
                 new_source: Source | None = None, constant_source: Source | None = None) -> None:
        super().__init__("Attempt to change constant value", path, origins,
                         [("written at", new_source), ("the constant is set at", constant_source)])


class InfiniteRecursionError(ValueAtPathError):
    kind = "reference_loop"

    def __init__(self, ref: str, path: Sequence[object], origins: Source | Sequence[Source | None]
                 | None, loop: str = "", **context: Any) -> None:
        super().__init__(f"Infinite recursion: {ref}", path, origins, **context)
        self.loop = loop

    def detail_lines(self) -> list[str]:
        """The lines describing this error, without the node header."""
        lines = [self.text + self.location()]
        if self.loop:
            lines.append(INDENT + self.loop)
        return lines


class ReferenceExpansionError(ValueAtPathError):
    """References of one node producing more than the render allows (a reference bomb: each
    level of `b: [${a}, ${a}]`, `c: [${b}, ${b}]`, ... doubles what the node holds)."""

    kind = "reference_expansion"

    def __init__(self, ref: str, limit: int, path: Sequence[object], origin: Source | None,
                 **context: Any) -> None:
        super().__init__(f"References expand to more than {limit:,} values and characters "
                         f"in this node (a reference bomb?): {ref}", path, origin, **context)
        self.ref = ref
        self.limit = limit


class ParseError(ValueAtPathError):
    """A string whose references (or query) are not well formed; `column` (1-based) points
    into `syntax`, the text parsed (the value, or the query inside it)."""

    def __init__(self, value: str, problem: str, path: Sequence[object], origin: Source | None,
                 column: int | None = None, syntax: str | None = None) -> None:
        super().__init__(f"Parse error: {value}", path, origin)
        self.problem = problem
        self.column = column
        self.syntax = value if syntax is None else syntax

    def detail_lines(self) -> list[str]:
        """The message, the problem, and the text with a caret under the column."""
        lines = [self.text + self.location(), self.problem]
        if self.column is not None and "\n" not in self.syntax:
            lines += [INDENT + self.syntax, INDENT + " " * (self.column - 1) + "^"]
        return lines


class ExpressionError(ValueAtPathError):
    """An inventory query that cannot be evaluated."""


class NoExportError(ExpressionError):
    """A query test that compares no export (`if foo:a == 1`)."""

    def __init__(self, test: str, path: Sequence[object], origin: Source | None) -> None:
        super().__init__(f"Expression error: No export in test '{test}'", path, origin)


class QueryPositionError(ValueAtPathError):
    def __init__(self, value: str, path: Sequence[object], origin: Source | None) -> None:
        super().__init__(
            f"Inventory query in {value!r} must be the whole value, not part of a longer string",
            path, origin)


class InvQueryError(ReclassError):
    """Another node failed while an inventory query of this node needed its exports."""

    def __init__(self, query: str, cause: ReclassError) -> None:
        super().__init__("")
        self.query = query
        self.cause = cause

    def detail_lines(self) -> list[str]:
        """The lines describing this error, without the node header."""
        return [f"Failed inv query {self.query}"] + self.cause.lines()


class InventoryQueryNodeError(ReclassError):
    """Another node could not even be loaded while building the inventory for queries."""

    def __init__(self, cause: ReclassError) -> None:
        super().__init__("")
        self.cause = cause

    def detail_lines(self) -> list[str]:
        """The lines describing this error, without the node header."""
        return ["Inventory Queries:"] + self.cause.lines()


class ReferenceDefaultError(ValueAtPathError):
    """`${path::default}` whose default is not a complete YAML value (reference_defaults)."""

    kind = "bad_reference_default"

    def __init__(self, ref: str, problem: str, path: Sequence[object], origin: Source | None,
                 **context: Any) -> None:
        super().__init__(f"Invalid default value in {ref}: {problem}", path, origin, **context)
        self.ref = ref
