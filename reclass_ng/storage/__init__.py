"""Finding and reading node and class files."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from reclass_ng.errors.base import register_value_locator
from reclass_ng.storage.yaml_fs import YamlFsStorage

__all__ = ["YamlFsStorage"]


def _value_position(path: str, keys: Sequence[object], needle: str | None,
                    pick: Callable[[object], bool] | None) -> tuple[int, int] | None:
    # Errors ask this for the line of a value they name (errors cannot import storage); the
    # positions module and PyYAML are imported only when an error is reported.
    from reclass_ng.storage.positions import value_position

    return value_position(path, keys, needle, pick)


register_value_locator(_value_position)
