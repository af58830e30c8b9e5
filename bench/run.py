#!/usr/bin/env python3
"""Benchmark reclass-ng against kapicorp-reclass 2.0.0 and reclass-rs, side by side.

    python bench/run.py                 # mcp and kapitan shapes, 100/500/2000 nodes
    python bench/run.py --with-5000 --queries also --jobs 2,4 --out results.md

For every inventory it first renders the whole inventory with each
implementation and checks that the outputs are identical, then measures:
full-inventory wall time of the whole process (median of several runs),
per-node time, ``--nodeinfo`` latency of a fresh process, peak RSS, and the
YAML-parse floor. Results are printed as markdown tables and written to
``--out`` (default bench/.work/results.md) with raw samples next to it as JSON.
The peers are installed from PyPI into bench/.peers/venv on first use.
Standard library only; see doc/performance.rst.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import compare_outputs, load_json  # noqa: E402
from generate import GENERATOR_VERSION, YAML_1_1_SHAPES, generate  # noqa: E402
from implementations import BENCH_DIR, Environment, Implementation, discover  # noqa: E402
from inventory_files import MARKER  # noqa: E402
from measure import describe_failure, run_measured  # noqa: E402
from report import CaseResult, ImplResult, case_table, targets_section  # noqa: E402
from rst import markdown_to_rst, update_document  # noqa: E402
from targets import evaluate_targets  # noqa: E402

RS_INVENTORY = BENCH_DIR.parent / "tests" / "conformance" / "model-reclass-rs-inventory"
# Differences of reclass-rs on its own test inventory that reclass-semantics.md §9.1 documents.
RS_KNOWN_DIFFERENCES = {
    "n12": "application negation semantics (§2.4, kapicorp PR #9)",
    "n22": "dicts/lists embedded in strings are rendered as JSON (§4.4)",
}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def prepare_generated(work: Path, shape: str, nodes: int, seed: int,
                      queries: bool) -> tuple[Path, dict]:
    """Generate (or reuse) an inventory; returns its directory and metadata."""
    name = f"{shape}-{nodes}-s{seed}" + ("-queries" if queries else "")
    target = work / "inventories" / name
    marker = target / MARKER
    if marker.is_file():
        metadata = json.loads(marker.read_text())
        wanted = {"generator_version": GENERATOR_VERSION, "shape": shape, "nodes": nodes,
                  "seed": seed, "queries": queries}
        if all(metadata.get(key) == value for key, value in wanted.items()):
            return target, metadata
    log(f"generating {name}")
    return target, generate(shape, nodes, seed, target, queries)


def prepare_rs_inventory(work: Path) -> Path | None:
    """Copy reclass-rs's test inventory and give kapicorp-reclass its config file name."""
    source = RS_INVENTORY / "inventory"
    if not source.is_dir():
        return None
    target = work / "inventories" / "reclass-rs-inventory"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, symlinks=True)
    config = target / "reclass-config.yml"
    if config.is_file():
        shutil.copyfile(config, target / "kapicorp-reclass-config.yml")
    return target


def pick_nodeinfo_node(inventory: Path, nodes_dir: str) -> str:
    """A node in the middle of the sorted names that uses no inventory queries."""
    names = []
    for root, _dirs, files in os.walk(inventory / nodes_dir):
        for file_name in files:
            if file_name.endswith((".yml", ".yaml")):
                text = (Path(root) / file_name).read_text(encoding="utf-8")
                if "$[" not in text:
                    names.append(file_name.rsplit(".", 1)[0])
    names.sort()
    return names[len(names) // 2]


class Bench:
    """Runs the implementations over inventories and collects results."""

    def __init__(self, args: argparse.Namespace, env: Environment) -> None:
        self.args = args
        self.env = env
        self.outputs = args.work / "outputs"
        self.per_node: dict[tuple[str, str], float] = {}  # (family, impl) -> seconds per node

    def run_case(self, case: CaseResult, inventory: Path, family: str, queries: bool,
                 known: dict[str, str] | None = None) -> CaseResult:
        outputs = self.outputs / inventory.name
        outputs.mkdir(parents=True, exist_ok=True)
        case.floor_seconds, case.floor_cpu_seconds = self.floor(inventory)
        for impl in self.env.implementations:
            result = ImplResult(impl.key, impl.label)
            case.impls.append(result)
            if queries and not impl.queries:
                result.skipped = "no inventory queries support"
                continue
            if impl.key == "rs" and family.split("-queries")[0] in YAML_1_1_SHAPES:
                result.skipped = "YAML 1.1 merge keys (reclass-rs reads YAML 1.2)"
                continue
            predicted = self.per_node.get((family, impl.key), 0.0) * case.nodes
            option, budget = ("--reference-budget", self.args.reference_budget) \
                if impl.key == "kapicorp" else ("--budget", self.args.budget)
            if predicted > budget:
                result.skipped = f"skipped: ~{predicted:.0f} s predicted > {option} {budget:.0f}"
                log(f"{case.title}: {impl.label} {result.skipped}")
                continue
            self.first_run(impl, result, inventory, outputs / f"{impl.key}.json")
        self.check(case, outputs, known or {})
        for impl, result in zip(self.env.implementations, case.impls, strict=True):
            if result.measured:
                self.repeat(impl, result, inventory, outputs / f"{impl.key}.json")
                self.per_node[(family, impl.key)] = result.full.median_seconds / case.nodes
                if impl.nodeinfo:
                    self.nodeinfo(impl, result, inventory, case.node)
        for path in [*outputs.glob("*.json"), *outputs.glob("*.stdout")]:
            path.unlink()   # outputs of big inventories take gigabytes; the check is done
        return case

    def full_command(self, impl: Implementation, inventory: Path, output: Path) -> list[str]:
        return impl.command(impl.full, inventory=str(inventory), output=str(output))

    def timed_full_run(self, impl: Implementation, result: ImplResult, inventory: Path,
                       output: Path) -> bool:
        command = self.full_command(impl, inventory, output)
        stdout = output if impl.stdout_is_output else output.with_suffix(".stdout")
        sample = run_measured(command, cwd=inventory, stdout=stdout, timeout=self.args.timeout)
        if not sample.ok:
            result.failed = describe_failure(sample)
            return False
        result.full.add(sample)
        if not impl.stdout_is_output:
            line = stdout.read_text().strip().splitlines()[-1:]
            if line:
                result.render_seconds.append(json.loads(line[0])["render_seconds"])
        return True

    def first_run(self, impl: Implementation, result: ImplResult, inventory: Path,
                  output: Path) -> None:
        log(f"{inventory.name}: {impl.label}: full render (checked run)")
        if not self.timed_full_run(impl, result, inventory, output):
            if "--jobs" in impl.full and result.failed.startswith("exit 2") \
                    and "jobs" in result.failed:
                result.skipped, result.failed = "--jobs not supported by this reclass-ng", ""
            log(f"{inventory.name}: {impl.label}: {result.skipped or result.failed}")

    def repeat(self, impl: Implementation, result: ImplResult, inventory: Path,
               output: Path) -> None:
        while len(result.full.runs) < self.args.repeat \
                and result.full.median_seconds <= self.args.repeat_limit:
            if not self.timed_full_run(impl, result, inventory, output):
                break

    def nodeinfo(self, impl: Implementation, result: ImplResult, inventory: Path,
                 node: str) -> None:
        command = impl.command(impl.nodeinfo or [], inventory=str(inventory), node=node)
        for _ in range(self.args.nodeinfo_runs):
            sample = run_measured(command, cwd=inventory, timeout=self.args.timeout)
            if not sample.ok:
                log(f"{inventory.name}: {impl.label} --nodeinfo {node}: {describe_failure(sample)}")
                result.nodeinfo.runs.clear()
                return
            result.nodeinfo.add(sample)

    def check(self, case: CaseResult, outputs: Path, known: dict[str, str]) -> None:
        """Compare every output with the reference (kapicorp-reclass, else reclass-rs)."""
        measured = [r for r in case.impls if r.measured]
        reference = next((r for r in measured if r.key == "kapicorp"), None) \
            or next((r for r in measured if r.key == "rs"), None)
        if reference is None:
            return
        case.reference = reference.key
        expected = self.load_output(outputs / f"{reference.key}.json")
        for result in measured:
            if result is reference:
                continue
            shown, nodes = compare_outputs(expected,
                                           self.load_output(outputs / f"{result.key}.json"))
            documented = {n: known[n] for n in nodes if n in known}
            if result.key == "rs" and nodes and len(documented) == len(nodes):
                result.known_differences = documented
            elif shown:
                result.mismatch, result.mismatch_nodes = shown, nodes
                log(f"{case.title}: MISMATCH {result.label}: {shown[0]}")

    def load_output(self, path: Path) -> dict:
        if self.args.format == "json":
            return load_json(path)
        # YAML is read by the peers' interpreter (the runner needs no PyYAML of its own).
        converted = path.with_suffix(".from-yaml")
        subprocess.run([str(self.env.peer_python), "-c", _YAML_TO_JSON, str(path),
                        str(converted)], check=True)
        try:
            return load_json(converted)
        finally:
            converted.unlink()

    def floor(self, inventory: Path) -> tuple[float | None, float | None]:
        """(wall, CPU) seconds PyYAML's C loader needs to load every file once."""
        script = BENCH_DIR / "yaml_floor.py"
        sample = run_measured([str(self.env.peer_python), str(script), str(inventory)],
                              cwd=inventory, stdout=inventory.parent / f".{inventory.name}.floor")
        floor_file = inventory.parent / f".{inventory.name}.floor"
        text = floor_file.read_text() if floor_file.exists() else ""
        floor_file.unlink(missing_ok=True)
        if not sample.ok:
            log(f"YAML floor failed: {describe_failure(sample)}")
            return None, None
        figures = json.loads(text)
        return figures["seconds"], figures["cpu_seconds"]


_YAML_TO_JSON = ("import json, sys, yaml\n"
                 "data = yaml.load(open(sys.argv[1], 'rb'), Loader=yaml.CSafeLoader)\n"
                 "json.dump(data, open(sys.argv[2], 'w'), default=str)\n")


def configure_rows(env: Environment, extra: list[str], fmt: str) -> None:
    """Add the `--also-reclass-ng` rows; for `--format yaml`, make the command-line rows
    print YAML and leave out the rows that write JSON themselves."""
    at = next((i for i, impl in enumerate(env.implementations) if impl.peer),
              len(env.implementations))
    for entry in extra:
        label, _, path = entry.partition("=")
        if not path:
            label, path = Path(entry).parent.parent.name, entry
        env.implementations.insert(at, Implementation(
            f"ng-{label}", f"reclass-ng CLI ({label})",
            [path, "-b", "{inventory}", "--inventory", "-o", "json"],
            [path, "-b", "{inventory}", "--nodeinfo", "{node}", "-o", "json"], True))
        at += 1
    if fmt == "yaml":
        env.implementations = [
            Implementation(impl.key, impl.label, _with_format(impl.full, fmt),
                           _with_format(impl.nodeinfo, fmt), True, impl.queries, impl.peer,
                           impl.note)
            for impl in env.implementations if impl.stdout_is_output]


def _with_format(command: list[str] | None, fmt: str) -> list[str] | None:
    if command is None:
        return None
    return [fmt if part == "json" and command[i - 1] == "-o" else part
            for i, part in enumerate(command)]


def describe_generated(metadata: dict) -> str:
    stats = metadata["stats"]
    per_node = stats["classes_per_node"]
    text = (f"Generated: `bench/generate.py --shape {metadata['shape']} "
            f"--nodes {metadata['nodes']} "
            f"--seed {metadata['seed']}{' --queries' if metadata['queries'] else ''}`; "
            f"{stats['classes']} classes, {per_node['min']}-{per_node['max']} classes per node "
            f"(median {per_node['median']:g}), include depth {stats['max_include_depth']}, "
            f"{stats['leaf_values']} leaf values in the files, "
            f"{stats['reference_share']:.0%} of them references")
    if metadata["queries"]:
        text += f", {stats['querying_nodes']} nodes with inventory queries"
    return text + "."


def machine_header(env: Environment, started: float, load_before: tuple) -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = ", ".join(f"{k} {v}" for k, v in sorted(env.versions.items()))
    lines = [
        f"Run of {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}, "
        f"{time.time() - started:.0f} s in total. {os.cpu_count()} CPUs ({cpu}), "
        f"Python {platform.python_version()}, load average {load_before[0]:.2f} at the start "
        f"and {os.getloadavg()[0]:.2f} at the end.",
        f"Versions: {versions}.",
    ]
    for name, reason in env.unavailable.items():
        lines.append(f"{name}: not measured ({reason}).")
    commands = ["Commands of the full render (the latency runs use `--nodeinfo NODE` instead of "
                "`--inventory` or `--output`):", ""]
    for impl in env.implementations:
        shown = " ".join(impl.full).replace(str(BENCH_DIR.parent) + "/", "")
        shown = shown.replace(str(Path.home()), "~")
        note = f" ({impl.note})" if impl.note else ""
        commands.append(f"- {impl.label}: `{shown}`{note}")
    lines.append("\n".join(commands))
    return "\n\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="mcp,kapitan", help="comma-separated (mcp,mcp-real,kapitan)")
    parser.add_argument("--sizes", default="100,500,2000", help="comma-separated node counts")
    parser.add_argument("--with-5000", action="store_true", help="add the 5000-node size")
    parser.add_argument("--queries", choices=("no", "also", "only"), default="no",
                        help="inventories with exports and queries too, or only those "
                             "(reclass-rs supports neither)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", default="2",
                        help="comma-separated --jobs values for extra reclass-ng rows "
                             "('' for none)")
    parser.add_argument("--repeat", type=int, default=3, help="full renders per implementation")
    parser.add_argument("--repeat-limit", type=float, default=20.0,
                        help="no further full renders once one takes longer than this (s)")
    parser.add_argument("--nodeinfo-runs", type=int, default=5)
    parser.add_argument("--budget", type=float, default=120.0,
                        help="skip a full render predicted (per node, from the previous size) "
                             "to take longer than this many seconds")
    parser.add_argument("--reference-budget", type=float, default=600.0,
                        help="the same for kapicorp-reclass, the reference of the output check "
                             "and of the speed targets")
    parser.add_argument("--timeout", type=float, default=1800.0, help="per process (s)")
    parser.add_argument("--no-rs-inventory", action="store_true",
                        help="skip reclass-rs's own test inventory")
    parser.add_argument("--reclass-ng", help="path of reclass-ng's reclass script")
    parser.add_argument("--also-reclass-ng", action="append", default=[], metavar="LABEL=PATH",
                        help="another reclass-ng reclass script to measure as a CLI row "
                             "labelled LABEL (e.g. pure=/tmp/pure/bin/reclass); repeatable")
    parser.add_argument("--skip", default="", metavar="KEYS",
                        help="comma-separated rows to leave out: ng-cli, ng-api, rs (reclass-rs "
                             "takes minutes at 2,000 nodes); kapicorp is the reference")
    parser.add_argument("--format", choices=("json", "yaml"), default="json",
                        help="output format of the command-line rows (yaml: the API and "
                             "reclass-rs rows, which write JSON, are left out)")
    parser.add_argument("--work", type=Path, default=BENCH_DIR / ".work")
    parser.add_argument("--out", type=Path, help="markdown report (default WORK/results.md)")
    parser.add_argument("--update-doc", type=Path, metavar="RST",
                        help="also replace the results section of this document "
                             "(doc/performance.rst)")
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.with_5000 and 5000 not in args.sizes:
        args.sizes.append(5000)
    args.shapes = [s for s in args.shapes.split(",") if s]
    args.jobs = [int(j) for j in args.jobs.split(",") if j]
    args.work = args.work.resolve()
    args.out = (args.out or args.work / "results.md").resolve()
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started, load_before = time.time(), os.getloadavg()
    args.work.mkdir(parents=True, exist_ok=True)
    try:
        env = discover(args.reclass_ng, args.jobs, log)
    except (OSError, subprocess.CalledProcessError) as error:
        log(f"cannot set up the peers in bench/.peers/venv (is PyPI reachable?): {error}")
        return 1
    for name, reason in env.unavailable.items():
        log(f"{name} not available: {reason}")
    configure_rows(env, args.also_reclass_ng, args.format)
    skipped = {key for key in args.skip.split(",") if key and key != "kapicorp"}
    env.implementations = [impl for impl in env.implementations if impl.key not in skipped]
    bench = Bench(args, env)
    cases: list[tuple[dict, CaseResult]] = []
    variants = {"no": [False], "also": [False, True], "only": [True]}[args.queries]
    for queries in variants:
        for shape in args.shapes:
            for size in sorted(args.sizes):
                inventory, metadata = prepare_generated(args.work, shape, size, args.seed, queries)
                title = f"{shape}, {size} nodes" + (", with queries" if queries else "")
                case = CaseResult(title, size, describe_generated(metadata),
                                  pick_nodeinfo_node(inventory, metadata["nodes_uri"]))
                family = shape + ("-queries" if queries else "")
                cases.append((metadata, bench.run_case(case, inventory, family, queries)))
                print(case_table(case), flush=True)
    if not args.no_rs_inventory:
        inventory = prepare_rs_inventory(args.work)
        if inventory is None:
            log(f"{RS_INVENTORY} not found; skipping reclass-rs's test inventory")
        else:
            count = sum(1 for p in (inventory / "nodes").rglob("*.yml"))
            case = CaseResult("reclass-rs test inventory", count,
                              "The reclass-rs project's tests/inventory with its "
                              "reclass-config.yml "
                              f"(conformance scenario `{RS_INVENTORY.name}`).", "n1")
            cases.append(({"shape": "rs-inventory", "nodes": count, "queries": False},
                          bench.run_case(case, inventory, "rs-inventory", False,
                                         RS_KNOWN_DIFFERENCES)))
            print(case_table(case), flush=True)
    sections = ["## Results", "", machine_header(env, started, load_before)]
    sections += [case_table(case) for _, case in cases]
    sections.append(targets_section(evaluate_targets(cases)))
    text = "\n".join(sections)
    write_atomic(args.out, text)
    raw = [{"metadata": meta, "case": asdict(case)} for meta, case in cases]
    write_atomic(args.out.with_suffix(".json"), json.dumps(raw, indent=1, default=str))
    print(targets_section(evaluate_targets(cases)))
    log(f"report written to {args.out}")
    if args.update_doc:
        update_document(args.update_doc, markdown_to_rst(text))
        log(f"results section of {args.update_doc} updated")
    mismatches = [r for _, c in cases for r in c.impls if r.mismatch]
    return 1 if mismatches else 0


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


if __name__ == "__main__":
    sys.exit(main())
