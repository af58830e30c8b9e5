"""The node page of a 2,000-node generated inventory (bench/generate.py, the mcp shape) opens in
under a second once the inventory has been read, measured in Chromium by Navigation Timing
(from the start of the navigation to the end of the load event)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser_helpers import REPO_ROOT, explorer_ui
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

NODES = 2000
BUDGET_SECONDS = 1.0
PAGES_MEASURED = 5


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("explorer-mcp") / "inventory"
    subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "generate.py"), "--shape", "mcp",
                    "--nodes", str(NODES), "--seed", "1", "--out", str(out)],
                   check=True, capture_output=True)
    return out


def load_seconds(driver) -> float:
    """Start of the navigation to the end of the load event (Navigation Timing)."""
    return timings(driver)[1]


def timings(driver) -> tuple[float, float]:
    """(seconds until the last byte of the page arrived, seconds until the load event ended)."""
    start, response, loaded = driver.execute_script(
        "const t = performance.getEntriesByType('navigation')[0];"
        "return [t.startTime, t.responseEnd, t.loadEventEnd];")
    return (response - start) / 1000, (loaded - start) / 1000


def test_node_page_of_2000_nodes_opens_within_a_second(browser, generated: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    names = sorted(p.stem for p in (generated / "nodes").rglob("*.yml"))
    assert len(names) == NODES
    with explorer_ui(generated, tmp_path / "state.sqlite3") as url:
        browser.get(url + f"nodes/{names[0]}")  # the first render reads the inventory
        first = load_seconds(browser)
        assert browser.find_elements(By.CSS_SELECTOR, "li.leaf a.origin")
        figures, served, origins = [], [], []
        for name in names[1::NODES // PAGES_MEASURED][:PAGES_MEASURED]:
            browser.get(url + f"nodes/{name}")
            received, loaded = timings(browser)
            figures.append(loaded)
            served.append(received)
            leaves = browser.find_elements(By.CSS_SELECTOR, "li.leaf")
            assert len(leaves) > 50 and browser.find_element(By.CSS_SELECTOR,
                                                             "h1 .node-name").text == name
            origins.append(_open_largest_mapping(browser))
    with capsys.disabled():
        print(f"\nexplorer: node page of a {NODES}-node inventory: first {first:.2f} s, then "
              + ", ".join(f"{s:.2f}" for s in figures) + f" s ({len(leaves)} values on the "
              "last; the HTML arrived after " + ", ".join(f"{s:.2f}" for s in served)
              + " s); origins of the largest mapping shown "
              + ", ".join(f"{s:.2f}" for s in origins) + " s after its click")
    assert max(figures) < BUDGET_SECONDS, figures


def _open_largest_mapping(driver) -> float:
    """Open the top-level mapping with the most values; seconds until all show their origin."""
    tops = driver.find_elements(By.CSS_SELECTOR, "#parameters details[data-origins]")
    largest = max(tops, key=lambda d: len(d.find_elements(By.CSS_SELECTOR, "li.leaf")))
    start = time.monotonic()
    largest.find_element(By.CSS_SELECTOR, "summary").click()
    WebDriverWait(driver, 30).until(
        lambda _: not largest.find_elements(By.CSS_SELECTOR, "a.origin.pending"))
    elapsed = time.monotonic() - start
    first = largest.find_element(By.CSS_SELECTOR, "li.leaf a.origin").text
    assert " — " in first and ".yml" in first or "automatic" in first, first
    return elapsed
