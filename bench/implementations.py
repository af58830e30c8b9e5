"""The implementations under test and how each is invoked.

reclass-ng is installed from this checkout, as a user installs it (`pip install .`, not the
editable install of the development virtualenv, whose import hooks cost every process start),
into bench/.ng/venv; kapicorp-reclass 2.0.0 and reclass-rs from PyPI run from a virtualenv the
bench creates under bench/.peers/, so the project's environment never sees them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PEERS_VENV = BENCH_DIR / ".peers" / "venv"
NG_VENV = BENCH_DIR / ".ng" / "venv"
PEER_REQUIREMENTS = ("kapicorp-reclass==2.0.0", "reclass-rs")
RENDER_API = BENCH_DIR / "render_api.py"

_VERSIONS_PROBE = (
    "import importlib.metadata as m, json;"
    "print(json.dumps({d: m.version(d) for d in ('kapicorp-reclass', 'reclass-rs', 'PyYAML')}))"
)


@dataclass
class Implementation:
    """One way of rendering an inventory: a label and the commands a user would run."""

    key: str
    label: str
    full: list[str]                 # full-inventory command; {inventory} and {output} filled in
    nodeinfo: list[str] | None      # single-node command; {inventory} and {node} filled in
    stdout_is_output: bool          # the full command prints the inventory on stdout
    queries: bool = True            # supports exports and $[ ] queries
    peer: bool = False              # kapicorp-reclass or reclass-rs
    note: str = ""

    def command(self, template: list[str], **values: str) -> list[str]:
        return [part.format(**values) for part in template]


@dataclass
class Environment:
    """What the bench found: implementations that can run and why others cannot."""

    implementations: list[Implementation] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    peer_python: Path | None = None


def ensure_peers(log) -> tuple[Path, dict[str, str]]:
    """Create bench/.peers/venv and install the peers from PyPI if they are missing."""
    python = PEERS_VENV / "bin" / "python"
    if not python.exists():
        log(f"creating {PEERS_VENV}")
        subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
    probe = subprocess.run([str(python), "-c", _VERSIONS_PROBE], capture_output=True, text=True)
    if probe.returncode != 0:
        log(f"installing {' '.join(PEER_REQUIREMENTS)} into {PEERS_VENV}")
        subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", *PEER_REQUIREMENTS], check=True)
        probe = subprocess.run([str(python), "-c", _VERSIONS_PROBE],
                               capture_output=True, text=True, check=True)
    return python, json.loads(probe.stdout)


def install_reclass_ng(log) -> Path | None:
    """Install this checkout into bench/.ng/venv (fresh each run, so the bench measures the
    code as it is now); None when that fails (the project venv is used instead)."""
    python = NG_VENV / "bin" / "python"
    try:
        if not python.exists():
            log(f"creating {NG_VENV}")
            subprocess.run([sys.executable, "-m", "venv", str(NG_VENV)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                            "--disable-pip-version-check", str(BENCH_DIR.parent)], check=True)
        log(f"installing reclass-ng from {BENCH_DIR.parent} into {NG_VENV}")
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps",
                        "--force-reinstall", "--disable-pip-version-check",
                        str(BENCH_DIR.parent)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as err:
        log(f"could not install reclass-ng into {NG_VENV}: {err}")
        return None
    return NG_VENV / "bin" / "reclass"


# How many modules the install compiled, of how many, and which `cdef class` of the checkout's
# .pxd files it holds as plain classes (reclass_ng.compiled.plain_pxd_classes).
_COMPILED_COUNT = """
import sys
from reclass_ng.compiled import COMPILED_MODULES, compiled_modules, plain_pxd_classes
print(len(compiled_modules()), len(COMPILED_MODULES), *plain_pxd_classes(sys.argv[1]))
"""


def compiled_python(log) -> tuple[Path | None, str]:
    """The interpreter of this checkout's `pip install` into bench/.ng/venv, which compiles the
    hot modules where a C compiler is present, and a label saying how many it compiled; None
    and the reason when nothing was compiled."""
    script = install_reclass_ng(log)
    if script is None:
        return None, f"the install into {NG_VENV} failed"
    python = script.parent / "python"
    # run from outside the checkout: `python -c` puts the current directory first on sys.path
    counted = subprocess.run([str(python), "-c", _COMPILED_COUNT,
                              str(BENCH_DIR.parent / "reclass_ng")], capture_output=True,
                             text=True, check=True, cwd=NG_VENV).stdout.split()
    compiled, total, plain = int(counted[0]), int(counted[1]), counted[2:]
    if compiled == 0:
        return None, "no C compiler: nothing was compiled"
    if plain:
        return None, (f"compiled without the .pxd files ({len(plain)} of their classes are "
                      f"plain, {plain[0]} first): a .pxd no longer matches its module "
                      "(pip install -v . shows setup.py's warning)")
    return python, f"compiled ({compiled}/{total} modules)"


def find_reclass_ng(explicit: str | None, log=print) -> tuple[Path | None, str]:
    """The reclass-ng ``reclass`` script and its interpreter, or None and the reason."""
    installed = None if explicit else install_reclass_ng(log)
    candidates = [Path(explicit)] if explicit else [
        *([installed] if installed else []),
        BENCH_DIR.parent / ".venv" / "bin" / "reclass",
        *([Path(found)] if (found := shutil.which("reclass")) else []),
    ]
    reasons = []
    for script in candidates:
        python = script.parent / "python"
        if not script.exists() or not python.exists():
            reasons.append(f"{script}: not found")
            continue
        probe = subprocess.run([str(python), "-c", "import reclass_ng; reclass_ng.load"],
                               capture_output=True, text=True)
        if probe.returncode == 0:
            return script, ""
        last = (probe.stderr.strip().splitlines() or ["import failed"])[-1]
        reasons.append(f"{script}: {last}")
    return None, "; ".join(reasons) or "no reclass script found"


def discover(ng_script: str | None, jobs: list[int], log) -> Environment:
    """Set up the peers and describe every implementation the run will use."""
    env = Environment()
    peer_python, versions = ensure_peers(log)
    env.peer_python = peer_python
    env.versions.update(versions)
    script, reason = find_reclass_ng(ng_script, log)
    if script is None:
        env.unavailable["reclass-ng"] = reason
    else:
        python = str(script.parent / "python")
        probe = subprocess.run([str(script), "--version"], capture_output=True, text=True)
        env.versions["reclass-ng"] = (probe.stdout or probe.stderr).strip() or "unknown"
        full = [str(script), "-b", "{inventory}", "--inventory", "-o", "json"]
        env.implementations.append(Implementation(
            "ng-cli", "reclass-ng CLI", full,
            [str(script), "-b", "{inventory}", "--nodeinfo", "{node}", "-o", "json"], True))
        for count in jobs:
            env.implementations.append(Implementation(
                f"ng-cli-j{count}", f"reclass-ng CLI --jobs {count}",
                [*full, "--jobs", str(count)], None, True))
        env.implementations.append(Implementation(
            "ng-api", "reclass-ng API",
            [python, str(RENDER_API), "--impl", "reclass-ng", "--inventory", "{inventory}",
             "--output", "{output}"],
            [python, str(RENDER_API), "--impl", "reclass-ng", "--inventory", "{inventory}",
             "--nodeinfo", "{node}"], False))
    kapicorp = str(peer_python.parent / "reclass")
    env.implementations.append(Implementation(
        "kapicorp", f"kapicorp-reclass {versions['kapicorp-reclass']} CLI",
        [kapicorp, "-b", "{inventory}", "--inventory", "-o", "json"],
        [kapicorp, "-b", "{inventory}", "--nodeinfo", "{node}", "-o", "json"], True, peer=True,
        note="run in the inventory directory, where it reads kapicorp-reclass-config.yml"))
    env.implementations.append(Implementation(
        "rs", f"reclass-rs {versions['reclass-rs']} API",
        [str(peer_python), str(RENDER_API), "--impl", "reclass-rs", "--inventory", "{inventory}",
         "--output", "{output}"],
        [str(peer_python), str(RENDER_API), "--impl", "reclass-rs", "--inventory", "{inventory}",
         "--nodeinfo", "{node}"], False, queries=False, peer=True,
        note="Reclass(...).inventory().as_dict() in a fresh process"))
    return env
