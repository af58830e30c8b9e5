#!/usr/bin/env python3
"""Benchmark of incremental rendering (doc/incremental.rst): repeated renders, one run.

    python bench/incremental.py [--nodes 2000] [--kapicorp-calls 20] [--rebuild-calls 100]

Measures CPU time (user + system, of the measured process only), so that the ratios hold on a
shared machine; prints the load average before and after. All figures come from one run:

1. Salt: successive `ext_pillar` calls, one per minion, in one process: reclass-ng's adapter
   (live inventories, every call; three passes as three pillar refreshes: a fresh process,
   nothing changed, one class used by ~5% of the nodes changed), reclass-ng rebuilding the
   inventory per call (what it did before) and kapicorp-reclass 2.0.0's adapter (from
   bench/.peers, installed on first use).
   The two rebuilding ones are measured on the first N minions (they take the same time for
   every minion) and their per-call time is multiplied out to all minions; said so in the output.
   Then with `cache_dir` set: the first pass of a process (which stores every node's result)
   and the first pass of a second process (a restarted master, served from the stored results).
2. `reclass --inventory --cache-dir`: a cold run without cache, the run that fills the cache,
   a run with nothing changed, a run after changing one class used by about 5% of the nodes.
3. `Inventory.nodeinfo(name)` on a warm live inventory with nothing changed, with and without
   the per-call check (`refresh(name)`) an adapter makes.

Each is measured for two builds of reclass-ng, each row labelled: "pure" (the editable .venv of
this checkout, always pure Python) and "compiled" (`pip install .` of this checkout into
bench/.ng/venv, as bench/run.py installs it, which compiles the hot modules where a C compiler
is present; reported as missing when nothing was compiled). Every reclass-ng ratio is taken
against rows of the same build in the same run; kapicorp's row is shared.

Standard library only (the generator, the peers' venv and reclass-ng's own venv).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from generate import generate  # noqa: E402
from implementations import compiled_python, ensure_peers  # noqa: E402

NG_PYTHON = BENCH_DIR.parent / ".venv" / "bin" / "python"

def builds(log) -> list[tuple[str, Path]]:
    """(label, python) of the builds to measure: pure always, compiled when it compiled."""
    found = [("pure", NG_PYTHON)]
    python, label = compiled_python(log)
    if python is None:
        log(f"compiled build: not measured ({label})")
        return found
    return [*found, (label, python)]

# Each measured body runs in its own process and prints {"cpu": seconds, ...} as JSON.
NG_LIVE_PILLAR = """
import json, sys, time
from reclass_ng.adapters import salt
base, names, changed, key = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
def one_pass():
    start = time.process_time()
    for name in names:
        salt.ext_pillar(name, {}, inventory_base_uri=base)
    return time.process_time() - start
passes = {"cold": one_pass(), "warm": one_pass()}
with open(changed) as stream:
    text = stream.read()
with open(changed, "w") as stream:
    stream.write(text.replace("parameters:", "parameters:\\n  " + key + ": 1", 1))
passes["one class changed"] = one_pass()
print(json.dumps({"passes": passes, "calls": len(names)}))
"""

# One pass with `cache_dir` set (doc/incremental.rst): the first run stores every node's
# result, the second is a restarted master served from it.
NG_CACHED_PILLAR = """
import json, sys, time
from reclass_ng.adapters import salt
base, names, cache = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
start = time.process_time()
for name in names:
    salt.ext_pillar(name, {}, inventory_base_uri=base, cache_dir=cache)
print(json.dumps({"cpu": time.process_time() - start, "calls": len(names)}))
"""

NG_REBUILD_PILLAR = """
import json, sys, time
from reclass_ng.adapters import salt
from reclass_ng.adapters.inventory_source import open_inventory
base, names = sys.argv[1], json.loads(sys.argv[2])
start = time.process_time()
for name in names:
    salt.pillar_data(open_inventory(base).nodeinfo(name))
print(json.dumps({"cpu": time.process_time() - start, "calls": len(names)}))
"""

KAPICORP_PILLAR = """
import json, sys, time
from reclass.adapters.salt import ext_pillar
base, names = sys.argv[1], json.loads(sys.argv[2])
start = time.process_time()
for name in names:
    ext_pillar(name, {}, inventory_base_uri=base)
print(json.dumps({"cpu": time.process_time() - start, "calls": len(names)}))
"""

NG_WARM_NODEINFO = """
import json, sys, time
import reclass_ng
base = sys.argv[1]
inventory = reclass_ng.load(base)
inventory.refresh()
inventory.inventory()
names = inventory.node_names
def timed(call):
    samples = []
    for name in names:
        start = time.process_time()
        call(name)
        samples.append(time.process_time() - start)
    samples.sort()
    return {"mean_ms": 1000 * sum(samples) / len(samples),
            "p99_ms": 1000 * samples[int(0.99 * (len(samples) - 1))]}
print(json.dumps({"nodeinfo": timed(inventory.nodeinfo),
                  "checked": timed(lambda n: (inventory.refresh(n), inventory.nodeinfo(n)))}))
"""


def child_cpu(command: list[str], cwd: Path | None = None) -> tuple[float, str]:
    """Run a command; (its CPU time, user + system, and its stdout)."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr = process.stderr.read().decode() if process.stderr else ""
        if process.returncode != 0:
            raise SystemExit(f"{' '.join(command[:4])}... failed:\n{stderr[-2000:]}")
        out.seek(0)
        return usage.ru_utime + usage.ru_stime, out.read().decode()


def script_result(python: Path, body: str, *args: str) -> dict:
    _, out = child_cpu([str(python), "-c", body, *args])
    return json.loads(out.strip().splitlines()[-1])


CLASS_USERS = """
import json, sys
import reclass_ng
inventory = reclass_ng.load(sys.argv[1])
print(json.dumps({name: len(nodes) for name, nodes in inventory.inventory()["classes"].items()}))
"""


def class_used_by(inventory: Path, share: float) -> tuple[str, int]:
    """The class whose node count is closest to `share` of the nodes (and its count)."""
    users = script_result(NG_PYTHON, CLASS_USERS, str(inventory))
    total = len(list((inventory / "nodes").rglob("*.yml")))
    name = min(sorted(users), key=lambda item: abs(users[item] - share * total))
    return name, users[name]


def class_file(inventory: Path, name: str) -> Path:
    base = inventory / "classes" / Path(*name.split("."))
    for candidate in (base.with_suffix(".yml"), base / "init.yml", base.with_suffix(".yaml")):
        if candidate.exists():
            return candidate
    raise SystemExit(f"no file for class {name}")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--kapicorp-calls", type=int, default=10)
    parser.add_argument("--rebuild-calls", type=int, default=50)
    args = parser.parse_args(argv)
    work = BENCH_DIR / ".work" / "incremental"
    shutil.rmtree(work, ignore_errors=True)
    inventory = work / f"mcp-{args.nodes}"
    generate("mcp", args.nodes, 1, inventory)
    os.chdir(work)  # `python -c` and `-m` put the current directory first on sys.path: not
    # this checkout's reclass_ng, so that each build imports its own
    names = sorted(path.stem for path in (inventory / "nodes").rglob("*.yml"))
    peer_python, versions = ensure_peers(lambda message: print(message, file=sys.stderr))
    print(f"incremental bench: mcp shape, {len(names)} nodes; CPU seconds (user+system)")
    print(f"load average at start: {load_average()}")

    name, users = class_used_by(inventory, 0.05)
    path = class_file(inventory, name)
    print(f"changed class: {name}, used by {users} nodes ({100 * users / len(names):.1f}%)")
    measured = builds(lambda message: print(message, file=sys.stderr))

    kapicorp = script_result(peer_python, KAPICORP_PILLAR, str(inventory),
                             json.dumps(names[:args.kapicorp_calls]))
    kapicorp_call = kapicorp["cpu"] / kapicorp["calls"]
    print(f"\nkapicorp-reclass {versions['kapicorp-reclass']} ext_pillar: "
          f"{kapicorp_call * len(names):.2f} s for {len(names)} calls "
          f"({1000 * kapicorp_call:.2f} ms/call; {kapicorp['calls']} calls measured)")
    for build, python in measured:
        measure_build(build, python, inventory, names, path, name, users, kapicorp_call,
                      args, work)
    print(f"\nload average at end: {load_average()}")
    return 0


def measure_build(build: str, python: Path, inventory: Path, names: list[str], path: Path,
                  name: str, users: int, kapicorp_call: float, args: argparse.Namespace,
                  work: Path) -> None:
    """The three measurements with one build of reclass-ng; ratios against its own rows."""
    print(f"\n=== reclass-ng {build} ({python.parent.parent}) ===")
    # 1. Salt ext_pillar, one call per minion, three passes (as three pillar refreshes); and
    # a first pass with cache_dir, then one in a new process (a restarted master).
    pillar_cache = work / f"pillar-cache-{build.split()[0]}"
    stored = [script_result(python, NG_CACHED_PILLAR, str(inventory), json.dumps(names),
                            str(pillar_cache)) for _ in range(2)]
    live = script_result(python, NG_LIVE_PILLAR, str(inventory), json.dumps(names), str(path),
                         f"bench_salt_{build.split()[0]}")
    rebuild = script_result(python, NG_REBUILD_PILLAR, str(inventory),
                            json.dumps(names[:args.rebuild_calls]))
    rebuild_call = rebuild["cpu"] / rebuild["calls"]
    print(f"Salt ext_pillar, {len(names)} successive calls (one per minion) in one process:")
    print(f"  {'rebuilding per call':40} {rebuild_call * len(names):8.2f} s  "
          f"({1000 * rebuild_call:.2f} ms/call; {rebuild['calls']} calls measured)")
    passes = dict(live["passes"])
    passes["first, with cache_dir (fills it)"] = stored[0]["cpu"]
    passes["first after a restart, cache_dir"] = stored[1]["cpu"]
    for label, seconds in passes.items():
        call = seconds / live["calls"]
        print(f"  {'live, pass: ' + label:40} {seconds:8.2f} s  "
              f"({1000 * call:.2f} ms/call)  {kapicorp_call / call:5.0f}x kapicorp "
              f"(target 50x), {rebuild_call / call:4.0f}x rebuild (target 20x)")

    # 2. reclass --inventory with and without the on-disk cache.
    cache = work / f"cache-{build.split()[0]}"
    reclass = [str(python), "-m", "reclass_ng", "-b", str(inventory), "--inventory"]
    cold, _ = child_cpu(reclass)
    filling, _ = child_cpu(reclass + ["--cache-dir", str(cache)])
    unchanged, _ = child_cpu(reclass + ["--cache-dir", str(cache)])
    path.write_text(path.read_text().replace(
        "parameters:", f"parameters:\n  bench_cli_{build.split()[0]}: 1", 1))
    one_class, _ = child_cpu(reclass + ["--cache-dir", str(cache)])
    print(f"reclass --inventory ({len(names)} nodes):")
    print(f"  cold, no cache                 {cold:8.2f} s")
    print(f"  first run with --cache-dir     {filling:8.2f} s")
    print(f"  nothing changed                {unchanged:8.2f} s  "
          f"{cold / unchanged:.1f}x faster than cold (target 10x)")
    print(f"  class {name} ({users} nodes, {100 * users / len(names):.1f}%) changed "
          f"{one_class:8.2f} s  {cold / one_class:.1f}x faster than cold (target 5x)")

    # 3. Warm nodeinfo.
    warm = script_result(python, NG_WARM_NODEINFO, str(inventory))
    print(f"Inventory.nodeinfo(name), warm, nothing changed ({len(names)} nodes, every node):")
    print(f"  nodeinfo only            mean {warm['nodeinfo']['mean_ms']:.3f} ms, "
          f"p99 {warm['nodeinfo']['p99_ms']:.3f} ms (target < 5 ms)")
    print(f"  refresh(name)+nodeinfo   mean {warm['checked']['mean_ms']:.3f} ms, "
          f"p99 {warm['checked']['p99_ms']:.3f} ms")


if __name__ == "__main__":
    sys.exit(main())
