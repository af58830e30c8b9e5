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

from reclass_ng.errors import EX_SOFTWARE, EX_USAGE, MultipleErrors, ReclassError

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:  # argparse and json cost a `reclass --nodeinfo` start milliseconds
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any

ERROR_FORMATS = ("text", "json")


def add_errors_option(parser: argparse.ArgumentParser) -> None:
    """The `--errors FORMAT` option every command shares (unless it defines its own)."""
    if "--errors" in parser._option_string_actions:
        return
    parser.add_argument("--errors", choices=ERROR_FORMATS, default="text", metavar="FORMAT",
                        help="how errors are reported on stderr: text (default) or json")


def errors_format_in(words: Sequence[str]) -> str:
    """The `--errors FORMAT` written anywhere on a command line (before a `--`), else "text".

    Known before argparse runs, so that its usage errors are reported in that format too.
    """
    found = "text"
    for index, word in enumerate(words):
        if word == "--":
            break
        if word.startswith("--errors="):
            found = word.split("=", 1)[1]
        elif word == "--errors" and index + 1 < len(words):
            found = words[index + 1]
    return found if found in ERROR_FORMATS else "text"


def without_errors_option(words: Sequence[str]) -> list[str]:
    """The command line without its `--errors FORMAT` words (before a `--`), so that a command
    with nested actions (`groups validate`) takes the option in any position.

    An unknown format is left in place for argparse to reject with its list of choices.
    """
    kept: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return kept + list(words[index:])
        if word.startswith("--errors=") and word.split("=", 1)[1] in ERROR_FORMATS:
            index += 1
            continue
        if word == "--errors" and index + 1 < len(words) and words[index + 1] in ERROR_FORMATS:
            index += 2
            continue
        kept.append(word)
        index += 1
    return kept


def error_document(records: Sequence[dict[str, Any]], exit_code: int,
                   warnings: Sequence[str] = ()) -> str:
    """The JSON document `--errors json` prints."""
    import json

    document = {"exit_code": exit_code, "errors": list(records),
                "warnings": [{"message": text} for text in warnings]}
    return json.dumps(document, indent=2, default=str)


def report(err: ReclassError, errors_format: str = "text", warnings: Sequence[str] = ()) -> int:
    """Print an error on stderr in the chosen format; return its exit code."""
    if errors_format == "json":
        print(error_document(err.records(), err.exit_code, warnings), file=sys.stderr)
    else:
        print("\n".join(err.report_lines()), file=sys.stderr)
    return err.exit_code


def _plain_record(message: str, kind: str) -> dict[str, Any]:
    """An entry of the JSON document for a failure that is no ReclassError."""
    return {"node": None, "class": None, "file": None, "line": None, "column": None,
            "key_path": None, "message": message, "kind": kind, "suggestions": [],
            "reference_chain": []}


def run_reporting_errors(action: Callable[[], int | None], errors_format: str = "text",
                         more_errors: Callable[[ReclassError], list[ReclassError]] | None = None,
                         per_node: Callable[[], bool] | None = None,
                         collect_stderr: bool = True) -> int:
    """Run a command body; report ReclassError and unexpected failures without a traceback.

    `more_errors`, called after a failure, may add the errors of the rest of the run (e.g. the
    other nodes of an inventory) so that they are all reported together; the first error still
    decides the exit status. A problem several nodes share is reported once, with the nodes it
    affects, unless `per_node()` (asked after the failure: the command line is parsed inside
    `action`) says to report each node's errors in full.

    With `--errors json` stderr holds exactly one JSON document, printed when there is anything
    to say: whatever the run would have printed on stderr (warnings, argparse's usage errors)
    is collected into it instead. A command that runs until stopped and logs as it goes
    (`serve`, `watch`) passes `collect_stderr=False`: its log stays live (and memory bounded),
    and only its errors are JSON.
    """
    if errors_format == "json" and not collect_stderr:
        return _run(action, more_errors, per_node, lambda err: report(err, "json"))
    if errors_format != "json":
        return _run(action, more_errors, per_node, lambda err: report(err))
    import io

    real_stderr, captured = sys.stderr, io.StringIO()
    reported = False

    def report_json(err: ReclassError) -> int:
        nonlocal reported
        reported = True
        sys.stderr = real_stderr
        return report(err, "json", captured.getvalue().splitlines())

    sys.stderr = captured
    try:
        code = _run(action, more_errors, per_node, report_json)
    except SystemExit as leaving:  # argparse: --help or --version (0), or a usage error (2)
        sys.stderr = real_stderr
        if leaving.code in (0, None):
            real_stderr.write(captured.getvalue())
            raise
        lines = captured.getvalue().splitlines()
        said = [line.split(": error: ", 1)[1] for line in lines if ": error: " in line]
        code = leaving.code if isinstance(leaving.code, int) else EX_USAGE
        record = _plain_record("; ".join(said) or "\n".join(lines),
                               "usage_error" if said else "error")
        print(error_document([record], code), file=real_stderr)
        return code
    finally:
        sys.stderr = real_stderr
    if not reported:  # no error value: what the run printed is warnings, or why it failed
        said = captured.getvalue().splitlines()
        if code != 0:
            print(error_document([_plain_record(line, "error") for line in said], code),
                  file=real_stderr)
        elif said:
            print(error_document([], 0, said), file=real_stderr)
    return code


def _run(action: Callable[[], int | None],
         more_errors: Callable[[ReclassError], list[ReclassError]] | None,
         per_node: Callable[[], bool] | None,
         report_error: Callable[[ReclassError], int]) -> int:
    try:
        with interrupts_not_lost():
            return action() or 0
    except ReclassError as err:
        found: ReclassError = err
        if more_errors is not None:
            try:
                others = more_errors(err)
            except Exception:  # noqa: BLE001 - the first error is what must be reported
                others = []
            if others:
                found = MultipleErrors([err, *others],
                                       per_node=per_node is not None and per_node(),
                                       per_node_option="-v" if per_node is not None else None)
        return report_error(found)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # noqa: BLE001 - last line of defence: never a traceback
        message = f"reclass-ng: internal error: {type(err).__name__}: {err}"
        return report_error(InternalError(message))


class interrupts_not_lost:  # lower case: used like a function, `with ...():`
    """Ctrl-C in the block always ends it with KeyboardInterrupt.

    Python runs the SIGINT handler at the next Python line of the main thread, which may be a
    weakref callback or a `__del__` method run as an object is freed; an exception there
    cannot propagate: Python printed it ("Exception ignored in ...", a traceback) and went on,
    the Ctrl-C lost (seen as exit 0 after Ctrl-C on `reclass --inventory -j 2`). Such an
    interrupt is delivered again a moment later, from another thread (from this one, it would
    be raised in this hook, where it cannot propagate either), and at the latest as the block
    ends. A class, not contextlib.contextmanager: contextlib is 2% of a `--nodeinfo` start.
    """

    __slots__ = ("previous", "again")

    def __init__(self) -> None:
        self.previous: Callable[[Any], Any] = sys.unraisablehook
        self.again: list[Any] = []

    def __enter__(self) -> None:
        self.previous = sys.unraisablehook
        sys.unraisablehook = self._hook

    def _hook(self, unraisable: Any) -> None:
        if not (isinstance(unraisable.exc_type, type)
                and issubclass(unraisable.exc_type, KeyboardInterrupt)):
            self.previous(unraisable)
            return
        import _thread
        import threading

        timer = threading.Timer(AGAIN_SECONDS, _thread.interrupt_main)
        timer.daemon = True
        self.again.append(timer)
        timer.start()

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        for timer in self.again:
            timer.cancel()
        sys.unraisablehook = self.previous
        if kind is None and self.again:
            raise KeyboardInterrupt


AGAIN_SECONDS = 0.01  # long enough for the main thread to be out of the hook and the callback


class InternalError(ReclassError):
    """A bug in reclass-ng, reported like any error (exit 70) instead of as a traceback."""

    exit_code = EX_SOFTWARE
    kind = "internal_error"


# What a console script's run rendered, held until exit_without_teardown ends the process
# (None: not a console script leaving that way, nothing is held): the operating system then
# reclaims it with the rest, instead of Python freeing it object by object as the run's frames
# return (the parsed classes and the caches of a `reclass --inventory`: 1% of a render of a
# real Salt model's 23 nodes).
_held_until_exit: list[object] | None = None


def hold_until_exit(value: object) -> None:
    """Keep `value` alive until the console script exits, when it leaves by
    exit_without_teardown (leaving_without_teardown() was called); else nothing."""
    if _held_until_exit is not None:
        _held_until_exit.append(value)


def leaving_without_teardown() -> None:
    """Called by a console script that will end in exit_without_teardown, before its run:
    what its run passes to hold_until_exit is then never freed by Python."""
    global _held_until_exit
    _held_until_exit = []


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
    except KeyboardInterrupt:  # Ctrl-C while the output waits for a reader
        code = 130
    try:
        sys.stderr.flush()
    except (OSError, KeyboardInterrupt):
        pass
    os._exit(code)
