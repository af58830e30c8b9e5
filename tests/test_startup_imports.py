"""`reclass --nodeinfo` imports only what it uses: every module costs milliseconds of a start."""

from __future__ import annotations

import subprocess
import sys

from inventory_writer import write_inventory

NOT_NEEDED = ("shutil", "lzma", "bz2", "difflib", "copy", "pyparsing", "concurrent.futures",
              "orjson", "subprocess", "tempfile", "argparse", "gettext", "locale", "typing")

PROBE = """
import contextlib, io, sys
from reclass_ng.cli.reclass import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    status = main(sys.argv[1:])
assert status == 0 and "parameters" in out.getvalue(), out.getvalue()
print(" ".join(name for name in {names!r} if name in sys.modules))
"""


def test_nodeinfo_imports_nothing_it_does_not_use(tmp_path):
    root = write_inventory(tmp_path / "inv", {
        "classes/base.yml": "parameters:\n  a: ${b}\n  b: [1, {c: 2.5}]\n",
        "nodes/n1.yml": "classes: [base]\nparameters:\n  d: x\n"})
    for fmt in ("yaml", "json"):
        result = subprocess.run(
            [sys.executable, "-c", PROBE.format(names=NOT_NEEDED), "-b", str(root),
             "--nodeinfo", "n1", "-o", fmt],
            capture_output=True, text=True, cwd=tmp_path, check=True)
        assert result.stdout.split() == [], f"-o {fmt} imported {result.stdout}"
