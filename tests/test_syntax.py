"""The value grammar (spec section 4.1/4.2): references, nesting and every escape example.

Two levels: the parser's Template for a string, and the rendered value of a node parameter
(YAML single-quoted scalars keep backslashes literally, so the texts below are what reclass sees).
"""

from __future__ import annotations

import pytest

from reclass_ng.errors import ParseError, ResolveErrorList
from reclass_ng.syntax.ast import Query, Ref, Template, Text
from reclass_ng.syntax.grammar import SyntaxProblem, ValueParser


@pytest.fixture(scope="module")
def parser() -> ValueParser:
    return ValueParser()


def ref(path: str) -> Ref:
    return Ref((Text(path),))


# -- parser level ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, items", [
    ("${a}", (ref("a"),)),
    ("${a:b:c}", (ref("a:b:c"),)),
    ("x${a}y", (Text("x"), ref("a"), Text("y"))),
    ("${a}${b}", (ref("a"), ref("b"))),
    ("${ s }", (ref(" s "),)),  # whitespace is part of the key
    ("${beta:${alpha:two}}", (Ref((Text("beta:"), ref("alpha:two"))),)),
    ("${${kk}}", (Ref((ref("kk"),)),)),
    ("$[ exports:a ]", (Query(" exports:a "),)),
    ("n: $[ if exports:x == 1 ]", (Text("n: "), Query(" if exports:x == 1 "))),
])
def test_parse_structure(parser: ValueParser, text: str, items: tuple) -> None:
    assert parser.parse(text) == Template(items)


@pytest.mark.parametrize("text, literal", [
    (r"\${x}", "${x}"),
    (r"\$[ exports:a ]", "$[ exports:a ]"),
    (r"pre \${a:b} post", "pre ${a:b} post"),
])
def test_escaped_sentinels_are_literal(parser: ValueParser, text: str, literal: str) -> None:
    template = parser.parse(text)
    assert template.is_literal
    assert template.literal == literal


@pytest.mark.parametrize("text, items", [
    (r"\\${s}", (Text("\\"), ref("s"))),
    (r"\\\${s}", (Text("\\\\"), ref("s"))),
    (r"\\\\${s}", (Text("\\\\\\"), ref("s"))),
    (r"${a\}b}", (ref("a}b"),)),
    (r"${x\${y}", (ref("x${y"),)),
    (r"${a\\}", (ref("a\\"),)),
    (r"a\}${s}", (Text("a\\}"), ref("s"))),
    ("${a}}", (ref("a"), Text("}"))),
    ("$${a}", (Text("$"), ref("a"))),
])
def test_escape_rules(parser: ValueParser, text: str, items: tuple) -> None:
    assert parser.parse(text).items == items


@pytest.mark.parametrize("text", ["${a", "${a}${", "${}", "x ${a:b", "$[ exports:a", "${a${b}"])
def test_malformed_strings_are_syntax_problems(parser: ValueParser, text: str) -> None:
    with pytest.raises(SyntaxProblem) as info:
        parser.parse(text)
    assert info.value.column >= 1
    assert "char" in info.value.message


@pytest.mark.parametrize("text", ["plain", "a}", r"back\slash", "$ dollar", "{x}", "a]b"])
def test_strings_without_sentinels_need_no_parsing(parser: ValueParser, text: str) -> None:
    assert not parser.may_contain_syntax(text)


def test_custom_sentinels_and_escape() -> None:
    custom = ValueParser(("{{", "}}"), ("$[", "]"), "!")
    assert custom.parse("x{{a.b}}y").items == (Text("x"), ref("a.b"), Text("y"))
    assert custom.parse("!{{a}}").literal == "{{a}}"
    assert custom.parse("${a}").literal == "${a}"


# -- rendered through a node ----------------------------------------------------------------

ESCAPE_CASES = [
    (r"\${x}", "${x}"),
    (r"\\${s}", "\\str"),
    (r"\\\${s}", "\\\\str"),
    (r"\\\\${s}", "\\\\\\str"),
    (r"\$[ exports:a ]", "$[ exports:a ]"),
    (r"a\}${s}", "a\\}str"),
    (r"a\]${s}", "a\\]str"),
    ("${n}}", "1}"),
    ("$${n}", "$1"),
    ("a}", "a}"),
    (r"no\sentinel\\here", r"no\sentinel\\here"),
    ("${s}:${s}", "str:str"),
    ("${s}${n}", "str1"),
]


@pytest.mark.parametrize("written, rendered", ESCAPE_CASES)
def test_escapes_render_as_spec_says(params, written: str, rendered: str) -> None:
    quoted = written.replace("'", "''")
    files = {"nodes/n1.yml": f"parameters:\n  s: str\n  n: 1\n  v: '{quoted}'\n"}
    assert params(files)["v"] == rendered


def test_keys_with_escaped_brace_and_sentinel(params) -> None:
    files = {"nodes/n1.yml": "parameters:\n"
                             "  'a}b': brace\n"
                             "  'x${y': dollar\n"
                             "  r1: '${a\\}b}'\n"
                             "  r2: '${x\\${y}'\n"}
    result = params(files)
    assert result["r1"] == "brace"
    assert result["r2"] == "dollar"


def test_escaped_text_is_not_interpolated_again(params) -> None:
    files = {"nodes/n1.yml": "parameters:\n  esc: '\\${x}'\n  e2: '${esc}'\n  x: nope\n"}
    result = params(files)
    assert result["esc"] == "${x}"
    assert result["e2"] == "${x}"


def test_whitespace_inside_reference_is_part_of_the_key(params) -> None:
    files = {"nodes/n1.yml": "parameters:\n  ' s ': spaced\n  s: plain\n  r: '${ s }'\n"}
    assert params(files)["r"] == "spaced"


def test_whitespace_key_missing_is_reported_verbatim(render) -> None:
    files = {"nodes/n1.yml": "parameters:\n  s: plain\n  r: '${ s }'\n"}
    with pytest.raises(ResolveErrorList) as info:
        render(files)
    assert "Cannot resolve ${ s }" in str(info.value)


@pytest.mark.parametrize("value", ["${a", "x${a}${", "${}"])
def test_unterminated_reference_is_a_parse_error_naming_path_and_file(render, value) -> None:
    files = {"nodes/n1.yml": f"parameters:\n  a: 1\n  bad:\n    deep: '{value}'\n"}
    with pytest.raises(ParseError) as info:
        render(files)
    message = str(info.value)
    assert "Parse error" in message and value in message
    assert "at bad:deep" in message and "nodes/n1.yml" in message
    assert info.value.exit_code == 65


def test_keys_are_never_interpolated(params) -> None:
    files = {"nodes/n1.yml": "parameters:\n  a: 1\n  '${a}': key\n"}
    assert params(files)["${a}"] == "key"


def test_escaped_reference_in_class_name_names_a_literal_class(render) -> None:
    files = {"nodes/n1.yml": "classes:\n  - '\\${baz}'\n",
             "classes/${baz}.yml": "parameters:\n  from_odd_class: yes\n"}
    info = render(files)
    assert info["parameters"]["from_odd_class"] is True
    # The classes list keeps the text as written (spec 1.9), escape included.
    assert info["classes"] == ["\\${baz}"]


def test_nested_reference_inner_value_stringified(params) -> None:
    files = {"nodes/n1.yml": "parameters:\n  k: ~\n  t: true\n  d:\n    None: from-none\n"
                             "    'True': from-true\n  r1: '${d:${k}}'\n  r2: '${d:${t}}'\n"}
    result = params(files)
    assert result["r1"] == "from-none"
    assert result["r2"] == "from-true"
