"""Which classes include which, read from the class files as the engine's storage parsed them.

Relative names (`.base`) are made absolute with the engine's own `absolute_class_name`; a name
built from a reference (`${...}`) stays as written, since it depends on the node.
"""

from __future__ import annotations

from typing import Any

import reclass_ng
from reclass_ng.errors import ReclassError
from reclass_ng.prepare import absolute_class_name


class ClassGraph:
    """Include edges between the classes of an inventory (and from node files to classes)."""

    def __init__(self, inventory: reclass_ng.Inventory) -> None:
        self.inventory = inventory
        self.paths: dict[str, str] = dict(inventory.storage.class_paths)
        self.includes: dict[str, list[str]] = {}
        self.problems: dict[str, str] = {}
        for name, path in self.paths.items():
            self.includes[name] = self._listed(name, path)
        self.included_by: dict[str, list[str]] = {}
        for name, listed in self.includes.items():
            for child in listed:
                self.included_by.setdefault(child, []).append(name)

    def _listed(self, name: str, path: str) -> list[str]:
        try:
            raw = self.inventory.storage.parsed(path)
        except ReclassError as err:
            self.problems[name] = "\n".join(err.report_lines())
            return []
        entries = raw.get("classes") if isinstance(raw, dict) else None
        if not isinstance(entries, list):
            return []
        return [absolute_class_name(e, name) for e in entries if isinstance(e, str)]

    def nodes_listing(self, name: str) -> list[str]:
        """Nodes whose own file lists class `name` (relative names resolved)."""
        found = []
        storage = self.inventory.storage
        for node in self.inventory.node_names:
            try:
                raw: Any = storage.parsed(storage.nodes[node].path)
            except ReclassError:
                continue
            entries = raw.get("classes") if isinstance(raw, dict) else None
            if isinstance(entries, list) and name in (
                    absolute_class_name(e, "") for e in entries if isinstance(e, str)):
                found.append(node)
        return found

    def neighbourhood(self, name: str, depth: int = 3, limit: int = 60
                      ) -> tuple[list[list[str]], list[tuple[str, str]]]:
        """Layers around `name` for drawing: includers above (up to `depth` levels), the class,
        what it includes below; and the edges (includer, included) between shown classes.

        At most `limit` classes are shown; the nearest levels come first."""
        above = self._levels(name, self.included_by, depth, limit // 2)
        below = self._levels(name, self.includes, depth, limit // 2)
        layers = [*reversed(above), [name], *below]
        shown = {c for layer in layers for c in layer}
        edges = [(parent, child) for parent in shown for child in self.includes.get(parent, [])
                 if child in shown]
        return layers, sorted(set(edges))

    @staticmethod
    def _levels(start: str, links: dict[str, list[str]], depth: int, limit: int
                ) -> list[list[str]]:
        seen = {start}
        levels: list[list[str]] = []
        frontier = [start]
        count = 0
        for _ in range(depth):
            level = []
            for name in frontier:
                for other in links.get(name, []):
                    if other not in seen and count < limit:
                        seen.add(other)
                        level.append(other)
                        count += 1
            if not level:
                break
            levels.append(level)
            frontier = level
        return levels
