#!/usr/bin/env python3
"""Run one command and report its wall time, CPU time and peak RSS as JSON.

    launch.py REPORT -- COMMAND...

bench/run.py starts every measured command through this small process
instead of directly. On Linux a process's peak-RSS figure starts from the
memory of the process it was forked from (the high-water mark is carried
over at exec), so commands forked straight from the runner, which holds
whole inventories in memory while comparing them, would report the runner's
size. Forked from here they start from a few megabytes. The time is taken
here too, so this script's own start-up is not part of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print("usage: launch.py REPORT -- COMMAND...", file=sys.stderr)
        return 2
    report, command = sys.argv[1], sys.argv[3:]
    started = time.perf_counter()
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    except OSError as error:
        print(f"cannot run {command[0]}: {error}", file=sys.stderr)
        return 127
    _pid, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    figures = {
        "seconds": elapsed,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "max_rss_kb": usage.ru_maxrss,
        "returncode": process.returncode,
    }
    with open(report + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(figures, handle)
    os.replace(report + ".tmp", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
