#!/usr/bin/env python3
"""The YAML-parse floor: time for PyYAML's C loader to load every file once.

No reclass implementation that reads the files with a YAML parser can be
faster than this. Prints one JSON line with the median wall and CPU seconds
of ``--runs`` loads, the file count and the number of runs.

    yaml_floor.py DIR [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import yaml


def inventory_files(base: str) -> list[str]:
    """Every .yml/.yaml file under the inventory (nodes and classes)."""
    found = []
    for root, _dirs, names in os.walk(base):
        found.extend(os.path.join(root, n) for n in names if n.endswith((".yml", ".yaml")))
    return sorted(found)


def load_all(paths: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) to load every file once."""
    started, cpu_started = time.perf_counter(), time.process_time()
    for path in paths:
        with open(path, "rb") as handle:
            yaml.load(handle, Loader=yaml.CSafeLoader)
    return time.perf_counter() - started, time.process_time() - cpu_started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("inventory")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not getattr(yaml, "__with_libyaml__", False):
        print("PyYAML has no libyaml (CSafeLoader) in this interpreter", file=sys.stderr)
        return 1
    paths = [p for p in inventory_files(args.inventory)
             if os.path.basename(p) not in ("reclass-config.yml", "kapicorp-reclass-config.yml")]
    times = [load_all(paths) for _ in range(args.runs)]
    print(json.dumps({
        "seconds": statistics.median(wall for wall, _ in times),
        "cpu_seconds": statistics.median(cpu for _, cpu in times),
        "files": len(paths),
        "runs": args.runs,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
