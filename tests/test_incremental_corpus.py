"""The conformance corpus through the incremental paths: every scenario is run as usual, then
with `--cache-dir` (cold), then again after every file was touched (rewritten with the same
bytes and a new modification time) and once more after nothing changed; each run must print
exactly what the plain run printed (timestamps aside) with the same exit status and messages.
The same scenario through `Inventory.refresh()` must give what a fresh `load()` gives."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import run_reclass_in_process
from test_corpus import RUNNER, SCENARIOS, TEMPLATE
from test_incremental import without_timestamps

import reclass_ng
from reclass_ng.cli.reclass import build_parser, settings_from_args
from reclass_ng.errors import ReclassError

# Every test at both speeds: the fast paths and their references (tests/speeds.py).
pytestmark = pytest.mark.usefixtures("both_speeds")

_TIMESTAMP = re.compile(r'("?timestamp"?:\s*)("[^"\n]*"|[^\n,}]*)')


def run_cli(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """`reclass ARGV` in this process, with the output's timestamps masked."""
    status, out, err = run_reclass_in_process(argv, cwd)
    return status, _TIMESTAMP.sub(r"\1T", out), err


def touch_every_file(root: Path) -> None:
    later = time.time_ns() + 5_000_000_000
    for path in sorted(root.rglob("*")):
        if path.is_file():
            path.write_bytes(path.read_bytes())
            os.utime(path, ns=(later, later))


def api_render(argv: list[str], inventory: reclass_ng.Inventory | None, live: bool) -> Any:
    args = build_parser().parse_args(argv)
    warnings: list[str] = []
    try:
        if inventory is None:
            inventory = reclass_ng.load(args.inventory_base_uri, warn=warnings.append,
                                        **settings_from_args(args))
        if live:
            inventory.refresh()
        data = inventory.inventory() if args.inventory else inventory.nodeinfo(args.nodeinfo)
        return ("ok", without_timestamps(data)), inventory
    except ReclassError as err:
        return ("error", type(err).__name__, str(err)), inventory


@pytest.mark.skipif(not SCENARIOS, reason="conformance corpus not found (see test_corpus.py)")
@pytest.mark.parametrize("scenario", SCENARIOS,
                         ids=[f"{s.get('topic', '?')}/{s['name']}" for s in SCENARIOS])
def test_scenario_through_the_incremental_paths(scenario: dict[str, Any], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert RUNNER is not None
    monkeypatch.setenv("HOME", str(tmp_path))
    inventory_dir = tmp_path / "inventory"
    shutil.copytree(Path(scenario["_dir"]) / "inventory", inventory_dir, symlinks=True)
    argv = shlex.split(RUNNER.build_command(TEMPLATE, scenario, str(inventory_dir)))[1:]
    cached = argv + ["--cache-dir", str(tmp_path / "cache")]

    plain = run_cli(argv, inventory_dir)
    assert run_cli(cached, inventory_dir) == plain
    if scenario.get("mode", "inventory") == "inventory" and plain[0] == 0:
        assert list((tmp_path / "cache").glob("inventory-*.cache")), "nothing was cached"
    fresh, _ = api_render(argv, None, live=False)
    live_result, live = api_render(argv, None, live=True)
    assert live_result == fresh

    touch_every_file(inventory_dir)
    assert run_cli(cached, inventory_dir) == plain
    assert run_cli(cached, inventory_dir) == plain
    assert api_render(argv, live, live=True)[0] == fresh
