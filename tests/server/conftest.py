"""Fixtures shared by the HTTP tests."""

from __future__ import annotations

import pytest
from server_helpers import client


@pytest.fixture
def api(server):
    """An HTTP client for the module's `server` fixture (base URL, inventory path)."""
    with client(server[0]) as http:
        yield http
