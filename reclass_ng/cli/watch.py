"""`reclass-ng watch -b DIR [--interval SECONDS]`: re-render an inventory whenever its files
change and print which nodes changed, for people editing an inventory.

The first line says how many nodes were rendered (and how many fail) and that it watches; every
failing node follows, with its error (a problem several nodes share once, with the nodes it
affects, as `reclass --inventory` reports it). After each change on disk: one line per kind of
change (`changed: a, b`, `added: c`, `fixed: d`, `removed: e`), then `failing: f` and the
errors of nodes that fail now and did not fail this way before. A node failing never hides
what happens to the others. With `--errors json` each report is one line of JSON instead
(doc/diagnostics.rst). Only the nodes a change affects are rendered again
(doc/incremental.rst). Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from reclass_ng.errors import MultipleErrors, ReclassError
from reclass_ng.incremental.watch import WatchRound, watch

WATCHING = "watching (Ctrl-C to stop)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-b", "--inventory-base-uri", metavar="DIR",
                        help="the base directory of the inventory (default: as reclass finds it)")
    parser.add_argument("--interval", type=float, default=1.0, metavar="SECONDS",
                        help="how often to look at the files (default: 1)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="report each failing node's errors in full, also when several "
                             "nodes fail the same way")
    parser.add_argument("--rounds", type=int, default=None, metavar="N",
                        help=argparse.SUPPRESS)  # for scripts and tests: stop after N rounds


def _errors(found: WatchRound, per_node: bool) -> ReclassError | None:
    """The round's errors as one report: the inventory's, or the failing nodes' grouped."""
    if found.error is not None:
        return found.error
    if not found.failing:
        return None
    return MultipleErrors(found.failing, per_node=per_node,
                          per_node_option=None if per_node else "-v")


def text_report(found: WatchRound, told_watching: bool, per_node: bool) -> list[str]:
    """The lines one round prints."""
    lines: list[str] = []
    if found.first:
        summary = ("the inventory cannot be read" if found.error is not None
                   else f"{found.rendered} nodes rendered"
                   + (f", {len(found.failing)} failing" if found.failing else ""))
        lines.append(f"reclass-ng watch: {summary}"
                     + ("" if told_watching else f"; {WATCHING}"))
    if found.recovered:
        lines.append(f"the inventory can be read again: {found.rendered} nodes rendered"
                     + (f", {len(found.failing) + len(found.still_failing)} failing"
                        if found.failing or found.still_failing else ""))
    for label, names in (("changed", found.changed), ("added", found.added),
                         ("fixed", found.fixed), ("removed", found.removed),
                         ("failing", found.failing_nodes)):
        if names:
            lines.append(f"{label}: {', '.join(names)}")
    errors = _errors(found, per_node)
    if found.error is not None:
        report = found.error.report_lines()
        lines += [f"error: {report[0]}", *report[1:]] if report else ["error"]
    elif errors is not None:
        lines += errors.report_lines()
    if not found.first and (found.fixed or found.failing) and found.still_failing:
        lines.append(f"still failing: {', '.join(found.still_failing)}")
    return lines


def json_report(found: WatchRound, per_node: bool) -> dict[str, Any]:
    """One round as the JSON object `--errors json` prints on one line."""
    errors = _errors(found, per_node)
    return {
        "first": found.first,
        "recovered": found.recovered,
        "rendered": found.rendered,
        "changed": list(found.changed),
        "added": list(found.added),
        "fixed": list(found.fixed),
        "removed": list(found.removed),
        "failing": list(found.failing_nodes),
        "still_failing": list(found.still_failing),
        "errors": errors.records() if errors is not None else [],
    }


def run(args: argparse.Namespace) -> int:
    from reclass_ng.adapters.inventory_source import open_inventory
    from reclass_ng.errors import UsageError

    if args.interval <= 0:
        raise UsageError(f"--interval must be positive, not {args.interval}")
    as_json = getattr(args, "errors", "text") == "json"
    inventory = open_inventory(args.inventory_base_uri)
    told_watching = False

    def report(found: WatchRound) -> None:
        nonlocal told_watching
        if as_json:
            print(json.dumps(json_report(found, args.verbose), default=str), flush=True)
            return
        lines = text_report(found, told_watching, args.verbose)
        told_watching = told_watching or found.first
        if lines:
            print("\n".join(lines), flush=True)

    try:
        watch(inventory, report, lambda: time.sleep(args.interval), args.rounds)
    except KeyboardInterrupt:  # Ctrl-C is how a watch ends, as for `serve`: not a failure
        pass
    return 0
