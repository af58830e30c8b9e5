"""Running one command as a user would, timing it and reading its peak memory."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Sample:
    """One run of a command: wall time of the whole process and its peak RSS."""

    seconds: float
    max_rss_mb: float
    returncode: int
    stderr: str
    cpu_seconds: float = 0.0   # user + system time of the process and its waited children

    @property
    def ok(self) -> bool:
        return self.returncode == 0


@dataclass
class Samples:
    """Repeated runs of the same command."""

    runs: list[Sample] = field(default_factory=list)

    def add(self, sample: Sample) -> None:
        self.runs.append(sample)

    @property
    def median_seconds(self) -> float:
        return statistics.median(s.seconds for s in self.runs)

    @property
    def median_cpu_seconds(self) -> float:
        return statistics.median(s.cpu_seconds for s in self.runs)

    @property
    def peak_rss_mb(self) -> float:
        return max(s.max_rss_mb for s in self.runs)

    def to_json(self) -> dict:
        return {"seconds": [round(s.seconds, 4) for s in self.runs],
                "cpu_seconds": [round(s.cpu_seconds, 4) for s in self.runs],
                "max_rss_mb": [round(s.max_rss_mb, 1) for s in self.runs]}


LAUNCHER = Path(__file__).resolve().parent / "launch.py"


def run_measured(command: list[str], cwd: Path, stdout: Path | None = None,
                 timeout: float = 3600.0, env: dict[str, str] | None = None) -> Sample:
    """Run ``command`` to completion and measure it (through launch.py, see there why).

    Wall time runs from just before the command is started until it has been
    reaped. Peak RSS and CPU time come from ``wait4`` on the command (on Linux
    ru_maxrss is the largest RSS of the command or of any child it waited for).
    """
    with tempfile.TemporaryDirectory(prefix="bench-run-") as scratch:
        report = Path(scratch) / "report.json"
        errors_path = Path(scratch) / "stderr"
        with open(errors_path, "wb") as errors, \
                (open(stdout, "wb") if stdout else open(os.devnull, "wb")) as out:
            process = subprocess.Popen(
                [sys.executable, str(LAUNCHER), str(report), "--", *command],
                cwd=cwd, stdout=out, stderr=errors, stdin=subprocess.DEVNULL, env=env,
                start_new_session=True)
            # Kill the whole session on timeout, the command as well as the launcher.
            killer = threading.Timer(timeout, os.killpg, (process.pid, signal.SIGKILL))
            killer.start()
            try:
                process.wait()
            finally:
                killer.cancel()
        stderr = errors_path.read_text(encoding="utf-8", errors="replace")
        if not report.exists():
            return Sample(0.0, 0.0, process.returncode or -1, stderr or "launcher failed")
        figures = json.loads(report.read_text())
    return Sample(figures["seconds"], figures["max_rss_kb"] / 1024.0, figures["returncode"],
                  stderr, figures["cpu_seconds"])


def describe_failure(sample: Sample, limit: int = 600) -> str:
    """A short reason for a failed run: exit status and the end of stderr."""
    tail = sample.stderr.strip()[-limit:]
    return f"exit {sample.returncode}" + (f": {tail}" if tail else "")
