#!/usr/bin/env python3
"""Load test of the classifier HTTP service (`reclass-ng serve`) on loopback.

    python bench/classifier_load.py                      # 100 groups, 10,000 nodes, 4 clients
    python bench/classifier_load.py --nodes 50 --requests 40 --clients 2 --json

Builds an inventory with GROUPS node groups whose rules read facts (a root group, one group
per data centre, and children per role and processor count below them), starts
`reclass-ng serve` on it (or uses --server URL), stores NODES nodes' facts through the runtime
endpoint (`PUT /nodes/<name>/runtime`), then sends classification requests
(`POST /v1/classified/nodes/<name>` with the node's facts) from CLIENTS concurrent clients until
REQUESTS requests were answered or MAX_SECONDS passed, whichever comes first. Prints
classifications per second and the p50/p99 latency; --json prints the same as JSON.
Every answer must be 200 with the groups the generator expects for the node, otherwise the run
fails: a fast wrong answer is not a result. Needs httpx (the `test` extra). See
doc/service.rst for the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT_ID = "00000000-0000-4000-8000-000000000000"
TOKEN = "classifier-load-token"
ROLES = ("web", "db", "cache", "queue", "batch", "proxy", "mail", "dns", "log")


def group_id(number: int) -> str:
    return f"00000000-0000-4000-8000-{number:012d}"


def build_groups(count: int) -> list[dict[str, Any]]:
    """`count` groups: the root, data-centre groups, and role groups below each data centre.

    Every group declares its own class and variable, so no two unrelated groups set the same
    value and no node gets a classification conflict; the work is the matching and merging.
    """
    groups: list[dict[str, Any]] = [{"id": ROOT_ID, "name": "All Nodes",
                                     "variables": {"managed": True}}]
    data_centres = max(1, round((count - 1) ** 0.5 / 1.1))
    for dc in range(data_centres):
        if len(groups) == count:
            break
        groups.append({"id": group_id(len(groups)), "name": f"DC {dc}", "parent": ROOT_ID,
                       "rule": ["=", ["fact", "dc"], f"dc{dc}"],
                       "classes": {f"site_dc{dc}": {"ntp": f"ntp.dc{dc}.example.com"}}})
    dc_ids = [g["id"] for g in groups[1:]]
    number = 0
    while len(groups) < count:
        dc = number % len(dc_ids)
        role = ROLES[(number // len(dc_ids)) % len(ROLES)]
        minimum = (number // (len(dc_ids) * len(ROLES))) * 4
        groups.append({
            "id": group_id(len(groups)), "name": f"{role} dc{dc} {minimum}+ cpus",
            "parent": dc_ids[dc],
            "rule": ["and", ["=", ["fact", "role"], role],
                     [">=", ["fact", "processors", "count"], str(minimum)]],
            "classes": {f"role_{role}_{len(groups)}": {"tier": minimum}},
            "variables": {f"group_{len(groups)}": True}})
        number += 1
    return groups


def node_facts(index: int, data_centres: int) -> dict[str, Any]:
    return {"fact": {"dc": f"dc{index % data_centres}", "role": ROLES[index % len(ROLES)],
                     "processors": {"count": 2 + index % 7 * 2}},
            "trusted": {"certname": f"node{index:05d}.example.com"}}


def write_inventory(directory: Path, groups: list[dict[str, Any]]) -> None:
    (directory / "classes").mkdir(parents=True)
    (directory / "nodes").mkdir()
    (directory / "groups").mkdir()
    for number, group in enumerate(groups):
        # JSON is YAML: one group per file, as people would keep them.
        (directory / "groups" / f"group-{number:03d}.yml").write_text(json.dumps(group) + "\n")


LISTENING_PREFIX = "reclass-ng serve: listening on "  # the line serve prints (doc/service.rst)


@contextlib.contextmanager
def running_server(inventory: Path, state_db: Path) -> Iterator[str]:
    """`reclass-ng serve` as its own process on a free port (`--listen 127.0.0.1:0`, the port
    read from the line it prints, so no other process can take it first); yields the base URL."""
    env = {**os.environ, "RECLASS_NG_TOKEN": TOKEN}
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "reclass_ng.cli.main", "serve", "-b", str(inventory),
             "--listen", "127.0.0.1:0", "--state-db", str(state_db), "--log-level", "warning"],
            env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            assert process.stdout is not None
            # Serve prints nothing else on stdout: the first line, or end of file if it failed.
            ready, _, _ = select.select([process.stdout], [], [], 60)
            line = process.stdout.readline() if ready else ""
            if not line.startswith(LISTENING_PREFIX):
                process.kill()
                process.wait()
                log.seek(0)
                raise SystemExit("reclass-ng serve exited, or printed no address within 60 s: "
                                 + log.read().decode(errors="replace"))
            yield line[len(LISTENING_PREFIX):].strip()
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()


def run_clients(clients: int, jobs: list[Any], work, deadline: float) -> tuple[list[float], int]:
    """Run `work(http, job)` for every job from `clients` threads, each with its own
    connection, until the jobs run out or `deadline` passes; returns latencies and count."""
    latencies: list[float] = []
    lock = threading.Lock()
    position = iter(jobs)
    failure: list[BaseException] = []

    def client() -> None:
        with httpx.Client(headers={"X-Authentication": TOKEN}, timeout=60) as http:
            while time.monotonic() < deadline and not failure:
                with lock:
                    job = next(position, None)
                if job is None:
                    return
                started = time.perf_counter()
                try:
                    work(http, job)
                except BaseException as err:  # noqa: BLE001 - reported by the main thread
                    failure.append(err)
                    return
                elapsed = time.perf_counter() - started
                with lock:
                    latencies.append(elapsed)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failure:
        raise failure[0]
    return latencies, len(latencies)


def expected_groups(groups: list[dict[str, Any]], facts: dict[str, Any]) -> set[str]:
    """Which groups the node must be classified into (the generator's own rules, evaluated
    here independently of the service)."""
    fact = facts["fact"]
    matched = {ROOT_ID}
    for group in groups[1:]:
        rule = group["rule"]
        if rule[0] == "=":
            if fact["dc"] == rule[2]:
                matched.add(group["id"])
        elif fact["role"] == rule[1][2] and fact["processors"]["count"] >= int(rule[2][2]):
            matched.add(group["id"])
    by_id = {g["id"]: g for g in groups}
    return {g for g in matched if by_id[g].get("parent", ROOT_ID) in matched}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(base: str, groups: list[dict[str, Any]], nodes: int, requests: int, clients: int,
            max_seconds: float) -> dict[str, Any]:
    data_centres = sum(1 for g in groups if g.get("rule", [""])[0] == "=")
    names = [f"node{i:05d}.example.com" for i in range(nodes)]
    facts = {name: node_facts(i, data_centres) for i, name in enumerate(names)}

    def store(http: httpx.Client, name: str) -> None:
        response = http.put(f"{base}/nodes/{name}/runtime", json=facts[name])
        if response.status_code != 200:
            raise SystemExit(f"PUT runtime of {name}: {response.status_code} {response.text}")

    started = time.monotonic()
    stored_latencies, stored = run_clients(clients, names, store, started + max_seconds)
    store_seconds = time.monotonic() - started
    if stored < nodes:
        raise SystemExit(f"stored only {stored} of {nodes} nodes' facts in {max_seconds} s")

    randomness = random.Random(7)
    picks = [randomness.choice(names) for _ in range(requests)]

    def classify(http: httpx.Client, name: str) -> None:
        response = http.post(f"{base}/v1/classified/nodes/{name}", json=facts[name])
        if response.status_code != 200:
            raise SystemExit(f"classify {name}: {response.status_code} {response.text[:500]}")
        got = set(response.json()["groups"])
        if got != expected_groups(groups, facts[name]):
            raise SystemExit(f"classify {name}: wrong groups {sorted(got)}")

    started = time.monotonic()
    latencies, done = run_clients(clients, picks, classify, started + max_seconds)
    seconds = time.monotonic() - started
    return {
        "groups": len(groups), "nodes_stored": stored, "clients": clients,
        "facts_stored_per_second": round(stored / store_seconds, 1),
        "store_p50_ms": round(percentile(stored_latencies, 0.5) * 1000, 2),
        "classifications": done, "seconds": round(seconds, 2),
        "classifications_per_second": round(done / seconds, 1),
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=100, help="node groups (default: 100)")
    parser.add_argument("--nodes", type=int, default=10_000,
                        help="nodes whose facts are stored (default: 10000)")
    parser.add_argument("--requests", type=int, default=5_000,
                        help="classification requests at most (default: 5000)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients (default: 4)")
    parser.add_argument("--max-seconds", type=float, default=120.0,
                        help="time limit for each phase (default: 120)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.groups < 2 or args.nodes < 1 or args.requests < 1 or args.clients < 1:
        parser.error("--groups must be at least 2; --nodes, --requests, --clients at least 1")

    groups = build_groups(args.groups)
    with tempfile.TemporaryDirectory(prefix="classifier-load-") as temp:
        inventory = Path(temp) / "inventory"
        write_inventory(inventory, groups)
        with running_server(inventory, Path(temp) / "state.sqlite3") as base:
            result = measure(base, groups, args.nodes, args.requests, args.clients,
                             args.max_seconds)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['groups']} groups, {result['nodes_stored']} nodes' facts stored "
              f"({result['facts_stored_per_second']}/s), {result['clients']} clients")
        print(f"{result['classifications']} classifications in {result['seconds']} s: "
              f"{result['classifications_per_second']} classifications/s, "
              f"p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
