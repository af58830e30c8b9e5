"""Rendering one generated inventory with kapicorp-reclass and with reclass-ng.

Each tool runs in a long-lived worker process (kapicorp_worker.py, reclass_ng_worker.py) fed one
job per inventory: starting two interpreters per example would cost more than the renders. Each
argument list of a job must answer within `timeout` seconds; a worker that does not is killed
(by its own pid) and the argument list counts as a hang; the next job starts a new worker. The
workers run with an empty home directory and a bounded address space, so a runaway render ends
as a MemoryError (a crash) instead of exhausting the machine.

`render_both(inventory_dir, nodes)` asks both tools for `--inventory` first (all nodes in one
call); when either fails, each node's `--nodeinfo` is asked for separately, so that one failing
node does not hide the others from the comparison.
"""

from __future__ import annotations

import json
import os
import resource
import select
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KAPICORP_PYTHON = REPO / ".venv" / "kapicorp-reclass" / "bin" / "python"
RECLASS_NG_PYTHON = REPO / ".venv" / "bin" / "python"
HERE = Path(__file__).resolve().parent

# Bounds of one worker: the address space (a kapicorp loop that grows without end fails with a
# MemoryError there instead of swapping the shared machine) and the wall clock of one render.
WORKER_ADDRESS_SPACE = 2 * 1024**3
DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Outcome:
    """What one tool did with one argument list: exit status (None: no answer before the
    timeout, a hang), standard output and standard error."""

    status: int | None
    stdout: str
    stderr: str

    @property
    def hung(self) -> bool:
        return self.status is None

    @property
    def ok(self) -> bool:
        return self.status == 0

    @property
    def crashed(self) -> bool:
        """An uncaught Python exception (the `reclass` script's exit status 1)."""
        return self.status == 1


HANG = Outcome(None, "", "")


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_ADDRESS_SPACE, WORKER_ADDRESS_SPACE))


class ToolWorker:
    """One tool's worker process, started on first use and again after a hang."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        self.name = name
        self._argv = argv
        self._env = env
        self._process: subprocess.Popen[bytes] | None = None
        self._pending = b""

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=self._env, preexec_fn=_limit_address_space)
            self._pending = b""
        return self._process

    def stop(self) -> None:
        """End the worker (closing its input ends its loop; a hung one is killed)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()

    def run(self, cwd: Path, argvs: list[list[str]], timeout: float) -> list[Outcome]:
        """The outcome of each argument list, run in `cwd`; after a hang, the remaining
        argument lists are not run and the list is shorter than `argvs`."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps({"cwd": str(cwd), "argvs": argvs}).encode() + b"\n")
            process.stdin.flush()
        except BrokenPipeError:
            self.stop()
            return [Outcome(1, "", f"{self.name} worker died")]
        outcomes: list[Outcome] = []
        for _ in argvs:
            line = self._read_line(process, timeout)
            if line is None:
                self.stop()
                outcomes.append(HANG if process.returncode in (None, -9) else
                                Outcome(1, "", f"{self.name} worker died ({process.returncode})"))
                return outcomes
            out, err, status = json.loads(line)
            outcomes.append(Outcome(status, out, err))
        return outcomes

    def _read_line(self, process: subprocess.Popen[bytes], timeout: float) -> bytes | None:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:  # the worker died (MemoryError outside the job, a signal)
                process.wait(timeout=30)
                return None
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line


@dataclass(frozen=True)
class Rendering:
    """Both tools' outcomes for one unit: the whole inventory (`node` None) or one node."""

    node: str | None
    kapicorp: Outcome
    reclass_ng: Outcome


class DifferentialRunner:
    """The two workers, kept across examples; use as a context manager."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        if not KAPICORP_PYTHON.exists():
            raise RuntimeError(f"kapicorp-reclass 2.0.0 is not installed at "
                               f"{KAPICORP_PYTHON.parent.parent}: run `make tools`")
        self.timeout = timeout
        self._home = tempfile.TemporaryDirectory(prefix="differential-home-")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self._home.name,
               "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
        self.kapicorp = ToolWorker("kapicorp-reclass",
                                   [str(KAPICORP_PYTHON), str(HERE / "kapicorp_worker.py")], env)
        self.reclass_ng = ToolWorker(
            "reclass-ng", [str(RECLASS_NG_PYTHON), str(HERE / "reclass_ng_worker.py")],
            {**env, "PYTHONPATH": str(REPO)})

    def __enter__(self) -> DifferentialRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.kapicorp.stop()
        self.reclass_ng.stop()
        self._home.cleanup()

    def render_both(self, inventory: Path, nodes: list[str],
                    whole_inventory: bool = True) -> list[Rendering]:
        """`--inventory` with both tools; when either fails (or `whole_inventory` is false),
        `--nodeinfo` of every node."""
        if whole_inventory:
            whole = [["-b", str(inventory), "--inventory", "-o", "json"]]
            [theirs] = self.kapicorp.run(inventory, whole, self.timeout)
            [ours] = self.reclass_ng.run(inventory, whole, self.timeout)
            if theirs.ok and ours.ok:
                return [Rendering(None, theirs, ours)]
        per_node = [["-b", str(inventory), "--nodeinfo", node, "-o", "json"] for node in nodes]
        their_nodes = self.kapicorp.run(inventory, per_node, self.timeout)
        our_nodes = self.reclass_ng.run(inventory, per_node, self.timeout)
        # After a hang a worker's later nodes are unknown: zip leaves them out of the comparison.
        pairs = zip(nodes, their_nodes, our_nodes, strict=False)
        return [Rendering(node, theirs, ours) for node, theirs, ours in pairs]
