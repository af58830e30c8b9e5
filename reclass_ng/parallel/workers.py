"""How many processes a `--jobs N` render uses (the command's own among them, see
parallel.chunks.forked_process_pool), and why fewer when fewer.

Workers pay for themselves only when each has a CPU of its own and enough nodes to render:
forking, each worker's first collection and announcing the class lists cost about 0.3 s, which
a serial render spends on a hundred-odd `mcp` nodes. The CPUs a process may use are those of
its affinity mask (`taskset`, a container's cpuset) and its cgroup's CPU quota (`docker
--cpus`, Kubernetes limits): `os.cpu_count()` counts the machine's.
"""

from __future__ import annotations

import math
import os

# Nodes a worker must get: with fewer, the workers' start costs more than they save
# (doc/usage.rst, "--jobs"). The environment variable sets another number (0: any).
MIN_NODES_A_WORKER = 100
MIN_NODES_ENV = "RECLASS_NG_JOBS_MIN_NODES"
CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"  # cgroup v2: "max 100000" or "<quota> <period>"


def usable_cpus(cpu_max: str = CGROUP_CPU_MAX) -> tuple[int, str]:
    """The CPUs this process may use, and what limits them (for -v)."""
    try:
        count = len(os.sched_getaffinity(0))
        why = "CPU affinity"
    except (AttributeError, OSError):  # not Linux
        count, why = os.cpu_count() or 1, "CPUs"
    quota = _cgroup_quota(cpu_max)
    if quota is not None and quota < count:
        count, why = quota, f"cgroup CPU quota ({cpu_max})"
    return max(1, count), why


def _cgroup_quota(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as handle:
            fields = handle.read().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    return max(1, math.ceil(quota / period)) if quota > 0 and period > 0 else None


def worker_count(jobs: int, nodes: int, cpus: tuple[int, str] | None = None
                 ) -> tuple[int, str | None]:
    """(workers to use, why fewer than `jobs`, or None) for `--jobs jobs` over `nodes` nodes;
    1 means the serial render."""
    if jobs <= 1:
        return 1, None
    count, limit = cpus if cpus is not None else usable_cpus()
    if count <= 1:
        return 1, f"only 1 CPU is usable ({limit}): rendering serially"
    least = min_nodes_a_worker()
    if nodes < 2 * max(1, least):
        return 1, (f"{nodes} nodes are too few to gain from worker processes (fewer than "
                   f"{2 * max(1, least)}): rendering serially")
    usable = min(jobs, count, nodes // max(1, least))
    if usable < jobs:
        reason = f"{count} usable CPUs ({limit})" if count < jobs else \
            f"{nodes} nodes (at least {least} a worker)"
        return usable, f"{usable} workers instead of {jobs}: {reason}"
    return jobs, None


def min_nodes_a_worker() -> int:
    """MIN_NODES_A_WORKER, or the number the environment sets (an invalid one is ignored)."""
    text = os.environ.get(MIN_NODES_ENV, "")
    return int(text) if text.isdigit() else MIN_NODES_A_WORKER
