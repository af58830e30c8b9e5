"""Running `reclass-ng serve` as a real process on loopback, for the HTTP tests."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
from server_process import server_process

EXAMPLE_INVENTORY = Path(__file__).resolve().parents[2] / "inventory-example"
TOKEN = "test-token-0123456789"
ROOT_ID = "00000000-0000-4000-8000-000000000000"
WEB_ID = "b0f03a26-d797-4a9c-aa99-dbe317af6331"
LARGE_WEB_ID = "ce75cef1-f707-4a3b-8e43-665d3ef12991"
DB_ID = "5291d4d6-c981-4347-bddf-233a06d84e3b"


def copy_inventory(target: Path) -> Path:
    """A private copy of the example inventory (the server writes to it)."""
    shutil.copytree(EXAMPLE_INVENTORY, target)
    return target


@contextlib.contextmanager
def running_server(inventory: Path, state_db: Path, *args: str, token: str | None = TOKEN,
                   token_file: Path | None = None) -> Iterator[str]:
    """Start the server, wait until it listens, yield its base URL, stop it."""
    with running_server_process(inventory, state_db, *args, token=token,
                                token_file=token_file) as (base, _process):
        yield base


def serve_command(inventory: Path, state_db: Path, *args: str) -> list[str]:
    """`reclass-ng serve` of this checkout on a free loopback port (`--listen 127.0.0.1:0`)."""
    return [sys.executable, "-m", "reclass_ng.cli.main", "serve", "-b", str(inventory),
            "--listen", "127.0.0.1:0", "--state-db", str(state_db), "--log-level", "warning",
            *args]


def server_log(state_db: Path) -> Path:
    """A new log file for a server, next to its state database (a test may start several)."""
    descriptor, name = tempfile.mkstemp(prefix=f"{state_db.name}-", suffix=".log",
                                        dir=state_db.parent)
    os.close(descriptor)
    return Path(name)


@contextlib.contextmanager
def running_server_process(inventory: Path, state_db: Path, *args: str,
                           token: str | None = TOKEN, token_file: Path | None = None
                           ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`running_server`, yielding (base URL, the server's process)."""
    env = {k: v for k, v in os.environ.items() if k != "RECLASS_NG_TOKEN"}
    if token is not None and token_file is None:
        env["RECLASS_NG_TOKEN"] = token
    command = serve_command(inventory, state_db, *args)
    if token_file is not None:
        command += ["--token-file", str(token_file)]
    with server_process(command, server_log(state_db), env=env) as (process, base):
        yield base, process


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) a running process has used so far, from /proc. Unlike the
    wall clock it does not grow while the process waits for a busy machine's cores."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def has_open(pid: int, path: Path) -> bool:
    """Whether the process holds a file descriptor on `path` (from /proc/PID/fd)."""
    target = os.path.realpath(path)
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            if os.readlink(fd) == target:
                return True
    return False


def client(base: str, token: str | None = TOKEN, *, bearer: bool = False) -> httpx.Client:
    """An HTTP client for the server, sending the token the classifier's way or as Bearer."""
    headers = {}
    if token is not None:
        headers = {"Authorization": f"Bearer {token}"} if bearer else {"X-Authentication": token}
    return httpx.Client(base_url=base, headers=headers, timeout=30, follow_redirects=False)


def assert_error(response: httpx.Response, status: int, kind: str) -> dict:
    """The response is the classifier's error object with this status and kind."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"kind", "msg", "details"}, body
    assert body["kind"] == kind, body
    assert body["msg"]
    return body


def group_files(inventory: Path) -> dict[str, bytes]:
    """Every group file's bytes, to show that a refused write changed nothing."""
    return {str(p.relative_to(inventory)): p.read_bytes()
            for p in sorted((inventory / "groups").rglob("*.yml"))}


@contextlib.contextmanager
def serve_example_copy(base_dir: Path, prepare=None) -> Iterator[tuple[str, Path]]:
    """Run `reclass-ng serve` on a fresh copy of inventory-example; yields (base URL, inventory)."""
    inventory = copy_inventory(base_dir / "inventory")
    if prepare is not None:
        prepare(inventory)
    with running_server(inventory, base_dir / "state.sqlite3") as base:
        yield base, inventory
