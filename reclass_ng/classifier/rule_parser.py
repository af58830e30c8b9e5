"""Rule data (lists from YAML or JSON) to the rule AST, with errors that point into the rule.

Grammar (Node Classifier v1)::

    condition : ["and" condition+] | ["or" condition+] | ["not" condition] | comparison
    comparison: [op field value]        op: "=" "~" "<" "<=" ">" ">=" "<:"
    field     : string | [string string? component*]   e.g. "name", ["fact", "os", "family"]
    component : string | non-negative integer          an array index: ["fact", "disks", 0]
    value     : string

Numeric path components and `<:` (array contains) are the current classifier's (its "Forming
node classifier API requests" grammar; the console writes an index `processors.models[0]`): an
integer indexes an array, and only from the third element on, so `["fact", 3]` still names no
fact. The console's negated operators (`!=`, `!~`, `/:`) are not in the API's grammar: the
console sends them as `["not", ...]`, and the parser's message says so.

Values must be strings, as the classifier's schema demands; an unquoted YAML number such as
`512` is rejected with a hint to quote it, so a rule never means something else after a
round-trip through the API.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reclass_ng.classifier.rule_ast import (
    COMPARISON_OPERATORS,
    And,
    Comparison,
    Condition,
    FieldPath,
    Not,
    Or,
)
from reclass_ng.classifier.rule_regex import RuleRegexError, compile_rule_regex

# The console's negated operators and the API operator each stands for under a "not".
CONSOLE_NEGATIONS = {"!=": "=", "!~": "~", "/:": "<:"}

RULE_GRAMMAR_HINT = (
    "The rule is malformed. Please consult the group documentation for details on the rule "
    "grammar."
)


class RuleSyntaxError(ValueError):
    """A rule that does not follow the grammar; `location` says where, e.g. `rule[2][1]`."""

    def __init__(self, problem: str, location: str) -> None:
        super().__init__(f"{location}: {problem}")
        self.problem = problem
        self.location = location


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def _parse_field(data: Any, location: str) -> FieldPath:
    if isinstance(data, str):
        return FieldPath((data,), written_as_list=False)
    if isinstance(data, (list, tuple)) and data and all(
            isinstance(k, str) or (i >= 2 and _is_index(k)) for i, k in enumerate(data)):
        return FieldPath(tuple(data), written_as_list=True)
    raise RuleSyntaxError(
        f"a field must be a string such as \"name\" or a non-empty list of strings such as "
        f"[\"fact\", \"os\", \"family\"] (array indexes, integers from 0, from the third "
        f"element on: [\"fact\", \"disks\", 0]), got {_describe(data)}",
        location,
    )


def _is_index(key: Any) -> bool:
    return isinstance(key, int) and not isinstance(key, bool) and key >= 0


def _parse_comparison(data: Sequence[Any], location: str) -> Comparison:
    operator = data[0]
    if len(data) != 3:
        raise RuleSyntaxError(
            f"{operator!r} takes a field and a value ([{operator!r}, field, value]), "
            f"got {len(data) - 1} argument(s)",
            location,
        )
    field = _parse_field(data[1], f"{location}[1]")
    value = data[2]
    if not isinstance(value, str):
        hint = ""
        if isinstance(value, (bool, int, float)):
            hint = " (quote it in YAML, e.g. \"512\" or \"true\")"
        raise RuleSyntaxError(
            f"the value to compare with must be a string, got {_describe(value)}{hint}",
            f"{location}[2]",
        )
    pattern = None
    if operator == "~":
        try:
            pattern = compile_rule_regex(value)
        except RuleRegexError as err:
            raise RuleSyntaxError(str(err), f"{location}[2]") from None
    return Comparison(operator, field, value, pattern)


def parse_rule(data: Any, location: str = "rule") -> Condition:
    """Parse rule data into a Condition; raise RuleSyntaxError naming the offending part."""
    if not isinstance(data, (list, tuple)) or not data:
        raise RuleSyntaxError(
            f"a condition must be a non-empty list such as [\"=\", \"name\", \"web1\"], "
            f"got {_describe(data)}",
            location,
        )
    operator = data[0]
    if operator in ("and", "or"):
        if len(data) < 2:
            raise RuleSyntaxError(f"{operator!r} needs at least one condition", location)
        children = tuple(parse_rule(child, f"{location}[{i}]") for i, child in enumerate(data[1:], 1))
        return And(children) if operator == "and" else Or(children)
    if operator == "not":
        if len(data) != 2:
            raise RuleSyntaxError(f"'not' takes exactly one condition, got {len(data) - 1}", location)
        return Not(parse_rule(data[1], f"{location}[1]"))
    if operator in COMPARISON_OPERATORS:
        return _parse_comparison(data, location)
    known = ", ".join(repr(op) for op in ("and", "or", "not", *COMPARISON_OPERATORS))
    negated = CONSOLE_NEGATIONS.get(operator) if isinstance(operator, str) else None
    hint = (f' (the console\'s "{operator}" is ["not", ["{negated}", field, value]] in the API)'
            if negated else "")
    raise RuleSyntaxError(
        f"unknown operator {_describe(operator)}; expected one of {known}{hint}",
        f"{location}[0]")
