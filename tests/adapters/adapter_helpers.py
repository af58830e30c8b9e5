"""Shared helpers of the adapter tests: paths, running the adapter commands, fake nodeinfo."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_INVENTORY = REPO / "inventory-example"
VENV_BIN = Path(sys.executable).parent


def command_path(name: str) -> str:
    """The console script `name` installed next to the Python running the tests."""
    return str(VENV_BIN / name)


def run_command(name: str, *args: str, cwd: Path | None = None,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run an adapter command as a user would; RECLASS_NG_INVENTORY is unset unless given."""
    full_env = {k: v for k, v in os.environ.items() if k != "RECLASS_NG_INVENTORY"}
    full_env.update(env or {})
    return subprocess.run([command_path(name), *args], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=120, check=False)


def fake_nodeinfo(node: str = "web1", *, environment: str = "production",
                  classes: list[str] | None = None, applications: list[str] | None = None,
                  parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    """A nodeinfo dict shaped like `reclass --nodeinfo` prints it."""
    return {
        "__reclass__": {"node": node, "name": node, "uri": f"yaml_fs:///inv/nodes/{node}.yml",
                        "environment": environment, "timestamp": "Sun Nov 22 08:00:00 2026"},
        "classes": list(classes or []),
        "applications": list(applications or []),
        "parameters": dict(parameters or {}),
        "exports": {},
        "environment": environment,
    }


def write_inventory(base: Path, files: dict[str, str]) -> Path:
    """Create a small inventory under `base` from {relative path: YAML text}."""
    for relative, text in files.items():
        path = base / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (base / "nodes").mkdir(exist_ok=True)
    (base / "classes").mkdir(exist_ok=True)
    return base
