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


# -- --errors json on every command: stderr is one JSON document ---------------------------

REPO = Path(__file__).resolve().parents[1]
RECORD_FIELDS = {"node", "class", "file", "line", "column", "key_path", "message", "kind",
                 "suggestions", "reference_chain"}


@pytest.fixture
def broken_example(tmp_path: Path) -> Path:
    """inventory-example with a wrong reference in the nginx class most web nodes include, and
    a group file with a rule naming an unknown operator."""
    import shutil

    root = tmp_path / "broken-example"
    shutil.copytree(REPO / "inventory-example", root)
    nginx = root / "classes" / "service" / "nginx.yml"
    nginx.write_text(nginx.read_text().replace("${site:http_port}", "${site:http_prot}"))
    return root


def failing_command_lines(root: Path, missing: Path) -> list[list[str]]:
    """A failing command line for every `reclass-ng` command and action."""
    return [
        ["classify", "-b", str(root), "web1.example.com"],
        ["groups", "validate", "-b", str(missing)],
        ["lint", "-b", str(missing)],
        ["diff", "-b", str(root)],
        ["explain", "-b", str(root), "web1", "nginx:listen_port"],
        ["classes", "list", "-b", str(root), "--environment"],
        ["classes", "list", "-b", str(missing)],
        ["classes", "sync", "-b", str(root), "--code-dir", str(missing)],
        ["tokens", "add", str(missing / "tokens.yml")],
        ["serve", "-b", str(missing)],
        ["ui", "-b", str(missing)],
        ["watch", "-b", str(missing)],
        ["validate", "-b", str(missing)],
        ["affected", "-b", str(root), "--from-dir", str(missing)],
        ["affected", "-b", str(root)],
        ["activity", "-b", str(root), "--state-db", str(missing / "state.sqlite3")],
        ["activity", "-b", str(root), "--limit", "0"],
        ["lsp", "--no-such-option"],
        ["no-such-command"],
    ]


def test_records_name_the_missing_file_or_directory(broken_example: Path,
                                                    tmp_path: Path) -> None:
    """Where a command fails for a file or directory that is not there, its record says which."""
    missing = tmp_path / "missing"
    for words, path, code in [
        (["classes", "list", "-b", str(missing)], missing, 74),
        (["classes", "sync", "-b", str(broken_example), "--code-dir", str(missing)], missing, 74),
        (["groups", "validate", "-b", str(missing)], missing / "groups", 74),
        (["lint", "-b", str(missing)], missing, 74),
        (["validate", "-b", str(missing)], missing, 74),
        (["watch", "-b", str(missing)], missing / "nodes", 74),
        (["affected", "-b", str(broken_example), "--from-dir", str(missing)], missing, 74),
        (["affected", "-b", str(broken_example), "--files-from", str(missing / "list")],
         missing / "list", 74),
        (["activity", "-b", str(broken_example), "--state-db", str(missing / "s.sqlite3")],
         missing / "s.sqlite3", 66),
    ]:
        result = run("reclass-ng", [*words, "--errors", "json"], tmp_path)
        [record] = one_json_document(result)["errors"]
        assert (result.returncode, record["file"]) == (code, str(path)), words


def one_json_document(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    document = json.loads(result.stderr)  # the whole of stderr, nothing before or after
    assert document["exit_code"] == result.returncode != 0
    assert document["errors"]
    for record in document["errors"]:
        assert RECORD_FIELDS <= set(record), record
    return document


@pytest.mark.slow  # every command as its own process, several times
def test_every_command_takes_errors_json_anywhere(broken_example: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    for words in failing_command_lines(broken_example, missing):
        last = run("reclass-ng", [*words, "--errors", "json"], tmp_path)
        first = run("reclass-ng", ["--errors", "json", *words], tmp_path)
        middle = run("reclass-ng", [words[0], "--errors=json", *words[1:]], tmp_path)
        for result in (last, first, middle):
            assert one_json_document(result) == one_json_document(last), words
    kapitan = run("reclass-ng", ["--errors", "json", "kapitan", "compile"], tmp_path)
    assert one_json_document(kapitan)["errors"][0]["kind"] == "config_error"


def test_warnings_are_part_of_the_json_document(broken_example: Path, tmp_path: Path) -> None:
    document = one_json_document(run(
        "reclass-ng", ["classify", "-b", str(broken_example), "web1.example.com", "--errors",
                       "json"], tmp_path))
    assert [w["message"] for w in document["warnings"]] == [
        "reclass-ng classify: warning: no --facts given, but group rules read facts; they see "
        "none"]
    [error] = document["errors"]
    assert (error["node"], error["suggestions"]) == ("web1.example.com", ["${site:http_port}"])
    node = broken_example / "nodes" / "production" / "lb1.example.com.yml"
    node.write_text(node.read_text().replace("- role.lb\n", "- role.lb\n  - role.lbb\n"))
    passed = run("reclass", ["-b", str(broken_example), "-z", "true", "-n", "lb1.example.com",
                             "--errors", "json"], tmp_path)
    assert passed.returncode == 0
    assert json.loads(passed.stderr) == {
        "exit_code": 0, "errors": [],
        "warnings": [{"message": "[WARNING] Reclass class not found: 'role.lbb'. Skipped!"}]}


def test_usage_errors_are_json_too(broken_example: Path, tmp_path: Path) -> None:
    result = run("reclass", ["-b", str(broken_example), "--inventory", "--bogus", "--errors",
                             "json"], tmp_path)
    assert result.returncode == 2
    [error] = one_json_document(result)["errors"]
    assert (error["kind"], error["message"]) == ("usage_error",
                                                 "unrecognized arguments: --bogus")


def test_not_found_records_name_the_node_and_the_suggestions(broken_example: Path,
                                                             tmp_path: Path) -> None:
    explained = one_json_document(run(
        "reclass-ng", ["explain", "-b", str(broken_example), "web1", "nginx:listen_port",
                       "--errors", "json"], tmp_path))
    [error] = explained["errors"]
    assert error["node"] == "web1"
    assert error["suggestions"] == ["web1.example.com", "web1.staging.example.com"]
    assert "did you mean web1.example.com, web1.staging.example.com?" in error["message"]
    missing_key = one_json_document(run(
        "reclass-ng", ["explain", "-b", str(REPO / "inventory-example"), "web1.example.com",
                       "nginx:workers", "--errors", "json"], tmp_path))["errors"][0]
    assert (missing_key["node"], missing_key["suggestions"]) == (
        "web1.example.com", ["nginx:worker_processes"])
    classified = one_json_document(run(
        "reclass-ng", ["classify", "-b", str(broken_example), "web1", "--errors", "json"],
        tmp_path))["errors"][0]
    assert classified["node"] == "web1"
    assert classified["suggestions"] == ["web1.example.com", "web1.staging.example.com"]


def test_a_short_host_name_suggests_its_full_names(broken_example: Path, tmp_path: Path) -> None:
    result = run("reclass", ["-b", str(broken_example), "-n", "web2"], tmp_path)
    assert result.returncode == 74
    assert result.stderr.splitlines()[-1] == "      did you mean web2.example.com?"


# -- a problem many nodes share is reported once -------------------------------------------

def shared_class_fleet(count: int) -> dict[str, str]:
    files = {"classes/common.yml": "parameters:\n  dns: [1, 2\n  ntp: x\n",
             "classes/ok.yml": "parameters: {}\n",
             "nodes/solo.yml": "classes:\n  - ok\nparameters:\n  a: ${nope}\n"}
    for index in range(count):
        files[f"nodes/n{index:03}.yml"] = "classes:\n  - common\n"
    return files


def test_a_broken_shared_class_is_reported_once(make_inventory, reclass) -> None:
    root = make_inventory(shared_class_fleet(40))
    result = reclass("-b", str(root), "--inventory")
    assert result.returncode == 65
    lines = result.stderr.splitlines()
    assert [line for line in lines if line.startswith("-> ")] == ["-> n000", "-> solo"]
    assert lines.count("      the same error in 39 more nodes: n001, n002, n003, n004, n005, "
                       "... (-v lists each node's errors)") == 1
    assert len(lines) < 10
    errors = json_errors(reclass("-b", str(root), "--inventory", "--errors", "json"))
    assert [(e["node"], e["kind"], e["node_count"], e["nodes"]) for e in errors] == [
        ("n000", "invalid_yaml", 40, ["n000", "n001", "n002", "n003", "n004"]),
        ("solo", "missing_reference", 1, ["solo"])]
    assert errors[0]["file"] == f"{root}/classes/common.yml"
    each = reclass("-b", str(root), "--inventory", "-v")
    assert len([line for line in each.stderr.splitlines() if line.startswith("-> ")]) == 41
    assert len(json_errors(reclass("-b", str(root), "--inventory", "-v", "--errors",
                                   "json"))) == 41


def test_a_server_with_errors_json_keeps_its_log_live(tmp_path: Path) -> None:
    """`serve` runs until stopped: with --errors json its log is written as it goes (not
    held back, in memory, for a document at the end); only its errors are JSON."""
    import shutil
    import urllib.request

    from server_process import server_process

    inventory = tmp_path / "inventory"
    shutil.copytree(REPO / "inventory-example", inventory)
    command = [str(VENV_BIN / "reclass-ng"), "serve", "-b", str(inventory), "--listen",
               "127.0.0.1:0", "--state-db", str(tmp_path / "state.sqlite3"), "--open-reads",
               "--errors", "json"]
    log = tmp_path / "serve.log"
    with server_process(command, log) as (_, url):
        with urllib.request.urlopen(f"{url}/v1/groups", timeout=60) as response:
            assert response.status == 200
        running = log.read_text()  # while it runs
    assert "reclass-ng serve: inventory" in running  # its own notes on stderr
    assert "Application startup complete" in running  # uvicorn's log on stderr


def test_ctrl_c_where_python_cannot_raise_it_still_stops_the_command(capsys) -> None:
    # Python runs the SIGINT handler at the next line of the main thread, which may be a
    # weakref callback (or a __del__) of an object being freed: its KeyboardInterrupt was
    # printed ("Exception ignored in", a traceback) and the command went on to exit 0; seen on
    # `reclass --inventory -j 2` with Ctrl-C as it finished.
    import time
    import weakref

    from reclass_ng.cli.failures import run_reporting_errors

    class Freed:
        pass

    def where_the_handler_ran(_: object) -> None:
        raise KeyboardInterrupt

    steps: list[int] = []

    def command() -> int:
        freed = Freed()
        watcher = weakref.ref(freed, where_the_handler_ran)
        del freed  # the callback runs here
        assert watcher() is None
        for step in range(5_000):  # the command goes on (5 s): the Ctrl-C stops it
            steps.append(step)
            time.sleep(0.001)
        return 0

    assert run_reporting_errors(command) == 130
    assert len(steps) < 5_000  # stopped, not only reported at the end
    assert "Exception ignored" not in capsys.readouterr().err


def test_ctrl_c_as_the_command_ends_exits_130_without_traceback(tmp_path: Path) -> None:
    # A Ctrl-C after main() returned (while the console script leaves) was a traceback and a
    # death by SIGINT. main() is replaced by one whose last line is hit by the Ctrl-C.
    import sys

    script = ("import signal, reclass_ng.cli.reclass as cli\n"
              "cli.main = lambda: signal.raise_signal(signal.SIGINT) or 0\n"
              "cli.console_main()\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=clean_env(tmp_path), cwd=Path(__file__).parents[1], timeout=60)
    assert (result.returncode, result.stderr) == (130, "")


def test_a_console_run_holds_what_it_rendered_until_it_exits(monkeypatch, tmp_path) -> None:
    # In-process (tests, an API caller), nothing is held: the inventory is freed when the run
    # returns. A console script that ends in exit_without_teardown holds it instead: Python
    # never frees it object by object, the operating system reclaims it.
    import weakref

    from reclass_ng.cli import failures
    from reclass_ng.cli.reclass import main

    class Rendered:
        pass

    monkeypatch.setattr(failures, "_held_until_exit", None)
    freed = Rendered()
    watched = weakref.ref(freed)
    failures.hold_until_exit(freed)
    del freed
    assert watched() is None
    failures.leaving_without_teardown()
    held = Rendered()
    watched = weakref.ref(held)
    failures.hold_until_exit(held)
    del held
    assert watched() is not None
    # and `reclass --inventory` run as the console script does hands it its inventory
    (tmp_path / "nodes").mkdir()
    (tmp_path / "classes").mkdir()
    (tmp_path / "nodes" / "n1.yml").write_text("parameters:\n  a: 1\n")
    assert main(["-b", str(tmp_path), "--inventory", "-o", "json"]) == 0
    assert any(type(kept).__name__ == "Inventory" for kept in failures._held_until_exit)
