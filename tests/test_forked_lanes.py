"""`reclass --inventory --jobs N` on workers the command forks itself (parallel.forked_lanes):
what a worker that fails, dies or cannot use the shared file does to the command, and the
counters and lock the processes share (parallel.fork_shared)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_parallel import same_text, tricky_inventory

from reclass_ng.parallel.fork_shared import FileRegionLock, SharedCounters
from reclass_ng.parallel.workers import MIN_NODES_ENV

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

# The command line, run as `reclass`, with the chunk renderer of its forked workers (not the
# command's own) replaced by what sys.argv[1] names; the rest of the arguments are reclass's.
_WORKER_MISHAP = """
import os, signal, sys
from reclass_ng.parallel import chunks
from reclass_ng.cli.reclass import console_main

coordinator = os.getpid()
render_chunk = chunks._render_chunk
mishap, sys.argv = sys.argv[1], sys.argv[1:]

def in_the_worker(job, state):
    if os.getpid() != coordinator:
        if mishap == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        if mishap == "fails":
            raise RuntimeError("the worker broke")
    return render_chunk(job, state)

chunks._render_chunk = in_the_worker
if mishap == "no-room":  # every process's texts refused by the shared file: through the pipes
    from reclass_ng.parallel.text_spool import SharedTextSpool

    def full(self, texts):
        raise OSError(28, "No space left on device")

    SharedTextSpool.append = full
console_main()
"""


def reclass_with_worker(mishap: str, base: Path, *words: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _WORKER_MISHAP, mishap, "-b", str(base), "--inventory", *words],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, **{MIN_NODES_ENV: "0"}))


@pytest.fixture
def inventory(make_inventory) -> Path:
    return make_inventory(tricky_inventory(60))


def test_a_worker_killed_is_reported_not_waited_for(inventory: Path) -> None:
    result = reclass_with_worker("killed", inventory, "-o", "json", "-j", "2")
    assert result.returncode == 70, result.stderr
    assert result.stdout == ""  # nothing printed of an inventory not whole
    assert "Traceback" not in result.stderr
    assert "A --jobs worker process" in result.stderr
    assert "killed by SIGKILL" in result.stderr
    as_json = reclass_with_worker("killed", inventory, "-o", "json", "-j", "2",
                                  "--errors", "json")
    report = json.loads(as_json.stderr)
    assert (as_json.returncode, report["exit_code"]) == (70, 70)
    assert [error["kind"] for error in report["errors"]] == ["worker_lost"]


def test_a_worker_that_fails_is_reported_as_the_command_would(inventory: Path) -> None:
    result = reclass_with_worker("fails", inventory, "-o", "yaml", "-j", "3")
    assert result.returncode == 70, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert "RuntimeError: the worker broke" in result.stderr


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_texts_the_shared_file_refuses_come_through_the_pipes(inventory: Path, run_reclass,
                                                               fmt: str) -> None:
    # More than a pipe holds a chunk (the tricky nodes' texts): the worker waits for the
    # command to read, which it does between its own chunks and at the end.
    serial = run_reclass(["-b", str(inventory), "--inventory", "-o", fmt])
    result = reclass_with_worker("no-room", inventory, "-o", fmt, "-j", "2")
    assert result.returncode == 0, result.stderr
    assert same_text(result.stdout) == same_text(serial.stdout)


def test_the_command_renders_with_every_worker_gone_at_its_end(inventory: Path) -> None:
    # Four processes (three forked): each is waited for, none left behind.
    result = reclass_with_worker("none", inventory, "-o", "json", "-j", "4")
    assert result.returncode == 0, result.stderr
    assert '"n59"' in result.stdout


def test_counters_are_shared_with_forked_processes() -> None:
    counters = SharedCounters(4)
    counters[1:4] = [7, 8, 9]
    pid = os.fork()
    if pid == 0:  # never back into pytest, whatever happens
        try:
            counters[0] = counters[1] + counters[3]
            counters[2:4] = [0, -1]
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert counters[:] == [16, 7, 0, -1]
    assert counters[-1] == -1 and len(counters) == 4
    with pytest.raises(IndexError):
        counters[4]
    with pytest.raises(ValueError):
        counters[0:2] = [1]
    counters.close()


def test_the_file_lock_excludes_other_processes_and_dies_with_its_holder(tmp_path) -> None:
    with open(tmp_path / "lock", "wb") as file:
        lock = FileRegionLock(file.fileno(), 1)
        reading, writing = os.pipe()
        pid = os.fork()
        if pid == 0:  # holds the lock, says so, and waits to be killed
            try:
                with lock:
                    os.write(writing, b"held")
                    signal.pause()
            finally:
                os._exit(0)
        os.close(writing)  # a child gone without a word: the read below ends, not waits
        assert os.read(reading, 4) == b"held"
        os.close(reading)
        import fcntl

        with pytest.raises(OSError):  # held by the other process
            fcntl.lockf(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 1)
        fcntl.lockf(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 2)  # another region
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        with lock:  # released by the kernel as its holder died
            pass
