"""Comparing full-inventory outputs of different reclass implementations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

# Parameters holding the generator's inventory queries (see generate.py --queries).
QUERY_PARAMETERS = "peers"


def normalise(inventory: dict) -> dict:
    """Drop what legitimately differs between runs and implementations.

    Timestamps change every run. The node lists of the inventory's ``classes``
    and ``applications`` maps, and the results of list queries, follow the
    directory order in kapicorp-reclass (file-system dependent, see
    reclass-semantics.md §1.2 and §6.2) but are sorted by others, so they are
    compared as sorted lists.
    """
    result = dict(inventory)
    result.pop("__reclass__", None)
    nodes = {}
    for name, info in (inventory.get("nodes") or {}).items():
        info = dict(info)
        meta = dict(info.get("__reclass__") or {})
        meta.pop("timestamp", None)
        info["__reclass__"] = meta
        parameters = info.get("parameters")
        if isinstance(parameters, dict) and isinstance(parameters.get(QUERY_PARAMETERS), dict):
            queries = dict(parameters[QUERY_PARAMETERS])
            for key, value in queries.items():
                if isinstance(value, list):
                    queries[key] = sorted(value, key=str)
            info["parameters"] = {**parameters, QUERY_PARAMETERS: queries}
        nodes[name] = info
    result["nodes"] = nodes
    for key in ("classes", "applications"):
        members_of = inventory.get(key) or {}
        result[key] = {name: sorted(members) for name, members in members_of.items()}
    return result


def _show(value: object, limit: int = 120) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def differences(left: object, right: object, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """Yield (path, description) for every place where two JSON-like values differ."""
    if type(left) is not type(right):
        yield path, f"{_show(left)} != {_show(right)}"
    elif isinstance(left, dict):
        for key in sorted(set(left) | set(right), key=str):
            if key not in right:
                yield (*path, key), f"{_show(left[key])} != <missing>"
            elif key not in left:
                yield (*path, key), f"<missing> != {_show(right[key])}"
            else:
                yield from differences(left[key], right[key], (*path, key))
    elif isinstance(left, list):
        if len(left) != len(right):
            yield path, f"list of {len(left)} != list of {len(right)}: " \
                        f"{_show(left)} != {_show(right)}"
        else:
            for index, (a, b) in enumerate(zip(left, right, strict=True)):
                yield from differences(a, b, (*path, index))
    elif left != right:
        yield path, f"{_show(left)} != {_show(right)}"


def compare_outputs(reference: dict, other: dict, limit: int = 5) -> tuple[list[str], list[str]]:
    """(first differing paths, names of all nodes that differ) between two inventories."""
    left, right = normalise(reference), normalise(other)
    shown: list[str] = []
    nodes: list[str] = []
    for path, description in differences(left, right):
        if len(path) >= 2 and path[0] == "nodes" and path[1] not in nodes:
            nodes.append(path[1])
        if len(shown) < limit:
            shown.append(":".join(str(p) for p in path) + f": {description}")
    return shown, nodes


def load_json(path: Path) -> dict:
    """Read an implementation's JSON output."""
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)
