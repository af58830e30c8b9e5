"""A long-lived kapicorp-reclass: reads one job per line on stdin, runs kapicorp's own command
line (`reclass.cli.main`) for each argument list of the job and writes one JSON line
[stdout, stderr, exit status] per argument list as soon as it is done.

Run with kapicorp-reclass's interpreter by tests/differential/runner.py. A job is
{"cwd": inventory, "argvs": [[...], ...]}. Starting one process per inventory would cost more
than rendering it; the runner kills this process when a job runs past its timeout (a kapicorp
hang) and starts a new one. kapicorp reads `kapicorp-reclass-config.yml` from the directories of
reclass.defaults.CONFIG_FILE_SEARCH_PATH, computed from the working directory when it is first
imported; the list is narrowed to the job's inventory, as if kapicorp were started there with an
empty home directory. An uncaught exception is a crash: status 1 with the traceback, as the
`reclass` script would end.
"""

import contextlib
import io
import json
import os
import sys
import traceback

import reclass.defaults
from reclass.cli import main

sys.setrecursionlimit(5000)
for line in sys.stdin:
    job = json.loads(line)
    os.chdir(job["cwd"])
    reclass.defaults.CONFIG_FILE_SEARCH_PATH[:] = [job["cwd"]]
    for argv in job["argvs"]:
        sys.argv = ["reclass", *argv]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
                status = 0
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:  # noqa: BLE001 - a crash of kapicorp is a result here
                traceback.print_exc()
                status = 1
        sys.stdout.write(json.dumps([out.getvalue(), err.getvalue(), status]) + "\n")
        sys.stdout.flush()
