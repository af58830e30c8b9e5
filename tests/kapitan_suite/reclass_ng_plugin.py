"""A pytest plugin for Kapitan's own test suite: reclass-ng in place of Kapitan's `reclass`
backend, the skip list of kapitan_tests.yml, and a JSON report of what happened.

Loaded into a run of Kapitan's tests (from its sdist, with Kapitan's Python) by
test_kapitan_suite.py as `-p reclass_ng_plugin`. Its environment says what to do:

- RECLASS_NG_KAPITAN_SUITE_BACKEND: `reclass` leaves Kapitan's backend alone (the reference
  pass); `reclass-ng` switches it, before Kapitan's test modules are imported, in the two places
  tests reach it: the `reclass` entry of `kapitan.inventory.AVAILABLE_BACKENDS` (every
  `--inventory-backend reclass`, and the default) and `ReclassInventory` of
  `kapitan.inventory.backends.reclass`, which tests import by name.
- RECLASS_NG_KAPITAN_SUITE_REPORT: where to write the report: each test's outcome, the failure
  text of those that did not pass, the renders each backend did (so a pass that never reached
  reclass-ng, or reached kapicorp-reclass, shows), and which reclass_ng was imported.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

SELECTION_FILE = Path(__file__).resolve().parent / "kapitan_tests.yml"
BACKENDS = ("reclass", "reclass-ng")
FAILURE_TEXT_LIMIT = 4000  # characters of a failure kept in the report


class SuiteRecorder:
    """What the run did: outcomes by test id, failure texts, renders by backend."""

    def __init__(self, backend: str, skips: dict[str, str]) -> None:
        self.backend = backend
        self.skips = skips
        self.matched_skips: set[str] = set()
        self.listed_skips: list[str] = []  # the tests skipped by the list
        self.outcomes: dict[str, str] = {}
        self.failures: dict[str, str] = {}
        self.renders = dict.fromkeys(BACKENDS, 0)

    def count_renders(self, cls: type, backend: str) -> None:
        """Count the renders of an inventory backend class (its `render_targets` calls)."""
        render = cls.render_targets
        renders = self.renders

        def counted(*args: Any, **kwargs: Any) -> Any:
            renders[backend] += 1
            return render(*args, **kwargs)

        cls.render_targets = counted

    def skip_reason(self, nodeid: str) -> str | None:
        for key, reason in self.skips.items():
            if nodeid == key or nodeid.startswith((f"{key}::", f"{key}[")):
                self.matched_skips.add(key)
                return reason
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            reason = self.skip_reason(item.nodeid)
            if reason is not None:
                self.listed_skips.append(item.nodeid)
                item.add_marker(pytest.mark.skip(reason=f"reclass-ng's Kapitan suite: {reason}"))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # A test passed when its call did and neither its setup nor its teardown failed.
        if report.failed:
            self.outcomes[report.nodeid] = "failed" if report.when == "call" else "error"
            self.failures.setdefault(report.nodeid, report.longreprtext[-FAILURE_TEXT_LIMIT:])
        elif report.skipped:
            self.outcomes.setdefault(report.nodeid, "skipped")
        elif report.when == "call":
            self.outcomes.setdefault(report.nodeid, "passed")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        import kapitan

        import reclass_ng

        path = os.environ.get("RECLASS_NG_KAPITAN_SUITE_REPORT")
        if not path:
            return
        report = {"backend": self.backend, "outcomes": self.outcomes, "failures": self.failures,
                  "renders": self.renders, "reclass_ng": reclass_ng.__file__,
                  "kapitan": kapitan.__file__, "listed_skips": self.listed_skips,
                  "unmatched_skips": sorted(set(self.skips) - self.matched_skips)}
        Path(path).write_text(json.dumps(report, indent=1, sort_keys=True))


def switch_to_reclass_ng() -> None:
    """Kapitan's `reclass` backend, as tests reach it, becomes reclass-ng's."""
    import kapitan.inventory
    import kapitan.inventory.backends.reclass as kapitan_reclass

    from reclass_ng.kapitan.cli import register_backend
    from reclass_ng.kapitan.inventory import ReclassNgInventory

    register_backend()
    backends = kapitan.inventory.AVAILABLE_BACKENDS
    backends[kapitan.inventory.InventoryBackends.RECLASS] = backends["reclass-ng"]
    kapitan_reclass.ReclassInventory = ReclassNgInventory


def pytest_configure(config: pytest.Config) -> None:
    backend = os.environ.get("RECLASS_NG_KAPITAN_SUITE_BACKEND", "")
    if backend not in BACKENDS:
        raise pytest.UsageError(f"RECLASS_NG_KAPITAN_SUITE_BACKEND must be one of {BACKENDS}, "
                                f"not {backend!r}")
    # Imported before the switch: the class kapicorp-reclass renders with, whichever pass.
    from kapitan.inventory.backends.reclass import ReclassInventory

    from reclass_ng.kapitan.inventory import ReclassNgInventory

    skips = yaml.safe_load(SELECTION_FILE.read_text())["skip"]
    recorder = SuiteRecorder(backend, skips)
    recorder.count_renders(ReclassInventory, "reclass")
    recorder.count_renders(ReclassNgInventory, "reclass-ng")
    if backend == "reclass-ng":
        switch_to_reclass_ng()
    config.pluginmanager.register(recorder, "reclass_ng_kapitan_suite")
