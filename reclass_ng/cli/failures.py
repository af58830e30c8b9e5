"""One place that turns errors into messages and exit codes, so no command prints a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable

from reclass_ng.errors import EX_SOFTWARE, ReclassError


def run_reporting_errors(action: Callable[[], int | None]) -> int:
    """Run a command body; report ReclassError and unexpected failures without a traceback."""
    try:
        return action() or 0
    except ReclassError as err:
        print(err.message, file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # noqa: BLE001 - last line of defence: never a traceback
        print(f"reclass-ng: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        return EX_SOFTWARE
