#!/usr/bin/env python3
"""Small inventories, where start-up is the cost: reclass-ng against kapicorp-reclass 2.0.0
and reclass-rs, whole processes, side by side.

    python bench/small.py                        # the model-* scenarios of the corpus
    python bench/small.py --runs 9 --generated 20,100,5000 --out small.md

For each inventory (the corpus scenarios copied from the kapicorp/reclass and reclass-rs test
suites that render without error, and optionally generated MCP-shaped inventories for the
growth of `--nodeinfo` with the inventory's size) it runs `--inventory -o json` and
`--nodeinfo NODE -o json` of each implementation in turn, A B C A B C ..., so that drift of
a loaded machine hits all alike, and prints the median CPU time (user + system, the figure
least disturbed by other processes) and wall time of each, and the ratios. reclass-rs has no
command line: its row is a fresh Python process calling its API, as bench/run.py does.
reclass-ng runs from bench/.ng/venv (a `pip install .` of this checkout, as a user installs
it). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate  # noqa: E402
from implementations import BENCH_DIR, discover  # noqa: E402
from measure import describe_failure, run_measured  # noqa: E402

CORPUS = BENCH_DIR.parent / "tests" / "conformance"
# The corpus's copies of the reclass-rs and kapicorp/reclass test inventories.
MODEL_PREFIXES = ("model-reclass-rs-", "model-kapicorp-")


def corpus_inventories() -> list[tuple[str, Path, list[str], str, tuple[str, ...]]]:
    """(label, inventory, extra options, a node, modes) of each model scenario that renders
    (a `--nodeinfo` scenario's inventory may hold nodes that fail: that mode only)."""
    found = []
    for scenario in sorted(CORPUS.glob("model-*/scenario.json")):
        spec = json.loads(scenario.read_text())
        if spec.get("expect") != "ok" or not spec["name"].startswith(MODEL_PREFIXES):
            continue
        inventory = scenario.parent / "inventory"
        node = spec.get("node") or _first_node(inventory, spec.get("args", []))
        modes = ("inventory", "nodeinfo") if spec["mode"] == "inventory" else ("nodeinfo",)
        if node:
            found.append((spec["name"], inventory, list(spec.get("args", [])), node, modes))
    return found


def _first_node(inventory: Path, args: list[str]) -> str | None:
    nodes = sorted(p for p in (inventory / "nodes").rglob("*") if p.suffix in (".yml", ".yaml"))
    if not nodes:
        return None
    parts = nodes[0].relative_to(inventory / "nodes").with_suffix("").parts
    if "-a" in args and not parts[0].startswith("_"):  # compose_node_name (spec 1.4)
        return ".".join(parts)
    return parts[-1]


def generated_inventories(sizes: list[int], work: Path
                          ) -> list[tuple[str, Path, list[str], str, tuple[str, ...]]]:
    found = []
    for size in sizes:
        out = work / f"mcp-{size}"
        if not (out / "bench-inventory.json").exists():
            generate("mcp", size, 1, out)
        node = sorted(p.stem for p in (out / "nodes").rglob("*.yml"))[0]
        found.append((f"generated mcp, {size} nodes", out, [], node, ("nodeinfo",)))
    return found


def measure(commands: dict[str, list[str]], cwd: Path, runs: int) -> dict[str, dict]:
    """Median CPU and wall seconds of each command, run in turn `runs` times after a warm-up."""
    samples: dict[str, list] = {key: [] for key in commands}
    for round_ in range(runs + 1):
        for key, command in list(commands.items()):
            sample = run_measured(command, cwd)
            if not sample.ok:  # a peer that cannot render this inventory: left out
                print(f"{' '.join(command)}: {describe_failure(sample)}", file=sys.stderr)
                del commands[key], samples[key]
            elif round_:
                samples[key].append(sample)
    return {key: {"cpu": statistics.median(s.cpu_seconds for s in got),
                  "wall": statistics.median(s.seconds for s in got)}
            for key, got in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="counted runs of each command")
    parser.add_argument("--generated", default="",
                        help="comma-separated sizes of generated MCP inventories to add")
    parser.add_argument("--only", default="", help="substring of the inventories to run")
    parser.add_argument("--reclass-ng", help="path of reclass-ng's reclass script")
    parser.add_argument("--baseline", metavar="PATH",
                        help="another reclass-ng reclass script (e.g. an install of main) to "
                             "measure in the same turns: its CPU time and baseline / ng")
    parser.add_argument("--work", type=Path, default=BENCH_DIR / ".work")
    parser.add_argument("--out", type=Path, help="also write the table here (markdown)")
    args = parser.parse_args(argv)
    env = discover(args.reclass_ng, [], lambda message: print(message, file=sys.stderr))
    impls = {impl.key: impl for impl in env.implementations
             if impl.key in ("ng-cli", "kapicorp", "rs")}
    if "ng-cli" not in impls:
        print(f"reclass-ng not available: {env.unavailable}", file=sys.stderr)
        return 1
    if args.baseline:
        ng = impls["ng-cli"]
        impls["baseline"] = type(ng)("baseline", "baseline", [args.baseline, *ng.full[1:]],
                                     [args.baseline, *ng.nodeinfo[1:]], True)
    inventories = corpus_inventories()
    sizes = [int(size) for size in args.generated.split(",") if size]
    inventories += generated_inventories(sizes, args.work)
    inventories = [entry for entry in inventories if args.only in entry[0]]
    shown = ("ng-cli", "kapicorp", "rs") + (("baseline",) if args.baseline else ())
    titles = {"ng-cli": "reclass-ng", "kapicorp": "kapicorp", "rs": "reclass-rs",
              "baseline": "baseline"}
    lines = ["| inventory | mode | " + " | ".join(f"{titles[key]} cpu ms" for key in shown)
             + " | " + " | ".join(f"{titles[key]} / ng" for key in shown[1:])
             + " | ng wall ms |",
             "|---" * (2 * len(shown) + 2) + "|"]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-small-") as scratch:
        for label, inventory, extra, node, modes in inventories:
            for mode in modes:
                commands = {}
                for key, impl in impls.items():
                    template = impl.full if mode == "inventory" else impl.nodeinfo
                    if template is None:
                        continue
                    command = impl.command(template, inventory=str(inventory), node=node,
                                           output=str(Path(scratch) / f"{key}.json"))
                    if key != "rs":
                        command[3:3] = extra  # after `-b DIR`
                    elif extra:
                        continue  # options reclass-rs reads from reclass-config.yml only
                    commands[key] = command
                result = measure(commands, inventory, args.runs)
                if "ng-cli" not in result:
                    print(f"| {label} | {mode} | reclass-ng failed |", flush=True)
                    continue
                ng = result["ng-cli"]["cpu"]
                cells = [f"{result[key]['cpu'] * 1000:.1f}" if key in result else "-"
                         for key in shown]
                ratios = [f"{result[key]['cpu'] / ng:.2f}x" if key in result else "-"
                          for key in shown[1:]]
                row = (f"| {label} | {mode} | {' | '.join(cells)} | {' | '.join(ratios)} "
                       f"| {result['ng-cli']['wall'] * 1000:.1f} |")
                lines.append(row)
                print(row, flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
