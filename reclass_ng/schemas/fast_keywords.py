"""A faster `properties` / `patternProperties` for checking thousands of similar nodes.

Thousands of nodes hold the same scalar values under the same keys; jsonschema checks each one
again. These keyword functions (given to `jsonschema.validators.extend`, its public way to
change a keyword) remember which (subschema, scalar) pairs passed and which (pattern, key)
pairs match, and run jsonschema's own check for everything else, so a violation is reported
exactly as jsonschema reports it. The memo belongs to one SchemaSet's validator class and is
bounded. The reference is jsonschema's own keywords: `load_schemas(..., fast=False)` uses
them, and tests/test_schemas.py checks that both report the same violations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

MAX_REMEMBERED = 200_000  # passed pairs and pattern matches remembered, each
SCALARS = (str, int, float, bool, type(None))


class KeywordMemo:
    """What passed and what matched, for one validator class."""

    def __init__(self) -> None:
        self.passed: set[tuple[int, type, Any]] = set()
        self.matches: dict[tuple[int, str], tuple[str, ...]] = {}

    def matching(self, patterns: dict[str, Any], key: str) -> tuple[str, ...]:
        """The patterns of a `patternProperties` that find a match in `key` (re.search),
        remembered per keyword and key."""
        memo_key = (id(patterns), key)
        found = self.matches.get(memo_key)
        if found is None:
            found = tuple(pattern for pattern in patterns if re.search(pattern, key))
            if len(self.matches) < MAX_REMEMBERED:
                self.matches[memo_key] = found
        return found

    def descend(self, validator: Any, value: Any, subschema: Any, path: Any,
                schema_path: Any) -> Iterator[Any]:
        """jsonschema's descend, skipped for a scalar this subschema already passed."""
        if type(value) in SCALARS:
            memo_key = (id(subschema), type(value), value)
            if memo_key in self.passed:
                return
            errors = list(validator.descend(value, subschema, path=path,
                                            schema_path=schema_path))
            if not errors and len(self.passed) < MAX_REMEMBERED:
                self.passed.add(memo_key)
            yield from errors
            return
        yield from validator.descend(value, subschema, path=path, schema_path=schema_path)


def fast_keywords(memo: KeywordMemo) -> dict[str, Callable[..., Iterator[Any]]]:
    """`properties` and `patternProperties` using `memo`, as jsonschema defines them."""

    def properties(validator: Any, properties: Any, instance: Any, schema: Any
                   ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for name, subschema in properties.items():
            if name in instance:
                yield from memo.descend(validator, instance[name], subschema, name, name)

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any
                           ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        # Key by key (jsonschema goes pattern by pattern): the same errors, in another order.
        for key, value in instance.items():
            if isinstance(key, str):
                for pattern in memo.matching(patterns, key):
                    yield from memo.descend(validator, value, patterns[pattern], key, pattern)

    return {"properties": properties, "patternProperties": pattern_properties}
