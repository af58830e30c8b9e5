"""One place that turns errors into messages and exit codes, so no command prints a traceback.

Errors are reported as text (the layout kapicorp-reclass uses, followed by where the problem is
written, the reference chain and "did you mean" suggestions) or, with `--errors json`, as one
JSON document on stderr for CI:

    {"exit_code": 65, "errors": [{"node": ..., "class": ..., "file": ..., "line": ...,
      "column": ..., "key_path": ..., "message": ..., "kind": ..., "suggestions": [...],
      "reference_chain": [...]}]}
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from reclass_ng.errors import EX_SOFTWARE, MultipleErrors, ReclassError

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:  # argparse and json cost a `reclass --nodeinfo` start milliseconds
    import argparse
    from typing import Any

ERROR_FORMATS = ("text", "json")


def add_errors_option(parser: argparse.ArgumentParser) -> None:
    """The `--errors FORMAT` option every command shares (unless it defines its own)."""
    if "--errors" in parser._option_string_actions:
        return
    parser.add_argument("--errors", choices=ERROR_FORMATS, default="text", metavar="FORMAT",
                        help="how errors are reported on stderr: text (default) or json")


def error_document(records: Sequence[dict[str, Any]], exit_code: int) -> str:
    """The JSON document `--errors json` prints."""
    import json

    return json.dumps({"exit_code": exit_code, "errors": list(records)}, indent=2,
                      default=str)


def report(err: ReclassError, errors_format: str = "text") -> int:
    """Print an error on stderr in the chosen format; return its exit code."""
    if errors_format == "json":
        print(error_document(err.records(), err.exit_code), file=sys.stderr)
    else:
        print("\n".join(err.report_lines()), file=sys.stderr)
    return err.exit_code


def run_reporting_errors(action: Callable[[], int | None], errors_format: str = "text",
                         more_errors: Callable[[ReclassError], list[ReclassError]] | None = None
                         ) -> int:
    """Run a command body; report ReclassError and unexpected failures without a traceback.

    `more_errors`, called after a failure, may add the errors of the rest of the run (e.g. the
    other nodes of an inventory) so that they are all reported together; the first error still
    decides the exit status.
    """
    try:
        return action() or 0
    except ReclassError as err:
        found: ReclassError = err
        if more_errors is not None:
            try:
                others = more_errors(err)
            except Exception:  # noqa: BLE001 - the first error is what must be reported
                others = []
            if others:
                found = MultipleErrors([err, *others])
        return report(found, errors_format)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # noqa: BLE001 - last line of defence: never a traceback
        message = f"reclass-ng: internal error: {type(err).__name__}: {err}"
        if errors_format == "json":
            record: dict[str, Any] = {"node": None, "class": None, "file": None, "line": None, "column": None,
                      "key_path": None, "message": message, "kind": "internal_error",
                      "suggestions": [], "reference_chain": []}
            print(error_document([record], EX_SOFTWARE), file=sys.stderr)
        else:
            print(message, file=sys.stderr)
        return EX_SOFTWARE


def exit_without_teardown(code: int) -> None:
    """Leave a console script at once, once its output is flushed.

    After a large render, Python's own exit frees every object of the rendered inventory one
    by one (a noticeable part of a `reclass --inventory` run, and of every `--nodeinfo`); the
    operating system reclaims the memory anyway. Only for console scripts: never call this from
    code that others import or test in-process.
    """
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away: nothing more to say, as `head` expects
        pass
    except OSError:
        code = code or EX_SOFTWARE
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)
