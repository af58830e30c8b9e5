"""Rendered values as plain dicts and lists, for tools that check types exactly.

The engine returns its own dict and list subclasses (they remember where values came from).
Ansible's variable storage refuses anything but the exact built-in types ("Type 'OwnedDict' is
unsupported for variable storage"), and Salt sends pillar data to minions with msgpack, so the
adapters hand over plain copies.
"""

from __future__ import annotations

from typing import Any

import orjson

from reclass_ng.values import to_plain

# Dates and dataclass instances go to `_refuse` (JSON would turn them into text or mappings).
_JSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def plain_data(value: Any, *, dates_as_text: bool = False) -> Any:
    """A deep copy of `value` built from dict, list and scalars only (values.to_plain)."""
    return to_plain(value, dates_as_text=dates_as_text)


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


def plain_json(value: Any) -> bytes | None:
    """`value` as JSON when `orjson.loads` of it gives exactly `plain_data(value)` (the fast
    path of a plain copy, done in C), else None: keys that are not text, dates, bytes, sets,
    integers beyond 64 bits, and `null` anywhere (NaN and infinities are written as null too,
    so a document with a null takes the reference path)."""
    try:
        data = orjson.dumps(value, default=_refuse, option=_JSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    return None if b"null" in data else data
