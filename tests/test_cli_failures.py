"""Error diagnostics as a user sees them from the installed commands: file:line:column, key
path, reference chain, "did you mean", every failing node of a run, and `--errors json`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import reclass_ng
from reclass_ng.errors import ResolveErrorList
from tests.conftest import VENV_BIN, clean_env


def run(command: str, args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(VENV_BIN / command), *args], capture_output=True, text=True,
                            env=clean_env(home), cwd=home, timeout=120)
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.fixture
def reclass(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    return lambda *args: run("reclass", list(args), home)


def json_errors(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert result.stdout == ""
    document = json.loads(result.stderr)
    assert document["exit_code"] == result.returncode
    return document["errors"]


WEB = {
    "classes/service/nginx.yml": "parameters:\n  nginx:\n    port: 80\n    workers: 4\n",
    "classes/role/web.yml": ("classes:\n  - service.nginx\nparameters:\n"
                             "  listen: \"0.0.0.0:${nginx:prot}\"\n"),
    "nodes/web1.yml": "classes:\n  - role.web\nparameters:\n  name: web1\n",
}


# -- missing references ----------------------------------------------------------------------

def test_missing_reference_says_where_and_did_you_mean(make_inventory, reclass) -> None:
    root = make_inventory(WEB)
    result = reclass("-b", str(root), "-n", "web1")
    assert result.returncode == 65
    lines = result.stderr.splitlines()
    # The first lines keep kapicorp-reclass's layout, so existing greps still match.
    assert lines[0] == "-> web1"
    assert lines[1] == ("   Cannot resolve ${nginx:prot}, at listen, in "
                        f"yaml_fs://{root}/classes/role/web.yml")
    assert f"      written at {root}/classes/role/web.yml:4:20 (class role.web)" in lines
    assert "      did you mean ${nginx:port}?" in lines


def test_missing_reference_as_json(make_inventory, reclass) -> None:
    root = make_inventory(WEB)
    result = reclass("-b", str(root), "-n", "web1", "--errors", "json")
    assert result.returncode == 65
    [error] = json_errors(result)
    assert error == {
        "node": "web1", "class": "role.web", "file": f"{root}/classes/role/web.yml",
        "line": 4, "column": 20, "key_path": "listen",
        "message": (f"Cannot resolve ${{nginx:prot}}, at listen, in "
                    f"yaml_fs://{root}/classes/role/web.yml"),
        "kind": "missing_reference", "suggestions": ["${nginx:port}"],
        "reference_chain": ["listen"],
    }


def test_reference_chain_leads_to_the_missing_key(make_inventory, reclass) -> None:
    root = make_inventory({"nodes/n1.yml": ("parameters:\n  url: http://${host}\n"
                                            "  host: ${dns:name}.example.org\n"
                                            "  dns:\n    nam: www\n")})
    result = reclass("-b", str(root), "-n", "n1", "--errors", "json")
    [error] = json_errors(result)
    assert error["reference_chain"] == ["url", "host"]
    assert error["key_path"] == "host"
    assert (error["line"], error["column"]) == (3, 9)
    assert error["suggestions"] == ["${dns:nam}"]
    text = reclass("-b", str(root), "-n", "n1").stderr
    assert "reference chain: url -> host" in text


def test_nested_missing_reference_is_located_too(make_inventory, reclass) -> None:
    root = make_inventory({"nodes/n1.yml": ("parameters:\n  sizes: {small: 1}\n"
                                            "  flavour: small\n"
                                            "  v: ${sizes:${flavor}}\n")})
    result = reclass("-b", str(root), "-n", "n1", "--errors", "json")
    [error] = json_errors(result)
    assert error["kind"] == "bad_reference"
    assert error["suggestions"] == ["${flavour}"]
    assert (error["line"], error["column"]) == (4, 14)  # the inner reference


def test_no_suggestion_when_nothing_is_close(make_inventory, reclass) -> None:
    root = make_inventory({"nodes/n1.yml": "parameters:\n  a: ${zzzzzz}\n"})
    [error] = json_errors(reclass("-b", str(root), "-n", "n1", "--errors", "json"))
    assert error["suggestions"] == []
    assert "did you mean" not in reclass("-b", str(root), "-n", "n1").stderr


# -- classes -----------------------------------------------------------------------------------

def test_class_not_found_suggests_existing_classes(make_inventory, reclass) -> None:
    root = make_inventory({**WEB, "nodes/web2.yml": "classes:\n  - common\n  - role.webb\n",
                           "classes/common.yml": "parameters: {}\n"})
    result = reclass("-b", str(root), "-n", "web2")
    assert result.returncode == 65
    assert "Class role.webb not found under" in result.stderr
    assert f"written at {root}/nodes/web2.yml:3:5 (node web2)" in result.stderr
    assert "did you mean role.web?" in result.stderr
    [error] = json_errors(reclass("-b", str(root), "-n", "web2", "--errors", "json"))
    assert (error["kind"], error["suggestions"]) == ("class_not_found", ["role.web"])


def test_relative_class_not_found_points_at_its_entry(make_inventory, reclass) -> None:
    root = make_inventory({"classes/app/init.yml": "classes:\n  - .bass\n",
                           "classes/app/base.yml": "parameters: {}\n",
                           "nodes/n1.yml": "classes:\n  - app\n"})
    [error] = json_errors(reclass("-b", str(root), "-n", "n1", "--errors", "json"))
    assert error["class"] == "app"
    assert error["file"] == f"{root}/classes/app/init.yml"
    assert (error["line"], error["column"]) == (2, 5)
    assert error["suggestions"] == ["app.base"]


def test_unresolvable_class_name_points_at_its_entry(make_inventory, reclass) -> None:
    root = make_inventory({"classes/base.yml": "parameters:\n  env: prod\n",
                           "classes/app/prod.yml": "parameters: {}\n",
                           "nodes/n1.yml": "classes:\n  - base\n  - app.${evn}\n"})
    result = reclass("-b", str(root), "-n", "n1")
    assert result.returncode == 65
    assert "Class name app.${evn} not resolvable" in result.stderr
    assert f"written at {root}/nodes/n1.yml:3:5 (node n1)" in result.stderr
    assert "did you mean ${env}?" in result.stderr


# -- every node of a run ---------------------------------------------------------------------

BROKEN_FLEET = {
    "classes/base.yml": "parameters:\n  dns: {server: 10.0.0.1}\n",
    "nodes/a.yml": "classes:\n  - bsae\n",
    "nodes/b.yml": "classes:\n  - base\nparameters:\n  resolver: ${dns:sever}\n",
    "nodes/c.yml": "classes:\n  - base\nparameters:\n  resolver: ${dns:server}\n",
    "nodes/d.yml": "classes:\n  - base\nparameters:\n  x: ${nope}\n  y: ${nope2}\n",
}


def test_inventory_reports_every_failing_node(make_inventory, reclass) -> None:
    root = make_inventory(BROKEN_FLEET)
    result = reclass("-b", str(root), "--inventory")
    assert result.returncode == 65
    headers = [line for line in result.stderr.splitlines() if line.startswith("-> ")]
    assert headers == ["-> a", "-> b", "-> d"]
    assert "Cannot resolve ${nope2}, at y" in result.stderr
    errors = json_errors(reclass("-b", str(root), "--inventory", "--errors", "json"))
    assert [(e["node"], e["kind"]) for e in errors] == [
        ("a", "class_not_found"), ("b", "missing_reference"), ("d", "missing_reference"),
        ("d", "missing_reference")]
    assert errors[1]["suggestions"] == ["${dns:server}"]


def test_single_error_flag_stops_at_the_first_node(make_inventory, reclass) -> None:
    root = make_inventory(BROKEN_FLEET)
    result = reclass("-b", str(root), "--inventory", "-1")
    assert result.returncode == 65
    assert [line for line in result.stderr.splitlines() if line.startswith("-> ")] == ["-> a"]


# -- other errors in JSON ----------------------------------------------------------------------

def test_invalid_yaml_as_json(make_inventory, reclass) -> None:
    root = make_inventory({"nodes/n1.yml": "parameters:\n  a: [1, 2\n  b: 3\n"})
    [error] = json_errors(reclass("-b", str(root), "-n", "n1", "--errors", "json"))
    assert error["kind"] == "invalid_yaml"
    assert error["file"] == f"{root}/nodes/n1.yml"
    assert error["line"] == 3


def test_node_not_found_as_json(make_inventory, reclass) -> None:
    root = make_inventory({"nodes/n1.yml": "parameters: {}\n"})
    result = reclass("-b", str(root), "-n", "n2", "--errors", "json")
    assert result.returncode == 74
    [error] = json_errors(result)
    assert error["kind"] == "node_not_found"
    assert "n2" in error["message"]


def test_unknown_errors_format_is_a_usage_error(make_inventory, reclass) -> None:
    root = make_inventory({"nodes/n1.yml": "parameters: {}\n"})
    result = reclass("-b", str(root), "-n", "n1", "--errors", "xml")
    assert result.returncode == 2


def test_subcommands_take_errors_json(tmp_path: Path) -> None:
    result = run("reclass-ng", ["classify", "-b", str(tmp_path), "n1", "--errors", "json"],
                 tmp_path)
    assert result.returncode == 74
    [error] = json_errors(result)
    assert "groups" in error["message"]


# -- the Python API keeps kapicorp-reclass's message ---------------------------------------

def test_api_message_is_unchanged_and_records_have_the_details(make_inventory) -> None:
    root = make_inventory(WEB)
    with pytest.raises(ResolveErrorList) as info:
        reclass_ng.load(str(root), read_config=False).nodeinfo("web1")
    assert str(info.value).splitlines() == [
        "-> web1",
        f"   Cannot resolve ${{nginx:prot}}, at listen, in yaml_fs://{root}/classes/role/web.yml"]
    assert info.value.records()[0]["suggestions"] == ["${nginx:port}"]
