"""Run the `reclass` command line in this process (its main(), not a subprocess): output and
exit status as a user gets them, without an interpreter start per call."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path


def run_reclass_in_process(argv: list[str], cwd: str | Path) -> tuple[int, str, str]:
    """`reclass ARGV` run from `cwd`: (exit status, stdout, stderr). argparse's usage errors and
    --version exit through SystemExit, which gives the status here."""
    from reclass_ng.cli.reclass import main

    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(previous)
    return status, out.getvalue(), err.getvalue()
