"""A small inventory for the LSP tests: three nodes, a class chain, a relative class name."""

from __future__ import annotations

from pathlib import Path

import pytest

FILES = {
    "classes/common.yml": "parameters:\n  dns: 10.0.0.1\n  site: north\n",
    "classes/app/init.yml": "classes:\n  - common\n  - app.web\nparameters:\n  port: 80\n"
                            "  url: http://${site}:${port}/\n",
    "classes/app/web.yml": "classes:\n  - .base\nparameters:\n  server: nginx\n",
    "classes/app/base.yml": "parameters:\n  server: apache\n  user: www\n",
    "classes/prod.yml": "classes:\n  - app\nparameters:\n  ~port: 443\n",
    "nodes/web1.yml": "classes:\n  - app\n",
    "nodes/web2.yml": "classes:\n  - prod\n",
    "nodes/db1.yml": "classes:\n  - common\nparameters:\n  site: south\n",
}


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    """The workspace folder holding the inventory (the inventory is its `inv/` directory)."""
    base = tmp_path / "inv"
    for name, text in FILES.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path
