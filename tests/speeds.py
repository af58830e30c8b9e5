"""The two speeds every fast path is proven at: `Speed()` (every fast path on) and
`Speed.reference()` (the references alone), and an inventory opened again at another speed.

A test module runs all its tests at both with `pytestmark = pytest.mark.usefixtures(
"both_speeds")` (tests/conftest.py): the fixture sets RECLASS_NG_SPEED, so inventories made
in the test and CLI subprocesses it starts both take it, as MarkupSafe runs its tests against
its native and its C module."""

from __future__ import annotations

from typing import Any

from reclass_ng.api import Inventory
from reclass_ng.settings import Speed

SPEEDS = {"fast": Speed(), "reference": Speed.reference()}


def at_speed(inventory: Any, speed: Speed) -> Inventory:
    """The inventory of `inventory`'s settings, opened again with `speed` (its own storage:
    files read again at that speed)."""
    return Inventory(inventory.settings, warn=inventory.warn, speed=speed)
