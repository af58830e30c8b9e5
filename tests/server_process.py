"""Start a server command as a real process and wait until it listens: the one helper every test
that runs `reclass-ng serve` or `reclass-ng ui` uses.

The server is started on port 0 (`--listen 127.0.0.1:0`, `reclass-ng ui` without `--port`), binds
a free port itself and prints its address on one line; the helper reads the address from that
line. No port is picked in advance, so no other process can take it between the pick and the
server's bind.

The process's output goes to a log file, not a pipe: a server that logs a lot can never block
on a pipe nobody reads, and the log is there to read when the server fails.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

# The lines `reclass-ng serve` and `reclass-ng ui` print on stdout once they listen
# (doc/service.rst, doc/explorer.rst); group 1 is the base URL.
SERVE_LISTENING = re.compile(r"^reclass-ng serve: listening on (http://\S+)$", re.MULTILINE)
UI_LISTENING = re.compile(r"^reclass-ng explorer: (http://\S+)/ui/$", re.MULTILINE)
START_SECONDS = 60  # a generous bound for a loaded 2-core machine; a healthy start takes ~1 s


def start_server_process(command: Sequence[str], log: Path, *,
                         listening: re.Pattern[str] = SERVE_LISTENING,
                         env: Mapping[str, str] | None = None, cwd: Path | None = None,
                         new_session: bool = False) -> tuple[subprocess.Popen[bytes], str]:
    """Start `command` with its output in `log` and wait until it prints its `listening` line;
    returns (the process, the base URL from that line). Raises AssertionError, with the log,
    when the process exits first or prints no such line within START_SECONDS; the process is
    stopped then. `new_session` puts it in its own process group (for a `bash -c exec ...`)."""
    with open(log, "wb") as output:
        process = subprocess.Popen(list(command), stdout=output, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=None if env is None else dict(env),
                                   cwd=cwd, start_new_session=new_session)
    deadline = time.monotonic() + START_SECONDS
    while True:
        exited = process.poll() is not None  # before reading: a line printed just before exit
        found = listening.search(log.read_text(errors="replace"))
        if found and not exited:
            return process, found.group(1)
        if exited or time.monotonic() > deadline:
            stop_server_process(process)
            what = (f"exited with {process.returncode}" if exited
                    else f"printed no listening line within {START_SECONDS} s")
            raise AssertionError(f"{' '.join(command)} {what}:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)


def stop_server_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (to its process group when it has its own), SIGKILL when it has not exited 20 s
    later; waits for it."""
    def send(signal_number: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            if os.getpgid(process.pid) == process.pid:
                os.killpg(process.pid, signal_number)
            else:
                process.send_signal(signal_number)

    if process.poll() is None:
        send(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            send(signal.SIGKILL)
            process.wait()


@contextlib.contextmanager
def server_process(command: Sequence[str], log: Path, *,
                   listening: re.Pattern[str] = SERVE_LISTENING,
                   env: Mapping[str, str] | None = None, cwd: Path | None = None
                   ) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`start_server_process` as a context: yields (process, base URL), stops it afterwards."""
    process, url = start_server_process(command, log, listening=listening, env=env, cwd=cwd)
    try:
        yield process, url
    finally:
        stop_server_process(process)


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """A loopback port where nothing listens, held for the block: the socket is bound (so no
    other process can take the port meanwhile) but never listens, so a connection to it is
    refused at once. For the tests of a client facing a server that is down."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
