"""A group rule as a PuppetDB query, for `POST /v1/rules/translate`.

Two formats:

* `nodes` (the default, the classifier's own translation for PuppetDB's v3 `nodes` endpoint):
  `and`/`or`/`not` stay; a comparison on `name` passes through unchanged; one on a flat fact
  `["fact", "f"]` becomes `["and", ["=", "name", "f"], [op, "value", v]]`. PuppetDB's v3 query
  language has no structured or trusted facts, so those are `untranslatable-rule`.
* `inventory` (PuppetDB's v4 `inventory` endpoint, which has them): `name` becomes
  `certname`, `["fact", "os", "family"]` becomes `facts.os.family`, `["trusted", "x"]`
  `trusted.x`; the numeric operators compare numbers, so their value is sent as a number.
  `<:` (array contains) has no inventory operator: it becomes a subquery on PuppetDB's
  `fact_contents` (the certnames with an element of that array equal to the value):
  `["in", "certname", ["extract", ["certname"], ["select_fact_contents", ["and",
  ["~>", "path", ["^roles$", "^[0-9]+$"]], ["=", "value", "web"]]]]]` (trusted facts are the
  fact `trusted`). The `nodes` format has no array facts: `<:` is untranslatable there.
"""

from __future__ import annotations

import re
from typing import Any

from reclass_ng.classifier.rule_ast import (
    ARRAY_CONTAINS,
    NUMERIC_OPERATORS,
    And,
    Comparison,
    Condition,
    Not,
    Or,
)

FORMATS = ("nodes", "inventory")


class UntranslatableRuleError(ValueError):
    """The rule uses something the target query language cannot express."""


def _number(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _comparison_nodes(condition: Comparison) -> list[Any]:
    field = condition.field
    if condition.operator == ARRAY_CONTAINS:
        raise UntranslatableRuleError("PuppetDB does not support array facts.")
    if not field.written_as_list:
        return [condition.operator, field.keys[0], condition.value]
    kind, *path = field.keys
    if len(path) > 1:
        raise UntranslatableRuleError("PuppetDB does not support structured facts.")
    if kind == "trusted":
        raise UntranslatableRuleError("PuppetDB does not support trusted facts.")
    if kind != "fact" or not path:
        raise UntranslatableRuleError(f"PuppetDB has no field {field.to_data()!r}.")
    return ["and", ["=", "name", path[0]], [condition.operator, "value", condition.value]]


def _array_contains_inventory(condition: Comparison) -> list[Any]:
    """`<:` as a fact_contents subquery: some element of the array at the path equals the
    value (each path key matched whole, the element's index any)."""
    keys = condition.field.keys
    if keys[0] not in ("fact", "trusted") or len(keys) < 2:
        raise UntranslatableRuleError(f"PuppetDB has no array field "
                                      f"{condition.field.to_data()!r}.")
    path = keys[1:] if keys[0] == "fact" else keys
    patterns = [f"^{re.escape(str(key))}$" for key in path] + ["^[0-9]+$"]
    return ["in", "certname", ["extract", ["certname"], ["select_fact_contents", [
        "and", ["~>", "path", patterns], ["=", "value", condition.value]]]]]


def _comparison_inventory(condition: Comparison) -> list[Any]:
    if condition.operator == ARRAY_CONTAINS:
        return _array_contains_inventory(condition)
    keys = condition.field.keys
    if keys == ("name",):
        field = "certname"
    elif keys[0] in ("fact", "trusted") and len(keys) > 1:
        field = "facts" if keys[0] == "fact" else "trusted"
        for key in keys[1:]:  # PuppetDB's dot notation: array indexes as `[0]`
            field += f"[{key}]" if isinstance(key, int) else \
                "." + (f'"{key}"' if "." in key else key)
    else:
        raise UntranslatableRuleError(f"PuppetDB's inventory has no field "
                                      f"{condition.field.to_data()!r}.")
    value: Any = condition.value
    if condition.operator in NUMERIC_OPERATORS:
        value = _number(value)
    return [condition.operator, field, value]


def translate_rule(condition: Condition, query_format: str = "nodes") -> list[Any]:
    """The PuppetDB query for a parsed rule; UntranslatableRuleError when there is none."""
    if isinstance(condition, Comparison):
        return (_comparison_nodes(condition) if query_format == "nodes"
                else _comparison_inventory(condition))
    if isinstance(condition, Not):
        return ["not", translate_rule(condition.condition, query_format)]
    operator = "and" if isinstance(condition, And) else "or"
    assert isinstance(condition, (And, Or))
    return [operator, *(translate_rule(c, query_format) for c in condition.conditions)]
