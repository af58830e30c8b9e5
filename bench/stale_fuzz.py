#!/usr/bin/env python3
"""Long runs of the deploy state machine (tests/deploy_machine.py): random edits and deploy
moves (release switches, `mv` of whole inventories, classes/ behind a switched symlink,
rsync --delete-after, git checkouts, files replaced by symlinks, same-size edits with the
mtime restored, errors introduced and fixed, duplicate names, settings edits) on a generated
inventory, every long-lived path compared with a fresh render in a new process after each step.

    python bench/stale_fuzz.py --steps 5000             # runs of up to 50 steps until 5,000 are done
    python bench/stale_fuzz.py --steps 300 --shrink     # shrink a failure (minutes)

Prints the number of steps checked and the time taken; exits 1 with hypothesis's report of the
failing steps when a path served something a fresh render does not. The suite's bounded run is
tests/test_incremental_fuzz.py. Run from the checkout with its `tests/` importable (this
script puts it on sys.path); `git` must be on PATH.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from deploy_machine import DeployMachine, machine_settings  # noqa: E402
from hypothesis.stateful import run_state_machine_as_test  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5000, help="steps to check in all")
    parser.add_argument("--steps-per-run", type=int, default=50,
                        help="the most steps of one run (one inventory)")
    parser.add_argument("--shrink", action="store_true",
                        help="shrink a failing run to fewer steps (slow)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    failed = False
    while DeployMachine.checks < args.steps:
        try:  # one run (one inventory) per call, so that progress shows as it goes
            run_state_machine_as_test(DeployMachine, settings=machine_settings(
                args.steps_per_run, 1, shrink=args.shrink))
        except AssertionError as err:
            print(f"DIFFERENCE FOUND: {err}", file=sys.stderr)
            failed = True
            break
        print(f"{DeployMachine.checks} steps checked, {time.monotonic() - started:.0f} s",
              flush=True)
    print(f"stale_fuzz: {DeployMachine.checks} steps checked in "
          f"{time.monotonic() - started:.0f} s; {'a difference' if failed else 'no difference'}"
          " from a fresh render")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
