"""Syncing the class catalogue from Puppet code, through Puppet's own parser.

A code directory holds `environments/<env>/modules/<module>/manifests/**/*.pp` (Puppet's
`$codedir`). The classes and parameters are read by Puppet itself: the small Ruby script
puppet_classes.rb loads Puppet's library and calls `Puppet::InfoService.classes_per_environment`,
the service behind Puppet Server's `environment_classes` API. Re-implementing Puppet's grammar
would get edge cases wrong (heredocs, nested defaults, types); Puppet gets them right by
definition, and it is on every machine that compiles catalogues.

If a file does not parse, Puppet reports it and skips the whole file; the environment then keeps
the classes of the previous sync (a typo must not make every group using the module look
deleted) and is marked `sync_succeeded: false` with the errors.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from reclass_ng.classifier.catalog import (
    CatalogError,
    SyncedCatalog,
    now_iso,
    read_synced,
    write_synced,
)
from reclass_ng.errors import EX_IOERR, NotFoundError, ReclassError
from reclass_ng.location import display_path
from reclass_ng.storage.regular_file import read_regular_file

SCRIPT = Path(__file__).with_name("puppet_classes.rb")
# Where Puppet's own Ruby lives in Puppet's all-in-one packages.
AIO_RUBY = "/opt/puppetlabs/puppet/bin/ruby"
SYNC_TIMEOUT_SECONDS = 300


class PuppetUnavailableError(ReclassError):
    """Puppet (its command and Ruby library) is not installed, or could not be run."""

    exit_code = EX_IOERR


def puppet_ruby() -> str:
    """The Ruby interpreter that runs Puppet: the one in the `puppet` command's #! line (Debian's
    puppet-agent: the system ruby), else the all-in-one packages' own ruby."""
    puppet = shutil.which("puppet") or shutil.which("puppet", path="/opt/puppetlabs/bin")
    if puppet is not None:
        try:
            head = read_regular_file(os.path.realpath(puppet), 200, head=True)[0]
            first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
        except OSError:
            first = ""
        if first.startswith("#!"):
            words = first[2:].split()
            if words and os.path.basename(words[0]) == "env" and len(words) > 1:
                found = shutil.which(words[1])
                if found:
                    return found
            elif words and "ruby" in os.path.basename(words[0]) and os.access(words[0], os.X_OK):
                return words[0]
    if os.access(AIO_RUBY, os.X_OK):
        return AIO_RUBY
    raise PuppetUnavailableError(
        "Puppet is not installed: syncing classes runs Puppet's own parser (the `puppet` "
        "command and its Ruby library). Install Puppet (Debian: apt-get install puppet-agent; "
        "or Puppet's all-in-one package), or declare classes by hand in puppet-classes.yml.")


class PuppetParseError(CatalogError):
    """A manifest Puppet's parser rejected (its classes are not in the catalogue)."""

    kind = "puppet_parse_error"


# Puppet ends its parse errors with `(file: PATH, line: N, column: M)` (column optional).
_PUPPET_POSITION = re.compile(r"\(file: .*?, line: (?P<line>[0-9]+)(?:, column: (?P<column>[0-9]+))?\)")


def sync_problems(synced: SyncedCatalog) -> list[PuppetParseError]:
    """The files of a sync that Puppet could not parse, as errors naming file, line and column
    (environment by environment, in file order)."""
    found: list[PuppetParseError] = []
    for environment, problems in synced.errors.items():
        for problem in problems:
            path = os.path.join(synced.code_dir or "", problem["file"])
            position = _PUPPET_POSITION.search(problem["error"])
            line = int(position["line"]) if position else None
            column = int(position["column"]) if position and position["column"] else None
            where = problem["file"] + (f":{line}" if line else "") + (f":{column}" if column else "")
            said = _PUPPET_POSITION.sub("", problem["error"]).rstrip() if line else problem["error"]
            found.append(PuppetParseError(f"{where}: {said} (environment {environment})",
                                          path, line, column))
    return found


def _default_of(param: dict[str, Any]) -> Any:
    """A parameter's default as the catalogue stores it: the literal value when Puppet can give
    one, else the default's source text (e.g. `"undef"` or `"$facts['fqdn']"`); None when the
    parameter has no default (required)."""
    if "default_literal" in param:
        return param["default_literal"]
    return param.get("default_source")


def scan_code_dir(code_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Run Puppet over `code_dir`; the script's JSON output."""
    code_dir = Path(code_dir)
    if not code_dir.is_dir():
        raise NotFoundError(f"No such directory: {code_dir} (--code-dir: Puppet's codedir, "
                            "with environments/<env>/modules)", path=str(code_dir))
    if not (code_dir / "environments").is_dir():
        raise CatalogError(f"{code_dir}: no environments/ directory (expected Puppet's codedir "
                           "with environments/<env>/modules/*/manifests/*.pp)", code_dir)
    ruby = puppet_ruby()
    with tempfile.TemporaryDirectory(prefix="reclass-ng-sync-") as scratch:
        try:
            finished = subprocess.run([ruby, str(SCRIPT), str(code_dir.resolve()), scratch],
                                      capture_output=True, text=True,
                                      timeout=SYNC_TIMEOUT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise PuppetUnavailableError(f"running Puppet's parser with {ruby} failed: {err}") \
                from err
    if finished.returncode != 0:
        message = (finished.stderr.strip() or finished.stdout.strip())[-2000:]
        if finished.returncode == 3:
            raise PuppetUnavailableError(f"Puppet is not installed for {ruby}: {message}")
        raise PuppetUnavailableError(f"Puppet's parser failed (exit {finished.returncode}): "
                                     f"{message}")
    try:
        return json.loads(finished.stdout)
    except ValueError as err:
        raise PuppetUnavailableError(f"Puppet's parser printed something that is not JSON: "
                                     f"{finished.stdout[:500]!r}") from err


def catalog_from_scan(scan: dict[str, Any], code_dir: str, previous: SyncedCatalog | None
                      ) -> SyncedCatalog:
    """The synced catalogue for a scan; environments with unparsable files keep `previous`."""
    environments: dict[str, dict[str, dict[str, Any]]] = {}
    errors: dict[str, list[dict[str, str]]] = {}
    root = str(Path(code_dir).resolve())
    for environment, files in sorted((scan.get("environments") or {}).items()):
        classes: dict[str, dict[str, Any]] = {}
        problems = []
        for file, found in sorted(files.items()):
            shown = display_path(file, root)
            if "error" in found:
                problems.append({"file": shown, "error": str(found["error"])})
                continue
            for puppet_class in found.get("classes", []):
                classes[puppet_class["name"]] = {
                    p["name"]: _default_of(p) for p in puppet_class.get("params", [])}
        if problems:
            errors[environment] = problems
            if previous is not None and environment in previous.environments:
                classes = previous.environments[environment]
        environments[environment] = dict(sorted(classes.items()))
    return SyncedCatalog(environments, errors, now_iso(), root, scan.get("puppet_version"))


def store_scan(inventory_dir: str | os.PathLike[str], scan: dict[str, Any],
               code_dir: str | os.PathLike[str]) -> SyncedCatalog:
    """Replace the inventory's puppet-classes.synced.yml with a scan (hand-declared classes in
    puppet-classes.yml are never touched)."""
    synced = catalog_from_scan(scan, str(code_dir), read_synced(inventory_dir))
    write_synced(inventory_dir, synced)
    return synced


def sync_classes(inventory_dir: str | os.PathLike[str], code_dir: str | os.PathLike[str]
                 ) -> SyncedCatalog:
    """Read every environment's classes from `code_dir` with Puppet and store them."""
    return store_scan(inventory_dir, scan_code_dir(code_dir), code_dir)
