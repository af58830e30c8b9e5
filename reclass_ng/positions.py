"""The old import path of storage/positions.py (where a key is written in a YAML file)."""

from reclass_ng.storage.positions import (
    FLAG_PREFIXES,
    KEPT_FILES,
    KeyPositions,
    KeyTable,
    deepest_position,
    file_positions,
    key_positions,
    value_position,
)

__all__ = ["FLAG_PREFIXES", "KEPT_FILES", "KeyPositions", "KeyTable", "deepest_position",
           "file_positions", "key_positions", "value_position"]
