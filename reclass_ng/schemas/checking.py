"""Checking rendered nodes against the parameter schemas, each violation located twice: in
the schema (file and JSON pointer of the keyword broken, followed through `$ref`) and in the
inventory (file:line:column of the write that produced the bad value, from the node's
provenance record, asked for only when a node has a violation)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urldefrag, urljoin

import attrs

from reclass_ng.api import Inventory
from reclass_ng.errors import ConfigError, ReclassError
from reclass_ng.location import display_path
from reclass_ng.observe.provenance import NodeProvenance
from reclass_ng.schemas.loading import SchemaSet
from reclass_ng.values import to_plain

VALUE_CHARS = 80  # a bad value is shown up to this many characters
MAX_REF_HOPS = 100  # $refs followed in a row to place a keyword (loops are refused at load)


@attrs.frozen
class Violation:
    """One value of one node that breaks its schema."""

    node: str
    path: tuple  # key path below parameters
    value: Any
    rule: str  # the JSON Schema keyword broken: type, required, maximum, ...
    message: str
    schema: str  # `schemas/nginx.yml#/properties/workers/type`
    written_at: str | None  # `classes/web.yml:7:14`, None when no write is recorded
    write_file: str | None = None  # the same file, absolute
    write_line: int | None = None
    write_column: int | None = None  # 1-based, as written_at shows it

    @property
    def path_text(self) -> str:
        """The key path joined with `:`."""
        return ":".join(str(k) for k in self.path) or "(parameters)"

    def as_dict(self) -> dict[str, Any]:
        """The violation as plain data."""
        return {"node": self.node, "path": self.path_text, "keys": list(self.path),
                "value": self.value, "rule": self.rule, "message": self.message,
                "schema": self.schema, "written_at": self.written_at}

    def text(self) -> str:
        """`nginx:workers is 'sixteen': ... (rule type at schemas/x.yml#/type)`."""
        value = repr(self.value)
        if len(value) > VALUE_CHARS:
            value = value[:VALUE_CHARS] + "…"
        # The whole parameters tree is too big to show; the message says what is wrong.
        shown = f" is {value}" if self.path else ""
        return f"{self.path_text}{shown}: {self.message} (rule {self.rule} at {self.schema})"


@attrs.frozen
class ViolationGroup:
    """The same violation (path, value, rule, schema place and write) on several nodes."""

    nodes: tuple[str, ...]
    violation: Violation

    def text(self, shown_nodes: int = 10) -> str:
        """`42 nodes: nginx:workers is 'sixteen': ... written at classes/web.yml:7:14`."""
        v = self.violation
        count = f"{len(self.nodes)} node{'s' if len(self.nodes) != 1 else ''}"
        where = f", written at {v.written_at}" if v.written_at else ""
        names = ", ".join(self.nodes[:shown_nodes])
        if len(self.nodes) > shown_nodes:
            names += f" and {len(self.nodes) - shown_nodes} more"
        return f"{count}: {v.text()}{where} [{names}]"


def _at(tree: Any, path: Sequence[Any]) -> tuple[bool, Any]:
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return False, None
        tree = tree[key]
    return True, tree


def _schema_place(schemas: SchemaSet, file: str, schema_path: Iterable[Any]) -> str:
    """`file#/pointer` of the keyword broken, following `$ref` into the file it names."""
    uri = "file://" + file
    pointer: list[str] = []
    node: Any = schemas.documents.get(uri)
    try:
        for segment in schema_path:
            # jsonschema leaves `$ref` out of the path: a keyword the schema here does not
            # have is in the schema its $ref names (followed, perhaps into another file).
            hops = 0
            while (isinstance(node, dict) and segment not in node
                   and isinstance(node.get("$ref"), str) and hops < MAX_REF_HOPS):
                target = urljoin(uri, node["$ref"])
                node = schemas.registry.resolver(base_uri=uri).lookup(node["$ref"]).contents
                uri, fragment = urldefrag(target)
                pointer = fragment.lstrip("/").split("/") if fragment.startswith("/") else []
                hops += 1
            node = node[segment]
            pointer.append(str(segment))
    except Exception:  # noqa: BLE001 - a place reached some other way: the path so far is right
        pass
    shown = schemas.display(uri[len("file://"):] if uri.startswith("file://") else uri)
    return f"{shown}#/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in pointer)


def _written_at(provenance: NodeProvenance | None, path: tuple, base: str
                ) -> tuple[str | None, str | None, int | None, int | None]:
    """(`file:line:column` as shown, absolute file, line, column) of the write the engine
    kept for `path` (or the nearest key above)."""
    if provenance is None:
        return None, None, None, None
    for length in range(len(path), 0, -1):
        finals = [w for w in provenance.writes(path[:length]) if w.final and w.file]
        if finals:
            write = finals[-1]
            assert write.file is not None
            where = display_path(write.file, base)
            column = None
            if write.location is not None and write.location.line:
                where += f":{write.location.line}"
                if write.location.column:
                    column = write.location.column
                    where += f":{column}"
            return where, write.file, write.line, column
    return None, None, None, None


def check_node(schemas: SchemaSet, node: str, parameters: Any,
               provenance: NodeProvenance | Callable[[], NodeProvenance | None] | None,
               base: str) -> list[Violation]:
    """The violations of one rendered node (`parameters` as rendered). `provenance`, or a
    function giving it, is asked only when there is a violation to locate."""
    found: list[tuple[tuple, Any, Any, str]] = []
    for attached in schemas.attached:
        # The engine's containers are dicts and lists: checked as they are, copied only for
        # a violation (a plain copy of every node cost more than the check).
        present, value = _at(parameters, attached.path)
        if not present:
            continue
        try:
            errors = list(attached.validator.iter_errors(value))
        except RecursionError:
            raise ConfigError(f"schema file {schemas.display(attached.file)}: the schema loops "
                              f"while checking {node}") from None
        for error in errors:
            found.append((attached.path + tuple(error.absolute_path), error,
                          to_plain(error.instance), attached.file))
    if not found:
        return []
    record = provenance() if callable(provenance) else provenance
    violations = []
    for path, error, value, file in found:
        violations.append(Violation(node, path, value, str(error.validator), error.message,
                                    _schema_place(schemas, file, error.schema_path),
                                    *_written_at(record, path, base)))
    return violations


def check_nodes(inventory: Inventory, schemas: SchemaSet, names: Iterable[str] | None = None,
                base: str | None = None) -> tuple[list[Violation], dict[str, str]]:
    """Violations of every node (or of `names`), and the nodes that failed to render (name
    -> message): those are not checked."""
    root = base or inventory.settings.inventory_base_uri or "."
    violations: list[Violation] = []
    failed: dict[str, str] = {}
    for name in (inventory.node_names if names is None else names):
        try:
            info = inventory.nodeinfo(name)
        except ReclassError as err:
            failed[name] = " ".join(line.strip() for line in err.lines())
            continue
        violations += check_node(schemas, name, info["parameters"],
                                 functools.partial(inventory.provenance, name), root)
    return violations, failed


def group_violations(violations: Iterable[Violation]) -> list[ViolationGroup]:
    """Identical violations across nodes folded into one, the most widespread first."""
    groups: dict[tuple, list[Violation]] = {}
    for v in violations:
        key = (v.path_text, repr(v.value), v.rule, v.message, v.schema, v.written_at)
        groups.setdefault(key, []).append(v)
    folded = [ViolationGroup(tuple(sorted(v.node for v in members)), members[0])
              for members in groups.values()]
    folded.sort(key=lambda g: (-len(g.nodes), g.violation.path_text, g.violation.message))
    return folded
