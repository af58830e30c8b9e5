"""The rules about writes: dead-value, type-change and constant-ignored.

They read what the engine recorded while rendering each node (reclass_ng.observe.provenance): which
writes were overridden, replaced, removed or ignored, and by which write. No merge rule is
repeated here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reclass_ng.lint.findings import ERROR, WARNING, Finding, finding
from reclass_ng.lint.nodes import NodeRun
from reclass_ng.lint.yaml_pass import LineIndex
from reclass_ng.observe.provenance import Write, values_written
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


class WriteRules:
    """dead-value, type-change and constant-ignored, told one node at a time (`add`).

    A write that nothing ended and that appended nothing counts only towards how many nodes
    use a class's value (dead-value reports a value overridden on every one of them): those
    are counted once per class tree and per node merging it, not write by write; the writes
    that did more come from each node's provenance record (contested_key_writes).
    """

    def __init__(self, strict: bool, index: LineIndex) -> None:
        self.strict = strict
        self.index = index
        # (class name, id(tree)) -> [tree, nodes that merged it completely]
        self.class_trees: dict[tuple[str, int], list[Any]] = {}
        self.dead: dict[tuple, tuple[int, Write, Write | None]] = {}
        self.changes: dict[tuple, tuple[Write, Write, list[str]]] = {}
        self.ignored: dict[tuple, tuple[Write, Write, list[str]]] = {}

    def add(self, run: NodeRun) -> None:
        """Take what the rules need from one node's record."""
        provenance = run.provenance
        if provenance is None:
            return
        # Which values a later layer replaces is known once the node's merge completed.
        counted = provenance.merged
        if counted:
            for source, tree in provenance.entity_values():
                if source.kind == "class":
                    # the tree is kept (in the entry) so that its id is never reused
                    self.class_trees.setdefault((source.name, id(tree)), [tree, 0])[1] += 1
        for path, writes in provenance.contested_key_writes():
            before = None
            for write in writes:
                self._add_write(run.name, path, write, before, counted)
                before = write

    def _add_write(self, node: str, path: tuple, write: Write, before: Write | None,
                   counted: bool) -> None:
        effect = write.effect
        if effect not in DEAD and effect != "appended" and effect != "ignored":
            return  # a value set or merged: nothing to report (most writes of a node)
        by = write.by
        # only for the effects that read it (it was asked for every write of every node)
        kind = write_kind(write.written) if effect != "ignored" else ""
        if counted and effect in DEAD and _counts_for_dead(write.source.kind, kind,
                                                           write.flag):
            key = (write.source.name, path)
            count, first, example = self.dead.get(key, (0, write, by))
            self.dead[key] = (count + 1, first, example or by)
        if effect == "overridden" and by is not None and by.key == path:
            new_kind = write_kind(by.written)
            if kind != new_kind and "reference" not in (kind, new_kind) \
                    and "null" not in (kind, new_kind):
                group = (path, kind, id(write.source), new_kind, id(by.source))
                self.changes.setdefault(group, (write, by, []))[2].append(node)
        if effect == "appended" and before is not None and before.final:
            # allow_list_over_scalar: a list appended to a scalar turns it into a list.
            old_kind = write_kind(before.written)
            if old_kind == "scalar" and kind == "list":
                appended = (path, old_kind, id(before.source), kind, id(write.source))
                self.changes.setdefault(appended, (before, write, []))[2].append(node)
        if effect == "ignored" and by is not None and path[:len(by.key)] == by.key:
            # Reported once, at the constant's key, even when a mapping is ignored there.
            held = (by.key, id(by.source), id(write.source))
            self.ignored.setdefault(held, (by, write, []))[2].append(node)

    def _users(self) -> dict[tuple, int]:
        """(class name, key path) -> how many nodes merged a class value there that dead-value
        counts (every node writing it: the value is part of the class's tree)."""
        users: dict[tuple, int] = {}
        for (name, _), (tree, nodes) in self.class_trees.items():
            for path, value, flag in values_written(tree):
                if _counts_for_dead("class", write_kind(value), flag):
                    users[(name, path)] = users.get((name, path), 0) + nodes
        return users

    def findings(self) -> tuple[list[Finding], list[Finding], list[Finding]]:
        """(dead-value, type-change, constant-ignored) findings, grouped over the nodes."""
        index = self.index
        users = self._users()
        dead_found = []
        for key, (count, write, example) in self.dead.items():
            if count != users.get(key):
                continue
            name, path = key
            shown = f", e.g. by {where(example, index)}" if example is not None else ""
            dead_found.append(finding(
                "dead-value", write.file, write.line,
                f"{key_text(path)} = {short_value(write.written)} in class {name} is overridden "
                f"on every node using the class ({count}){shown}"))
        type_found = [finding(
            "type-change", new.file, new.line,
            f"{key_text(old.path)}: a {write_kind(new.written)} here replaces the "
            f"{write_kind(old.written)} of {where(old, index)} on {node_list(nodes)}")
            for old, new, nodes in self.changes.values()]
        constant_found = [finding(
            "constant-ignored", write.file, index.line(write.file, ("parameters", *fixed.key)),
            f"{key_text(fixed.key)}: this write is ignored because {where(fixed, index)} made "
            f"the key a constant (`=`), on {node_list(nodes)}"
            + ("; with strict_constant_parameters the node fails" if self.strict else ""),
            severity=ERROR if self.strict else WARNING)
            for fixed, write, nodes in self.ignored.values()]
        return dead_found, type_found, constant_found


def _counts_for_dead(source_kind: str, kind: str, flag: str) -> bool:
    """Whether dead-value looks at a write: a class's value, not a mapping or a null (those
    merge or clear), not a constant."""
    return source_kind == "class" and kind not in ("dict", "null") and "=" not in flag
