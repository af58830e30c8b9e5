"""What a test does when a real tool it drives is missing: skip on a developer's machine, fail
in CI. `make test` installs every tool (scripts/install-test-tools.sh), so in CI a missing one is
a broken install and must not pass as a skip."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

INSTALL_HINT = "`make test` installs it (scripts/install-test-tools.sh)"


def missing_tool(message: str) -> NoReturn:
    """Skip the test, saying what is missing; in CI (CI set, as CI services and .ci/run set
    it) fail it instead."""
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set: every tool must be installed)")
    pytest.skip(message)
