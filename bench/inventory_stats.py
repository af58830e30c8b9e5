"""Figures that describe an inventory: class counts, include depth, reference share.

Works on parsed documents, so the generator can report on what it made and
the tests can check the files it wrote (parsed independently with PyYAML).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from pathlib import Path

from param_trees import count_leaves


def absolute_class(name: str, owner: str) -> str:
    """Resolve a relative class name listed by class ``owner`` (kapicorp-reclass's rule)."""
    if not name.startswith("."):
        return name
    rest = name.lstrip(".")
    dots = len(name) - len(rest)
    parts = owner.split(".")
    parent = parts[: max(len(parts) - dots, 0)]
    return ".".join([*parent, rest]) if parent else rest


def expand_classes(node: dict, classes: dict[str, dict]) -> list[str]:
    """Classes a node ends up with, in merge order, by the reclass walk (first mention wins)."""
    seen: list[str] = []
    seen_set: set[str] = set()

    def walk(entity: dict, owner: str | None) -> None:
        for listed in entity.get("classes") or []:
            name = absolute_class(listed, owner) if owner else listed
            if name in seen_set:
                continue
            if name not in classes:
                raise KeyError(f"class {name} (listed by {owner or 'a node'}) does not exist")
            seen_set.add(name)  # marked before the walk: generated inventories have no cycles
            walk(classes[name], name)
            seen.append(name)

    walk(node, None)
    return seen


def include_depth(node: dict, classes: dict[str, dict], memo: dict[str, int]) -> int:
    """Longest chain of class includes below a node; the node's own list is level 1."""

    def depth(name: str) -> int:
        if name not in memo:
            memo[name] = 0  # guards against cycles; generated inventories have none
            listed = classes[name].get("classes") or []
            memo[name] = 1 + max((depth(absolute_class(c, name)) for c in listed), default=0)
        return memo[name]

    return max((depth(c) for c in node.get("classes") or []), default=0)


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


def inventory_stats(classes: dict[str, dict], nodes: dict[str, dict]) -> dict:
    """Summary figures of an inventory given as parsed class and node documents."""
    leaves = references = 0
    queries = 0
    exporting_files = 0
    for document in [*classes.values(), *nodes.values()]:
        for key in ("parameters", "exports"):
            total, refs = count_leaves(document.get(key) or {})
            leaves += total
            references += refs
        queries += sum("$[" in s for s in _strings(document.get("parameters") or {}))
        exporting_files += bool(document.get("exports"))
    per_node = [len(expand_classes(node, classes)) for node in nodes.values()]
    memo: dict[str, int] = {}
    depths = [include_depth(node, classes, memo) for node in nodes.values()]
    querying_nodes = sum(
        any("$[" in s for s in _strings(node.get("parameters") or {})) for node in nodes.values()
    )
    return {
        "nodes": len(nodes),
        "classes": len(classes),
        "classes_per_node": {
            "min": min(per_node, default=0),
            "median": statistics.median(per_node) if per_node else 0,
            "max": max(per_node, default=0),
        },
        "max_include_depth": max(depths, default=0),
        "leaf_values": leaves,
        "reference_share": round(references / leaves, 3) if leaves else 0.0,
        "query_strings": queries,
        "querying_nodes": querying_nodes,
        "files_with_exports": exporting_files,
    }


def read_inventory(base: Path, load: Callable[[str], object], nodes_dir: str = "nodes",
                   classes_dir: str = "classes") -> tuple[dict[str, dict], dict[str, dict]]:
    """Parse an inventory directory into (classes, nodes) keyed by reclass names."""
    classes: dict[str, dict] = {}
    nodes: dict[str, dict] = {}
    for kind, folder in (("classes", base / classes_dir), ("nodes", base / nodes_dir)):
        for root, _dirs, names in os.walk(folder):
            for file_name in names:
                if not file_name.endswith((".yml", ".yaml")):
                    continue
                path = Path(root) / file_name
                document = load(path.read_text(encoding="utf-8")) or {}
                stem = path.name.rsplit(".", 1)[0]
                if kind == "nodes":
                    nodes[stem] = document
                    continue
                relative = path.relative_to(folder).parent.parts
                parts = relative if stem == "init" and relative else (*relative, stem)
                classes[".".join(parts)] = document
    return classes, nodes
