"""Evaluating a parsed rule against a node, and explaining the result.

One visitor per question, with a `visit_<kind>` method per node kind, so a new construct touches
the AST and these two classes only. The node is the map the classifier matches against:
`{"name": ..., "fact": {...}, "trusted": {...}}`.

Semantics (those of the classifier's code, see doc/node-groups.rst):
* a field path that leads nowhere makes the comparison false, so `not` over it is true;
* `=` compares text: booleans become "true"/"false", numbers their Java text;
* `~` searches (unanchored) with the pattern; the node value is turned into text as for `=`;
* `<`, `<=`, `>`, `>=` compare numbers; a value that is not a number makes them false;
* `<:` is true when the node value is an array with an element equal to the rule's value (each
  element turned into text as for `=`); for any other node value it is false.
"""

from __future__ import annotations

import operator as op
from collections.abc import Callable, Mapping
from typing import Any

from reclass_ng.classifier.fact_values import (
    MISSING,
    as_comparable_number,
    as_comparable_text,
    lookup_field,
    parse_java_number,
)
from reclass_ng.classifier.rule_ast import ARRAY_CONTAINS, And, Comparison, Condition, Not, Or

_NUMERIC: dict[str, Callable[[Any, Any], bool]] = {
    "<": op.lt,
    "<=": op.le,
    ">": op.gt,
    ">=": op.ge,
}


def node_map(name: str, facts: Mapping[str, Any] | None, trusted: Mapping[str, Any] | None) -> dict:
    """The map rules are evaluated against, as the classifier builds it from a request."""
    return {"name": name, "fact": dict(facts or {}), "trusted": dict(trusted or {})}


def compare(comparison: Comparison, node_value: Any) -> bool:
    """One comparison on an already looked-up value (MISSING when the path led nowhere)."""
    if node_value is MISSING:
        return False
    if comparison.operator in _NUMERIC:
        left = as_comparable_number(node_value)
        right = parse_java_number(comparison.value)
        if left is None or right is None:
            return False
        return _NUMERIC[comparison.operator](left, right)
    if comparison.operator == ARRAY_CONTAINS:
        return isinstance(node_value, (list, tuple)) and any(
            as_comparable_text(element) == comparison.value for element in node_value)
    text = as_comparable_text(node_value)
    if text is None:
        return False
    if comparison.operator == "=":
        return text == comparison.value
    assert comparison.pattern is not None  # the parser compiles every `~` pattern
    return comparison.pattern.search(text) is not None


class RuleMatcher:
    """Answers: does this node satisfy this condition?"""

    def __init__(self, node: Mapping[str, Any]) -> None:
        self.node = node

    def visit(self, condition: Condition) -> bool:
        return getattr(self, f"visit_{condition.kind}")(condition)

    def visit_and(self, condition: And) -> bool:
        return all(self.visit(child) for child in condition.conditions)

    def visit_or(self, condition: Or) -> bool:
        return any(self.visit(child) for child in condition.conditions)

    def visit_not(self, condition: Not) -> bool:
        return not self.visit(condition.condition)

    def visit_comparison(self, condition: Comparison) -> bool:
        return compare(condition, lookup_field(self.node, condition.field.keys))


class RuleExplainer:
    """Builds the classifier's explained condition: each form with its value, each field with
    the node value found there (`null` when missing)."""

    def __init__(self, node: Mapping[str, Any]) -> None:
        self.node = node
        self.matcher = RuleMatcher(node)

    def visit(self, condition: Condition) -> dict[str, Any]:
        return getattr(self, f"visit_{condition.kind}")(condition)

    def visit_and(self, condition: And) -> dict[str, Any]:
        return self._boolean("and", condition)

    def visit_or(self, condition: Or) -> dict[str, Any]:
        return self._boolean("or", condition)

    def _boolean(self, operator: str, condition: And | Or) -> dict[str, Any]:
        return {
            "value": self.matcher.visit(condition),
            "form": [operator, *(self.visit(child) for child in condition.conditions)],
        }

    def visit_not(self, condition: Not) -> dict[str, Any]:
        return {"value": self.matcher.visit(condition), "form": ["not", self.visit(condition.condition)]}

    def visit_comparison(self, condition: Comparison) -> dict[str, Any]:
        found = lookup_field(self.node, condition.field.keys)
        return {
            "value": compare(condition, found),
            "form": [
                condition.operator,
                {"path": condition.field.to_data(), "value": None if found is MISSING else found},
                condition.value,
            ],
        }


def matches(condition: Condition, node: Mapping[str, Any]) -> bool:
    """True when `node` (see node_map) satisfies `condition`."""
    return RuleMatcher(node).visit(condition)


def explain_condition(condition: Condition, node: Mapping[str, Any]) -> dict[str, Any]:
    """The explained condition of `condition` against `node`."""
    return RuleExplainer(node).visit(condition)
