"""Errors about the inventory's files and names: a node or class that does not exist, a file
that is not YAML or not an entity, duplicate and invalid names, class include cycles."""

from __future__ import annotations

from reclass_ng.errors.base import EX_IOERR, ReclassError, _origins, origin_text

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from reclass_ng.values import Source


class NotFoundError(ReclassError):
    """A directory or node that does not exist; `path`, when given, is the missing file or
    directory (the `file` of its record)."""

    exit_code = EX_IOERR

    def __init__(self, text: str = "", *, path: str | None = None, **context: Any) -> None:
        super().__init__(text, **context)
        self.path = path

    def file(self) -> str | None:
        """The missing file or directory, when given; else as any error finds it."""
        return self.path if self.path is not None else super().file()


class OutputSpoolError(ReclassError):
    """The temporary file a streamed `--inventory` keeps its node texts in until the whole
    document is known to render (output.streamed) could not be made or written."""

    exit_code = EX_IOERR

    def __init__(self, directory: str, reason: str) -> None:
        super().__init__(f"Cannot keep the inventory's output in a temporary file in "
                         f"{directory}: {reason} (TMPDIR chooses the directory)")
        self.path = directory

    def file(self) -> str | None:
        """The directory of the temporary file."""
        return self.path


class NodeNotFound(NotFoundError):
    kind = "node_not_found"

    def __init__(self, name: str, where: str, known: Iterable[str] = (), hint: str = "") -> None:
        known = list(known)
        # "did you mean": the known node names closest to the one asked for.
        super().__init__(f"Node '{name}' not found under {where}" + (f"\n{hint}" if hint else ""),
                         suggest=(lambda: _similar_node_names(name, known)) if known else None)
        self.name = name

    def record(self, node: str | None = None) -> dict[str, Any]:
        """The error's record, naming the node asked for."""
        return super().record(node or self.name)


def _similar_node_names(name: str, known: list[str]) -> list[str]:
    from reclass_ng.suggestions import similar_node_names  # only when a suggestion is shown

    return similar_node_names(name, known)


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
