"""The rules that need the rendered inventory: reachability, failing references, node errors.

They read the entities each node really merged (its provenance record), so class mappings,
relative names and templated class names count exactly as they do when rendering. The rules
about writes are in `write_rules`.
"""

from __future__ import annotations

import os
import re
from typing import Any

from reclass_ng.api import Inventory
from reclass_ng.classes import parse_class_mapping
from reclass_ng.entity import Entity
from reclass_ng.errors import (
    ChangedConstantError,
    InfiniteRecursionError,
    LocatedError,
    ReclassError,
    ResolveError,
    ResolveErrorList,
    ValueAtPathError,
    YamlFileError,
)
from reclass_ng.lint.findings import Finding, finding
from reclass_ng.lint.nodes import NodeRun
from reclass_ng.lint.write_rules import node_list
from reclass_ng.lint.yaml_pass import LineIndex
from reclass_ng.prepare import absolute_class_name
from reclass_ng.suggestions import did_you_mean


def _path_of(entity: Entity) -> str:
    return (entity.source.path if entity.source else None) or ""


# -- unreachable-class ---------------------------------------------------------------------

def _name_pattern(name: str, ref_open: str, ref_close: str) -> re.Pattern[str]:
    """A class name with `${...}` parts as a regular expression where each part matches anything."""
    out, i, depth, start = [], 0, 0, 0
    while i < len(name):
        if name.startswith(ref_open, i):
            if depth == 0:
                out.append(re.escape(name[start:i]))
            depth += 1
            i += len(ref_open)
        elif depth and name.startswith(ref_close, i):
            depth -= 1
            i += len(ref_close)
            if depth == 0:
                out.append(".*")
                start = i
        else:
            i += 1
    out.append(".*" if depth else re.escape(name[start:]))
    return re.compile("".join(out))


def class_trees(storage: Any) -> list[Any]:
    """The class trees the nodes read: one for yaml_fs; for yaml_git and mixed, the tree of
    each environment the render opened (there may be no tree for the default environment)."""
    opened = getattr(storage, "opened_environments", None)
    if opened is None:
        return [storage]
    return list({id(tree): tree for tree in map(storage.classes_for, opened())}.values())


def rendered_classes(run: NodeRun) -> set[str]:
    """The classes a node merged as rendered (until its error, if any)."""
    return {e.name for e in run.entities if e.source and e.source.kind == "class"}


def reachable_classes(inventory: Inventory, rendered: set[str], tree: Any = None) -> set[str]:
    """Classes some node reaches: as rendered (`rendered`, the rendered_classes of every
    node), plus a static walk where `${...}` matches anything.

    The static walk covers nodes that fail to render and names that a reference would choose
    differently on another day; a templated name marks every class it could match as reached.
    `tree` is the class tree walked (default: the storage's own, for yaml_fs).
    """
    storage, settings = inventory.storage, inventory.settings
    classes = storage if tree is None else tree
    ref_open, ref_close = settings.reference_sentinels
    reached = set(rendered)
    pending: list[tuple[str, str]] = []  # (listed name, relative base)
    for name, node_file in storage.nodes.items():
        pending.extend((c, name) for c in _listed_classes(storage, node_file.path))
    for text in settings.class_mappings:
        try:
            mapping = parse_class_mapping(text)
        except ReclassError:
            continue
        # `\1` in a regex mapping's class is filled from the node name: it may be anything.
        pending.extend((re.sub(r"\\(\d+|g<\w+>)", ref_open + "x" + ref_close, c), "")
                       for c in mapping.classes)
    pending.extend((name, "") for name in reached)
    done: set[str] = set()
    while pending:
        listed, base = pending.pop()
        name = absolute_class_name(listed, base)
        if ref_open in name:
            pattern = _name_pattern(name, ref_open, ref_close)
            targets = [c for c in classes.class_paths if pattern.fullmatch(c)]
        else:
            targets = [name] if name in classes.class_paths else []
        for target in targets:
            reached.add(target)
            if target not in done:
                done.add(target)
                listed_there = _listed_classes(classes, classes.class_paths[target])
                pending.extend((c, target) for c in listed_there)
    return reached


def _listed_classes(storage: Any, path: str) -> list[str]:
    try:
        raw = storage.parsed(path)
    except ReclassError:
        return []
    listed = raw.get("classes") if isinstance(raw, dict) else None
    return [c for c in listed if isinstance(c, str)] if isinstance(listed, list) else []


def unreachable_class(inventory: Inventory, rendered: set[str]) -> list[Finding]:
    """unreachable-class: classes no node reaches (`rendered`: see reachable_classes)."""
    found = []
    for tree in class_trees(inventory.storage):
        reached = reachable_classes(inventory, rendered, tree)
        found += [finding("unreachable-class", path, 1,
                          f"class {name} is not used by any node (directly, through other "
                          "classes, class mappings or a templated class name)")
                  for name, path in sorted(tree.class_paths.items()) if name not in reached]
    return found


# -- failing-reference and node-error --------------------------------------------------------

def _reference_errors(err: ReclassError) -> list[ValueAtPathError]:
    if isinstance(err, ResolveErrorList):
        return list(err.errors)
    if isinstance(err, (ResolveError, InfiniteRecursionError)):
        return [err]
    return []


class RenderRules:
    """failing-reference and node-error, told one node at a time (`add`)."""

    def __init__(self, index: LineIndex, yaml_broken: set[str]) -> None:
        self.index = index
        self.yaml_broken = yaml_broken
        self.users: dict[str, int] = {}  # file -> nodes that merged it
        self.refs: dict[tuple, list[str]] = {}
        self.hints: dict[tuple, str | None] = {}
        self.others: dict[tuple, list[str]] = {}

    def add(self, run: NodeRun) -> None:
        """Take what the rules need from one node's record."""
        for file in {_path_of(e) for e in run.entities}:
            self.users[file] = self.users.get(file, 0) + 1
        if run.internal:
            self.others.setdefault((run.file, None, f"internal error: {run.internal}"),
                                   []).append(run.name)
        err = run.error
        if err is None or isinstance(err, ChangedConstantError):
            return  # constant-ignored reports the write that broke the constant
        failed = _reference_errors(err)
        if failed:
            self._add_failed_references(run.name, failed)
        elif not (isinstance(err, YamlFileError) and err.path in self.yaml_broken):
            self._add_node_error(run, err)

    def _add_failed_references(self, node: str, failed: list[ValueAtPathError]) -> None:
        for ref_err in failed:
            ref = getattr(ref_err, "ref", None)
            what = f"{ref} cannot be resolved" if ref else ref_err.text
            key = (what, ref_err.path, ref_err.file() or "")
            self.refs.setdefault(key, []).append(node)
            # A hint ("did you mean ...") depends on the node's keys: show the first one.
            self.hints.setdefault(key, getattr(ref_err, "hint", None))

    def _add_node_error(self, run: NodeRun, err: ReclassError) -> None:
        file, line = self._place_of(err)
        if not file:
            # Format errors start with the file they are about; else the node file is the place.
            head = err.text.split(": ", 1)[0]
            file = head if os.path.isfile(head) else run.file
        text = " ".join(line.strip() for line in err.detail_lines())
        text += did_you_mean(err.suggestions())
        self.others.setdefault((file, line, text), []).append(run.name)

    def _place_of(self, err: ReclassError) -> tuple[str, int | None]:
        """The file and line an error is about, as far as it says ("" when it does not)."""
        if isinstance(err, YamlFileError):
            return err.path, err.line
        if isinstance(err, ValueAtPathError):
            file = err.file() or ""
            return file, self.index.line(file, _section_path(err.path))
        if isinstance(err, LocatedError):  # e.g. a class not found: its list entry
            at = err.written_at()
            return err.file() or "", at.line if at is not None else None
        return "", None

    def findings(self) -> tuple[list[Finding], list[Finding]]:
        """(failing-reference, node-error) findings of every node that did not render."""
        ref_found = []
        for (text, path, file), nodes in self.refs.items():  # text: what went wrong
            total = self.users.get(file, 0)
            share = f"{len(nodes)} of {total} nodes using this file" if total \
                else f"{len(nodes)} nodes"
            keys = _section_path(path)
            hint = self.hints.get((text, path, file))
            ref_found.append(finding(
                "failing-reference", file, self.index.line(file, keys),
                f"{':'.join(str(k) for k in keys)}: {text} on {share}: {node_list(nodes)}"
                + (f" ({hint})" if hint else "")))
        node_found = [finding("node-error", file, line, f"{text} (nodes: {node_list(nodes)})")
                      for (file, line, text), nodes in self.others.items()]
        return ref_found, node_found


def _section_path(path: tuple) -> tuple:
    return path if path and path[0] == "exports" else ("parameters",) + tuple(path)
