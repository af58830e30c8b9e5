"""Rule data -> AST: the grammar, the error locations, and the round trip back to data."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reclass_ng.classifier.rule_ast import And, Comparison, FieldPath, Not, Or, field_keys
from reclass_ng.classifier.rule_parser import RuleSyntaxError, parse_rule


def test_comparison_with_name_field():
    rule = parse_rule(["=", "name", "web1"])
    assert rule == Comparison("=", FieldPath(("name",), False), "web1")


def test_boolean_operators_nest():
    rule = parse_rule(["and", ["~", ["fact", "os", "family"], "Deb"],
                       ["or", ["not", [">", ["trusted", "x"], "1"]]]])
    assert isinstance(rule, And)
    assert isinstance(rule.conditions[1], Or)
    assert isinstance(rule.conditions[1].conditions[0], Not)
    assert field_keys(rule) == {("fact", "os", "family"), ("trusted", "x")}


@pytest.mark.parametrize("data, location, fragment", [
    ([], "rule", "non-empty list"),
    ("name", "rule", "non-empty list"),
    (["and"], "rule", "at least one condition"),
    (["or"], "rule", "at least one condition"),
    (["not", ["=", "name", "a"], ["=", "name", "b"]], "rule", "exactly one condition"),
    (["==", "name", "a"], "rule[0]", "unknown operator"),
    (["=", "name"], "rule", "takes a field and a value"),
    (["=", "name", "a", "b"], "rule", "takes a field and a value"),
    (["=", [], "a"], "rule[1]", "field must be"),
    (["=", ["fact", 3], "a"], "rule[1]", "field must be"),
    (["=", [0, "x", 1], "a"], "rule[1]", "field must be"),
    (["=", ["fact", "disks", -1], "a"], "rule[1]", "field must be"),
    (["=", ["fact", "disks", True], "a"], "rule[1]", "field must be"),
    (["=", ["fact", "disks", 1.0], "a"], "rule[1]", "field must be"),
    ([">=", ["fact", "ram"], 512], "rule[2]", 'quote it in YAML'),
    (["=", ["fact", "ok"], True], "rule[2]", 'quote it in YAML'),
    (["~", "name", "web("], "rule[2]", "invalid regular expression"),
    (["and", ["=", "name", "a"], ["or", ["=", "name"]]], "rule[2][1]", "takes a field"),
])
def test_malformed_rules_name_the_offending_part(data, location, fragment):
    with pytest.raises(RuleSyntaxError) as caught:
        parse_rule(data)
    assert caught.value.location == location
    assert fragment in caught.value.problem


_names = st.text(min_size=1, max_size=8)
_fields = st.one_of(_names, st.lists(_names, min_size=1, max_size=3))
_comparisons = st.builds(
    lambda op, field, value: [op, field, value],
    st.sampled_from(["=", "<", "<=", ">", ">="]), _fields, st.text(max_size=8),
) | st.builds(lambda field, value: ["~", field, value], _fields,
              st.sampled_from(["", "a", "^web", r"\d+$", ".*"]))
_rules = st.recursive(
    _comparisons,
    lambda inner: st.one_of(
        st.builds(lambda cs: ["and", *cs], st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda cs: ["or", *cs], st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda c: ["not", c], inner),
    ),
    max_leaves=8,
)


@given(_rules)
def test_parsed_rules_turn_back_into_the_same_data(data):
    assert parse_rule(data).to_data() == data


def test_numeric_path_components_round_trip():
    data = ["=", ["fact", "processors", "models", 0], "Xeon"]
    assert parse_rule(data).to_data() == data
