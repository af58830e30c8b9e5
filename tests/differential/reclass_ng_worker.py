"""A long-lived reclass-ng: the same line protocol as kapicorp_worker.py, running reclass-ng's
`reclass` command line (`reclass_ng.cli.reclass.main`) for each argument list.

Started by tests/differential/runner.py with the checkout first on PYTHONPATH. main() is the
function the `reclass` console script calls; it returns the exit status and never raises for
bad data, so an escaping exception is reported as a crash (status 1 with the traceback), which
no documented deviation covers.
"""

import contextlib
import io
import json
import os
import sys
import traceback

from reclass_ng.cli.reclass import main

for line in sys.stdin:
    job = json.loads(line)
    os.chdir(job["cwd"])
    for argv in job["argvs"]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:  # noqa: BLE001 - a crash is a result here
                traceback.print_exc()
                status = 1
        sys.stdout.write(json.dumps([out.getvalue(), err.getvalue(), status]) + "\n")
        sys.stdout.flush()
