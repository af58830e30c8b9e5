"""What a new user meets in the first hour: the README's commands in either order, misspelt
settings, unknown nodes, --version, a busy port. Each driven as the user would."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from server_process import server_process

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "inventory-example"
BIN = Path(sys.executable).parent


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kwargs)


def test_output_dump_works_after_a_plain_import() -> None:
    done = run([sys.executable, "-c", "import reclass_ng\n"
                "print(reclass_ng.output.dump({'a': 1}, 'json'), end='')"])
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{\n  "a": 1\n}\n'


def test_a_misspelt_setting_is_refused_with_a_suggestion() -> None:
    import reclass_ng
    from reclass_ng.errors import ConfigError

    with pytest.raises(ConfigError) as raised:
        reclass_ng.load(str(EXAMPLE), ignore_class_not_found=True)
    assert "Unknown setting 'ignore_class_not_found'" in str(raised.value)
    assert "did you mean ignore_class_notfound?" in str(raised.value)
    assert raised.value.exit_code == 78


def test_an_unknown_config_file_key_is_ignored_with_a_warning(make_inventory) -> None:
    import reclass_ng

    base = make_inventory({"nodes/n1.yml": "parameters: {a: 1}\n",
                           "reclass-config.yml": "ignore_class_not_found: true\n"})
    warnings: list[str] = []
    inventory = reclass_ng.load(str(base), warn=warnings.append)
    assert inventory.nodeinfo("n1")["parameters"]["a"] == 1
    assert len(warnings) == 1
    assert "unknown setting 'ignore_class_not_found' ignored" in warnings[0]
    assert "did you mean ignore_class_notfound?" in warnings[0]


def test_reclass_nodeinfo_of_an_unknown_node_suggests_names() -> None:
    done = run([str(BIN / "reclass"), "-b", str(EXAMPLE), "--nodeinfo", "web1.exmaple.com"])
    assert done.returncode == 74
    assert "Node 'web1.exmaple.com' not found" in done.stderr
    assert "did you mean web1.example.com" in done.stderr
    assert done.stdout == ""


def test_classify_of_an_unknown_node_says_not_found() -> None:
    done = run([str(BIN / "reclass-ng"), "classify", "-b", str(EXAMPLE), "nosuch.example.com"])
    assert done.returncode == 74, done.stderr
    assert "Node 'nosuch.example.com' not found" in done.stderr
    assert "did you mean" in done.stderr
    assert "Cannot resolve" not in done.stderr  # not a reference error from some group


def test_version_exits_0() -> None:
    done = run([str(BIN / "reclass-ng"), "--version"])
    assert done.returncode == 0
    assert done.stdout.startswith("reclass-ng ")
    done = run([str(BIN / "reclass"), "--version"])
    assert done.returncode == 0


def test_serve_on_a_busy_port_is_one_clear_line_and_exit_69(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run([str(BIN / "reclass-ng"), "serve", "-b", str(EXAMPLE), "--listen",
                    f"127.0.0.1:{port}", "--state-db", str(tmp_path / "state.sqlite3")])
    assert done.returncode == 69
    assert f"127.0.0.1:{port}: the port is already in use" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_on_port_0_listens_on_a_free_port_and_prints_it(tmp_path: Path) -> None:
    """`--listen 127.0.0.1:0`: the server binds a free port and prints the real address on
    stdout, so a script starts it without picking a port first (doc/service.rst)."""
    inventory = tmp_path / "inventory"  # a copy: the server may leave its lock file there
    shutil.copytree(EXAMPLE, inventory)
    command = [str(BIN / "reclass-ng"), "serve", "-b", str(inventory), "--listen", "127.0.0.1:0",
               "--state-db", str(tmp_path / "state.sqlite3"), "--open-reads"]
    with server_process(command, tmp_path / "serve.log") as (_, url):
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url) and not url.endswith(":0"), url
        with urllib.request.urlopen(f"{url}/v1/groups", timeout=60) as response:
            assert response.status == 200
            assert "All Nodes" in response.read().decode()
    assert f"\nreclass-ng serve: listening on {url}\n" in (tmp_path / "serve.log").read_text()


def test_make_installs_test_extras_into_a_venv_the_setup_command_made(tmp_path: Path) -> None:
    """The README's setup command leaves .venv/bin/reclass but no test extras: `make test` must
    still install them (their own stamp file), and must not once the stamp is there."""
    if subprocess.run(["make", "--version"], capture_output=True).returncode != 0:
        pytest.fail("make is not installed")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name in ("python", "reclass"):
        (venv / "bin" / name).write_text("")
    dry = run(["make", "-n", "test", f"VENV={venv}"], cwd=REPO)
    assert dry.returncode == 0, dry.stderr
    assert "-e '.[test]'" in dry.stdout
    (venv / ".test-extras-installed").write_text("")
    dry = run(["make", "-n", "test", f"VENV={venv}"], cwd=REPO)
    assert "-e '.[test]'" not in dry.stdout
    assert "install-test-tools.sh" in dry.stdout and "pytest" in dry.stdout
