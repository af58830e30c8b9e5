"""The rules about writes: dead-value, type-change and constant-ignored.

They read what the engine recorded while rendering each node (reclass_ng.observe.provenance): which
writes were overridden, replaced, removed or ignored, and by which write. No merge rule is
repeated here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from reclass_ng.lint.findings import ERROR, WARNING, Finding, finding
from reclass_ng.lint.nodes import NodeRun
from reclass_ng.lint.yaml_pass import LineIndex
from reclass_ng.observe.provenance import Write
from reclass_ng.values import as_written, kind_of

MAX_NAMES = 5
DEAD = ("overridden", "replaced", "removed")


def node_list(names: Iterable[str]) -> str:
    """Up to MAX_NAMES node names, sorted, and how many more."""
    names = sorted(set(names))
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")


def key_text(path: tuple) -> str:
    """`parameters:a:b` for a key path."""
    return "parameters:" + ":".join(str(p) for p in path)


def short_value(value: Any, limit: int = 60) -> str:
    """A value as written, shortened to `limit` characters."""
    text = repr(as_written(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


# The kinds of merge errors (values.kind_of) as type-change names them: any interpolation is a
# reference (its value's kind is known only once rendered).
_WRITE_KINDS = {"dictionary": "dict", "list": "list", "scalar": "scalar", "reference": "reference",
                "inv_query": "reference", "composite": "reference"}


def write_kind(value: Any) -> str:
    """The kind a write has for type-change: dict, list, scalar, null or reference."""
    return "null" if value is None else _WRITE_KINDS[kind_of(value)]


def label(write: Write) -> str:
    """`class a`, `node n1` or the kind of an entity without a file."""
    kind = write.source.kind
    return f"{kind} {write.source.name}" if kind in ("class", "node") else kind


def where(write: Write, index: LineIndex) -> str:
    """`class a (classes/a.yml:3)`: who wrote, and where."""
    if write.file and write.line:
        return f"{label(write)} ({index.show(write.file)}:{write.line})"
    return label(write)


def _own_writes(run: NodeRun) -> Iterator[tuple[Write, Write | None]]:
    """Each write of the node at the key it writes (not repeated for the keys below it), with
    the write before it at that key."""
    provenance = run.provenance
    if provenance is None:
        return
    for path in provenance.written_paths():
        before = None
        for write in provenance.writes(path):
            if write.key == path and write.effect != "removes":
                yield write, before
                before = write


def write_rules(runs: list[NodeRun], strict: bool, index: LineIndex
                ) -> tuple[list[Finding], list[Finding], list[Finding]]:
    """(dead-value, type-change, constant-ignored) findings, grouped over the nodes."""
    users: dict[tuple, int] = {}
    dead: dict[tuple, tuple[int, Write, Write | None]] = {}
    changes: dict[tuple, tuple[Write, Write, list[str]]] = {}
    ignored: dict[tuple, tuple[Write, Write, list[str]]] = {}
    for run in runs:
        # Which values a later layer replaces is known once the node's merge completed.
        counted = run.provenance is not None and run.provenance.merged
        for write, before in _own_writes(run):
            path, by = write.path, write.by
            kind = write_kind(write.written)
            if counted and write.source.kind == "class" and kind not in ("dict", "null") \
                    and "=" not in write.flag:
                key = (write.source.name, path)
                users[key] = users.get(key, 0) + 1
                if write.effect in DEAD:
                    count, first, example = dead.get(key, (0, write, by))
                    dead[key] = (count + 1, first, example or by)
            if write.effect == "overridden" and by is not None and by.key == path:
                new_kind = write_kind(by.written)
                if kind != new_kind and "reference" not in (kind, new_kind) \
                        and "null" not in (kind, new_kind):
                    group = (path, kind, id(write.source), new_kind, id(by.source))
                    changes.setdefault(group, (write, by, []))[2].append(run.name)
            if write.effect == "appended" and before is not None and before.final:
                # allow_list_over_scalar: a list appended to a scalar turns it into a list.
                old_kind = write_kind(before.written)
                if old_kind == "scalar" and kind == "list":
                    appended = (path, old_kind, id(before.source), kind, id(write.source))
                    changes.setdefault(appended, (before, write, []))[2].append(run.name)
            if write.effect == "ignored" and by is not None \
                    and path[:len(by.key)] == by.key:
                # Reported once, at the constant's key, even when a mapping is ignored there.
                held = (by.key, id(by.source), id(write.source))
                ignored.setdefault(held, (by, write, []))[2].append(run.name)
    dead_found = []
    for key, (count, write, example) in dead.items():
        if count != users[key]:
            continue
        name, path = key
        shown = f", e.g. by {where(example, index)}" if example is not None else ""
        dead_found.append(finding(
            "dead-value", write.file, write.line,
            f"{key_text(path)} = {short_value(write.written)} in class {name} is overridden on "
            f"every node using the class ({count}){shown}"))
    type_found = [finding(
        "type-change", new.file, new.line,
        f"{key_text(old.path)}: a {write_kind(new.written)} here replaces the "
        f"{write_kind(old.written)} of {where(old, index)} on {node_list(nodes)}")
        for old, new, nodes in changes.values()]
    constant_found = [finding(
        "constant-ignored", write.file, index.line(write.file, ("parameters", *fixed.key)),
        f"{key_text(fixed.key)}: this write is ignored because {where(fixed, index)} made "
        f"the key a constant (`=`), on {node_list(nodes)}"
        + ("; with strict_constant_parameters the node fails" if strict else ""),
        severity=ERROR if strict else WARNING)
        for fixed, write, nodes in ignored.values()]
    return dead_found, type_found, constant_found
