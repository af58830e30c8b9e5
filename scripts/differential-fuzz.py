#!/usr/bin/env python3
"""Long runs of the differential fuzzer: reclass-ng against kapicorp-reclass 2.0.0.

    PYTHONPATH=$PWD .venv/bin/python scripts/differential-fuzz.py [-n 2000] [--seed S]

Generates N random inventories (tests/differential/inventory_strategy.py), renders each with
both tools and classifies every difference: a documented deviation
(doc/compatibility-deviations.yml), a known open case of issue 36, or undocumented. Each kind of
undocumented difference (tests/differential/findings.py `signature`) is shrunk by Hypothesis to
a minimal inventory, printed as files with both outcomes, and not searched for again, so one
common difference does not hide the rarer ones. Exit status 0 when N examples ran without an
undocumented difference, 1 otherwise. `--findings FILE` appends the shrunk examples to FILE.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from differential.deviations import classify  # noqa: E402
from differential.findings import report, signature  # noqa: E402
from differential.inventory_strategy import InventoryCase, inventories  # noqa: E402
from differential.known_open import KNOWN_OPEN  # noqa: E402
from differential.runner import DEFAULT_TIMEOUT, DifferentialRunner  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from inventory_writer import write_inventory  # noqa: E402

# Renders spent shrinking the differences of one batch (about a minute): a render takes ~0.3 s,
# and Hypothesis would otherwise shrink for up to five minutes per batch.
SHRINK_BUDGET = 200


class UndocumentedDifference(AssertionError):
    """Raised as a subclass per signature, so that Hypothesis shrinks each kind separately."""


class Fuzzer:
    """Runs batches until N examples ran; keeps what each verdict counted."""

    def __init__(self, runner: DifferentialRunner) -> None:
        self.runner = runner
        self.examples = 0
        self.verdicts: Counter[str] = Counter()
        self.shrunk: dict[str, str] = {}  # signature -> report of its latest (smallest) example
        self.reported: set[str] = set()
        self.failed_in_batch = False
        self.calls_since_failure = 0
        self.smallest: dict[str, InventoryCase] = {}
        self._kinds: dict[str, type[UndocumentedDifference]] = {}

    def check(self, case: InventoryCase) -> None:
        """One example; raises for an undocumented difference of a kind not reported yet.

        Only examples drawn before the batch's first failure are counted (and their verdicts):
        after it Hypothesis generates for a few seconds more and then shrinks, calling this
        with variations of the failing example, which are not new examples."""
        counted = not self.failed_in_batch
        if counted:
            self.examples += 1
            if self.examples % 100 == 0:
                print(f"... {self.examples} examples", file=sys.stderr, flush=True)
        else:
            self.calls_since_failure += 1
            if self.calls_since_failure > SHRINK_BUDGET:
                # Out of budget: only the smallest failing example so far still fails, so
                # Hypothesis ends its shrinking quickly and replays that one.
                for label, smallest in self.smallest.items():
                    if smallest == case:
                        raise self._kind(label)(label)
                return
        new: list[tuple[str, str]] = []
        with tempfile.TemporaryDirectory(prefix="differential-") as tmp:
            inventory = write_inventory(Path(tmp) / "inventory", case.files)
            for rendering in self.runner.render_both(inventory, case.nodes,
                                                     case.whole_inventory):
                verdict = classify(rendering, case, KNOWN_OPEN)
                if verdict.kind != "difference":
                    if counted:
                        self.verdicts[f"{verdict.kind} {verdict.label}".strip()] += 1
                    continue
                label = signature(rendering)
                if counted:
                    self.verdicts["difference " + label] += 1
                if label not in self.reported:
                    new.append((label, report(case, rendering, inventory)))
        if new:
            label, text = new[0]
            self.shrunk[label] = text
            self.smallest[label] = case
            self.failed_in_batch = True
            raise self._kind(label)(label)

    def _kind(self, label: str) -> type[UndocumentedDifference]:
        if label not in self._kinds:
            self._kinds[label] = type(f"Difference{len(self._kinds)}",
                                      (UndocumentedDifference,), {})
        return self._kinds[label]

    def batch(self, examples: int, seed: int | None) -> list[str]:
        """Up to `examples` examples; the labels of the differences found and shrunk."""
        before = set(self.shrunk)
        self.failed_in_batch = False
        self.calls_since_failure = 0

        @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                  report_multiple_bugs=True, suppress_health_check=list(HealthCheck),
                  phases=[Phase.generate, Phase.shrink])
        @given(case=inventories())
        def run(case: InventoryCase) -> None:
            self.check(case)

        if seed is not None:
            run = hypothesis_seed(seed)(run)
        try:
            run()
        except Exception as found:  # noqa: BLE001 - differences are reported from self.shrunk
            if not self.failed_in_batch:
                raise
            if not isinstance(found, UndocumentedDifference) and \
                    not all(isinstance(one, UndocumentedDifference)
                            for one in getattr(found, "exceptions", [found])):
                print(f"note: Hypothesis ended the batch with {found!r}", file=sys.stderr)
        return sorted(set(self.shrunk) - before)


def hypothesis_seed(seed: int):  # type: ignore[no-untyped-def]
    from hypothesis import seed as seed_decorator

    return seed_decorator(seed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help="seconds one render may take before it counts as a hang")
    parser.add_argument("--findings", type=Path, help="append the shrunk examples to this file")
    options = parser.parse_args()
    started = time.monotonic()
    with DifferentialRunner(timeout=options.timeout) as runner:
        fuzzer = Fuzzer(runner)
        round_number = 0
        while fuzzer.examples < options.examples:
            seed = None if options.seed is None else options.seed + round_number
            round_number += 1
            found = fuzzer.batch(options.examples - fuzzer.examples, seed)
            for label in found:
                fuzzer.reported.add(label)
                text = f"### {label}\n{fuzzer.shrunk[label]}\n"
                print(text, flush=True)
                if options.findings:
                    with options.findings.open("a", encoding="utf-8") as out:
                        out.write(text + "\n")
    elapsed = time.monotonic() - started
    print(f"{fuzzer.examples} examples in {elapsed:.0f} s "
          f"({elapsed / max(fuzzer.examples, 1):.2f} s each)")
    for verdict, count in fuzzer.verdicts.most_common():
        print(f"{count:6d}  {verdict}")
    print(f"{len(fuzzer.reported)} kinds of undocumented difference")
    return 1 if fuzzer.reported else 0


if __name__ == "__main__":
    sys.exit(main())
