"""Merging classifications the classifier's way: deep merge, later wins, `null` deletes.

This is not reclass's merge: lists are replaced, not concatenated, and a `null` in a descendant
removes the key it names. Values are compared by their JSON text, so `1`, `1.0` and `true` are
three different values, as they are for the classifier.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def deep_merge(*maps: Mapping[str, Any]) -> dict[str, Any]:
    """Merge maps left to right: nested maps merge, anything else is replaced by the later value."""
    result: dict[str, Any] = {}
    for mapping in maps:
        for key, value in mapping.items():
            current = result.get(key)
            if isinstance(current, Mapping) and isinstance(value, Mapping):
                result[key] = deep_merge(current, value)
            else:
                result[key] = value
    return result


def remove_nulls(value: Any) -> Any:
    """Drop every map entry whose value is null; maps left empty stay (as empty maps)."""
    if isinstance(value, Mapping):
        return {k: remove_nulls(v) for k, v in value.items() if v is not None}
    return value


def merge_and_clean(*maps: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge, then remove the paths a later `null` deleted."""
    return remove_nulls(deep_merge(*maps))


def canonical(value: Any) -> str:
    """A value's identity for conflict checks: its JSON text with sorted keys."""
    return json.dumps(value, sort_keys=True, default=str)


def get_path(value: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    """(found, value) at `path` inside nested maps."""
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return False, None
        value = value[key]
    return True, value
