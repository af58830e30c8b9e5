"""A diff grouped by cause, for a reviewer: one group per file write (or per render error)
that explains node changes, each key change listed once with the nodes it affects.

A change to a shared class shows as one group ("class web, classes/web.yml: 340 nodes,
parameters:web:workers 8 -> 16") instead of 340 near-identical node blocks. The cause of a key
change is the write the engine kept for the new value (the old one for a removal), from the
provenance record; a value changed through a reference is attributed to the write holding the
reference, with the reference text shown.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from reclass_ng.diff.compare import InventoryDiff, KeyChange
from reclass_ng.explain.origin import Origin


@attrs.frozen
class SharedChange:
    """One key change, identical (same path, values and write) on every node listed."""

    path: str
    change: str  # "added", "removed" or "changed"
    old: Any
    new: Any
    origin: Origin | None
    nodes: tuple[str, ...]

    def values_text(self) -> str:
        """`8 -> 16`, `+ 16` or `- 8`: the values as JSON."""
        if self.change == "added":
            return f"+ {value_text(self.new)}"
        if self.change == "removed":
            return f"- {value_text(self.old)}"
        return f"{value_text(self.old)} -> {value_text(self.new)}"


@attrs.frozen
class CauseGroup:
    """Node changes that one cause explains."""

    kind: str  # "write", "unattributed", "added", "removed", "fails", "fixed"
    title: str  # `class web, classes/web.yml`, `nodes added`, `now fail to render: ...`
    file: str | None  # the written file, relative to the inventory directory
    file_status: str | None  # how the file changed between the sides (None: it did not)
    nodes: tuple[str, ...]
    changes: tuple[SharedChange, ...] = ()

    @property
    def first_line(self) -> int | None:
        """The line of the first write listed (where an annotation points)."""
        for change in self.changes:
            if change.origin is not None and change.origin.line:
                return change.origin.line
        return None

    def as_dict(self) -> dict[str, Any]:
        """The group as plain data (the JSON output)."""
        return {"kind": self.kind, "title": self.title, "file": self.file,
                "file_status": self.file_status, "nodes": list(self.nodes),
                "changes": [{"path": c.path, "change": c.change, "old": c.old, "new": c.new,
                             "source": c.origin.as_dict() if c.origin else None,
                             "nodes": list(c.nodes)} for c in self.changes]}


def value_text(value: Any) -> str:
    """A value as the diff shows it: JSON, keys sorted."""
    return json.dumps(value, sort_keys=True, default=str)


def _cause_of(change: KeyChange) -> tuple[str, str, str | None]:
    origin = change.origin
    if origin is None:
        return ("unattributed", "lists and values without a recorded write", None)
    label = origin.label
    if origin.file:
        label += f", {origin.file}"
    return ("write", label, origin.file)


def group_by_cause(result: InventoryDiff, changed_files: dict[str, str] | None = None
                   ) -> list[CauseGroup]:
    """The diff's node changes grouped by cause, the groups touching most nodes first."""
    files = changed_files or {}
    # cause -> shared change key -> (KeyChange, nodes)
    writes: dict[tuple[str, str, str | None], dict[tuple, tuple[KeyChange, list[str]]]] = {}
    node_events: dict[tuple[str, str], list[str]] = {}
    for node in result.nodes:
        if node.status in ("added", "removed"):
            node_events.setdefault((node.status, f"nodes {node.status}"), []).append(node.node)
            if node.status == "added" and node.new_error:
                node_events.setdefault(("fails", f"now fail to render: {node.new_error}"),
                                       []).append(node.node)
            continue
        if node.new_error and node.new_error != node.old_error:
            node_events.setdefault(("fails", f"now fail to render: {node.new_error}"),
                                   []).append(node.node)
        elif node.old_error and not node.new_error:
            node_events.setdefault(("fixed", f"render again, failed before: {node.old_error}"),
                                   []).append(node.node)
        for change in node.keys:
            origin = change.origin
            key = (change.path, change.change, value_text(change.old), value_text(change.new),
                   origin)
            shared = writes.setdefault(_cause_of(change), {})
            shared.setdefault(key, (change, []))[1].append(node.node)
    groups: list[CauseGroup] = []
    for (kind, title, file), shared in writes.items():
        changes = tuple(SharedChange(change.path, change.change, change.old, change.new,
                                     change.origin, tuple(nodes))
                        for change, nodes in sorted(shared.values(),
                                                    key=lambda item: (-len(item[1]),
                                                                      item[0].path)))
        nodes = tuple(sorted({name for change in changes for name in change.nodes}))
        status = files.get(file) if file else None
        if status:
            title += f" ({status})"
        groups.append(CauseGroup(kind, title, file, status, nodes, changes))
    for (kind, title), names in node_events.items():
        groups.append(CauseGroup(kind, title, None, None, tuple(names)))
    order = {"fails": 0, "write": 1, "unattributed": 2, "added": 3, "removed": 4, "fixed": 5}
    groups.sort(key=lambda group: (order[group.kind], -len(group.nodes), group.title))
    return groups
