#!/usr/bin/env python3
"""How fast the explorer's node pages open on a 2,000-node generated inventory.

    python bench/explorer_pages.py                  # generates the mcp inventory, 5 pages
    python bench/explorer_pages.py --inventory DIR --pages 10 --budget 1.0

Starts `reclass-ng ui` on the inventory and drives a real headless Chromium (the one
tests/explorer uses: Debian's chromium and chromium-driver through Selenium). Opens a first node
page (that render reads the inventory), then PAGES other nodes' pages, each timed by Navigation
Timing from the start of the navigation to the end of the load event, and on each opens the
largest top-level mapping and times until all its values show their origin. Prints the figures
(--json: as JSON) and exits 1 when a page took BUDGET seconds or more. The figures in
doc/explorer.rst come from here; the browser test checks the same pages' content but not their
speed, since a busy machine makes any wall-clock budget in a test fail now and then.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests" / "explorer"))
sys.path.insert(0, str(REPO_ROOT / "tests" / "server"))  # browser_helpers imports server_helpers

from browser_helpers import chromium, explorer_ui, open_largest_mapping  # noqa: E402


def navigation_seconds(driver) -> tuple[float, float]:
    """(seconds until the last byte of the page arrived, seconds until the load event ended)."""
    start, response, loaded = driver.execute_script(
        "const t = performance.getEntriesByType('navigation')[0];"
        "return [t.startTime, t.responseEnd, t.loadEventEnd];")
    return (response - start) / 1000, (loaded - start) / 1000


def measure(inventory: Path, pages: int, work: Path) -> dict:
    from selenium.webdriver.common.by import By

    names = sorted(p.stem for p in (inventory / "nodes").rglob("*.yml"))
    figures: dict = {"nodes": len(names), "loaded": [], "html_received": [], "origins_shown": []}
    with chromium() as driver, explorer_ui(inventory, work / "state.sqlite3") as url:
        driver.get(url + f"nodes/{names[0]}")
        figures["first_loaded"] = navigation_seconds(driver)[1]
        for name in names[1::max(1, len(names) // pages)][:pages]:
            driver.get(url + f"nodes/{name}")
            received, loaded = navigation_seconds(driver)
            if driver.find_element(By.CSS_SELECTOR, "h1 .node-name").text != name:
                raise SystemExit(f"the page of {name} shows another node")
            started = time.monotonic()
            open_largest_mapping(driver)
            figures["origins_shown"].append(time.monotonic() - started)
            figures["loaded"].append(loaded)
            figures["html_received"].append(received)
        figures["values_on_last_page"] = len(driver.find_elements(By.CSS_SELECTOR, "li.leaf"))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inventory", type=Path, help="an inventory (default: generate one)")
    parser.add_argument("--nodes", type=int, default=2000, help="nodes to generate (mcp shape)")
    parser.add_argument("--pages", type=int, default=5, help="node pages to time")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds a page may take")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="reclass-ng-explorer-bench-") as temp:
        work = Path(temp)
        inventory = args.inventory
        if inventory is None:
            inventory = work / "inventory"
            subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "generate.py"), "--shape",
                            "mcp", "--nodes", str(args.nodes), "--seed", "1", "--out",
                            str(inventory)], check=True, capture_output=True)
        figures = measure(inventory, args.pages, work)
    if args.json:
        print(json.dumps(figures))
    else:
        def seconds(values: list[float]) -> str:
            return ", ".join(f"{v:.2f}" for v in values)

        print(f"explorer: node page of a {figures['nodes']}-node inventory: first "
              f"{figures['first_loaded']:.2f} s, then {seconds(figures['loaded'])} s "
              f"({figures['values_on_last_page']} values on the last; the HTML arrived after "
              f"{seconds(figures['html_received'])} s); origins of the largest mapping shown "
              f"{seconds(figures['origins_shown'])} s after its click")
    slow = [s for s in figures["loaded"] if s >= args.budget]
    if slow:
        print(f"explorer_pages: {len(slow)} page(s) took {args.budget:g} s or more",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
