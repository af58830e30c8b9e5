"""Finding the real Puppet, Salt and Ansible, and running them in a throw-away configuration."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from missing_tools import INSTALL_HINT, missing_tool

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_INVENTORY = REPO / "inventory-example"
VENV_BIN = Path(sys.executable).parent


def find_tool(name: str, *extra_dirs: str) -> str | None:
    """The tool next to the test Python (pip-installed), else on PATH, else in `extra_dirs`."""
    beside = VENV_BIN / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name) or shutil.which(name, path=os.pathsep.join(extra_dirs) or None)


def require_tool(name: str, *extra_dirs: str) -> str:
    """The tool's path; the test is skipped (failed in CI), saying why, when it is missing."""
    path = find_tool(name, *extra_dirs)
    if path is None:
        missing_tool(f"{name} is not installed; {INSTALL_HINT}")
    return path


def adapter_command(name: str) -> str:
    """Absolute path of a reclass-ng console script (Puppet requires an absolute path)."""
    return str(VENV_BIN / name)


def run_tool(args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
             timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """Run a tool with the venv's bin first on PATH and no inherited RECLASS_NG_INVENTORY."""
    full_env = {k: v for k, v in os.environ.items() if k != "RECLASS_NG_INVENTORY"}
    full_env["PATH"] = os.pathsep.join([str(VENV_BIN), full_env.get("PATH", "")])
    full_env.update(env or {})
    return subprocess.run(args, capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=timeout, check=False)


def write_salt_minion_config(conf: Path, root: Path, states: Path, modules: str) -> Path:
    """A masterless Salt minion config in directory `conf` (created), as doc/adapters.rst
    shows it: its state under `root`, its file roots `states`, then `modules` (the
    configuration lines of reclass_ng's ext_pillar and master_tops). Returns `conf`."""
    conf.mkdir()
    (conf / "minion").write_text(f"""\
file_client: local
root_dir: {root}
pki_dir: {root}/pki
cachedir: {root}/cache
sock_dir: {root}/sock
log_file: {root}/minion.log
file_roots:
  base:
    - {states}
{modules}""")
    return conf
