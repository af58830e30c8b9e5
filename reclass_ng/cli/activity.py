"""`reclass-ng activity -b DIR`: the activity log of `reclass-ng serve` (who changed what
through the API), read from its state database, newest first.

Reads through a read-only connection, so it never blocks a running server's writes.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from typing import Any

from reclass_ng.cli.inventory_args import add_inventory_argument, inventory_dir_from_args
from reclass_ng.errors import EX_IOERR, NotFoundError, ReclassError, UsageError

EX_NOINPUT = 66
# Longest before/after value shown per changed field in text output (JSON shows all).
SHOWN_VALUE_CHARS = 200


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_inventory_argument(parser)
    parser.add_argument("--state-db", metavar="PATH",
                        help="the server's state database (default: the one `reclass-ng "
                             "serve` uses for this inventory)")
    parser.add_argument("--group", metavar="ID", action="append", default=[],
                        help="only this group's history (repeatable)")
    parser.add_argument("--node", metavar="NAME", action="append", default=[],
                        help="only this node's configuration history (repeatable)")
    parser.add_argument("--subject", metavar="TOKEN", action="append", default=[],
                        help="only writes by this token name (repeatable)")
    parser.add_argument("--limit", type=int, default=50, metavar="N",
                        help="entries shown at most (default 50)")
    parser.add_argument("--oldest-first", action="store_true", help="oldest entries first")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text",
                        help="text (default) or json (PE's activity API shape)")


class NoStateDatabase(NotFoundError):
    """No state database where the activity log should be: the service recorded nothing."""

    exit_code = EX_NOINPUT  # sysexits' "cannot open input", as doc/service.rst documents


class ActivityLogUnreadable(ReclassError):
    """A state database that is not one, or cannot be read."""

    exit_code = EX_IOERR

    def __init__(self, text: str, path: str) -> None:
        super().__init__(text)
        self.path = path

    def file(self) -> str | None:
        """The state database."""
        return self.path


def _shown(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= SHOWN_VALUE_CHARS else text[:SHOWN_VALUE_CHARS] + "..."


def format_commits(commits: list[dict[str, Any]]) -> str:
    """One line per entry (time, token, message), then one per changed field."""
    lines = []
    for commit in commits:
        lines.append(f"{commit['timestamp']}  {commit['subject']['name']}  {commit['message']}")
        for event in commit["events"]:
            lines.append(f"    {event['what']}: {_shown(event.get('old_value'))} -> "
                         f"{_shown(event.get('new_value'))}")
    return "\n".join(lines) + ("\n" if lines else "")


def run(args: argparse.Namespace) -> int:
    from reclass_ng.server.activity_events import NODE, NODE_GROUP
    from reclass_ng.server.activity_log import MAX_LIMIT, EventQuery, read_events
    from reclass_ng.server.observed_state import default_state_path

    inventory_dir = inventory_dir_from_args(args)
    state_db = args.state_db or str(default_state_path(inventory_dir))
    if args.group and args.node:
        raise UsageError("reclass-ng activity: --group and --node cannot be combined")
    if not 1 <= args.limit <= MAX_LIMIT:
        raise UsageError(f"reclass-ng activity: --limit must be from 1 to {MAX_LIMIT}")
    if not os.path.isfile(state_db):
        raise NoStateDatabase(f"reclass-ng activity: no state database at {state_db}: the "
                              "service has recorded nothing for this inventory yet (or give "
                              "--state-db)", path=state_db)
    object_type = NODE_GROUP if args.group else NODE if args.node else None
    query = EventQuery(subject_ids=tuple(args.subject), object_type=object_type,
                       object_ids=tuple(g.lower() for g in args.group) + tuple(args.node),
                       limit=args.limit, ascending=args.oldest_first)
    try:
        commits, total = read_events(state_db, query)
    except sqlite3.DatabaseError as err:
        raise ActivityLogUnreadable(f"reclass-ng activity: cannot read the activity log in "
                                    f"{state_db}: {err}", state_db) from None
    if args.output == "json":
        sys.stdout.write(json.dumps({"commits": commits, "offset": 0, "limit": args.limit,
                                     "total-rows": total}, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_commits(commits))
        if total > len(commits):
            print(f"({total - len(commits)} older entries not shown; --limit N shows more)",
                  file=sys.stderr)
    return 0
