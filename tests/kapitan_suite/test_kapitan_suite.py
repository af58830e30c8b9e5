"""Kapitan's own tests, run with Kapitan's `reclass` backend and with reclass-ng in its place:
every test that passes with the first must pass with the second (issue 34).

For each Kapitan version of .kapitan-suite/versions.json (the pinned one and the newest release
setup.cfg's `kapitan` extra allows; scripts/install-kapitan-suite.py, run by `make test`,
installs them and unpacks their sdists), the inventory-related tests listed in
kapitan_tests.yml run twice in a copy of the sdist, with that version's Kapitan and this
checkout's reclass_ng: once as Kapitan ships them (kapicorp-reclass renders), once with
reclass_ng_plugin.py switching the backend to reclass-ng. Each pass takes about two minutes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from missing_tools import INSTALL_HINT, missing_tool

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
MANIFEST = REPO / ".kapitan-suite" / "versions.json"
PASS_TIMEOUT = 1200  # seconds for one pass over the selection (about 150 s on 2 cores)


def suite_runs() -> list[dict[str, Any]]:
    """The Kapitan versions to test (empty when the install step has not run)."""
    if not MANIFEST.is_file():
        return []
    manifest = json.loads(MANIFEST.read_text())
    return [{**run, "pinned": run["version"] == manifest["pinned"]} for run in manifest["runs"]]


def run_kapitan_tests(run: dict[str, Any], backend: str, work: Path) -> dict[str, Any]:
    """One pass of the selection in a fresh copy of the sdist; the plugin's report."""
    source = work / f"kapitan-{backend}"
    shutil.copytree(run["source"], source, symlinks=True)
    report = work / f"report-{backend}.json"
    home = work / f"home-{backend}"
    home.mkdir()
    selection = yaml.safe_load((HERE / "kapitan_tests.yml").read_text())["select"]
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTEST_", "RECLASS_NG_", "VAULT_", "KAPITAN_"))}
    env.update(HOME=str(home), RECLASS_NG_KAPITAN_SUITE_BACKEND=backend,
               RECLASS_NG_KAPITAN_SUITE_REPORT=str(report),
               # This checkout's reclass_ng, whatever the virtualenv has installed.
               PYTHONPATH=os.pathsep.join([str(REPO), str(HERE)]))
    # Kapitan's pytest options ask for pytest-cov (addopts), which its tests do not need.
    command = [run["python"], "-m", "pytest", "-p", "no:cacheprovider", "-p", "reclass_ng_plugin",
               "-o", "addopts=", "-q", "--rootdir", str(source), *selection]
    result = subprocess.run(command, cwd=source, env=env, capture_output=True, text=True,
                            timeout=PASS_TIMEOUT, check=False)
    # 0: all passed, 1: some failed; anything else is a broken run, not a test result.
    assert result.returncode in (0, 1) and report.is_file(), (
        f"Kapitan {run['version']}'s tests with the {backend} backend did not run "
        f"(exit {result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return dict(json.loads(report.read_text()))


def with_outcome(report: dict[str, Any], outcome: str) -> set[str]:
    return {test for test, result in report["outcomes"].items() if result == outcome}


@pytest.mark.parametrize("run", suite_runs() or [None],
                         ids=lambda run: f"kapitan-{run['version']}" if run else "not-installed")
def test_tests_passing_with_kapitans_backend_pass_with_reclass_ng(
        run: dict[str, Any] | None, tmp_path: Path) -> None:
    if run is None:
        missing_tool(f"Kapitan's test suite is not installed ({MANIFEST}); {INSTALL_HINT}")
    if not Path(run["python"]).is_file() or not (Path(run["source"]) / "tests").is_dir():
        missing_tool(f"Kapitan {run['version']} or its sdist is missing; {INSTALL_HINT}")
    kapicorp = run_kapitan_tests(run, "reclass", tmp_path)
    ng = run_kapitan_tests(run, "reclass-ng", tmp_path)
    summary = (f"Kapitan {run['version']}: {len(with_outcome(kapicorp, 'passed'))} passed with "
               f"its reclass backend, {len(with_outcome(ng, 'passed'))} with reclass-ng, of "
               f"{len(kapicorp['outcomes'])} selected; skipped: {len(ng['listed_skips'])} by "
               f"kapitan_tests.yml, {len(with_outcome(ng, 'skipped')) - len(ng['listed_skips'])} "
               f"by Kapitan; renders: {kapicorp['renders']} / {ng['renders']}")
    print(summary)

    # Each pass rendered with the backend it was meant to, and only with it.
    assert kapicorp["renders"]["reclass"] > 0 and kapicorp["renders"]["reclass-ng"] == 0, summary
    assert ng["renders"]["reclass-ng"] > 0 and ng["renders"]["reclass"] == 0, summary
    assert Path(ng["reclass_ng"]).resolve().is_relative_to(REPO), ng["reclass_ng"]
    assert Path(ng["kapitan"]).resolve().parent.name == "kapitan", ng["kapitan"]
    # A skip-list entry that names no test of the pinned Kapitan is stale (a newer Kapitan may
    # have renamed a test: that is no break of the backend).
    if run["pinned"]:
        assert not kapicorp["unmatched_skips"], "kapitan_tests.yml skips tests that do not exist"
    assert with_outcome(kapicorp, "passed"), summary

    regressions = sorted(with_outcome(kapicorp, "passed") - with_outcome(ng, "passed"))
    details = "\n\n".join(f"{test}: {ng['outcomes'].get(test, 'not run')}\n"
                          f"{ng['failures'].get(test, '')}" for test in regressions)
    assert not regressions, f"{summary}\npass with Kapitan's reclass backend only:\n{details}"
