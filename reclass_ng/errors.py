"""Error types that carry what a user needs to find the problem, rendered in one place.

Every error knows its exit code (BSD sysexits, as reclass uses them) and produces the lines of its
message. Errors raised while rendering a node are shown under a `-> node` header, with nested
errors (another node's failure inside an inventory query) indented three spaces per level, the
layout kapicorp-reclass uses, so scripts that grep its messages keep working.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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
    """Base of every error reclass-ng reports to a user."""

    exit_code = EX_DATAERR

    def __init__(self, text: str = "", *, node: str | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.node = node

    def detail_lines(self) -> list[str]:
        """The lines describing this error, without the node header."""
        return self.text.splitlines() or [type(self).__name__]

    def lines(self) -> list[str]:
        """All message lines: a `-> node` header when the node is known, then the details."""
        if self.node is None:
            return self.detail_lines()
        return [f"-> {self.node}"] + [INDENT + line for line in self.detail_lines()]

    @property
    def message(self) -> str:
        return "\n".join(self.lines())

    def __str__(self) -> str:
        return self.message

    def with_node(self, node: str) -> ReclassError:
        """Attach the node being rendered, unless an inner step already named one."""
        if self.node is None:
            self.node = node
        return self


class UsageError(ReclassError):
    exit_code = EX_USAGE


class ConfigError(ReclassError):
    exit_code = EX_CONFIG


class NotFoundError(ReclassError):
    """A directory or node that does not exist."""

    exit_code = EX_IOERR


class NodeNotFound(NotFoundError):
    def __init__(self, name: str, where: str) -> None:
        super().__init__(f"Node '{name}' not found under {where}")
        self.name = name


class YamlFileError(ReclassError):
    """A file that is not valid YAML or not a reclass entity."""

    def __init__(self, path: str, problem: str, line: int | None = None, column: int | None = None):
        where = path if line is None else f"{path}:{line}" + ("" if column is None else f":{column}")
        super().__init__(f"{where}: {problem}")
        self.path, self.line, self.column = path, line, column


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


class LocatedError(ReclassError):
    """An error about a value in a file: `In <uri>` then the message, as reclass prints it."""

    def __init__(self, text: str, uri: str | None = None, *, node: str | None = None) -> None:
        super().__init__(text, node=node)
        self.uri = uri

    def detail_lines(self) -> list[str]:
        head = [f"In {self.uri}"] if self.uri else []
        return head + self.text.splitlines()


class ClassNotFound(LocatedError):
    def __init__(self, name: str, classes_uri: str, uri: str | None) -> None:
        super().__init__(f"Class {name} not found under {classes_uri}", uri)
        self.name = name


class ClassNameResolveError(LocatedError):
    def __init__(self, name: str, uri: str | None, reason: str = "") -> None:
        text = f"Class name {name} not resolvable" + (f" ({reason})" if reason else "")
        super().__init__(text, uri)
        self.name = name


class ClassIncludeCycle(LocatedError):
    def __init__(self, cycle: Sequence[str], uri: str | None) -> None:
        chain = " -> ".join(cycle)
        super().__init__(f"Class include cycle: {chain} (a class includes itself through this loop)", uri)
        self.cycle = list(cycle)


class EntityFormatError(LocatedError):
    """A node or class file whose structure is wrong (e.g. `classes` is not a list)."""


class ValueAtPathError(ReclassError):
    """Base for errors about one value: `<text>, at <path>, in <uri>`."""

    def __init__(self, text: str, path: Sequence[object], uri: str | None) -> None:
        super().__init__(text)
        self.path = tuple(path)
        self.uri = uri

    def location(self) -> str:
        where = f", at {format_path(self.path)}" if self.path else ""
        return where + (f", in {self.uri}" if self.uri else "")

    def detail_lines(self) -> list[str]:
        return [self.text + self.location()]


class ResolveError(ValueAtPathError):
    """A reference whose path does not exist."""

    def __init__(self, ref: str, path: Sequence[object] = (), uri: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(f"Cannot resolve {ref}", path, uri)
        self.ref = ref
        self.hint = hint

    def detail_lines(self) -> list[str]:
        line = self.text + self.location()
        return [line + (f" ({self.hint})" if self.hint else "")]


class ResolveErrorList(ReclassError):
    """Several missing references of one node, reported together (group_errors)."""

    def __init__(self, errors: Sequence[ResolveError]) -> None:
        super().__init__("")
        self.errors = list(errors)

    def detail_lines(self) -> list[str]:
        return [line for err in self.errors for line in err.detail_lines()]


class BadReferencesError(ValueAtPathError):
    def __init__(self, refs: Iterable[str], path: Sequence[object], uri: str | None) -> None:
        super().__init__("Bad references", path, uri)
        self.refs = list(refs)

    def detail_lines(self) -> list[str]:
        return [self.text + self.location()] + [INDENT + ref for ref in self.refs]


class TypeMergeError(ValueAtPathError):
    def __init__(self, new_kind: str, old_kind: str, path: Sequence[object], uris: Sequence[str]):
        super().__init__(f"Cannot merge {new_kind} over {old_kind}", path, "; ".join(uris))


class ChangedConstantError(ValueAtPathError):
    def __init__(self, path: Sequence[object], uris: Sequence[str]) -> None:
        super().__init__("Attempt to change constant value", path, "; ".join(uris))


class InfiniteRecursionError(ValueAtPathError):
    def __init__(self, ref: str, path: Sequence[object], uri: str | None, loop: str = "") -> None:
        super().__init__(f"Infinite recursion: {ref}", path, uri)
        self.loop = loop

    def detail_lines(self) -> list[str]:
        lines = [self.text + self.location()]
        if self.loop:
            lines.append(INDENT + self.loop)
        return lines


class ParseError(ValueAtPathError):
    def __init__(self, value: str, problem: str, path: Sequence[object], uri: str | None) -> None:
        super().__init__(f"Parse error: {value}", path, uri)
        self.problem = problem

    def detail_lines(self) -> list[str]:
        return [self.text + self.location(), self.problem]


class ExpressionError(ValueAtPathError):
    """An inventory query that cannot be evaluated."""


class QueryPositionError(ValueAtPathError):
    def __init__(self, value: str, path: Sequence[object], uri: str | None) -> None:
        super().__init__(
            f"Inventory query in {value!r} must be the whole value, not part of a longer string",
            path, uri)


class InvQueryError(ReclassError):
    """Another node failed while an inventory query of this node needed its exports."""

    def __init__(self, query: str, cause: ReclassError) -> None:
        super().__init__("")
        self.query = query
        self.cause = cause

    def detail_lines(self) -> list[str]:
        return [f"Failed inv query {self.query}"] + self.cause.lines()


class InventoryQueryNodeError(ReclassError):
    """Another node could not even be loaded while building the inventory for queries."""

    def __init__(self, cause: ReclassError) -> None:
        super().__init__("")
        self.cause = cause

    def detail_lines(self) -> list[str]:
        return ["Inventory Queries:"] + self.cause.lines()
