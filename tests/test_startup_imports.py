"""`reclass --nodeinfo` imports only what it uses: every module costs milliseconds of a start."""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

from inventory_writer import write_inventory

import reclass_ng

NOT_NEEDED = ("shutil", "lzma", "bz2", "difflib", "copy", "pyparsing", "concurrent.futures",
              "orjson", "subprocess", "tempfile", "argparse", "gettext", "locale", "typing",
              "contextlib", "threading", "json", "fnmatch", "shlex", "importlib", "warnings",
              "reclass_ng.queries", "reclass_ng.syntax.query", "reclass_ng.positions")
# Only needed for what PyYAML's patterns decide (a timestamp, `1e3`, `0x1f`, ...), class
# mappings and reference syntax beyond the plain case.
REGULAR_EXPRESSIONS = ("re", "enum")

PROBE = """
import io, sys
from reclass_ng.cli.reclass import main
sys.stdout = out = io.StringIO()
status = main(sys.argv[1:])
sys.stdout = sys.__stdout__
assert status == 0 and "parameters" in out.getvalue(), out.getvalue()
print(" ".join(name for name in {names!r} if name in sys.modules))
"""


def _without_site_hooks() -> dict[str, str]:
    # `python -S` with this interpreter's packages on PYTHONPATH: an editable install's .pth
    # hook (and whatever else a virtualenv's site runs) imports contextlib and more before
    # reclass_ng does, which would hide those imports from the test.
    paths = [str(Path(reclass_ng.__file__).resolve().parents[1]), *site.getsitepackages()]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _imported(root: Path, fmt: str, names: tuple[str, ...]) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-S", "-c", PROBE.format(names=names), "-b", str(root),
         "--nodeinfo", "n1", "-o", fmt],
        capture_output=True, text=True, cwd=root, check=True, env=_without_site_hooks())
    return result.stdout.split()


def test_nodeinfo_imports_nothing_it_does_not_use(tmp_path):
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2.5, e: 'on'}, yes, ~]\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  d: x\n"})
    for fmt in ("yaml", "json"):
        assert _imported(root, fmt, NOT_NEEDED + REGULAR_EXPRESSIONS) == [], fmt


def test_nodeinfo_with_a_config_file_imports_no_regular_expressions(tmp_path):
    # A config file, the default ignore_class_notfound_regexp, PyYAML's import and its
    # dumper's checks of plain strings, floats and versions all go without `re`.
    root = write_inventory(tmp_path / "inv", {
        "reclass-config.yml": "ignore_class_notfound: false\npretty_print: true\n",
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 'no', e: '12'}, yes, ~]\n"
                            "  v: [1.2.3, 10.0.0.1, 0.5, '2.5']\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  d: x\n"})
    for fmt in ("yaml", "json"):
        assert _imported(root, fmt, REGULAR_EXPRESSIONS) == [], fmt


def test_the_reclass_script_starts_without_regular_expressions(tmp_path):
    # bin/reclass, installed as `reclass` in place of a console-scripts launcher (older pips
    # write one that imports re): -X importtime lists every module the whole start imports.
    script = Path(__file__).resolve().parents[1] / "bin" / "reclass"
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2.5}, 1.2.3]\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  d: x\n"})
    result = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", str(script), "-b", str(root), "--nodeinfo",
         "n1"], capture_output=True, text=True, cwd=root, check=True, env=_without_site_hooks())
    assert "parameters:" in result.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()
                if line.startswith("import time:")}
    assert "reclass_ng.cli.reclass" in imported
    assert imported.isdisjoint(REGULAR_EXPRESSIONS), imported & set(REGULAR_EXPRESSIONS)
