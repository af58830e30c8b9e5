"""`reclass-ng watch -b DIR [--interval SECONDS]`: re-render an inventory whenever its files
change and print which nodes changed, for people editing an inventory.

The first round prints how many nodes were rendered (or the error); then one line per kind of
change (`changed: a, b`, `added: c`, `removed: d`) or `error: ...` after each change on disk.
Only the nodes a change affects are rendered again (doc/incremental.rst). Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import time

from reclass_ng.incremental.watch import WatchRound, watch


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-b", "--inventory-base-uri", metavar="DIR",
                        help="the base directory of the inventory (default: as reclass finds it)")
    parser.add_argument("--interval", type=float, default=1.0, metavar="SECONDS",
                        help="how often to look at the files (default: 1)")
    parser.add_argument("--rounds", type=int, default=None, metavar="N",
                        help=argparse.SUPPRESS)  # for scripts and tests: stop after N rounds


def run(args: argparse.Namespace) -> int:
    from reclass_ng.adapters.inventory_source import open_inventory
    from reclass_ng.errors import UsageError

    if args.interval <= 0:
        raise UsageError(f"--interval must be positive, not {args.interval}")
    inventory = open_inventory(args.inventory_base_uri)
    rounds = 0

    def report(found: WatchRound) -> None:
        nonlocal rounds
        rounds += 1
        if found.error is not None:
            print(f"error: {found.error}", flush=True)
        elif rounds == 1:
            print(f"reclass-ng watch: {len(found.added)} nodes rendered; watching "
                  "(Ctrl-C to stop)", flush=True)
        else:
            for label, names in (("changed", found.changed), ("added", found.added),
                                 ("removed", found.removed)):
                if names:
                    print(f"{label}: {', '.join(names)}", flush=True)

    watch(inventory, report, lambda: time.sleep(args.interval), args.rounds)
    return 0
