"""The rules that need the rendered inventory: reachability, layers, constants, references.

They all read the entity order the engine really merged (see `layers`), so class mappings,
relative names and templated class names count exactly as they do when rendering.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
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
from reclass_ng.lint.findings import ERROR, WARNING, Finding, finding
from reclass_ng.lint.layers import Write, entity_label, plain, prefixes
from reclass_ng.lint.nodes import NodeRun, WriteCache
from reclass_ng.lint.yaml_pass import LineIndex
from reclass_ng.prepare import absolute_class_name

MAX_NAMES = 5


def node_list(names: Iterable[str]) -> str:
    names = sorted(set(names))
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")


def key_text(path: tuple) -> str:
    return "parameters:" + ":".join(str(p) for p in path)


def short_value(value: Any, limit: int = 60) -> str:
    text = repr(plain(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def file_of_uri(uri: str | None) -> str:
    if not uri:
        return ""
    uri = uri.split("; ")[-1]  # merge errors list every file involved; the last one failed
    return uri[len("yaml_fs://"):] if uri.startswith("yaml_fs://") else ""


def _path_of(entity: Entity) -> str:
    return (entity.source.path if entity.source else None) or ""


def _where(entity: Entity, path: tuple, index: LineIndex) -> str:
    file = _path_of(entity)
    line = index.line(file, ("parameters",) + path)
    return f"{entity_label(entity)}" + (f" ({index.show(file)}:{line})" if file and line else "")


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


def reachable_classes(inventory: Inventory, runs: list[NodeRun]) -> set[str]:
    """Classes some node reaches: as rendered, plus a static walk where `${...}` matches anything.

    The static walk covers nodes that fail to render and names that a reference would choose
    differently on another day; a templated name marks every class it could match as reached.
    """
    storage, settings = inventory.storage, inventory.settings
    ref_open, ref_close = settings.reference_sentinels
    reached = {e.name for run in runs for e in run.entities
               if e.source and e.source.kind == "class"}
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
            targets = [c for c in storage.class_paths if pattern.fullmatch(c)]
        else:
            targets = [name] if name in storage.class_paths else []
        for target in targets:
            reached.add(target)
            if target not in done:
                done.add(target)
                listed_there = _listed_classes(storage, storage.class_paths[target])
                pending.extend((c, target) for c in listed_there)
    return reached


def _listed_classes(storage: Any, path: str) -> list[str]:
    try:
        raw = storage.parsed(path)
    except ReclassError:
        return []
    listed = raw.get("classes") if isinstance(raw, dict) else None
    return [c for c in listed if isinstance(c, str)] if isinstance(listed, list) else []


def unreachable_class(inventory: Inventory, runs: list[NodeRun]) -> list[Finding]:
    reached = reachable_classes(inventory, runs)
    return [finding("unreachable-class", path, 1,
                    f"class {name} is not used by any node (directly, through other classes, "
                    "class mappings or a templated class name)")
            for name, path in sorted(inventory.storage.class_paths.items()) if name not in reached]


# -- dead-value ----------------------------------------------------------------------------

def _overrides(later: dict[tuple, Write], path: tuple, mine: Write) -> bool:
    """Whether a later entity's writes replace the value `mine` at `path`."""
    for prefix in prefixes(path):
        write = later.get(prefix)
        if write is None:
            continue
        if write.override:
            return True
        if prefix != path:
            if write.kind in ("scalar", "list"):
                return True  # replaces the whole mapping holding our key
            continue
        if write.kind in ("scalar", "null"):
            return True
        if write.kind == "list":
            return False  # lists concatenate (or fail), they never drop ours
        if write.kind == "dict":
            return mine.kind in ("scalar", "null")
        return mine.kind != "list"  # a reference replaces anything but a list it may extend
    return False


def dead_value(runs: list[NodeRun], writes: WriteCache, index: LineIndex) -> list[Finding]:
    users: dict[tuple[str, tuple], int] = {}
    dead: dict[tuple[str, tuple], tuple[int, str]] = {}  # -> (nodes where dead, example winner)
    classes: dict[str, Entity] = {}
    for run in runs:
        entities = run.entities
        for i, entity in enumerate(entities):
            if not entity.source or entity.source.kind != "class":
                continue
            classes[entity.name] = entity
            for path, mine in writes(entity).items():
                if mine.kind in ("dict", "null") or mine.constant:
                    continue
                key = (entity.name, path)
                users[key] = users.get(key, 0) + 1
                for later in entities[i + 1:]:
                    if _overrides(writes(later), path, mine):
                        count, example = dead.get(key, (0, ""))
                        dead[key] = (count + 1, example or _where(later, path, index))
                        break
    found = []
    for key, (count, example) in dead.items():
        if count != users[key]:
            continue
        name, path = key
        entity = classes[name]
        file = _path_of(entity)
        value = writes(entity)[path].value
        found.append(finding(
            "dead-value", file, index.line(file, ("parameters",) + path),
            f"{key_text(path)} = {short_value(value)} in class {name} is overridden on every "
            f"node using the class ({count}), e.g. by {example}"))
    return found


# -- type-change and constant-ignored --------------------------------------------------------

def layer_rules(runs: list[NodeRun], writes: WriteCache, index: LineIndex, strict: bool
                ) -> tuple[list[Finding], list[Finding]]:
    """(type-change, constant-ignored) findings, each grouped over the nodes it happens on."""
    changes: dict[tuple, list[str]] = {}
    ignored: dict[tuple, list[str]] = {}
    keep: dict[int, Entity] = {}
    for run in runs:
        kinds: dict[tuple, tuple[str, Entity]] = {}
        constants: dict[tuple, Entity] = {}
        for entity in run.entities:
            keep[id(entity)] = entity
            for path, write in writes(entity).items():
                fixed = next((constants[p] for p in prefixes(path) if p in constants), None)
                if fixed is not None and fixed is not entity:
                    if path in constants:
                        ignored.setdefault((path, id(fixed), id(entity)), []).append(run.name)
                    continue
                if write.override:
                    _drop(constants, path)  # `~key` replaces constants below it as well
                if write.constant:
                    constants.setdefault(path, entity)
                if write.override or write.kind == "null":
                    _drop(kinds, path)
                    if write.kind == "null":
                        continue
                if write.kind == "reference":
                    continue  # its type is only known per node after rendering
                before = kinds.get(path)
                if before is not None and before[0] != write.kind and not write.override:
                    changes.setdefault((path, before[0], id(before[1]), write.kind, id(entity)),
                                       []).append(run.name)
                    _drop(kinds, path)
                kinds[path] = (write.kind, entity)
    type_found = []
    for (path, old_kind, old_id, new_kind, new_id), nodes in changes.items():
        new, old = keep[new_id], keep[old_id]
        file = _path_of(new)
        type_found.append(finding(
            "type-change", file, index.line(file, ("parameters",) + path),
            f"{key_text(path)}: a {new_kind} here replaces the {old_kind} of "
            f"{_where(old, path, index)} on {node_list(nodes)}"))
    constant_found = []
    for (path, fixed_id, entity_id), nodes in ignored.items():
        entity, fixed = keep[entity_id], keep[fixed_id]
        file = _path_of(entity)
        constant_found.append(finding(
            "constant-ignored", file, index.line(file, ("parameters",) + path),
            f"{key_text(path)}: this write is ignored because {_where(fixed, path, index)} made "
            f"the key a constant (`=`), on {node_list(nodes)}"
            + ("; with strict_constant_parameters the node fails" if strict else ""),
            severity=ERROR if strict else WARNING))
    return type_found, constant_found


def _drop(kinds: dict[tuple, Any], path: tuple) -> None:
    """Forget what was known at `path` and below (the value there was replaced)."""
    size = len(path)
    for known in [k for k in kinds if k[:size] == path]:
        del kinds[known]


# -- failing-reference and node-error --------------------------------------------------------

def _reference_errors(err: ReclassError) -> list[ValueAtPathError]:
    if isinstance(err, ResolveErrorList):
        return list(err.errors)
    if isinstance(err, (ResolveError, InfiniteRecursionError)):
        return [err]
    return []


def render_rules(runs: list[NodeRun], index: LineIndex, yaml_broken: set[str]
                 ) -> tuple[list[Finding], list[Finding]]:
    """(failing-reference, node-error) findings of every node that did not render."""
    users: dict[str, int] = {}
    for run in runs:
        for file in {_path_of(e) for e in run.entities}:
            users[file] = users.get(file, 0) + 1
    refs: dict[tuple, list[str]] = {}
    hints: dict[tuple, str | None] = {}
    others: dict[tuple, list[str]] = {}
    for run in runs:
        if run.internal:
            others.setdefault((run.file, None, f"internal error: {run.internal}"),
                              []).append(run.name)
        err = run.error
        if err is None or isinstance(err, ChangedConstantError):
            continue  # constant-ignored reports the write that broke the constant
        failed = _reference_errors(err)
        for ref_err in failed:
            ref = getattr(ref_err, "ref", None)
            what = f"{ref} cannot be resolved" if ref else ref_err.text
            key = (what, ref_err.path, file_of_uri(ref_err.uri))
            refs.setdefault(key, []).append(run.name)
            # A hint ("did you mean ...") depends on the node's keys: show the first one.
            hints.setdefault(key, getattr(ref_err, "hint", None))
        if failed:
            continue
        if isinstance(err, YamlFileError):
            if err.path in yaml_broken:
                continue
            file, line = err.path, err.line
        elif isinstance(err, ValueAtPathError):
            file = file_of_uri(err.uri)
            line = index.line(file, _section_path(err.path))
        elif isinstance(err, LocatedError):
            file, line = file_of_uri(err.uri), None
        else:
            file, line = "", None
        if not file:
            # Format errors start with the file they are about; else the node file is the place.
            head = err.text.split(": ", 1)[0]
            file = head if os.path.isfile(head) else run.file
        text = " ".join(line.strip() for line in err.detail_lines())
        others.setdefault((file, line, text), []).append(run.name)
    ref_found = []
    for (text, path, file), nodes in refs.items():  # text: what went wrong
        total = users.get(file, 0)
        share = f"{len(nodes)} of {total} nodes using this file" if total else f"{len(nodes)} nodes"
        keys = _section_path(path)
        ref_found.append(finding(
            "failing-reference", file, index.line(file, keys),
            f"{':'.join(str(k) for k in keys)}: {text} on {share}: {node_list(nodes)}"
            + (f" ({hints[(text, path, file)]})" if hints.get((text, path, file)) else "")))
    node_found = [finding("node-error", file, line, f"{text} (nodes: {node_list(nodes)})")
                  for (file, line, text), nodes in others.items()]
    return ref_found, node_found


def _section_path(path: tuple) -> tuple:
    return path if path and path[0] == "exports" else ("parameters",) + tuple(path)
