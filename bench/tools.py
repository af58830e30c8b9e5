#!/usr/bin/env python3
"""The tools and `--jobs` against a plain render, as ratios measured in the same run.

    python bench/tools.py --nodes 2000            # mcp shape, seed 1, in bench/.work/tools
    python bench/tools.py --nodes 2000 --compiled # reclass-ng as `pip install .` builds it

Each command runs as a whole process, `--repeat` times (default 3), the commands taking turns so
that a burst of load on a shared machine falls on all of them alike (each round starting one
command later, so that none always follows the same one); the least wall time and CPU time
(user + sys of it and its children, from wait4) of each are reported, and its largest peak
resident set, with the load average before and after (the machine is shared: compare ratios,
not seconds). Each ratio is given twice: of the least times, and as the median of the
rounds' own ratios (both sides of a round ran seconds apart). Measured:

* `reclass --inventory -o json` (the plain render the targets are relative to), and `-o yaml`
  (target: within 1.6x of JSON);
* `reclass-ng lint` (target: within 3x the plain render, under 500 MB);
* `reclass-ng diff` of the inventory and a copy with a shared class changed (target: within
  2.5x of rendering both);
* `--jobs 2` against one job, both formats (target on an idle 2-core machine: 1.6x faster).

Without `--compiled` the commands are those of the interpreter running this script (the
development venv's editable install: pure Python); with it, this checkout as `pip install .`
builds it where a C compiler is present (bench/.ng/venv, the hot modules compiled with Cython,
as bench/run.py and `real_inventories.py --compiled` measure it); it fails when nothing compiled.

Standard library only; see doc/performance.rst.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate  # noqa: E402
from implementations import compiled_python  # noqa: E402

BIN = Path(sys.executable).parent
TIMEOUT = 3600


def run(argv: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the process tree, peak RSS in MB) of one run.

    The clock runs from the start of the process to its end, waited for without polling (a
    poll every 50 ms added 25 ms on average to every wall time, which lowered the ratio of
    the shorter command, `--jobs 2`, the most), and starts once the output file is open
    (opening it for writing empties what the last command wrote there: on a machine whose
    /dev/null is a regular file, 136 MB of the last command's JSON, freed on the clock)."""
    import threading
    import time

    with open(os.devnull, "w") as sink:
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL)
        timer = threading.Timer(TIMEOUT, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if wall >= TIMEOUT:
        raise SystemExit(f"timed out: {argv}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss // 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / ".work" / "tools")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each command, taking turns; the minimum is reported")
    parser.add_argument("--compiled", action="store_true",
                        help="reclass-ng as `pip install .` of this checkout builds it "
                        "(bench/.ng/venv, the hot modules compiled)")
    args = parser.parse_args(argv)
    bin_dir = BIN
    if args.compiled:
        python, label = compiled_python(lambda message: print(message, file=sys.stderr))
        if python is None:
            print(f"compiled build: {label}", file=sys.stderr)
            return 1
        print(f"reclass-ng: {label}")
        bin_dir = python.parent
    base = args.work / f"mcp-{args.nodes}"
    changed = args.work / f"mcp-{args.nodes}-changed"
    if not base.is_dir():
        generate("mcp", args.nodes, args.seed, base)
    if changed.exists():
        shutil.rmtree(changed)
    shutil.copytree(base, changed)
    # a class with parameters (its last section, as the generator writes them) changed
    path = next(path for path in sorted((changed / "classes").rglob("*.yml"))
                if "\nparameters:\n" in "\n" + path.read_text())
    path.write_text(path.read_text() + "  bench_tools_change: 1\n")
    reclass, tool = str(bin_dir / "reclass"), str(bin_dir / "reclass-ng")
    print(f"load before: {os.getloadavg()}")
    commands = {}
    for fmt in ("json", "yaml"):
        for jobs in (1, 2):
            commands[f"render {fmt} --jobs {jobs}"] = [
                reclass, "-b", str(base), "--inventory", "-o", fmt, "-j", str(jobs)]
    commands["render json (changed copy)"] = [reclass, "-b", str(changed), "--inventory", "-o",
                                              "json"]
    commands["lint"] = [tool, "lint", "-b", str(base)]
    commands["diff"] = [tool, "diff", "-b", str(changed), "--from-dir", str(base)]
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in commands}
    names = list(commands)
    for round_number in range(max(args.repeat, 1)):
        # Each round starts one command later: what a command follows changes its time (a
        # `-o yaml` run right after a `--jobs 2` run, whose processes just freed 140 MB of
        # texts, took 5-10% more CPU than after a one-job run), so no command always follows
        # the same one.
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            runs[name].append(run(commands[name]))
    # times: the minimum, what the command costs when nothing else gets in its way; memory:
    # the largest peak
    rows = {name: (min(wall for wall, _, _ in figures), min(cpu for _, cpu, _ in figures),
                   max(rss for _, _, rss in figures)) for name, figures in runs.items()}
    print(f"load after: {os.getloadavg()}; {max(args.repeat, 1)} runs of each command: "
          "the least wall and CPU time, the largest peak")
    plain = rows["render json --jobs 1"][1]
    both = plain + rows["render json (changed copy)"][1]
    for name, (wall, cpu, rss) in rows.items():
        print(f"{name:30} wall {wall:7.2f} s  cpu {cpu:7.2f} s  peak {rss:5d} MB")
    # Each ratio also as the median of the rounds' own: the runs of a round are seconds
    # apart, so a slow (or fast) spell of the shared machine weighs on both sides alike,
    # where the least of each may come from different spells (one run's least `-o json`
    # was 1.12 s against 1.28 s for its changed copy, the same work).
    def rounds(numerator: Callable[[int], float], denominator: Callable[[int], float]
               ) -> float:
        ratios = sorted(numerator(index) / denominator(index)
                        for index in range(max(args.repeat, 1)))
        return ratios[len(ratios) // 2]

    def cpu(name: str) -> Callable[[int], float]:
        return lambda index: runs[name][index][1]

    def wall(name: str) -> Callable[[int], float]:
        return lambda index: runs[name][index][0]

    def rendering_both(index: int) -> float:
        return cpu("render json --jobs 1")(index) + cpu("render json (changed copy)")(index)

    print(f"YAML / JSON: {rows['render yaml --jobs 1'][1] / plain:.2f}x CPU, median of the "
          f"rounds {rounds(cpu('render yaml --jobs 1'), cpu('render json --jobs 1')):.2f}x "
          "(target <= 1.6)")
    print(f"lint / render: {rows['lint'][1] / plain:.2f}x CPU, median of the rounds "
          f"{rounds(cpu('lint'), cpu('render json --jobs 1')):.2f}x (target <= 3)")
    print(f"diff / rendering both: {rows['diff'][1] / both:.2f}x CPU, median of the rounds "
          f"{rounds(cpu('diff'), rendering_both):.2f}x (target <= 2.5)")
    for fmt in ("json", "yaml"):
        one, two = rows[f"render {fmt} --jobs 1"], rows[f"render {fmt} --jobs 2"]
        faster = rounds(wall(f"render {fmt} --jobs 1"), wall(f"render {fmt} --jobs 2"))
        print(f"--jobs 2 {fmt}: wall {one[0] / two[0]:.2f}x faster, median of the rounds "
              f"{faster:.2f}x, CPU {two[1] / one[1]:.2f}x of one job (target: 1.6x faster on "
              "an idle 2-core machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
