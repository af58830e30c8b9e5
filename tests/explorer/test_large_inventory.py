"""Node pages of a 2,000-node generated inventory (bench/generate.py, the mcp shape): each shows
the node's values, and the origins of its largest mapping once that is opened.

How fast these pages open is measured by bench/explorer_pages.py, not here: a wall-clock budget
in a test fails whenever the machine running it is busy (doc/explorer.rst)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from browser_helpers import REPO_ROOT, explorer_ui, open_largest_mapping
from selenium.webdriver.common.by import By

NODES = 2000
PAGES_OPENED = 5


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("explorer-mcp") / "inventory"
    subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "generate.py"), "--shape", "mcp",
                    "--nodes", str(NODES), "--seed", "1", "--out", str(out)],
                   check=True, capture_output=True)
    return out


def test_node_pages_of_2000_nodes_show_values_and_origins(browser, generated: Path,
                                                          tmp_path: Path) -> None:
    names = sorted(p.stem for p in (generated / "nodes").rglob("*.yml"))
    assert len(names) == NODES
    with explorer_ui(generated, tmp_path / "state.sqlite3") as url:
        browser.get(url + f"nodes/{names[0]}")  # the first render reads the inventory
        assert browser.find_elements(By.CSS_SELECTOR, "li.leaf a.origin")
        for name in names[1::NODES // PAGES_OPENED][:PAGES_OPENED]:
            browser.get(url + f"nodes/{name}")
            leaves = browser.find_elements(By.CSS_SELECTOR, "li.leaf")
            assert len(leaves) > 50 and browser.find_element(By.CSS_SELECTOR,
                                                             "h1 .node-name").text == name
            first = open_largest_mapping(browser)
            assert " — " in first and ".yml" in first or "automatic" in first, first
