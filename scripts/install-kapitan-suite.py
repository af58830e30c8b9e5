"""Installs what tests/kapitan_suite needs to run Kapitan's own tests against reclass-ng.

Run by scripts/install-test-tools.sh with the Python of .venv-kapitan, with the pinned Kapitan
requirement (`kapitan==X`) as argument. For the pinned version and for the newest release the
`kapitan` extra of setup.cfg allows (one run when they are the same):

- a virtualenv with that Kapitan, pytest and this checkout: .venv-kapitan for the pinned one
  (installed by install-test-tools.sh; pytest is added here), .kapitan-suite/venv-X otherwise;
- Kapitan's sdist from the package index, unpacked in .kapitan-suite/kapitan-X: the wheel has no
  tests, the sdist ships `tests/` and `examples/`;
- .kapitan-suite/versions.json, which tells the test stage what to run.

Idempotent and quiet: when everything is there it asks the index for Kapitan's versions (one
request, to notice a new release) and prints nothing. When that request fails the versions of the
previous run are kept, with a warning; in CI (CI set) it is an error, so a run never passes
without having checked the newest release.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".kapitan-suite"
PINNED_VENV = REPO / ".venv-kapitan"
MANIFEST = CACHE / "versions.json"
# Kapitan's own test dependency group asks for this pytest.
PYTEST_REQUIREMENT = "pytest>=8.2,<10"
PIP_QUIET = ["--quiet", "--disable-pip-version-check"]


def say(message: str) -> None:
    print(f"install-kapitan-suite: {message}", file=sys.stderr)


def kapitan_extra_requirement() -> Requirement:
    """The `kapitan` requirement of setup.cfg's `kapitan` extra."""
    config = configparser.ConfigParser(inline_comment_prefixes=("#",))
    config.read(REPO / "setup.cfg")
    lines = config["options.extras_require"]["kapitan"].splitlines()
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            requirement = Requirement(line)
            if requirement.name == "kapitan":
                return requirement
    raise SystemExit("install-kapitan-suite: setup.cfg's kapitan extra names no kapitan")


def released_versions(pip: Path) -> list[Version]:
    """Kapitan's releases on the package index, as pip sees them (final releases only)."""
    result = subprocess.run([str(pip), "index", "versions", "kapitan",
                             "--disable-pip-version-check"],
                            capture_output=True, text=True, timeout=300, check=False)
    for line in result.stdout.splitlines():
        if line.startswith("Available versions:"):
            versions = []
            for word in line.partition(":")[2].split(","):
                try:
                    versions.append(Version(word.strip()))
                except InvalidVersion:
                    continue
            return versions
    raise RuntimeError(f"`pip index versions kapitan` failed: {result.stderr.strip()}")


def newest_allowed(pip: Path, previous: dict[str, object]) -> str | None:
    """The newest Kapitan release setup.cfg's extra allows; that of the last run when the index
    cannot be asked (outside CI)."""
    requirement = kapitan_extra_requirement()
    try:
        allowed = [v for v in released_versions(pip) if requirement.specifier.contains(v)]
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as err:
        if os.environ.get("CI"):
            raise SystemExit(f"install-kapitan-suite: {err} (CI is set: the newest Kapitan "
                             "release must be checked)") from None
        fallback = previous.get("newest")
        say(f"{err}; testing {fallback or 'the pinned Kapitan only'}")
        return str(fallback) if fallback else None
    if not allowed:
        raise SystemExit(f"install-kapitan-suite: no Kapitan release satisfies {requirement}")
    return str(max(allowed))


def installed_kapitan(python: Path) -> str | None:
    """The Kapitan version installed for `python`, when pytest is there too."""
    if not python.exists():
        return None
    probe = ("import importlib.metadata as m, pytest; print(m.version('kapitan'))")
    result = subprocess.run([str(python), "-c", probe], capture_output=True, text=True,
                            timeout=120, check=False)
    return result.stdout.strip() if result.returncode == 0 else None


def ensure_venv(venv: Path, version: str, pinned: bool) -> None:
    """Kapitan `version`, pytest and this checkout in `venv`."""
    python = venv / "bin" / "python"
    if installed_kapitan(python) == version:
        return
    if pinned:
        # install-test-tools.sh installed Kapitan and the checkout; only pytest is missing.
        if not python.exists():
            raise SystemExit(f"install-kapitan-suite: no {python} (install-test-tools.sh "
                             "installs the pinned Kapitan first)")
        say(f"installing {PYTEST_REQUIREMENT} into {venv}")
        requirements = [f"kapitan=={version}", PYTEST_REQUIREMENT]
    else:
        say(f"installing kapitan=={version} into {venv}")
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        requirements = [f"kapitan=={version}", PYTEST_REQUIREMENT, "-e", str(REPO)]
    subprocess.run([str(venv / "bin" / "pip"), "install", *PIP_QUIET, *requirements],
                   check=True, timeout=1800)
    if installed_kapitan(python) != version:
        raise SystemExit(f"install-kapitan-suite: {venv} does not have kapitan=={version}")


def unpack_sdist(pip: Path, version: str, source: Path) -> None:
    """Kapitan's sdist of `version` unpacked as `source` (its tests/ and examples/)."""
    if (source / "tests").is_dir() and (source / "examples").is_dir():
        return
    say(f"downloading Kapitan {version}'s sdist into {source}")
    CACHE.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as download:
        subprocess.run([str(pip), "download", *PIP_QUIET, "--no-deps", "--no-binary", ":all:",
                        "--dest", download, f"kapitan=={version}"], check=True, timeout=1800)
        archives = list(Path(download).glob("kapitan-*.tar.gz"))
        if len(archives) != 1:
            raise SystemExit(f"install-kapitan-suite: expected one sdist, got {archives}")
        unpacked = Path(download) / "unpacked"
        with tarfile.open(archives[0]) as archive:
            archive.extractall(unpacked, filter="data")
        (top,) = unpacked.iterdir()  # the sdist's one top directory, kapitan-X
        shutil.rmtree(source, ignore_errors=True)
        top.rename(source)


def remove_unused(runs: list[dict[str, str]]) -> None:
    """Sdists and virtualenvs of versions no longer tested (a newer release came out)."""
    used = {Path(run["source"]).name for run in runs}
    used |= {Path(run["python"]).parents[1].name for run in runs}
    for path in CACHE.glob("*kapitan-*"):
        if path.is_dir() and path.name not in used:
            say(f"removing {path} (no longer tested)")
            shutil.rmtree(path)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].startswith("kapitan=="):
        raise SystemExit("usage: install-kapitan-suite.py kapitan==X")
    pinned = argv[1].removeprefix("kapitan==")
    pip = PINNED_VENV / "bin" / "pip"
    previous = json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {}
    newest = newest_allowed(pip, previous) or pinned
    runs = []
    for version in dict.fromkeys([pinned, newest]):  # once when the newest is the pinned one
        venv = PINNED_VENV if version == pinned else CACHE / f"venv-kapitan-{version}"
        source = CACHE / f"kapitan-{version}"
        ensure_venv(venv, version, pinned=version == pinned)
        unpack_sdist(pip, version, source)
        runs.append({"version": version, "python": str(venv / "bin" / "python"),
                     "source": str(source)})
    remove_unused(runs)
    manifest = {"pinned": pinned, "newest": newest, "runs": runs}
    if previous != manifest:
        CACHE.mkdir(exist_ok=True)
        MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
