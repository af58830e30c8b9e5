"""Comparing the two tools' outcomes for one unit (the whole inventory or one node).

Outputs are compared as parsed JSON with strict types (1, 1.0, "1", true and null all differ),
mapping order ignored, list order kept, after removing what differs by design on every run: the
`timestamp` of `__reclass__`, and in `--inventory` output the order of the node lists under the
top-level `applications` and `classes` (kapicorp follows directory enumeration order,
doc/compatibility.rst "Other differences"). Failures are compared by their fact only: both
tools failing is agreement, whatever the messages say.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

from differential.runner import Outcome, Rendering


def parsed_output(outcome: Outcome, whole_inventory: bool) -> Any:
    """The JSON document an `ok` outcome printed, normalised (see the module docstring)."""
    document = json.loads(outcome.stdout)
    strip_timestamps(document)
    if whole_inventory and isinstance(document, dict):
        for section in ("applications", "classes"):
            for name, node_list in (document.get(section) or {}).items():
                document[section][name] = sorted(node_list, key=str)
    return document


def strip_timestamps(value: Any) -> None:
    if isinstance(value, dict):
        reclass = value.get("__reclass__")
        if isinstance(reclass, dict):
            reclass.pop("timestamp", None)
        for item in value.values():
            strip_timestamps(item)
    elif isinstance(value, list):
        for item in value:
            strip_timestamps(item)


def same_typed(a: Any, b: Any) -> bool:
    """Equal with identical types at every level (1 != 1.0 != True)."""
    return next(differing_paths(a, b), None) is None


def differing_paths(a: Any, b: Any, path: str = "",
                    ignore: Callable[[Any, Any], bool] | None = None) -> Iterator[str]:
    """The paths (`a/b/0`) where `a` and `b` differ; `ignore(a, b)` true skips a pair."""
    if ignore is not None and ignore(a, b):
        return
    if type(a) is not type(b):
        yield path or "/"
    elif isinstance(a, dict):
        for key in sorted(a.keys() | b.keys(), key=str):
            if key not in a or key not in b:
                yield f"{path}/{key}"
            else:
                yield from differing_paths(a[key], b[key], f"{path}/{key}", ignore)
    elif isinstance(a, list):
        if len(a) != len(b):
            yield path or "/"
        else:
            for index, (x, y) in enumerate(zip(a, b, strict=True)):
                yield from differing_paths(x, y, f"{path}/{index}", ignore)
    elif isinstance(a, float) and math.isnan(a):
        if not math.isnan(b):
            yield path or "/"
    elif a != b:
        yield path or "/"


def outcomes_agree(rendering: Rendering) -> bool:
    """Both failed cleanly (not a hang), or both printed the same document."""
    theirs, ours = rendering.kapicorp, rendering.reclass_ng
    if theirs.hung or ours.hung:
        return False
    if not theirs.ok and not ours.ok:
        return True
    if theirs.ok != ours.ok:
        return False
    whole = rendering.node is None
    try:
        return same_typed(parsed_output(theirs, whole), parsed_output(ours, whole))
    except ValueError:  # not JSON at all: kapicorp printed an internal object
        return theirs.stdout == ours.stdout


def describe(rendering: Rendering, limit: int = 8) -> str:
    """What differs, for a report: the outcomes, and the first differing paths of two outputs."""
    theirs, ours = rendering.kapicorp, rendering.reclass_ng
    unit = "--inventory" if rendering.node is None else f"--nodeinfo {rendering.node}"
    lines = [f"{unit}: kapicorp {status_text(theirs)}, reclass-ng {status_text(ours)}"]
    if theirs.ok and ours.ok:
        whole = rendering.node is None
        try:
            a, b = parsed_output(theirs, whole), parsed_output(ours, whole)
            paths = list(differing_paths(a, b))[:limit]
            lines.append("differing paths: " + ", ".join(paths))
        except ValueError:
            pass
    return "\n".join(lines)


def status_text(outcome: Outcome) -> str:
    if outcome.hung:
        return "hung (timeout)"
    if outcome.ok:
        return "exit 0"
    return f"exit {outcome.status}" + (" (crash)" if outcome.crashed else "")
