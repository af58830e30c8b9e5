"""Shared fixtures for the engine tests: build small inventories on disk and render them.

`make_inventory({"nodes/n1.yml": "...", "classes/a.yml": "..."})` writes the files below a fresh
temporary directory (creating `nodes/` and `classes/` even when no file lands there) and returns
that directory. `render(files, node, **settings)` loads such an inventory without reading any
reclass-config.yml and returns the node's nodeinfo, so a test states everything it depends on.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from inventory_writer import write_inventory

# Hypothesis's defaults hold each example to 200 ms of wall clock (`deadline`) and fail a run
# whose data generation is slow (`too_slow`): both fail on a busy machine with nothing wrong. The
# number of examples bounds a property test's time; tests that set their own settings keep them.
# Built on the profile Hypothesis chose: in CI (CI set) its "ci" profile, which also derandomizes.
settings.register_profile("reclass-ng", parent=settings.default, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("reclass-ng")

REPO_ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = REPO_ROOT / ".venv" / "bin"
TESTS_DIR = Path(__file__).resolve().parent

# `pytest -m "not slow"` is the inner loop (README, "Running the tests"): every test not
# listed here, the corpus and the engine's property tests included. These drive real tools or
# whole services, or take tens of seconds each; `make test` still runs them. A single slow
# test elsewhere carries an explicit `@pytest.mark.slow`.
SLOW_TEST_PATHS = (
    "integration/",  # real Puppet, Salt, Ansible and Kapitan
    "kapitan_suite/",  # Kapitan's own test suite, run twice
    "test_kapicorp_bytes.py",  # byte-compatibility with the real kapicorp-reclass
    "test_inventory_memory.py",  # peak RSS of `reclass --inventory` at two node counts
    "test_bench_generator.py",  # generated inventories, rendered by kapicorp and reclass-rs too
    "test_doc_examples.py",  # every documented command run as written
    "explorer/test_browser.py",  # chromium driven through selenium
    "explorer/test_large_inventory.py",  # the pages of a 2,000-node inventory
    # Each test of lsp/ starts `reclass-ng lsp` as its own process (about 1.5 s of CPU each),
    # neovim's tests a real neovim too, and test_edit_path bursts edits over thousands of nodes.
    "lsp/",
    # Each module of server/ starts `reclass-ng serve` (a uvicorn process, about 1.5 s of CPU
    # to start) and most of them one per test, as every test that writes needs a fresh copy:
    # also the fuzzing (schemathesis), reliability (servers killed mid-write), fairness (timing
    # under load) and documented-example tests, the load script and real Puppet's parser.
    "server/",
    "classifier/test_catalog.py",  # Puppet's own parser reads the classes
    "test_storage_git.py", "test_incremental_git.py", "test_hostile_git_settings.py",  # git
    "test_incremental_fuzz.py",  # the deploy state machine against fresh renders
    "test_incremental_corpus.py",  # every corpus scenario again through the incremental paths
)

# What stays in the inner loop of a surface SLOW_TEST_PATHS leaves out (a path, or
# path::test_name), so that a quick run still starts each of its processes once.
INNER_LOOP_REPRESENTATIVES = (
    "server/test_groups_api.py",  # one `reclass-ng serve`, the groups API over HTTP against it
    "server/test_yaml_files.py",  # the service's atomic writes and lock file, no server
    "lsp/test_diagnostics.py::test_unsaved_edits_are_diagnosed_and_cured_in_the_buffer",  # one
    # `reclass-ng lsp` session: open, edit, diagnostics
    "lsp/test_live_edits.py",  # the language server's edit path, in this process
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of SLOW_TEST_PATHS `slow`, but for INNER_LOOP_REPRESENTATIVES. A
    representative whose file or test function is gone is an error, so that renaming one
    cannot drop its surface from the inner loop unnoticed."""
    modules: dict[str, object] = {}
    for item in items:
        try:
            where = item.path.relative_to(TESTS_DIR).as_posix()
        except ValueError:  # a test outside tests/ (none today)
            continue
        modules.setdefault(where, getattr(item, "module", None))
        if where.startswith(SLOW_TEST_PATHS) \
                and not f"{where}::{item.name}".startswith(INNER_LOOP_REPRESENTATIVES):
            item.add_marker(pytest.mark.slow)
    gone = []
    for entry in INNER_LOOP_REPRESENTATIVES:
        path, _, function = entry.partition("::")
        module = modules.get(path)
        if not (TESTS_DIR / path).is_file() \
                or (function and module is not None and not hasattr(module, function)):
            gone.append(entry)
    if gone:
        raise pytest.UsageError(f"tests/conftest.py INNER_LOOP_REPRESENTATIVES: no test {gone}")


@pytest.fixture(scope="module", params=["fast", "reference"])
def both_speeds(request: pytest.FixtureRequest) -> Any:
    """Each test of a module using it runs twice: with every fast path, then with their
    references (RECLASS_NG_SPEED, read by inventories made in the test and by CLI
    subprocesses; tests/speeds.py). Module-scoped: Hypothesis refuses function-scoped
    fixtures around its examples."""
    from reclass_ng.settings import SPEED_VARIABLE

    saved = os.environ.get(SPEED_VARIABLE)
    os.environ[SPEED_VARIABLE] = request.param
    try:
        yield request.param
    finally:
        if saved is None:
            os.environ.pop(SPEED_VARIABLE, None)
        else:
            os.environ[SPEED_VARIABLE] = saved


@pytest.fixture
def make_inventory(tmp_path: Path) -> Callable[..., Path]:
    """A function writing an inventory below tmp_path (or `root`) and returning its directory."""
    counter = iter(range(1_000_000))

    def make(files: Mapping[str, str], root: Path | None = None) -> Path:
        return write_inventory(root or tmp_path / f"inv{next(counter)}", files)

    return make


@pytest.fixture
def load_inventory(make_inventory: Callable[..., Path]) -> Callable[..., Any]:
    """`load_inventory(files, **settings)`: a reclass_ng Inventory, config files not read.

    Warnings are collected in the returned inventory's `warnings` list instead of stderr.
    """
    import reclass_ng

    def load(files: Mapping[str, str], **settings: Any) -> Any:
        warnings: list[str] = []
        inv = reclass_ng.load(str(make_inventory(files)), read_config=False,
                              warn=warnings.append, **settings)
        inv.warnings = warnings
        return inv

    return load


@pytest.fixture
def render(load_inventory: Callable[..., Any]) -> Callable[..., dict[str, Any]]:
    """`render(files, node="n1", **settings)`: the nodeinfo dict of one node."""

    def run(files: Mapping[str, str], node: str = "n1", **settings: Any) -> dict[str, Any]:
        return load_inventory(files, **settings).nodeinfo(node)

    return run


@pytest.fixture
def params(render: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """`params(files, node="n1", **settings)`: the node's parameters without `_reclass_`."""

    def run(files: Mapping[str, str], node: str = "n1", **settings: Any) -> dict[str, Any]:
        result = dict(render(files, node, **settings)["parameters"])
        result.pop("_reclass_", None)
        return result

    return run


def run_reclass_ng(*args: str, cwd: Path) -> Any:
    """`reclass-ng ARGS` of this checkout, run in `cwd`: its CompletedProcess (text mode),
    which never holds a traceback."""
    import subprocess

    proc = subprocess.run([str(VENV_BIN / "reclass-ng"), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)
    assert "Traceback" not in proc.stderr + proc.stdout
    return proc


def clean_env(home: Path) -> dict[str, str]:
    """Environment for a subprocess: HOME points at `home` so no user config file is read."""
    env = dict(os.environ)
    env["HOME"] = str(home)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


@pytest.fixture
def reclass_cmd() -> list[str]:
    """The argv prefix that runs the `reclass` command of this checkout."""
    return [sys.executable, "-m", "reclass_ng"]


@pytest.fixture
def run_reclass(tmp_path: Path, reclass_cmd: list[str]) -> Callable[..., Any]:
    """`run_reclass(args, cwd=None, home=None, cmd=None)`: run `reclass` as a user would.

    The working directory and HOME default to an empty directory, so no reclass-config.yml
    of the developer is read; returns the CompletedProcess (text mode).
    """
    import subprocess

    empty = tmp_path / "empty-cwd-and-home"
    empty.mkdir(exist_ok=True)

    def run(args: list[str], cwd: Path | None = None, home: Path | None = None,
            cmd: list[str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*(cmd or reclass_cmd), *args], cwd=cwd or empty,
                              env=clean_env(home or empty), capture_output=True, text=True,
                              timeout=120)

    return run
