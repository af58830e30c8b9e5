#!/usr/bin/env python3
"""What provenance recording costs: `Inventory.provenance(node)` against a plain
`Inventory.nodeinfo(node)`, on the same nodes of one generated inventory, in one run.

    python bench/provenance_cost.py [--nodes 500] [--shape mcp] [--rounds 5] [--profile]
                                    [--engine DIR]

Both are measured warm (every node rendered once each way first, so files are parsed and
classes loaded), as CPU time of this process (`time.process_time`), alternating plain and
recorded passes over all nodes, the best pass of each kept: the ratio holds on a shared
machine. doc/explain.rst quotes the figure (the goal: at most 2x). The time the cycle
collector took in the kept passes is reported beside (`gc.callbacks`): objects a recorded
render keeps until it ends survive into older generations, and the collector's passes over
them were the larger part of what recording cost. `--profile` prints a
cProfile of one recorded pass instead. `--engine DIR` measures the reclass_ng package found in
DIR (e.g. an export of another commit: `git archive main reclass_ng | tar -x -C DIR`), so two
versions can be compared back to back.

Standard library and reclass_ng only; the inventory comes from bench/generate.py.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from generate import generate  # noqa: E402


class CollectorTime:
    """CPU seconds the cycle collector spent since `reset` (told through gc.callbacks)."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._started = 0.0
        gc.callbacks.append(self._told)

    def _told(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.spent += time.process_time() - self._started

    def reset(self) -> None:
        self.spent = 0.0


def timed_pass(render, names: list[str], collector: CollectorTime | None = None
               ) -> tuple[float, float]:
    """CPU seconds to call `render(name)` for every name, and the collector's part of it."""
    if collector is not None:
        collector.reset()
    start = time.process_time()
    for name in names:
        render(name)
    return time.process_time() - start, collector.spent if collector is not None else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--shape", choices=("mcp", "kapitan"), default="mcp")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5, help="passes of each kind (best kept)")
    parser.add_argument("--inventory", type=Path, help="use this generated inventory (made "
                        "there when absent) instead of a temporary one")
    parser.add_argument("--profile", action="store_true",
                        help="print a cProfile of one recorded pass instead")
    parser.add_argument("--engine", type=Path, help="directory holding the reclass_ng package "
                        "to measure (default: the installed one)")
    args = parser.parse_args(argv)

    if args.engine:
        sys.path.insert(0, str(args.engine.resolve()))
    import reclass_ng

    with tempfile.TemporaryDirectory() as scratch:
        base = args.inventory or Path(scratch) / "inventory"
        if not (base / "bench-inventory.json").exists():
            generate(args.shape, args.nodes, args.seed, base)
        inventory = reclass_ng.load(str(base))
        names = inventory.node_names
        # Warm: parsed files, loaded classes, key positions of every file.
        timed_pass(inventory.nodeinfo, names)
        timed_pass(inventory.provenance, names)
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            timed_pass(inventory.provenance, names)
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(25)
            return 0
        plain, recorded = [], []
        collector = CollectorTime()
        for _ in range(args.rounds):
            plain.append(timed_pass(inventory.nodeinfo, names, collector))
            recorded.append(timed_pass(inventory.provenance, names, collector))
    best_plain, best_recorded = min(plain), min(recorded)
    print(json.dumps({"engine": str(Path(reclass_ng.__file__).parent), "shape": args.shape,
                      "nodes": len(names), "rounds": args.rounds,
                      "nodeinfo_cpu_s": round(best_plain[0], 3),
                      "provenance_cpu_s": round(best_recorded[0], 3),
                      "ratio": round(best_recorded[0] / best_plain[0], 2),
                      "nodeinfo_collector_s": round(best_plain[1], 3),
                      "provenance_collector_s": round(best_recorded[1], 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
