"""Error types that carry what a user needs to find the problem, rendered in one place.

Every error knows its exit code (BSD sysexits, as reclass uses them) and produces the lines of its
message. Errors raised while rendering a node are shown under a `-> node` header, with nested
errors (another node's failure inside an inventory query) indented three spaces per level, the
layout kapicorp-reclass uses, so scripts that grep its messages keep working.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from reclass_ng.location import Location

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

    from reclass_ng.values import Source

EX_USAGE = 2  # argparse/optparse exit status for bad command lines
EX_DATAERR = 65
EX_SOFTWARE = 70
EX_IOERR = 74
EX_CONFIG = 78

INDENT = "   "


def format_path(path: Sequence[object]) -> str:
    """A key path as reclass prints it: keys joined with `:`, list positions as numbers."""
    return ":".join(str(part) for part in path)


class ReclassError(Exception):
    """Base of every error reclass-ng reports to a user.

    Besides its message an error may know where the problem is written (`source`, a
    values.Source, and `written`, the text to point at), the key paths that were being rendered
    when it happened (`chain`, outermost first) and how to find "did you mean" candidates
    (`suggest`). All of them are given by whoever raises the error, when it is made; only the
    node is added afterwards, by the render boundary (`for_node`), the one layer that knows it
    (a shared class walk serves several nodes). Positions and suggestions are worked out only
    when the error is reported.
    """

    exit_code = EX_DATAERR
    kind = ""  # a short name for machine-readable reports; derived from the class name if empty
    origins: tuple[Source | None, ...] = ()  # the files the message names (LocatedError, ...)

    def __init__(self, text: str = "", *, node: str | None = None, source: Source | None = None,
                 written: str | None = None, chain: Sequence[str] = (),
                 suggest: Callable[[], list[str]] | None = None,
                 pick: Callable[[Any], bool] | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.node = node
        self.source = source
        self.written = written
        self.chain = list(chain)
        self.suggest = suggest
        self.pick = pick  # which item of a YAML list is meant
        self._found: dict[str, Any] = {}

    # -- what an error knows about its place (all optional) -----------------------------

    @property
    def error_kind(self) -> str:
        """The name of the error's kind in machine-readable reports."""
        return self.kind or re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()

    def file(self) -> str | None:
        """The file the problem is written in, when known."""
        if self.source is not None and self.source.path:
            return self.source.path
        origins = self.origins
        return origins[0].path if len(origins) == 1 and origins[0] is not None else None

    def key_path(self) -> str | None:
        """The key path the error is about, as text (None when it is about no key)."""
        return None

    def yaml_keys(self) -> tuple | None:
        """The keys leading to the problem inside its file, to find its line."""
        return None

    def position(self) -> tuple[int, int] | None:
        """1-based (line, column) of the problem in its file, found when first asked."""
        if "position" not in self._found:
            from reclass_ng.positions import value_position

            keys = self.yaml_keys()
            self._found["position"] = None if keys is None else value_position(
                self.file(), keys, self.written, self.pick)
        return self._found["position"]

    def written_at(self) -> Location | None:
        """Where the problem is written (file, line, column), when its file is known."""
        path = self.file()
        if not path:
            return None
        position = self.position()
        return Location(path, *position) if position is not None else Location(path)

    def suggestions(self) -> list[str]:
        """"Did you mean" candidates, worked out when first asked."""
        if "suggestions" not in self._found:
            try:
                self._found["suggestions"] = list(self.suggest()) if self.suggest else []
            except Exception:  # noqa: BLE001 - a failed suggestion must not hide the error
                self._found["suggestions"] = []
        return self._found["suggestions"]

    def context_lines(self) -> list[str]:
        """Lines after the message: where it is written, the reference chain, suggestions."""
        lines = []
        at = self.written_at()
        if at is not None and at.line is not None:
            lines.append("written at " + at.text() + _entity_text(self.source))
        if len(self.chain) > 1:
            lines.append("reference chain: " + " -> ".join(self.chain))
        suggestions = self.suggestions()
        if suggestions:
            lines.append("did you mean " + ", ".join(suggestions) + "?")
        return lines

    def record(self, node: str | None = None) -> dict[str, Any]:
        """This error as one entry of a machine-readable report."""
        at = self.written_at()
        source = self.source
        return {
            "node": node or self.node,
            "class": source.name if source is not None and source.kind == "class" else None,
            "file": at.file if at is not None else None,
            "line": at.line if at is not None else None,
            "column": at.column if at is not None else None,
            "key_path": self.key_path(),
            "message": "\n".join(self.message_lines()),
            "kind": self.error_kind,
            "suggestions": self.suggestions(),
            "reference_chain": list(self.chain),
        }

    def records(self) -> list[dict[str, Any]]:
        """Every error this one stands for, as machine-readable entries."""
        return [self.record()]

    # -- the message ----------------------------------------------------------------------

    def detail_lines(self) -> list[str]:
        """The lines describing this error, without the node header."""
        return self.text.splitlines() or [type(self).__name__]

    def described_lines(self) -> list[str]:
        """The details followed by the context lines (indented once more)."""
        return self.detail_lines() + [INDENT + line for line in self.context_lines()]

    def lines(self) -> list[str]:
        """All message lines, as kapicorp-reclass lays them out: a `-> node` header when the
        node is known, then the details (this is `str(error)`, for API users)."""
        if self.node is None:
            return self.detail_lines()
        return [f"-> {self.node}"] + [INDENT + line for line in self.detail_lines()]

    def _own_layout(self) -> bool:
        # A subclass that lays out lines() itself (e.g. an error rebuilt from another process)
        # is reported as it is.
        return type(self).lines is not ReclassError.lines

    def report_lines(self) -> list[str]:
        """lines() with the diagnostic context after each error: where it is written, the
        reference chain and "did you mean" suggestions (what the command line prints)."""
        if self._own_layout():
            return self.lines()
        if self.node is None:
            return self.described_lines()
        return [f"-> {self.node}"] + [INDENT + line for line in self.described_lines()]

    def message_lines(self) -> list[str]:
        """The message without the node header, for machine-readable reports."""
        if not self._own_layout():
            return self.detail_lines()
        lines = self.lines()
        if self.node is not None and lines and lines[0] == f"-> {self.node}":
            lines = [line[len(INDENT):] if line.startswith(INDENT) else line
                     for line in lines[1:]]
        return lines

    def __reduce__(self) -> Any:
        # Errors travel between processes (parallel rendering): what needs the parameter tree
        # or the files is worked out here, and the functions that would do it are left behind.
        self.position()
        self.suggestions()
        state = dict(self.__dict__, suggest=None, pick=None)
        return _rebuild_error, (type(self), self.args, state)

    @property
    def message(self) -> str:
        """The whole message, as `str(error)` prints it."""
        return "\n".join(self.lines())

    def __str__(self) -> str:
        return self.message

    def for_node(self, node: str) -> ReclassError:
        """This error as raised for `node`: itself when it names a node already, else a copy
        that names it (the error raised is never changed)."""
        if self.node is not None:
            return self
        copy = type(self).__new__(type(self))
        Exception.__init__(copy, *self.args)
        copy.__dict__.update(self.__dict__, node=node, _found=self._found)
        return copy


def _entity_text(source: Source | None) -> str:
    """` (class NAME)` or ` (node NAME)` after a place, for a class or node file."""
    if source is not None and source.kind in ("class", "node"):
        return f" ({source.kind} {source.name})"
    return ""


def _rebuild_error(cls: type[ReclassError], args: tuple, state: dict[str, Any]) -> ReclassError:
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err


class UsageError(ReclassError):
    exit_code = EX_USAGE


class ConfigError(ReclassError):
    exit_code = EX_CONFIG


class NotFoundError(ReclassError):
    """A directory or node that does not exist."""

    exit_code = EX_IOERR


class NodeNotFound(NotFoundError):
    kind = "node_not_found"

    def __init__(self, name: str, where: str, known: Iterable[str] = (), hint: str = "") -> None:
        known = list(known)
        # "did you mean": the known node names closest to the one asked for.
        super().__init__(f"Node '{name}' not found under {where}" + (f"\n{hint}" if hint else ""),
                         suggest=(lambda: _similar_names(name, known)) if known else None)
        self.name = name


def _similar_names(name: str, known: list[str]) -> list[str]:
    from reclass_ng.suggestions import similar_names  # only when a suggestion is shown

    return similar_names(name, known)


class YamlFileError(ReclassError):
    """A file that is not valid YAML or not a reclass entity."""

    kind = "invalid_yaml"

    def __init__(self, path: str, problem: str, line: int | None = None, column: int | None = None):
        where = path if line is None else f"{path}:{line}" + ("" if column is None else f":{column}")
        super().__init__(f"{where}: {problem}")
        self.path, self.line, self.column, self.problem = path, line, column, problem

    def file(self) -> str | None:
        """The file the error is about, when known."""
        return self.path

    def position(self) -> tuple[int, int] | None:
        """(line, column) where the error's value is written, when it can be found."""
        return None if self.line is None else (self.line, self.column or 1)

    def context_lines(self) -> list[str]:
        """Lines after the message: where it is written, suggestions."""
        return []  # the message starts with file:line:column already


class DuplicateNameError(ReclassError):
    def __init__(self, kind: str, name: str, second: str, first: str) -> None:
        # kapicorp says "node" for classes too; the wording is kept so existing greps still match.
        super().__init__(
            f"yaml_fs: Definition of node '{name}' in '{second}' collides with definition in "
            f"'{first}'. Nodes can only be defined once per inventory. (duplicate {kind} name)"
        )
        self.name = name


class UnsafeClassNameError(ReclassError):
    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"Class name '{name}' is not allowed: {reason}")


class InvalidClassnameError(ReclassError):
    def __init__(self, char: str, name: str) -> None:
        super().__init__(f"Invalid character '{char}' in class name '{name}'.")


class MappingFormatError(ReclassError):
    def __init__(self, mapping: str, problem: str) -> None:
        super().__init__(f'Error in mapping "{mapping}": {problem}')


def origin_text(origins: Sequence[Source | None]) -> str:
    """The URIs of the files an error is about, as kapicorp prints them: joined with `; `, an
    unknown one as `?`."""
    return "; ".join("?" if origin is None else origin.uri for origin in origins)


def _origins(origin: Source | Sequence[Source | None] | None) -> tuple[Source | None, ...]:
    if origin is None:
        return ()
    if isinstance(origin, (list, tuple)):
        return tuple(origin)
    return (origin,)  # type: ignore[return-value]


class LocatedError(ReclassError):
    """An error about a value in a file: `In <uri>` then the message, as reclass prints it.

    `origin` is the values.Source of the entity the error is about (its URI is shown)."""

    def __init__(self, text: str, origin: Source | None = None, **context: Any) -> None:
        super().__init__(text, **context)
        self.origins = _origins(origin)

    @property
    def uri(self) -> str | None:
        """The URI of the entity, as the message shows it (None when unknown)."""
        return origin_text(self.origins) or None

    def detail_lines(self) -> list[str]:
        """The lines describing this error, without the node header."""
        uri = self.uri
        head = [f"In {uri}"] if uri else []
        return head + self.text.splitlines()


class ClassNotFound(LocatedError):
    kind = "class_not_found"

    def __init__(self, name: str, classes_uri: str, origin: Source | None,
                 **context: Any) -> None:
        super().__init__(f"Class {name} not found under {classes_uri}", origin, **context)
        self.name = name

    def key_path(self) -> str | None:
        """The key path the error is about, as text."""
        return "classes"

    def yaml_keys(self) -> tuple | None:
        """The keys leading to the error's place in its YAML file."""
        return ("classes",)


class ClassNameResolveError(LocatedError):
    def __init__(self, name: str, origin: Source | None, reason: str = "",
                 **context: Any) -> None:
        text = f"Class name {name} not resolvable" + (f" ({reason})" if reason else "")
        super().__init__(text, origin, **context)
        self.name = name

    def key_path(self) -> str | None:
        """The key path the error is about, as text."""
        return "classes"

    def yaml_keys(self) -> tuple | None:
        """The keys leading to the error's place in its YAML file."""
        return ("classes",)


class ClassIncludeCycle(LocatedError):
    def __init__(self, cycle: Sequence[str], origin: Source | None) -> None:
        chain = " -> ".join(cycle)
        super().__init__(f"Class include cycle: {chain} (a class includes itself through this "
                         "loop)", origin)
        self.cycle = list(cycle)


class EntityFormatError(LocatedError):
    """A node or class file whose structure is wrong (e.g. `classes` is not a list)."""


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
        from reclass_ng.positions import value_position

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


class MultipleErrors(ReclassError):
    """Errors of several nodes of one run, reported together; the first decides the exit code."""

    kind = "multiple"

    def __init__(self, errors: Sequence[ReclassError]) -> None:
        super().__init__("")
        self.errors = list(errors)
        self.exit_code = self.errors[0].exit_code

    def lines(self) -> list[str]:
        """The lines of every error, one after the other."""
        return [line for err in self.errors for line in err.lines()]

    def report_lines(self) -> list[str]:
        """The report lines of every error, one after the other."""
        return [line for err in self.errors for line in err.report_lines()]

    def records(self) -> list[dict[str, Any]]:
        """Every error as a machine-readable entry."""
        return [record for err in self.errors for record in err.records()]
