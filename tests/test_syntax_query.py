"""The inventory query grammar inside `$[ ... ]` (spec section 6.1)."""

from __future__ import annotations

import pytest

from reclass_ng.syntax.grammar import SyntaxProblem
from reclass_ng.syntax.query import ExportPath, QueryExpr, QueryParser, SelfPath
from reclass_ng.syntax.query import Test as QueryTest


@pytest.fixture(scope="module")
def parser() -> QueryParser:
    return QueryParser()


def test_value_query_drops_first_component(parser: QueryParser) -> None:
    expr = parser.parse(" exports:a:b ")
    assert expr == QueryExpr(False, False, ("a", "b"), (), ())


@pytest.mark.parametrize("first", ["exports", "self", "foo"])
def test_value_query_first_component_is_ignored_whatever_it_is(parser, first) -> None:
    assert parser.parse(f"{first}:x:y").value_path == ("x", "y")


def test_value_if_query(parser: QueryParser) -> None:
    expr = parser.parse("exports:a if exports:t == web")
    assert expr.value_path == ("a",)
    assert expr.tests == (QueryTest(ExportPath(("t",)), "==", "web"),)
    assert expr.logic == ()


def test_list_if_query(parser: QueryParser) -> None:
    expr = parser.parse("if exports:t != 3")
    assert expr.value_path is None
    assert expr.tests == (QueryTest(ExportPath(("t",)), "!=", 3),)


def test_and_or_keep_written_order(parser: QueryParser) -> None:
    expr = parser.parse("if exports:a == 1 or exports:b == 2 and exports:c == 3")
    assert len(expr.tests) == 3
    assert expr.logic == ("or", "and")


@pytest.mark.parametrize("word, value", [
    ("7", 7), ("-3", -3), ("1.5", 1.5), (".5", 0.5), ("5.", 5.0),
    ("true", True), ("FALSE", False), ("True", True),
    ("web", "web"), ("'quoted'", "'quoted'"), ("1e3", "1e3"),
])
def test_operand_types(parser: QueryParser, word: str, value: object) -> None:
    test = parser.parse(f"if exports:x == {word}").tests[0]
    assert test.right == value
    assert type(test.right) is type(value)


def test_self_and_export_operands_either_side(parser: QueryParser) -> None:
    test = parser.parse("if self:role:name == exports:role").tests[0]
    assert test.left == SelfPath("role:name")
    assert test.right == ExportPath(("role",))


def test_exports_prefix_is_case_insensitive(parser: QueryParser) -> None:
    assert parser.parse("if EXPORTS:x == 1").tests[0].left == ExportPath(("x",))


@pytest.mark.parametrize("text, all_envs, ignore", [
    ("+AllEnvs exports:a", True, False),
    ("+allenvs exports:a", True, False),
    ("+ALLENVS exports:a", True, False),
    ("+IgnoreErrors exports:a", False, True),
    ("+ignoreerrors +AllEnvs exports:a", True, True),
    ("exports:a", False, False),
])
def test_options_case_insensitive(parser: QueryParser, text: str, all_envs: bool,
                                  ignore: bool) -> None:
    expr = parser.parse(text)
    assert (expr.all_envs, expr.ignore_errors) == (all_envs, ignore)
    assert expr.value_path == ("a",)


def test_keywords_case_insensitive(parser: QueryParser) -> None:
    expr = parser.parse("+allenvs exports:v IF exports:a == 1 AND exports:b == 2 Or exports:c == 3")
    assert expr.all_envs
    assert expr.value_path == ("v",)
    assert expr.logic == ("and", "or")


@pytest.mark.parametrize("text", [
    "",
    "   ",
    "if",
    "if exports:a",
    "if exports:a ==",
    "if exports:a = 1",
    "exports:a if",
    "exports:a if exports:b == 1 and",
    "exports:a exports:b",
    "if exports:a == 1 xor exports:b == 2",
    "+AllEnvs",
    "+Unknown exports:a",
])
def test_malformed_queries_are_syntax_problems(parser: QueryParser, text: str) -> None:
    with pytest.raises(SyntaxProblem):
        parser.parse(text)


def test_custom_delimiter() -> None:
    dotted = QueryParser(".")
    expr = dotted.parse("exports.a.b if exports.t == x")
    assert expr.value_path == ("a", "b")
    assert expr.tests[0].left == ExportPath(("t",))


def test_test_source_text_round_trips(parser: QueryParser) -> None:
    test = parser.parse("if exports:a:b == self:c").tests[0]
    assert test.source_text() == "exports:a:b == self:c"
