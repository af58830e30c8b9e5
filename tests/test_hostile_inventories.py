"""Hostile inventories: the CLI answers each with a clear error (file and line, exit 65) within
10 s of CPU and 500 MB, never a crash, a hang or a RecursionError. Each command runs in a subprocess
with an address-space limit and a timeout, so a regression fails the test instead of the
machine."""

from __future__ import annotations

import os
import queue
import resource
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "inventory-example"
MEMORY_LIMIT = 500 * 1024 * 1024
TIME_LIMIT = 10.0


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_limited(*args: str, module: str = "reclass_ng.cli.main") -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` under the limits: fails when it used TIME_LIMIT seconds of CPU,
    or when it has not finished after six times that on the wall clock (a hang). The CPU
    time, not the wall clock, is held to the limit: a busy machine stretches only the latter."""
    started = _children_cpu_seconds()
    result = subprocess.run([sys.executable, "-m", module, *args],
                            capture_output=True, text=True, timeout=TIME_LIMIT * 6,
                            preexec_fn=_limits)
    used = _children_cpu_seconds() - started
    assert used < TIME_LIMIT, f"took over {TIME_LIMIT} s of CPU ({used:.1f} s): {args}"
    return result


def billion_laughs() -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


# name -> (how to make the hostile file at `path`, what the error must say)
HOSTILE = {
    "deep-flow-list": (lambda p: p.write_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n"),
                       "nests deeper than"),
    "deep-1000": (lambda p: p.write_text("a: " + "{b: " * 1000 + "1" + "}" * 1000 + "\n"),
                  "nests deeper than"),
    "billion-laughs": (lambda p: p.write_text(billion_laughs()), "expand to more than"),
    "dev-zero": (lambda p: p.symlink_to("/dev/zero"), "not a regular file"),
    "dev-urandom": (lambda p: p.symlink_to("/dev/urandom"), "not a regular file"),
    "fifo": (lambda p: os.mkfifo(p), "not a regular file"),
}
# Files that a read would block on or never finish: the digests of the caches, the watcher,
# Salt and the service read them as the loader does (storage.yaml_load.read_input_file_stat).
UNREADABLE = ("dev-zero", "dev-urandom", "fifo")


@pytest.fixture
def inventory(tmp_path):
    return Path(shutil.copytree(EXAMPLE, tmp_path / "inventory"))


def add_hostile_class(inventory: Path, case: str) -> str:
    """Write the hostile class file and have a node include it; the error's expected text."""
    make, message = HOSTILE[case]
    make(inventory / "classes" / "common" / "hostile.yml")
    node_file = next((inventory / "nodes").rglob("*.yml"))
    with node_file.open("a") as stream:
        stream.write("\n")
    text = node_file.read_text()
    node_file.write_text(text.replace("classes:\n", "classes:\n  - common.hostile\n", 1))
    return message


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_class_file_is_a_clear_error(inventory, case):
    message = add_hostile_class(inventory, case)
    result = run_limited("-b", str(inventory), "--inventory", module="reclass_ng.cli.reclass")
    assert result.returncode == 65, result.stdout[-2000:] + result.stderr[-2000:]
    assert message in result.stderr, result.stderr[-2000:]
    assert "hostile.yml" in result.stderr
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr


@pytest.mark.parametrize("case", UNREADABLE)
def test_an_unreadable_class_file_with_a_cache_dir_is_a_clear_error(inventory, tmp_path, case):
    message = add_hostile_class(inventory, case)
    cache = ("--cache-dir", str(tmp_path / "cache"))
    result = run_limited("-b", str(inventory), "--inventory", *cache,
                         module="reclass_ng.cli.reclass")
    assert result.returncode == 65, result.stdout[-2000:] + result.stderr[-2000:]
    assert message in result.stderr and "hostile.yml" in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    hostile = inventory / "classes" / "common" / "hostile.yml"
    hostile.unlink()
    hostile.write_text("parameters: {hostile: gone}\n")
    result = run_limited("-b", str(inventory), "--inventory", *cache,
                         module="reclass_ng.cli.reclass")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "hostile: gone" in result.stdout


@pytest.mark.parametrize("case", UNREADABLE)
def test_watch_reports_an_unreadable_class_file_and_goes_on(inventory, case):
    message = add_hostile_class(inventory, case)
    hostile = inventory / "classes" / "common" / "hostile.yml"
    watcher = subprocess.Popen(
        [sys.executable, "-m", "reclass_ng.cli.main", "watch", "-b", str(inventory),
         "--interval", "0.1", "--rounds", "400"], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, preexec_fn=_limits)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in watcher.stdout or ()],
                     daemon=True).start()

    def next_line() -> str:  # a watcher blocked on the file fails the test, never hangs it
        return lines.get(timeout=TIME_LIMIT * 6)

    try:
        first = next_line()  # what it rendered and that it watches, then each failing node
        assert first.startswith("reclass-ng watch: ") and "failing" in first, first
        seen = [first]
        while message not in "".join(seen):
            seen.append(next_line())
        assert "hostile.yml" in "".join(seen)
        hostile.unlink()
        hostile.write_text("parameters: {hostile: gone}\n")
        while not next_line().startswith(("fixed:", "changed:", "added:")):
            pass
    finally:
        watcher.kill()
        watcher.wait(timeout=30)


SALT_EXT_PILLAR = """
import os, sys
from reclass_ng.adapters import salt
base, node, hostile = sys.argv[1:]
try:
    salt.ext_pillar(node, {}, inventory_base_uri=base)
    print("no error")
except Exception as err:
    print(f"error: {type(err).__name__}: {err}")
os.unlink(hostile)
with open(hostile, "w") as stream:
    stream.write("parameters: {hostile: gone}\\n")
print("pillar:", salt.ext_pillar(node, {}, inventory_base_uri=base)["hostile"])
"""


@pytest.mark.parametrize("case", UNREADABLE)
def test_salt_ext_pillar_reports_an_unreadable_class_file_and_goes_on(inventory, case):
    message = add_hostile_class(inventory, case)
    node_file = next((inventory / "nodes").rglob("*.yml"))
    hostile = inventory / "classes" / "common" / "hostile.yml"
    result = subprocess.run([sys.executable, "-c", SALT_EXT_PILLAR, str(inventory),
                             node_file.stem, str(hostile)], capture_output=True, text=True,
                            timeout=TIME_LIMIT * 6, preexec_fn=_limits)
    assert result.returncode == 0, result.stderr[-2000:]
    error, _, pillar = result.stdout.rpartition("pillar: ")
    assert error.startswith("error: ") and message in error and "hostile.yml" in error, error
    assert "MemoryError" not in error
    assert pillar == "gone\n"


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_lint_reports_a_hostile_class_file_as_a_finding(inventory, case):
    message = add_hostile_class(inventory, case)
    result = run_limited("lint", "-b", str(inventory))
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert "hostile.yml" in result.stdout and message in result.stdout, result.stdout[-2000:]
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_group_file_is_a_clear_error(inventory, case):
    make, message = HOSTILE[case]
    make(inventory / "groups" / "hostile.yml")
    result = run_limited("groups", "validate", "-b", str(inventory))
    assert result.returncode == 65, result.stdout[-2000:] + result.stderr[-2000:]
    assert message in result.stderr + result.stdout
    assert "groups/hostile.yml" in result.stderr
    assert "Traceback" not in result.stderr


def test_groups_validate_refuses_what_the_service_cannot_serve(inventory):
    web = inventory / "groups" / "web-servers.yml"
    web.write_text(web.read_text() + "  since: 2024-01-01\n")
    result = run_limited("groups", "validate", "-b", str(inventory))
    assert result.returncode == 65, result.stdout + result.stderr
    assert "variables.since: 2024-01-01 is a date" in result.stderr
    assert "web-servers.yml" in result.stderr
    web.write_text(web.read_text().replace("since: 2024-01-01", "ratio: .nan"))
    result = run_limited("groups", "validate", "-b", str(inventory))
    assert result.returncode == 65 and "not a finite number" in result.stderr


@pytest.mark.parametrize("case", UNREADABLE)
def test_an_unreadable_facts_file_is_a_clear_error(inventory, tmp_path, case):
    # Puppet's fact cache is read as the loader reads inventory files.
    make, message = HOSTILE[case]
    facts = tmp_path / "web1.example.com.yaml"
    make(facts)
    result = run_limited("classify", "-b", str(inventory), "web1.example.com",
                         "--facts", str(facts))
    assert result.returncode != 0, result.stdout[-2000:]
    assert f"Cannot read facts file {facts}: {message}" in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


# A cache dir can be shared, or hostile: each of its files is read the guarded way, so one
# swapped for a FIFO (a read waits for a writer) or linked to /dev/zero (a read never ends) is
# ignored with a warning naming it, and the inventory is rendered from the files.
CACHE_SWAPS = {"fifo": os.mkfifo, "dev-zero": lambda p: os.symlink("/dev/zero", p)}


@pytest.mark.parametrize("kind", ["index", "segment"])
@pytest.mark.parametrize("case", sorted(CACHE_SWAPS))
def test_a_hostile_file_in_the_cache_dir_is_ignored(inventory, tmp_path, case, kind):
    cache = tmp_path / "cache"
    args = ("-b", str(inventory), "--inventory", "--cache-dir", str(cache))
    first = run_limited(*args, module="reclass_ng.cli.reclass")
    assert first.returncode == 0, first.stderr[-2000:]
    pattern = "inventory-*.cache" if kind == "index" else "inventory-*.out"
    swapped = sorted(cache.glob(pattern))
    assert swapped, sorted(p.name for p in cache.iterdir())
    for path in swapped:
        path.unlink()
        CACHE_SWAPS[case](path)
    again = run_limited(*args, module="reclass_ng.cli.reclass")
    assert again.returncode == 0, again.stderr[-2000:]
    def untimed(text: str) -> list[str]:
        return [line for line in text.splitlines() if "timestamp" not in line]

    assert untimed(again.stdout) == untimed(first.stdout)
    assert "ignoring the cache file" in again.stderr and "not a regular file" in again.stderr, \
        again.stderr[-2000:]
