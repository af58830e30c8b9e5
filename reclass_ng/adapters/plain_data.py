"""Rendered values as plain dicts and lists, for tools that check types exactly.

The engine returns its own dict and list subclasses (they remember where values came from).
Ansible's variable storage refuses anything but the exact built-in types ("Type 'OwnedDict' is
unsupported for variable storage"), and Salt sends pillar data to minions with msgpack, so the
adapters hand over plain copies.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any


def plain_data(value: Any, *, dates_as_text: bool = False) -> Any:
    """A deep copy of `value` built from dict, list and scalars only.

    With `dates_as_text`, dates (PyYAML reads unquoted YAML 1.1 timestamps as date objects) become
    ISO-8601 text, for consumers that cannot load them (Puppet's safe YAML loader).
    """
    if isinstance(value, Mapping):
        return {key: plain_data(item, dates_as_text=dates_as_text) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(item, dates_as_text=dates_as_text) for item in value]
    if dates_as_text and isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value
