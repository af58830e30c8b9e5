"""`${}` reference bombs through the command line: a few hundred bytes whose references would
expand to 10**8 values or 2**30 characters are a clear error (file, line, key path, node;
exit 65) under a 1 GiB address-space limit, in bounded CPU time, and `reclass --inventory`
lists the node as failing like any other render error (resolve.MAX_REFERENCE_EXPANSION,
doc/performance.rst "Reference-expansion limit")."""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from reference_bomb_yaml import doubling

EXAMPLE = Path(__file__).resolve().parents[1] / "inventory-example"
MEMORY_LIMIT = 1024 * 1024 * 1024
CPU_SECONDS = 10  # a bomb is stopped in about 0.4 s


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def run_reclass(*args: str) -> subprocess.CompletedProcess[str]:
    """`reclass ARGS` of this checkout under the limits (killed past CPU_SECONDS of CPU; a
    hang fails on the wall-clock timeout)."""
    return subprocess.run([sys.executable, "-m", "reclass_ng.cli.reclass", *args],
                          capture_output=True, text=True, timeout=CPU_SECONDS * 6,
                          preexec_fn=_limits)




BOMBS = {
    "lists": "parameters:\n" + doubling("b", 8, 10, "[x, x, x, x, x, x, x, x, x, x]", "list"),
    "mappings": "parameters:\n" + doubling("d", 8, 8, "{a: x, b: x, c: x, d: x}", "mapping"),
    "strings": "parameters:\n" + doubling("s", 30, 2, "abcdefghijklmnopqrst", "string"),
    "exports": "parameters:\n" + doubling("b", 5, 10, "[x, x, x, x, x, x, x, x, x, x]", "list")
               + "exports:\n  e: [" + ", ".join(["'${b5}'"] * 10) + "]\n",
}


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "inventory"))


def add_bomb(inventory: Path, bomb: str, node: str = "web1.example.com") -> None:
    """The bomb as class common.bomb, listed first by `node`."""
    (inventory / "classes" / "common" / "bomb.yml").write_text(BOMBS[bomb])
    node_file = next((inventory / "nodes").rglob(f"{node}.yml"))
    node_file.write_text(node_file.read_text().replace("classes:\n", "classes:\n  - common.bomb\n",
                                                       1))


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_a_reference_bomb_is_a_clear_error(inventory, bomb):
    assert len(BOMBS[bomb]) < 1000, len(BOMBS[bomb])  # bytes
    add_bomb(inventory, bomb)
    result = run_reclass("-b", str(inventory), "--nodeinfo", "web1.example.com")
    assert result.returncode == 65, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "-> web1.example.com", result.stderr
    assert re.match(r"   References expand to more than 1,000,000 values and characters in "
                    r"this node \(a reference bomb\?\): \$\{[bdse]\d+\}.*, at [bdse]\d+(:\w+)?, "
                    r"in yaml_fs://\S+/classes/common/bomb\.yml$", lines[1]), result.stderr
    # The line of the reference that crossed the limit.
    assert re.match(r"      written at \S+/classes/common/bomb\.yml:\d+:\d+ \(class common\.bomb\)$",
                    lines[2]), result.stderr
    assert result.stdout == ""


def test_inventory_lists_the_node_with_a_bomb_as_failing(inventory):
    add_bomb(inventory, "lists")
    result = run_reclass("-b", str(inventory), "--inventory")
    assert result.returncode == 65, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[0] == "-> web1.example.com", result.stderr
    assert "(a reference bomb?)" in result.stderr
    # Without the bomb, the same inventory renders.
    (inventory / "classes" / "common" / "bomb.yml").write_text("parameters: {}\n")
    assert run_reclass("-b", str(inventory), "--inventory").returncode == 0


def test_groups_validate_lists_a_group_with_a_bomb(inventory):
    web = inventory / "groups" / "web-servers.yml"
    data = yaml.safe_load(web.read_text())
    data["variables"] = yaml.safe_load(doubling("l", 8, 10, "[x, x, x, x, x, x, x, x, x, x]",
                                                "list"))
    web.write_text(yaml.safe_dump(data))
    result = subprocess.run([sys.executable, "-m", "reclass_ng.cli.main", "groups", "validate",
                             "-b", str(inventory)], capture_output=True, text=True,
                            timeout=CPU_SECONDS * 6, preexec_fn=_limits)
    assert result.returncode == 65, result.stdout + result.stderr
    assert "groups/web-servers.yml: reference-expansion: What group 'Web servers' gives a " \
           "node: References expand to more than 1,000,000" in result.stderr, result.stderr
    assert "large-web-servers.yml: reference-expansion" in result.stderr  # inherits it
    assert "Traceback" not in result.stderr
