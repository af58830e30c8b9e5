"""Rule semantics, following the classifier's code and its rules tests."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reclass_ng.classifier.fact_values import java_double_text, parse_java_number
from reclass_ng.classifier.rule_evaluator import explain_condition, matches, node_map
from reclass_ng.classifier.rule_parser import parse_rule


def match(rule, name="foo.example.com", facts=None, trusted=None) -> bool:
    return matches(parse_rule(rule), node_map(name, facts, trusted))


def test_equality_on_the_node_name():
    assert match(["=", "name", "foo"], name="foo")
    assert not match(["=", "name", "foo"], name="food")


def test_structured_fact_lookup_and_an_empty_node():
    rule = ["=", ["fact", "appearance", "color"], "blue"]
    assert match(rule, facts={"appearance": {"color": "blue"}})
    assert not match(rule, facts={"appearance": {"color": "red"}})
    assert not match(rule, facts={})
    assert not match(rule, facts={"appearance": "blue"})  # a step into a non-mapping is missing


def test_trusted_facts_are_their_own_namespace():
    rule = ["~", ["trusted", "certname"], "www"]
    assert match(rule, trusted={"certname": "www1.example.com"})
    assert not match(rule, facts={"certname": "www1.example.com"})


def test_regex_is_an_unanchored_search():
    assert match(["~", "name", "foo"], name="foo.template.com")
    assert match(["~", "name", "template"], name="foo.template.com")
    assert not match(["~", "name", "^template"], name="foo.template.com")
    assert match(["~", "name", r"\.com$"], name="foo.template.com")


@pytest.mark.parametrize("operator, fact, expected", [
    ("<", "4", True), ("<", "5", False),
    ("<=", "5", True), ("<=", "6", False),
    (">", "6", True), (">", "5", False),
    (">=", "5", True), (">=", "4", False),
])
def test_numeric_operators(operator, fact, expected):
    assert match([operator, ["fact", "spunk"], "5"], facts={"spunk": fact}) is expected


@pytest.mark.parametrize("operator", ["<", "<=", ">", ">="])
def test_numeric_comparison_with_a_non_number_is_false(operator):
    assert not match([operator, ["fact", "x"], "0.1"], facts={"x": "what's a number?"})
    assert not match([operator, ["fact", "x"], "many"], facts={"x": "5"})
    assert not match([operator, ["fact", "x"], "5"], facts={"x": True})
    assert not match([operator, ["fact", "x"], "5"], facts={"x": {"a": 1}})


def test_numeric_comparison_takes_number_facts_as_they_are():
    assert match([">=", ["fact", "holodecks"], "5"], facts={"holodecks": 10})
    assert match(["<", ["fact", "load"], "0.75"], facts={"load": 0.5})
    assert match([">", ["fact", "ram"], "1.5e3"], facts={"ram": "2048"})


def test_numbers_in_rules_are_read_as_java_reads_them():
    # Integer.parseInt for int32, else Float.parseFloat: a 32-bit float, so 0.1 in a rule is
    # slightly larger than the double 0.1 in a fact.
    assert match(["<", ["fact", "x"], "0.1"], facts={"x": 0.1})
    assert match([">", ["fact", "bytes"], "3000000000"], facts={"bytes": 4000000000})
    assert match(["=", ["fact", "x"], "1"], facts={"x": 1})


def test_not_over_a_missing_fact_is_true():
    rule = ["not", ["=", ["fact", "x"], "y"]]
    assert match(rule, facts={})
    assert not match(rule, facts={"x": "y"})
    assert match(rule, facts={"x": None})  # null counts as missing


def test_equality_compares_booleans_and_numbers_as_text():
    assert match(["=", ["fact", "is_cylon?"], "true"], facts={"is_cylon?": True})
    assert match(["=", ["fact", "is_cylon?"], "false"], facts={"is_cylon?": False})
    assert not match(["=", ["fact", "is_cylon?"], "True"], facts={"is_cylon?": True})
    assert match(["=", ["fact", "workers"], "10000"], facts={"workers": 10000})
    assert match(["=", ["fact", "version"], "1.5"], facts={"version": 1.5})
    assert match(["=", ["fact", "version"], "2.0"], facts={"version": 2.0})
    assert not match(["=", ["fact", "version"], "2"], facts={"version": 2.0})
    assert not match(["=", ["fact", "list"], "[1]"], facts={"list": [1]})


def test_regex_sees_booleans_and_numbers_as_text_too():
    assert match(["~", ["fact", "workers"], "^100"], facts={"workers": 10000})
    assert match(["~", ["fact", "ok"], "tru"], facts={"ok": True})


def test_and_or_not_combinations():
    facts = {"os": {"family": "Debian"}, "role": "web"}
    assert match(["and", ["=", ["fact", "role"], "web"], ["~", ["fact", "os", "family"], "Deb"]],
                 facts=facts)
    assert not match(["and", ["=", ["fact", "role"], "web"], ["=", ["fact", "role"], "db"]],
                     facts=facts)
    assert match(["or", ["=", ["fact", "role"], "db"], ["=", ["fact", "role"], "web"]], facts=facts)
    assert not match(["or", ["=", ["fact", "role"], "db"], ["=", ["fact", "nope"], "web"]],
                     facts=facts)
    assert match(["not", ["or", ["=", ["fact", "role"], "db"]]], facts=facts)


def test_explaining_a_comparison_shows_the_value_found():
    explained = explain_condition(parse_rule([">=", ["fact", "spunk"], "5"]),
                                  node_map("n", {"spunk": "10"}, None))
    assert explained == {"value": True,
                         "form": [">=", {"path": ["fact", "spunk"], "value": "10"}, "5"]}


def test_explaining_nested_forms():
    rule = parse_rule(["and", ["=", "name", "n"],
                       ["not", ["=", ["fact", "x"], "y"]],
                       ["or", ["~", ["fact", "role"], "db"], ["=", ["fact", "role"], "web"]]])
    explained = explain_condition(rule, node_map("n", {"role": "web"}, None))
    assert explained == {
        "value": True,
        "form": [
            "and",
            {"value": True, "form": ["=", {"path": "name", "value": "n"}, "n"]},
            {"value": True, "form": ["not", {"value": False, "form": [
                "=", {"path": ["fact", "x"], "value": None}, "y"]}]},
            {"value": True, "form": [
                "or",
                {"value": False, "form": ["~", {"path": ["fact", "role"], "value": "web"}, "db"]},
                {"value": True, "form": ["=", {"path": ["fact", "role"], "value": "web"}, "web"]},
            ]},
        ],
    }


@pytest.mark.parametrize("text, number", [
    ("10", 10), ("-7", -7), ("+3", 3), (" 1.5 ", 1.5), ("1e3", 1000.0), ("2.5f", 2.5),
    ("0x1p3", 8.0), ("3000000000", 3e9), ("Infinity", math.inf), ("1_000", None),
    ("", None), ("abc", None), ("1.2.3", None), ("0x10", None),
])
def test_parse_java_number(text, number):
    assert parse_java_number(text) == number


def test_parse_java_number_nan():
    assert math.isnan(parse_java_number("NaN"))


@pytest.mark.parametrize("value, text", [
    (1.0, "1.0"), (0.001, "0.001"), (1234567.5, "1234567.5"), (1e7, "1.0E7"),
    (1e20, "1.0E20"), (1.5e-5, "1.5E-5"), (-2.5e-10, "-2.5E-10"), (0.0, "0.0"),
])
def test_java_double_text(value, text):
    assert java_double_text(value) == text


_scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
            | st.sampled_from(["", "1", "0.5", "a", "true", "1e3", " 7 ", "NaN"]))
_json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "b"]), inner,
                                                                max_size=2),
    max_leaves=4,
)
_keys = st.sampled_from(["a", "b", "x", "os"])
_rule_strategy = st.recursive(
    st.builds(lambda op, path, value: [op, ["fact", *path], value],
              st.sampled_from(["=", "~", "<", "<=", ">", ">="]),
              st.lists(_keys, min_size=1, max_size=2),
              st.sampled_from(["1", "0.5", "true", "a", "", "1e3", "NaN", "a|b"])),
    lambda inner: st.builds(lambda cs: ["and", *cs], st.lists(inner, min_size=1, max_size=3))
    | st.builds(lambda cs: ["or", *cs], st.lists(inner, min_size=1, max_size=3))
    | st.builds(lambda c: ["not", c], inner),
    max_leaves=6,
)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_rule_strategy, st.dictionaries(_keys, _json_values, max_size=3))
def test_evaluation_never_raises_and_agrees_with_its_explanation(rule_data, facts):
    rule = parse_rule(rule_data)
    node = node_map("node.example.com", facts, {})
    result = matches(rule, node)
    assert isinstance(result, bool)
    assert explain_condition(rule, node)["value"] is result


def test_numeric_path_components_index_arrays():
    node = node_map("n", {"processors": {"models": ["Xeon", "EPYC"]},
                          "disks": [{"size": 512}], "by_name": {"0": "a string key"}}, {})
    assert matches(parse_rule(["=", ["fact", "processors", "models", 1], "EPYC"]), node)
    assert matches(parse_rule([">=", ["fact", "disks", 0, "size"], "500"]), node)
    # Past the end, or an index into a mapping (JSON keys are strings): nothing is there.
    assert not matches(parse_rule(["~", ["fact", "processors", "models", 2], "."]), node)
    assert not matches(parse_rule(["=", ["fact", "by_name", 0], "a string key"]), node)
    assert matches(parse_rule(["not", ["=", ["fact", "disks", 5, "size"], "1"]]), node)
    explained = explain_condition(parse_rule(["=", ["fact", "disks", 0, "size"], "512"]), node)
    assert explained["form"][1] == {"path": ["fact", "disks", 0, "size"], "value": 512}
    assert explained["value"] is True
