"""Reference default values `${path::default}` (setting reference_defaults, as in reclass-rs).

The API tests load inventories with `reference_defaults=True`; the CLI tests switch the setting
on the way users do, in reclass-config.yml, and run the installed `reclass` command.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reclass_ng.errors import BadReferencesError, ReferenceDefaultError, ResolveErrorList
from tests.conftest import VENV_BIN, clean_env


def node(parameters: str, *classes: str) -> dict[str, str]:
    listed = "".join(f"  - {name}\n" for name in classes)
    return {"nodes/n1.yml": (f"classes:\n{listed}" if classes else "")
            + "parameters:\n" + parameters}


@pytest.fixture
def with_defaults(params):
    return lambda files, **settings: params(files, reference_defaults=True, **settings)


# -- the default is read as YAML -------------------------------------------------------------

@pytest.mark.parametrize("written, expected", [
    ("${missing::fallback}", "fallback"),
    ("${missing::42}", 42),
    ("${missing::1.5}", 1.5),
    ("${missing::}", None),
    ("${missing::~}", None),
    ("${missing::null}", None),
    ("${missing::true}", True),
    ("'${missing::[1, 2]}'", [1, 2]),
    ("'${missing::{a: 1\\}}'", {"a": 1}),
    ("'${missing::\"quoted: text\"}'", "quoted: text"),
    ("'${a:b:missing::x}'", "x"),
])
def test_default_is_parsed_as_yaml(with_defaults, written: str, expected: Any) -> None:
    result = with_defaults(node(f"  a:\n    b: {{c: 1}}\n  v: {written}\n"))
    assert result["v"] == expected
    assert type(result["v"]) is type(expected)


def test_existing_path_wins_over_the_default(with_defaults) -> None:
    result = with_defaults(node("  port: 80\n  v: ${port::99}\n  d: '${dict::{\\}}'\n"
                                "  dict: {k: v}\n"))
    assert result["v"] == 80
    assert result["d"] == {"k": "v"}


def test_an_existing_null_is_not_replaced_by_the_default(with_defaults) -> None:
    # Like reclass-rs: the default is for a missing path; a key that is there with null is null.
    result = with_defaults(node("  empty: null\n  v: ${empty::fallback}\n"))
    assert result["v"] is None


def test_default_inside_a_longer_string(with_defaults) -> None:
    result = with_defaults(node("  v: x-${missing::y}-z\n  w: ${missing::8}080\n"))
    assert result["v"] == "x-y-z"
    assert result["w"] == "8080"


def test_default_given_by_a_reference_keeps_its_type(with_defaults) -> None:
    files = node("  present: {a: 1, b: [x]}\n  num: 7\n  nothing: null\n"
                 "  v: ${missing::${present}}\n  n: ${missing::${num}}\n"
                 "  z: ${missing::${nothing}}\n")
    result = with_defaults(files)
    assert result["v"] == {"a": 1, "b": ["x"]}
    assert result["n"] == 7
    assert result["z"] is None


def test_default_with_text_and_a_reference(with_defaults) -> None:
    result = with_defaults(node("  base: /srv\n  v: ${missing::${base}/data}\n"))
    assert result["v"] == "/srv/data"


def test_default_of_a_nested_reference(with_defaults) -> None:
    files = node("  table:\n    small: 1\n    large: 100\n  size: large\n"
                 "  v: ${table:${flavour::small}}\n  w: ${table:${size::small}}\n"
                 "  x: ${table:${flavour::${size}}}\n")
    result = with_defaults(files)
    assert (result["v"], result["w"], result["x"]) == (1, 100, 100)


def test_escaped_reference_in_a_default_stays_text(with_defaults) -> None:
    result = with_defaults(node("  v: ${missing::\\${foo\\}}\n"))
    assert result["v"] == "${foo}"


def test_default_values_are_not_shared_between_uses(with_defaults) -> None:
    files = node("  a: '${missing::[1]}'\n  b: '${missing::[1]}'\n  b2: [2]\n", "c")
    files["classes/c.yml"] = "parameters:\n  b: [0]\n"
    result = with_defaults(files)
    assert result["a"] == [1]
    assert result["b"] == [0, 1]


def test_default_in_a_class_name(load_inventory) -> None:
    files = {"nodes/n1.yml": "classes:\n  - opt.${choice::plain}\n",
             "nodes/n2.yml": "classes:\n  - pick\n  - opt.${choice::plain}\n",
             "classes/pick.yml": "parameters:\n  choice: fancy\n",
             "classes/opt/plain.yml": "parameters:\n  got: plain\n",
             "classes/opt/fancy.yml": "parameters:\n  got: fancy\n"}
    inv = load_inventory(files, reference_defaults=True)
    assert inv.nodeinfo("n1")["parameters"]["got"] == "plain"
    assert inv.nodeinfo("n2")["parameters"]["got"] == "fancy"


def test_default_in_exports(load_inventory) -> None:
    files = {"nodes/n1.yml": "parameters:\n  a: 1\nexports:\n  e: ${missing::${a}}\n"}
    assert load_inventory(files, reference_defaults=True).nodeinfo("n1")["exports"] == {"e": 1}


# -- errors ----------------------------------------------------------------------------------

def test_missing_nested_reference_without_default_is_still_an_error(load_inventory) -> None:
    files = node("  v: ${missing::${also_missing}}\n")
    with pytest.raises(BadReferencesError, match="also_missing"):
        load_inventory(files, reference_defaults=True).nodeinfo("n1")


def test_incomplete_yaml_default_is_an_error_even_when_the_path_exists(load_inventory) -> None:
    files = node("  a: 1\n  v: '${a::[1, 2}'\n")
    with pytest.raises(ReferenceDefaultError, match=r"Invalid default value in \$\{a::\[1, 2\}"):
        load_inventory(files, reference_defaults=True).nodeinfo("n1")


def test_off_by_default_double_colon_is_an_ordinary_missing_reference(load_inventory) -> None:
    with pytest.raises(ResolveErrorList, match=r"Cannot resolve \$\{missing::42\}, at v"):
        load_inventory(node("  v: ${missing::42}\n")).nodeinfo("n1")


# -- the command line ------------------------------------------------------------------------

def run_reclass(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "reclass"), *args], capture_output=True, text=True,
                          env=clean_env(home), cwd=home, timeout=120)


def test_cli_enables_defaults_from_reclass_config(make_inventory, tmp_path: Path) -> None:
    files = node("  port: ${nginx:port::8080}\n  tags: '${web:tags::[web, ${port}]}'\n")
    off = make_inventory(files)
    on = make_inventory({**files, "reclass-config.yml": "reference_defaults: true\n"})

    result = run_reclass(["-b", str(on), "-n", "n1", "-o", "json"], tmp_path)
    assert result.returncode == 0, result.stderr
    parameters = json.loads(result.stdout)["parameters"]
    assert parameters["port"] == 8080
    assert parameters["tags"] == ["web", 8080]

    result = run_reclass(["-b", str(off), "-n", "n1", "-o", "json"], tmp_path)
    assert result.returncode == 65
    assert "Cannot resolve ${nginx:port::8080}, at port" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_reports_a_bad_default_with_its_place(make_inventory, tmp_path: Path) -> None:
    root = make_inventory({**node("  v: '${x::{a: 1}'\n"),
                           "reclass-config.yml": "reference_defaults: true\n"})
    result = run_reclass(["-b", str(root), "-n", "n1", "--errors", "json"], tmp_path)
    assert result.returncode == 65
    [error] = json.loads(result.stderr)["errors"]
    assert error["kind"] == "bad_reference_default"
    assert error["key_path"] == "v"
    assert error["file"] == str(root / "nodes" / "n1.yml")
    assert (error["line"], error["column"]) == (2, 7)


def test_default_texts_are_read_once_per_renderer_and_kept_bounded() -> None:
    from reclass_ng.syntax.defaults import DefaultSyntaxProblem, DefaultValues

    values = DefaultValues(kept=2)
    first = values.value("[1, 2]")
    assert first == [1, 2] and values.value("[1, 2]") is not first  # callers own their copy
    for text in ("a", "b", "c", "{x: 1}"):
        values.value(text)
    assert len(values._read) == 2
    with pytest.raises(DefaultSyntaxProblem):
        values.value("[1, 2")
