"""The base of every error: its fields (node, file, position, key path, reference chain,
suggestions), its exit code, and the one place its message is laid out.

Every error knows its exit code (BSD sysexits, as reclass uses them) and produces the lines of its
message. Errors raised while rendering a node are shown under a `-> node` header, with nested
errors (another node's failure inside an inventory query) indented three spaces per level, the
layout kapicorp-reclass uses, so scripts that grep its messages keep working.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from reclass_ng.location import Location
    from reclass_ng.values import Source

    ValueLocator = Callable[[str, Sequence[object], str | None, Callable[[Any], bool] | None],
                            tuple[int, int] | None]

EX_USAGE = 2  # argparse/optparse exit status for bad command lines
EX_DATAERR = 65
EX_SOFTWARE = 70
EX_IOERR = 74
EX_CONFIG = 78

INDENT = "   "

# Where a value is written: (file, keys, text inside the value, which list item) -> 1-based
# (line, column) or None. The storage package, which reads the files errors name, registers it
# when first imported (register_value_locator); errors sit below storage and may not import it.
# Before any storage is imported no file has been read, so no error can name one.
_value_locator: list[ValueLocator] = []


def register_value_locator(locate: ValueLocator) -> None:
    """Make `locate` the function errors ask for the position of a value in its file."""
    _value_locator[:] = [locate]


def value_position(path: str | None, keys: Sequence[object], needle: str | None = None,
                   pick: Callable[[Any], bool] | None = None) -> tuple[int, int] | None:
    """1-based (line, column) of the value at `keys` in file `path`, by the registered locator
    (None: no file, not found, or no storage imported yet)."""
    if not path or not _value_locator:
        return None
    return _value_locator[0](path, keys, needle, pick)


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
        import re

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
            keys = self.yaml_keys()
            self._found["position"] = None if keys is None else value_position(
                self.file(), keys, self.written, self.pick)
        return self._found["position"]

    def written_at(self) -> Location | None:
        """Where the problem is written (file, line, column), when its file is known."""
        from reclass_ng.location import Location  # only when reported: not every start

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

    def problem_reports(self) -> list[tuple[list[str], dict[str, Any]]]:
        """Each problem this error stands for: its report lines without the node header, and
        its record (what groups a problem several nodes share)."""
        return [(self.message_lines() if self._own_layout() else self.described_lines(),
                 self.record())]

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


class ConfigFileError(ConfigError):
    """A reclass-config.yml that cannot be used: its message starts with `FILE[:LINE[:COL]]`,
    and its record has the file, position and setting."""

    kind = "config_error"

    def __init__(self, text: str, path: str, line: int | None = None,
                 column: int | None = None, setting: str | None = None) -> None:
        where = path if line is None else f"{path}:{line}" + (f":{column}" if column else "")
        super().__init__(f"{where}: {text}")
        self.path, self.line, self.column, self.setting = path, line, column, setting

    def file(self) -> str | None:
        """The configuration file."""
        return self.path

    def position(self) -> tuple[int, int] | None:
        """(line, column) of the problem, when known."""
        return None if self.line is None else (self.line, self.column or 1)

    def key_path(self) -> str | None:
        """The setting the problem is about, when it is one."""
        return self.setting

    def context_lines(self) -> list[str]:
        """None: the message starts with the file and line already."""
        return []


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


class MultipleErrors(ReclassError):
    """Errors of several nodes of one run, reported together; the first decides the exit code.

    A problem that several nodes share (a mistake in a class they all include) is reported once,
    at the first node it fails, with how many nodes it affects and the first few of them; with
    `per_node` every node's errors are reported in full, as kapicorp-reclass would.
    """

    kind = "multiple"

    def __init__(self, errors: Sequence[ReclassError], per_node: bool = False,
                 per_node_option: str | None = None) -> None:
        super().__init__("")
        self.errors = list(errors)
        self.exit_code = self.errors[0].exit_code
        self.per_node = per_node
        self.per_node_option = per_node_option  # the option asking for `per_node`, if any

    def lines(self) -> list[str]:
        """The lines of every error, one after the other."""
        return [line for err in self.errors for line in err.lines()]

    def report_lines(self) -> list[str]:
        """The report lines of every error; a shared problem once, naming the other nodes."""
        if self.per_node:
            return [line for err in self.errors for line in err.report_lines()]
        lines: list[str] = []
        for node, problems in self._first_seen():
            shown = [INDENT + line for problem in problems
                     for line in problem.lines + problem.more_nodes_lines(self.per_node_option)]
            lines += ([f"-> {node}"] + shown) if node is not None else [
                line[len(INDENT):] for line in shown]
        return lines

    def records(self) -> list[dict[str, Any]]:
        """Every error as a machine-readable entry; a shared problem once, with `node_count`
        and the first of its `nodes`."""
        if self.per_node:
            return [record for err in self.errors for record in err.records()]
        return [problem.record() for _, problems in self._first_seen() for problem in problems]

    def _first_seen(self) -> list[tuple[str | None, list[SharedProblem]]]:
        """Each failing node (in order) with the problems first seen at it."""
        by_key: dict[tuple, SharedProblem] = {}
        order: list[tuple[str | None, list[SharedProblem]]] = []
        for err in self.errors:
            new: list[SharedProblem] = []
            for lines, record in err.problem_reports():
                key = (record["kind"], tuple(lines))
                known = by_key.get(key)
                if known is None:
                    by_key[key] = known = SharedProblem(lines, record)
                    new.append(known)
                known.nodes.append(record["node"])
            if new:
                order.append((err.node, new))
        return order


NODES_NAMED = 5  # a problem shared by many nodes names this many of them


class SharedProblem:
    """One problem of a run and every node it fails (in node order)."""

    def __init__(self, lines: list[str], record: dict[str, Any]) -> None:
        self.lines = lines
        self.first_record = record
        self.nodes: list[str | None] = []

    def more_nodes_lines(self, per_node_option: str | None = None) -> list[str]:
        """`the same error in N more nodes: a, b, ...`, when other nodes share it (and which
        option lists each node's errors)."""
        others = [node for node in self.nodes[1:] if node is not None]
        if not others:
            return []
        named = ", ".join(others[:NODES_NAMED]) + (", ..." if len(others) > NODES_NAMED else "")
        count = f"{len(others):,} more node" + ("s" if len(others) != 1 else "")
        hint = f" ({per_node_option} lists each node's errors)" if per_node_option else ""
        return [f"{INDENT}the same error in {count}: {named}{hint}"]

    def record(self) -> dict[str, Any]:
        """The first node's record with the number of nodes affected and the first few."""
        named = [node for node in self.nodes if node is not None]
        return dict(self.first_record, node_count=len(named), nodes=named[:NODES_NAMED])
