"""The roles file (`--tokens-file`) changing under a running `reclass-ng serve`: revocations
are seen even when size and mtime stay; a broken or missing file keeps the last good tokens and
says so (log, `GET /status`); at start it is an error with a message, not a 500 per request."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from server_helpers import assert_error, client, copy_inventory, running_server_process
from test_roles_api import add_token


@pytest.fixture
def tokens(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    tokens_file = tmp_path / "tokens.yml"
    names = {name: add_token(tokens_file, name, role)
             for name, role in (("admin", "admin"), ("viewer", "viewer"))}
    return tokens_file, names


def _serve(tmp_path: Path, tokens_file: Path):
    inventory = copy_inventory(tmp_path / "inventory")
    return running_server_process(inventory, tmp_path / "state.sqlite3", "--tokens-file",
                                  str(tokens_file), token=None)


def _log_of(tmp_path: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in tmp_path.glob("state.sqlite3-*.log"))


def test_a_revocation_that_keeps_size_and_mtime_is_seen(tmp_path, tokens):
    tokens_file, names = tokens
    with _serve(tmp_path, tokens_file) as (base, _), client(base, names["viewer"]) as viewer:
        assert viewer.get("/v1/groups").status_code == 200
        before = tokens_file.stat()
        data = yaml.safe_load(tokens_file.read_text())
        entry = next(e for e in data["tokens"] if e["name"] == "viewer")
        # Another digest of the same length: the file keeps its size, and `cp -p` or
        # `rsync -a` would keep its mtime.
        entry["sha256"] = ("0" if entry["sha256"][0] != "0" else "1") + entry["sha256"][1:]
        tokens_file.write_text(yaml.safe_dump(data, sort_keys=False))
        os.utime(tokens_file, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert tokens_file.stat().st_size == before.st_size
        assert_error(viewer.get("/v1/groups"), 403, "permission-denied")


@pytest.mark.parametrize("breakage", ["unparsable", "invalid entry", "deleted"])
def test_a_broken_tokens_file_keeps_the_last_good_tokens(tmp_path, tokens, breakage):
    tokens_file, names = tokens
    good = tokens_file.read_bytes()
    with _serve(tmp_path, tokens_file) as (base, _), client(base, names["admin"]) as admin:
        assert admin.get("/status").json()["tokens_file"]["state"] == "ok"
        if breakage == "unparsable":
            tokens_file.write_text("tokens: [\n  - name: {\n")
        elif breakage == "invalid entry":
            tokens_file.write_text("tokens:\n  - name: x\n    sha256: in-clear\n    role: admin\n")
        else:
            tokens_file.unlink()
        for _ in range(3):
            response = admin.get("/v1/groups")
            assert response.status_code == 200, response.text
        with client(base, names["viewer"]) as viewer:
            assert viewer.get("/v1/groups").status_code == 200
            assert_error(viewer.post("/v1/groups/00000000-0000-4000-8000-000000000000",
                                     json={"description": "x"}), 403, "permission-denied")
        status = admin.get("/status").json()["tokens_file"]
        assert status["state"] == "stale" and status["tokens"] == 2, status
        assert str(tokens_file) in status["problem"] and status["since"] <= time.time()
        tokens_file.write_bytes(good)
        assert admin.get("/status").json()["tokens_file"] == {
            "path": str(tokens_file), "tokens": 2, "state": "ok"}
    log = _log_of(tmp_path)
    assert log.count("the last good tokens (2) stay in force") == 1, log
    assert "readable again" in log and "Traceback" not in log


def _serve_until_refused(tmp_path, inventory, tokens_file) -> subprocess.CompletedProcess:
    """`reclass-ng serve` with `tokens_file`, run until it exits (it must refuse to start)."""
    return subprocess.run(
        [sys.executable, "-m", "reclass_ng.cli.main", "serve", "-b", str(inventory),
         "--listen", "127.0.0.1:0", "--state-db", str(tmp_path / "state.sqlite3"),
         "--tokens-file", str(tokens_file)],
        capture_output=True, text=True, timeout=60, check=False,
        env={k: v for k, v in os.environ.items() if k != "RECLASS_NG_TOKEN"})


@pytest.mark.parametrize("content", [None, "tokens: [\n", "tokens:\n  - name: x\n"])
def test_a_missing_or_broken_tokens_file_stops_the_start(tmp_path, content):
    inventory = copy_inventory(tmp_path / "inventory")
    tokens_file = tmp_path / "tokens.yml"
    if content is not None:
        tokens_file.write_text(content)
    done = _serve_until_refused(tmp_path, inventory, tokens_file)
    assert done.returncode != 0
    assert f"tokens file {tokens_file}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "listening on" not in done.stdout


def test_a_tokens_file_that_is_a_fifo_stops_the_start(tmp_path):
    # A FIFO opened for reading waits for a writer: the start must refuse it, not hang.
    inventory = copy_inventory(tmp_path / "inventory")
    tokens_file = tmp_path / "tokens.yml"
    os.mkfifo(tokens_file)
    done = _serve_until_refused(tmp_path, inventory, tokens_file)
    assert done.returncode != 0
    assert f"tokens file {tokens_file}: cannot read: not a regular file" in done.stderr, \
        done.stderr
    assert "Traceback" not in done.stderr and "listening on" not in done.stdout
