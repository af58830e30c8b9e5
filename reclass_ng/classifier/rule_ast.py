"""The parsed form of a node-group rule: a tiny tree of frozen values.

A rule is data (a JSON/YAML list such as `["and", ["=", "name", "web1"], ...]`). The parser turns
it into these nodes once, so evaluation and explanation never re-check the shape. Each node knows
how to turn itself back into rule data (`to_data`), which is what the API returns and what
explanations show.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

# `<:` (the current classifier's grammar): the node value is an array with an element equal
# to the rule's value.
COMPARISON_OPERATORS = ("=", "~", "<", "<=", ">", ">=", "<:")
NUMERIC_OPERATORS = frozenset({"<", "<=", ">", ">="})
ARRAY_CONTAINS = "<:"


@attrs.frozen
class FieldPath:
    """Where a comparison looks: `name`, or a list such as `["fact", "os", "family"]`."""

    keys: tuple[str | int, ...]  # an int (from the third key on) indexes an array
    written_as_list: bool

    def to_data(self) -> str | list[str | int]:
        return list(self.keys) if self.written_as_list else str(self.keys[0])


@attrs.frozen
class Comparison:
    """`[operator, field, value]`; for `~` the compiled pattern travels with it."""

    kind: ClassVar[str] = "comparison"
    operator: str
    field: FieldPath
    value: str
    # An RE2 pattern (rule_regex.compile_rule_regex): only its `.search(text)` is used.
    pattern: Any = attrs.field(default=None, eq=False, repr=False)

    def to_data(self) -> list[Any]:
        return [self.operator, self.field.to_data(), self.value]


@attrs.frozen
class And:
    kind: ClassVar[str] = "and"
    conditions: tuple[Condition, ...]

    def to_data(self) -> list[Any]:
        return ["and", *(c.to_data() for c in self.conditions)]


@attrs.frozen
class Or:
    kind: ClassVar[str] = "or"
    conditions: tuple[Condition, ...]

    def to_data(self) -> list[Any]:
        return ["or", *(c.to_data() for c in self.conditions)]


@attrs.frozen
class Not:
    kind: ClassVar[str] = "not"
    condition: Condition

    def to_data(self) -> list[Any]:
        return ["not", self.condition.to_data()]


Condition = Comparison | And | Or | Not


def field_keys(condition: Condition) -> set[tuple[str | int, ...]]:
    """Every field path a condition reads (used to tell whether a rule needs facts)."""
    if isinstance(condition, Comparison):
        return {condition.field.keys}
    if isinstance(condition, Not):
        return field_keys(condition.condition)
    found: set[tuple[str | int, ...]] = set()
    for child in condition.conditions:
        found |= field_keys(child)
    return found
