"""Rendered values as plain dicts and lists, for tools that check types exactly.

The engine returns its own dict and list subclasses (they remember where values came from).
Ansible's variable storage refuses anything but the exact built-in types ("Type 'OwnedDict' is
unsupported for variable storage"), and Salt sends pillar data to minions with msgpack, so the
adapters hand over plain copies.
"""

from __future__ import annotations

from typing import Any

from reclass_ng.values import to_plain


def plain_data(value: Any, *, dates_as_text: bool = False) -> Any:
    """A deep copy of `value` built from dict, list and scalars only (values.to_plain)."""
    return to_plain(value, dates_as_text=dates_as_text)
