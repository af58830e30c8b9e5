"""Runs kapicorp-reclass's own command line (`reclass.cli.main`) once per argument list, in one
process, and prints a JSON list of [stdout, stderr, exit status] triples.

Run with kapicorp-reclass's interpreter (.venv/kapicorp-reclass/bin/python) by
tests/test_kapicorp_bytes.py, with the inventory as working directory, as a user runs `reclass`
there; one process for all nodes instead of one each keeps the test fast.
"""

import contextlib
import io
import json
import sys

from reclass.cli import main

results = []
for argv in json.loads(sys.argv[1]):
    sys.argv = ["reclass", *argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
            status = 0
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
    results.append([out.getvalue(), err.getvalue(), status])
print(json.dumps(results))
