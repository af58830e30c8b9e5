"""A real headless Chromium (Debian's chromium + chromium-driver) driven by Selenium, and the
explorer started the way users start it (`reclass-ng ui`, `reclass-ng serve`).

Selenium is given the driver's path explicitly (`Service('/usr/bin/chromedriver')`), so Selenium
Manager never tries to download a browser or a driver: everything comes from apt
(scripts/install-test-tools.sh).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from server_helpers import server_log
from server_process import UI_LISTENING, server_process

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
REPO_ROOT = Path(__file__).resolve().parents[2]
# Where the test run writes screenshots: of failures (always), and of the pages the
# documentation shows when RECLASS_NG_DOC_SCREENSHOTS names a directory (doc/images).
FAILURE_SCREENSHOTS = REPO_ROOT / "test-screenshots"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                  "--window-size=1280,900", "--hide-scrollbars")


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium with a fresh profile, closed afterwards."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        raise AssertionError(f"{', '.join(missing)} missing: run scripts/install-test-tools.sh "
                             "(apt: chromium chromium-driver)")
    with tempfile.TemporaryDirectory(prefix="reclass-ng-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        driver.set_page_load_timeout(60)
        try:
            yield driver
        finally:
            driver.quit()


@contextlib.contextmanager
def explorer_ui(inventory: Path, state_db: Path) -> Iterator[str]:
    """`reclass-ng ui -b INVENTORY`: yields the URL it prints; stopped afterwards."""
    command = [sys.executable, "-m", "reclass_ng.cli.main", "ui", "-b", str(inventory),
               "--state-db", str(state_db)]
    with server_process(command, server_log(state_db), listening=UI_LISTENING) as (_, base):
        yield f"{base}/ui/"


def save_screenshot(driver: object, directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{name}.png"
    driver.save_screenshot(str(target))  # type: ignore[attr-defined]
    return target


def open_largest_mapping(driver) -> str:
    """Open the node page's top-level mapping with the most values and wait (up to 60 s) until
    every value below it shows its origin; the first origin's text."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    tops = driver.find_elements(By.CSS_SELECTOR, "#parameters details[data-origins]")
    largest = max(tops, key=lambda d: len(d.find_elements(By.CSS_SELECTOR, "li.leaf")))
    largest.find_element(By.CSS_SELECTOR, "summary").click()
    WebDriverWait(driver, 60).until(
        lambda _: not largest.find_elements(By.CSS_SELECTOR, "a.origin.pending"))
    return largest.find_element(By.CSS_SELECTOR, "li.leaf a.origin").text
