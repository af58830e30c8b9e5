"""The explanations `reclass-ng explain` prints, as plain data (the JSON output is exactly this).

Built from a NodeTrace (the engine's provenance record of the node): a parameter path (a leaf, or a mapping explained
leaf by leaf), the include chain of a class, and the history of an application.
"""

from __future__ import annotations

import json
from typing import Any

from reclass_ng.errors import UsageError
from reclass_ng.explain.trace import (
    MAX_REFERENCE_DEPTH,
    MISSING,
    ExplainNotFound,
    NodeTrace,
    as_written,
    located_references,
    lookup,
    plain,
)
from reclass_ng.observe.provenance import MergedEntity, Write
from reclass_ng.prepare import absolute_class_name
from reclass_ng.suggestions import similar_names
from reclass_ng.syntax.ast import Query, Ref
from reclass_ng.values import Interpolation

# -- parameters -------------------------------------------------------------------------------

def explain_parameter(trace: NodeTrace, path: str, section: str = "parameters"
                      ) -> dict[str, Any]:
    """The final value at `path` (in parameters or exports) and every write that made it (each
    leaf, for a mapping)."""
    tree = trace.trees[section]
    keys = trace.split(path)
    if not keys or any(k == "" for k in keys):
        raise UsageError(f"Invalid parameter path {path!r} (keys are separated by "
                         f"{trace.delimiter!r}, e.g. nginx{trace.delimiter}port)")
    report: dict[str, Any] = {"node": trace.node, "section": section, "path": path}
    leaf, element = _leaf_and_element(tree, keys)
    if element:
        # Lists are values, not places: explain the whole list and say which item was asked.
        report["path"] = trace.join(leaf)
        report["note"] = (f"{path} is item {trace.join(element)} of the list "
                          f"{trace.join(leaf)}; the list is explained")
    final = lookup(tree, leaf)
    written = trace.written_leaves(leaf, section)
    if final is MISSING and not written:
        what = "parameter" if section == "parameters" else "export"
        hint = (" (for classes and applications use --class NAME or --application NAME)"
                if leaf[0] in ("classes", "applications") and len(leaf) == 1 else "")
        nearest, close = ("", []) if hint else _nearest_keys(trace, tree, leaf)
        raise ExplainNotFound(f"Node '{trace.node}' has no {what} '{trace.join(leaf)}'"
                              + (hint or nearest), trace.node, close)
    report["present"] = final is not MISSING
    if final is not MISSING:
        report["value"] = plain(final)
    mapping = isinstance(final, dict) and bool(final)
    if final is MISSING and any(w != leaf for w in written):
        mapping = True
    if not mapping:
        report["kind"] = "value"
        report["contributions"] = _contributions(trace, leaf, section)
        if element and isinstance(final, list):
            origin = _element_origin(trace, leaf, element[0], section)
            if origin is not None:
                report["element"] = origin
        return report
    report["kind"] = "mapping"
    leaves = dict.fromkeys(_final_leaves(final, leaf) if final is not MISSING else [])
    leaves.update(dict.fromkeys(w for w in written if w != leaf or final is MISSING))
    report["leaves"] = [_leaf_report(trace, item, section) for item in leaves]
    return report


def _element_origin(trace: NodeTrace, leaf: tuple, index_text: str, section: str
                    ) -> dict[str, Any] | None:
    """Which write put item `index_text` into the (appended) list at `leaf`, when knowable."""
    final = lookup(trace.trees[section], leaf)
    try:
        index = int(index_text)
        value = final[index]
    except (ValueError, IndexError):
        return None
    index %= len(final)
    start = 0
    for contribution in trace.trace(leaf, section):
        if not contribution.final:
            continue
        written = contribution.written
        if isinstance(written, list):
            size = len(written)
        elif type(written) is Interpolation and type(written.template.single) is Ref:
            target = trace.ref_value(written.template.single)
            size = len(target) if isinstance(target, list) else 1
        else:
            size = 1  # a scalar a later list was appended to (allow_list_over_scalar)
        if index < start + size:
            return {"index": index, "value": plain(value), "from": _where(trace, contribution)}
        start += size
    return None


def _leaf_report(trace: NodeTrace, leaf: tuple, section: str) -> dict[str, Any]:
    value = lookup(trace.trees[section], leaf)
    report: dict[str, Any] = {"path": trace.join(leaf), "present": value is not MISSING}
    if value is not MISSING:
        report["value"] = plain(value)
    report["contributions"] = _contributions(trace, leaf, section)
    return report


def _contributions(trace: NodeTrace, leaf: tuple, section: str) -> list[dict[str, Any]]:
    return [_contribution(trace, c, 0, frozenset()) for c in trace.trace(leaf, section)]


def _leaf_and_element(tree: dict, keys: tuple) -> tuple[tuple, tuple]:
    """Split a path at the first list on its way: (path of the list, index part)."""
    node: Any = tree
    for i, key in enumerate(keys):
        if isinstance(node, list):
            return keys[:i], keys[i:]
        if not isinstance(node, dict) or key not in node:
            break
        node = node[key]
    return keys, ()


def _final_leaves(value: Any, path: tuple) -> list[tuple]:
    if isinstance(value, dict) and value:
        out: list[tuple] = []
        for key, child in value.items():
            out.extend(_final_leaves(child, path + (key,)))
        return out
    return [path]


def _nearest_keys(trace: NodeTrace, tree: dict, keys: tuple) -> tuple[str, list[str]]:
    """A hint from the keys at the deepest level of `keys` that exists, and the nearest key
    paths ("did you mean")."""
    node: Any = tree
    walked: tuple = ()
    for key in keys:
        if not isinstance(node, dict):
            shown = json.dumps(plain(node), default=str)
            return f" ({trace.join(walked)} is a value ({shown[:60]}), not a mapping)", []
        if key not in node:
            candidates = [str(k) for k in node]
            if not candidates:
                break
            close = similar_names(str(key), candidates)
            if not close:
                return f" (keys at this level: {', '.join(sorted(candidates)[:10])})", []
            return "", [trace.join(walked + (c,)) for c in close]
        node = node[key]
        walked += (key,)
    return "", []


def _where(trace: NodeTrace, write: Write) -> dict[str, Any]:
    key = write.key
    written_key = trace.join(key[:-1] + (write.flag + str(key[-1]),))
    return {"source": write.source.name, "source_kind": write.source.kind,
            "file": trace.display_file(write.file), "line": write.line, "key": written_key}


def _contribution(trace: NodeTrace, contribution: Write, depth: int,
                  seen: frozenset[str]) -> dict[str, Any]:
    out = _where(trace, contribution)
    out["flag"] = contribution.flag
    out["written"] = as_written(contribution.written)
    out["effect"] = contribution.effect
    out["final"] = contribution.final
    if contribution.by is not None:
        out["by"] = _where(trace, contribution.by)
    if contribution.via is not None:
        out["via"] = contribution.via
    # Through a reference to a mapping, only the part holding the leaf matters: follow that.
    below = contribution.via_keys if contribution.via is not None else ()
    references = []
    for within, ref in located_references(contribution.written):
        found = _reference(trace, ref, depth, seen, below)
        if within:  # inside a list or mapping written at the key: which item holds it
            found["within"] = trace.join(within)
        references.append(found)
    if references:
        out["references"] = references
    return out


def _reference(trace: NodeTrace, ref: Ref | Query, depth: int, seen: frozenset[str],
               below: tuple = ()) -> dict[str, Any]:
    """A reference: the path it points at (or `below` it), its final value, and the writes that
    made that."""
    if isinstance(ref, Query):
        return {"reference": ref.source_text(), "note": "inventory query (not traced)"}
    path, default = trace.ref_target(ref)
    if below:
        path = trace.join(trace.split(path) + below)
    out: dict[str, Any] = {"reference": ref.source_text(), "path": path}
    inner = [_reference(trace, item, depth, seen) for item in ref.items if isinstance(item, Ref)]
    if inner:
        out["inner"] = inner
    keys = trace.split(path)
    value = lookup(trace.params, keys)
    if value is not MISSING:
        out["value"] = plain(value)
    note = _not_followed(value, default, path in seen, depth)
    if note is not None:
        out["note"] = note
        return out
    leaf, _ = _leaf_and_element(trace.params, keys)
    if isinstance(value, dict) and value:
        # A whole mapping: name who wrote its leaves, without following their references.
        out["sources"] = _mapping_writers(trace, value, leaf)
    else:
        out["sources"] = [_contribution(trace, c, depth + 1, seen | {path})
                          for c in trace.trace(leaf) if c.final]
    return out


def _not_followed(value: Any, default: Any, seen: bool, depth: int) -> str | None:
    """Why the writes behind a reference's value are not listed, or None when they are."""
    if value is MISSING:
        return "missing" if default is None else f"missing: the default {default!r} is used"
    if seen:
        return "loop: already explained above"
    if depth >= MAX_REFERENCE_DEPTH:
        return "depth limit reached"
    return None


def _mapping_writers(trace: NodeTrace, value: dict, leaf: tuple) -> list[dict[str, Any]]:
    """Who wrote the final values of a mapping's leaves, each writer and key once."""
    writers: dict[tuple, dict[str, Any]] = {}
    for item in _final_leaves(value, leaf):
        for contribution in trace.trace(item):
            if contribution.final:
                where = _where(trace, contribution)
                writers.setdefault((where["source"], where["key"]), where)
    return list(writers.values())


# -- classes and applications ------------------------------------------------------------------

def explain_class(trace: NodeTrace, name: str) -> dict[str, Any]:
    """Why the node has class `name`: the include chain, each link with its file:line."""
    classes = trace.info["classes"]
    if name not in classes:
        exists = name in trace.inventory.storage.class_paths
        raise ExplainNotFound(
            f"Node '{trace.node}' does not have class '{name}'"
            + (" (the class exists, but nothing this node includes lists it)" if exists else ""),
            trace.node, [] if exists else similar_names(name, classes))
    visit = next(v for v in trace.visits if v.kind == "class" and v.entity.name == name)
    position = [v.entity.name for v in trace.visits if v.kind == "class"].index(name) + 1
    also = [_link(trace, other, name) for other in trace.visits
            if other is not visit.listed_by and name in other.entity.classes]
    return {"node": trace.node, "class": name, "merge_position": position,
            "merged_classes": len(classes), "chain": _chain(trace, visit),
            "also_listed_by": also}


def explain_application(trace: NodeTrace, name: str) -> dict[str, Any]:
    """Which entities add or remove application `name`, in merge order, and their chains."""
    present: list[str] = []
    events: list[dict[str, Any]] = []
    adder: MergedEntity | None = None
    for visit in trace.visits:
        for index, app in enumerate(visit.entity.applications):
            if app not in (name, "~" + name):
                continue
            if app == name:
                effect = "already present" if present else "added"
                if not present:
                    present.append(name)
                    adder = visit
            else:
                effect = "removed" if present else "nothing to remove"
                present.clear()
                adder = None if effect == "removed" else adder
            events.append({"source": visit.entity.name, "source_kind": visit.kind,
                           "file": trace.display_file(visit.file),
                           "line": trace.line_of(visit.file, ("applications", index)),
                           "written": app, "effect": effect})
    if not events:
        raise ExplainNotFound(f"Node '{trace.node}' does not have application '{name}'",
                              trace.node, similar_names(name, trace.info["applications"]))
    report: dict[str, Any] = {"node": trace.node, "application": name,
                              "present": bool(present), "events": events}
    if adder is not None:
        report["chain"] = _chain(trace, adder)
    return report


def _chain(trace: NodeTrace, visit: MergedEntity) -> list[dict[str, Any]]:
    """Links from the node (or class mappings) down to `visit`'s entity."""
    links = []
    while visit.listed_by is not None:
        links.append(_link(trace, visit.listed_by, visit.entity.name))
        visit = visit.listed_by
    return links[::-1]


def _link(trace: NodeTrace, parent: MergedEntity, name: str) -> dict[str, Any]:
    """Where `parent` lists class `name`."""
    link: dict[str, Any] = {"source": parent.entity.name, "source_kind": parent.kind,
                            "class": name}
    if parent.kind == "automatic":
        return {**link, **_mapping_place(trace, name)}
    listed, line = name, None
    if parent.file is not None:
        raw = trace.inventory.storage.parsed(parent.file)
        entries = raw.get("classes") if isinstance(raw, dict) else None
        index = _listed_index(entries or [], name, parent.entity.name)
        if index is not None and entries is not None:
            listed = entries[index]
            line = trace.line_of(parent.file, ("classes", index))
    return {**link, "file": trace.display_file(parent.file), "line": line, "listed": listed}


def _listed_index(entries: list[Any], name: str, base: str) -> int | None:
    """The entry of a `classes:` list naming `name` (relative names resolved)."""
    for index, entry in enumerate(entries):
        if isinstance(entry, str) and absolute_class_name(entry, base) == name:
            return index
    # A name built from a reference: the first entry that has one is the best guess.
    for index, entry in enumerate(entries):
        if isinstance(entry, str) and "${" in entry:
            return index
    return None


def _mapping_place(trace: NodeTrace, name: str) -> dict[str, Any]:
    """The class_mappings entry that gave the node class `name`."""
    mapped = trace.provenance.mapped_class(name)
    if mapped is None:
        return {"file": None, "line": None, "listed": name}
    config = trace.settings.config_file
    line = trace.line_of(config, ("class_mappings", mapped.index)) if config else None
    return {"file": trace.display_file(config), "line": line, "listed": mapped.entry}
