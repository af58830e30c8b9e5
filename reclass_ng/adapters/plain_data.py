"""The fast path of a plain copy of rendered values, for adapters that hand every caller its own
copy (Salt's ext_pillar): JSON made and parsed by orjson, in C. The reference conversion is
values.to_plain, which tests/adapters/test_plain_data.py compares this with."""

from __future__ import annotations

from typing import Any

import orjson

# Dates and dataclass instances go to `_refuse` (JSON would turn them into text or mappings).
_JSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


def plain_json(value: Any, nan_possible: bool = True) -> bytes | None:
    """`value` as JSON when `orjson.loads` of it gives exactly `values.to_plain(value)`, else
    None: keys that are not text, dates, bytes, sets, integers beyond 64 bits, NaN and
    infinities (written as null: a document with a null is read back and compared, and takes
    the reference path unless it is equal; a caller that knows `value` holds no NaN or
    infinity passes `nan_possible=False` and skips that)."""
    try:
        data = orjson.dumps(value, default=_refuse, option=_JSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    if nan_possible and b"null" in data and orjson.loads(data) != value:
        return None  # NaN or an infinity became null (or a tuple a list: the reference path)
    return data
