"""Fixtures of the explorer's browser tests: Chromium, the example inventory in a git
repository, and a screenshot of the page whenever a test fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from browser_helpers import FAILURE_SCREENSHOTS, chromium, save_screenshot  # noqa: E402
from server_helpers import EXAMPLE_INVENTORY  # noqa: E402


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[CALL_FAILED] = report.failed


CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture(scope="session")
def chromium_driver() -> Iterator[object]:
    with chromium() as driver:
        yield driver


@pytest.fixture
def browser(chromium_driver: object, request: pytest.FixtureRequest) -> Iterator[object]:
    """The session's Chromium; the page is saved to test-screenshots/ when the test fails."""
    yield chromium_driver
    if request.node.stash.get(CALL_FAILED, False):
        saved = save_screenshot(chromium_driver, FAILURE_SCREENSHOTS, request.node.name)
        print(f"screenshot of the failure: {saved}")


@pytest.fixture
def doc_screenshot(chromium_driver: object):
    """`doc_screenshot(name)`: the page into $RECLASS_NG_DOC_SCREENSHOTS (doc/images) if set."""
    target = os.environ.get("RECLASS_NG_DOC_SCREENSHOTS")

    def take(name: str) -> None:
        if target:
            save_screenshot(chromium_driver, Path(target), f"explorer-{name}")

    return take


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=Explorer Test", "-c", "user.email=t@example.com",
                    *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture(scope="session")
def example_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """inventory-example in a git repository (as `inventory/`), with a second commit that
    gives web servers 6 nginx workers instead of 4. Returns the inventory directory."""
    repo = tmp_path_factory.mktemp("explorer-repo")
    inventory = repo / "inventory"
    shutil.copytree(EXAMPLE_INVENTORY, inventory)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "the example inventory")
    web = inventory / "classes" / "role" / "web.yml"
    web.write_text(web.read_text().replace("worker_processes: 4", "worker_processes: 6"))
    _git(repo, "commit", "-q", "-am", "more nginx workers on web servers")
    return inventory
