"""`reclass --inventory` in memory that does not grow with the number of nodes (issue 29):
the nodes are written as they render (output.streamed), the real command line measured by the
peak RSS of its process. Slow (tests/conftest.py SLOW_TEST_PATHS): two renders of hundreds of
nodes in each format."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# argv: the output file, then the command; prints the command's peak RSS in KB, exits with its
# status.
MEASURE = """
import os, sys
with open(sys.argv[1], "wb") as out:
    pid = os.fork()
    if pid == 0:
        os.dup2(out.fileno(), 1)
        os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


# Values that differ from node to node (nothing shared between nodes): what a node holds
# once rendered is its own.
OWN_VALUES = "".join(f"  v{i}: ${{_reclass_:name:short}} value {i:05d} of a node's own text\n"
                     for i in range(800))


# A node file of its own values, plain (no reference): what its parsed document and
# prepared entity hold is the node's own, about 300 KB of both a node.
NODE_FILE_VALUES = "classes: [own]\nparameters:\n" + "".join(
    f"  w{i}: value {i:05d} written in the node's own file\n" for i in range(3000))


def _peak_rss_kb(root: Path, nodes: int, fmt: str, tmp_path: Path,
                 node_text: str = "classes: [own]\n", jobs: int = 1) -> int:
    for name in os.listdir(root / "nodes"):
        os.unlink(root / "nodes" / name)
    for i in range(nodes):
        (root / "nodes" / f"n{i:05d}.yml").write_text(node_text)
    out = tmp_path / f"out-{nodes}.{fmt}"
    # The command is started by a small Python process that reports its peak RSS: a child
    # forked straight from the test process would count the test process's pages too.
    done = subprocess.run([sys.executable, "-c", MEASURE, str(out), sys.executable, "-m",
                           "reclass_ng", "-b", str(root), "--inventory", "-o", fmt, "-q",
                           "--jobs", str(jobs)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(REPO),
                               "RECLASS_NG_JOBS_MIN_NODES": "0"})
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > nodes * 10_000
    return int(done.stdout)


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_peak_memory_does_not_grow_with_the_node_count(make_inventory, tmp_path: Path,
                                                      fmt: str, jobs: int) -> None:
    """Peak RSS of `reclass --inventory` at 100 and 400 nodes of about 50 KB of output each
    (a held inventory grew by about 40 MB from one to the other): the growth stays within
    the spool's memory and the class and application lists. With `--jobs 2` the texts wait
    in the pool's text file until printed (parallel.render_inventory_spooled): the command
    held its own and read back its worker's before."""
    root = make_inventory({"classes/own.yml": "parameters:\n" + OWN_VALUES,
                           "nodes/n00000.yml": "classes: [own]\n"})
    # The least of two runs each: with --jobs 2 one run in a few on a busy machine peaks 2 to
    # 3 MB higher at either size (the workers' pages counted at a different moment).
    small = min(_peak_rss_kb(root, 100, fmt, tmp_path, jobs=jobs) for _ in range(2))
    large = min(_peak_rss_kb(root, 400, fmt, tmp_path, jobs=jobs) for _ in range(2))
    print(f"peak RSS {fmt} --jobs {jobs}: {small} KB at 100 nodes, {large} KB at 400")
    # The serial spool keeps its first 8 MB in memory; the pool's text file has none (it
    # grew by 15-17 MB with --jobs 2 when the texts were held, by 1-6 MB since).
    assert large - small < (20_000 if jobs == 1 else 10_000), (small, large)


def test_peak_memory_does_not_grow_with_the_node_files(make_inventory, tmp_path: Path) -> None:
    """Peak RSS of `reclass --inventory` at 40 and 240 nodes whose files hold 3,000 values
    each: a node's parsed file and prepared entity are dropped once the node is merged
    (NodeRenderer.release_files), where keeping them grew the peak by 52 MB
    (22 MB since: the spool, and the entities the shared class walks read first)."""
    root = make_inventory({"classes/own.yml": "parameters: {}\n",
                           "nodes/n00000.yml": "classes: [own]\n"})
    small = _peak_rss_kb(root, 40, "json", tmp_path, NODE_FILE_VALUES)
    large = _peak_rss_kb(root, 240, "json", tmp_path, NODE_FILE_VALUES)
    print(f"peak RSS: {small} KB at 40 nodes, {large} KB at 240")
    assert large - small < 36_000, (small, large)
