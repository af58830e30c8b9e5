"""How many workers `reclass --inventory --jobs N` uses (reclass_ng.parallel.workers), and
that it says why with -v when it renders serially or on fewer workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inventory_writer import write_inventory

from reclass_ng.parallel.workers import MIN_NODES_ENV, _cgroup_quota, worker_count


def nodes(count: int) -> dict[str, str]:
    files = {"classes/base.yml": "parameters:\n  motd: hi ${name}\n"}
    for index in range(count):
        files[f"nodes/n{index:04d}.yml"] = f"classes: [base]\nparameters:\n  name: n{index}\n"
    return files


def reclass(args: list[str], home: Path, one_cpu: bool = False, **env: str
            ) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != MIN_NODES_ENV}
    environment.update(HOME=str(home), **env)
    pin = (lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})) if one_cpu \
        else None
    return subprocess.run([sys.executable, "-m", "reclass_ng", *args], cwd=home,
                          env=environment, capture_output=True, text=True, timeout=300,
                          preexec_fn=pin, check=False)


def test_a_small_inventory_renders_serially_and_says_why(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", nodes(20))
    serial = reclass(["-b", str(base), "--inventory", "-o", "json"], tmp_path)
    jobs = reclass(["-b", str(base), "--inventory", "-o", "json", "-j", "2", "-v"], tmp_path)
    assert jobs.returncode == 0, jobs.stderr
    assert jobs.stderr == ("reclass: --jobs: 20 nodes are too few to gain from worker "
                           "processes (fewer than 200): rendering serially\n")
    strip = [json.loads(r.stdout) for r in (serial, jobs)]
    for data in strip:
        data["__reclass__"].pop("timestamp")
        for info in data["nodes"].values():
            info["__reclass__"].pop("timestamp")
    assert strip[0] == strip[1]
    quiet = reclass(["-b", str(base), "--inventory", "-o", "json", "-j", "2"], tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""  # said only with -v


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_one_usable_cpu_renders_serially_and_says_why(tmp_path: Path) -> None:
    base = write_inventory(tmp_path / "inv", nodes(5))
    result = reclass(["-b", str(base), "--inventory", "-j", "2", "-v"], tmp_path,
                     one_cpu=True, **{MIN_NODES_ENV: "0"})
    assert result.returncode == 0, result.stderr
    assert result.stderr == ("reclass: --jobs: only 1 CPU is usable (CPU affinity): "
                             "rendering serially\n")
    assert "n0004" in result.stdout


def test_worker_count() -> None:
    assert worker_count(1, 5000, (2, "CPU affinity")) == (1, None)
    assert worker_count(2, 2000, (2, "CPU affinity")) == (2, None)
    assert worker_count(4, 2000, (2, "CPU affinity")) == (
        2, "2 workers instead of 4: 2 usable CPUs (CPU affinity)")
    assert worker_count(4, 250, (8, "CPU affinity")) == (
        2, "2 workers instead of 4: 250 nodes (at least 100 a worker)")
    assert worker_count(2, 2000, (1, "cgroup CPU quota (x)"))[0] == 1


@pytest.mark.parametrize(("text", "cpus"), [("max 100000\n", None), ("150000 100000\n", 2),
                                            ("50000 100000\n", 1), ("junk", None), ("", None)])
def test_cgroup_quota(tmp_path: Path, text: str, cpus: int | None) -> None:
    path = tmp_path / "cpu.max"
    path.write_text(text)
    assert _cgroup_quota(str(path)) == cpus
    assert _cgroup_quota(str(tmp_path / "absent")) is None
