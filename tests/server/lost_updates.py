"""Concurrent read-modify-write clients against `reclass-ng serve`, counting lost updates.

Each client increments one group variable N times: GET the group, POST the incremented value
with the `serial_number` (even clients) or `If-Match` ETag (odd clients) it read, and on 409
read again and retry. With working optimistic concurrency the final value is clients x N.
Also a script, to measure the full 8 x 200 run:

    python tests/server/lost_updates.py URL [URL2] --clients 8 --increments 200
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import Counter
from typing import Any

import httpx

COUNTER = "counter"


def _increment(http: httpx.Client, group_id: str, use_etag: bool, statuses: Counter,
               deadline: float) -> bool:
    """One increment, retried on 409 until it lands (False when the deadline passed)."""
    while time.monotonic() < deadline:
        got = http.get(f"/v1/groups/{group_id}")
        statuses[f"GET {got.status_code}"] += 1
        if got.status_code != 200:
            continue
        group = got.json()
        value = int(group.get("variables", {}).get(COUNTER, 0))
        body: dict[str, Any] = {"variables": {COUNTER: value + 1}}
        headers = {}
        if use_etag:
            headers["If-Match"] = got.headers["etag"]
        else:
            body["serial_number"] = group["serial_number"]
        wrote = http.post(f"/v1/groups/{group_id}", json=body, headers=headers)
        statuses[f"POST {wrote.status_code}"] += 1
        if wrote.status_code == 200:
            return True
    return False


def run_increments(bases: list[str], token: str, group_id: str, clients: int, increments: int,
                   max_seconds: float = 600.0) -> dict[str, Any]:
    """Run the clients (client i talks to bases[i % len(bases)]); returns the counts."""
    statuses: Counter = Counter()
    landed = [0] * clients
    deadline = time.monotonic() + max_seconds
    lock = threading.Lock()

    def client(index: int) -> None:
        local: Counter = Counter()
        with httpx.Client(base_url=bases[index % len(bases)], timeout=60,
                          headers={"X-Authentication": token}) as http:
            for _ in range(increments):
                if not _increment(http, group_id, index % 2 == 1, local, deadline):
                    break
                landed[index] += 1
        with lock:
            statuses.update(local)

    with httpx.Client(base_url=bases[0], headers={"X-Authentication": token}) as http:
        start_value = int(http.get(f"/v1/groups/{group_id}").json()
                          .get("variables", {}).get(COUNTER, 0))
    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    with httpx.Client(base_url=bases[0], headers={"X-Authentication": token}) as http:
        final = int(http.get(f"/v1/groups/{group_id}").json()
                    .get("variables", {}).get(COUNTER, 0))
    successes = sum(landed)
    return {"expected": start_value + successes, "final": final,
            "lost_updates": start_value + successes - final, "successful_writes": successes,
            "server_errors": sum(n for k, n in statuses.items() if k.split()[1][0] == "5"),
            "statuses": dict(statuses), "seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bases", nargs="+")
    parser.add_argument("--token", default="test-token-0123456789")
    parser.add_argument("--group", default="b0f03a26-d797-4a9c-aa99-dbe317af6331")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--increments", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(run_increments(args.bases, args.token, args.group, args.clients,
                                    args.increments)))


if __name__ == "__main__":
    main()
