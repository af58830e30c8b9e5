"""reclass-ng against the real kapicorp-reclass 2.0.0 on random inventories (issue 36).

A bounded run of the differential fuzzer (tests/differential/): every generated inventory is
rendered by both tools, and a difference fails unless a documented deviation
(doc/compatibility-deviations.yml, recognised by tests/differential/deviations.py) or, for now,
a known open issue case (tests/differential/known_open.py) explains it. Derandomized under
CI=true (Hypothesis's ci profile, loaded by conftest.py); scripts/differential-fuzz.py runs
thousands of examples and prints every shrunk difference as files.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from differential.deviations import DEVIATIONS_FILE, RECOGNISERS, classify, documented_deviations
from differential.findings import report
from differential.inventory_strategy import InventoryCase, inventories
from differential.known_open import KNOWN_OPEN
from differential.runner import HANG, DifferentialRunner, Outcome, Rendering, ToolWorker
from hypothesis import Phase, given, settings
from inventory_writer import write_inventory

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = REPO / "tests" / "conformance"
# Enough to meet most constructs every run: about a minute on a quiet machine, three on a busy
# one (measured 0.35-1.2 s an example, both tools). No shrinking phase: at that cost a shrink
# runs for minutes, and the example is printed as files anyway; scripts/differential-fuzz.py
# shrinks.
EXAMPLES = 100
KINDS = {"kapicorp-crashes", "kapicorp-hangs", "kapicorp-corrupts",
         "reclass-ng-fix-behind-setting", "reclass-ng-extension", "reclass-ng-order"}


@pytest.fixture(scope="module")
def differential_runner() -> Iterator[DifferentialRunner]:
    with DifferentialRunner() as runner:
        yield runner


def undocumented_differences(runner: DifferentialRunner, case: InventoryCase) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="differential-") as tmp:
        inventory = write_inventory(Path(tmp) / "inventory", case.files)
        return [report(case, rendering, inventory)
                for rendering in runner.render_both(inventory, case.nodes, case.whole_inventory)
                if classify(rendering, case, KNOWN_OPEN).kind == "difference"]


@pytest.mark.slow
@settings(max_examples=EXAMPLES,
          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])
@given(case=inventories())
def test_random_inventories_render_as_kapicorp_renders_them(
        differential_runner: DifferentialRunner, case: InventoryCase) -> None:
    differences = undocumented_differences(differential_runner, case)
    assert not differences, "reclass-ng differs from kapicorp-reclass (no documented deviation " \
        "explains it):\n" + "\n\n".join(differences)


def test_every_documented_deviation_has_a_recogniser_and_its_references_exist() -> None:
    entries = documented_deviations()
    ids = [entry["id"] for entry in entries]
    assert len(ids) == len(set(ids)), "duplicate ids in " + DEVIATIONS_FILE.name
    assert set(ids) == set(RECOGNISERS), (
        f"ids without a recogniser: {sorted(set(ids) - set(RECOGNISERS))}; recognisers "
        f"without an entry: {sorted(set(RECOGNISERS) - set(ids))}")
    sections = (REPO / "doc" / "compatibility.rst").read_text(encoding="utf-8")
    for entry in entries:
        assert set(entry) == {"id", "summary", "doc", "scenarios", "kind"}, entry
        assert entry["kind"] in KINDS, entry
        assert f"\n{entry['doc']}\n" in sections, \
            f"{entry['id']}: no section {entry['doc']!r} in doc/compatibility.rst"
        for scenario in entry["scenarios"]:
            assert (CONFORMANCE / scenario / "scenario.json").exists(), \
                f"{entry['id']}: no conformance scenario {scenario}"


def test_a_tool_that_does_not_answer_is_a_hang_and_is_replaced(tmp_path: Path) -> None:
    """The timeout path of the runner, with a real process that never answers."""
    silent = ToolWorker("silent", [sys.executable, "-c", "import time; time.sleep(600)"], {})
    try:
        assert silent.run(tmp_path, [["--inventory"]], timeout=0.5) == [HANG]
        assert silent.run(tmp_path, [["--inventory"]], timeout=0.5) == [HANG]
    finally:
        silent.stop()


def test_a_difference_no_deviation_explains_is_reported_with_its_files(
        differential_runner: DifferentialRunner) -> None:
    """The fuzzer can fail: an inventory on which reclass-ng, told a setting kapicorp does not
    read, renders differently (kapicorp 2.0.0 reads kapicorp-reclass-config.yml only)."""
    case = InventoryCase(
        files={"nodes/n1.yml": "classes: [missing]\nparameters: {a: 1}\n",
               "reclass-config.yml": "ignore_class_notfound: true\n"},
        nodes=["n1"])
    [difference] = undocumented_differences(differential_runner, case)
    assert "--- nodes/n1.yml\nclasses: [missing]" in difference
    assert "kapicorp exit 65, reclass-ng exit 0" in difference


def test_kapicorp_crash_with_reclass_ng_data_is_the_documented_deviation(
        differential_runner: DifferentialRunner) -> None:
    """Issue 36 group 3: an empty reclass-config.yml crashes kapicorp (TypeError)."""
    case = InventoryCase(files={"nodes/n1.yml": "parameters: {a: 1}\n",
                                "reclass-config.yml": "", "kapicorp-reclass-config.yml": ""},
                         nodes=["n1"])
    with tempfile.TemporaryDirectory(prefix="differential-") as tmp:
        inventory = write_inventory(Path(tmp) / "inventory", case.files)
        renderings = differential_runner.render_both(inventory, case.nodes)
    assert [rendering.kapicorp.status for rendering in renderings] == [1]
    assert "TypeError" in renderings[0].kapicorp.stderr
    assert [classify(rendering, case).label for rendering in renderings] == ["empty-config-file"]


def test_a_reclass_ng_crash_is_never_explained_by_a_deviation() -> None:
    case = InventoryCase(files={}, nodes=["n1"])
    crash = Outcome(1, "", "Traceback (most recent call last):\n  ...\nKeyError: 'a'\n")
    assert classify(Rendering("n1", HANG, crash), case).kind == "difference"
    assert classify(Rendering("n1", Outcome(1, "", "TypeError"), HANG), case).kind == \
        "difference"
    # Nor by agreement: kapicorp's clean error and reclass-ng's crash are not "both failed".
    data_error = Outcome(65, "", "-> n1\n   Cannot resolve ${a}\n")
    assert classify(Rendering("n1", data_error, crash), case).kind == "difference"


# The issue's own minimal cases and the fuzzer's findings: each agrees (fixed), is recognised by
# its known-open entry, or, where it became a documented deviation, by that deviation's
# recogniser (DEVIATION_OF_CASE); never an unexplained difference.
ISSUE_CASES = {
    "g1-failed-export-reference": {
        "nodes/n1.yml": "parameters:\n  q: '$[ exports:a ]'\n",
        "nodes/n2.yml": "exports:\n  a: '${x}'\nparameters:\n  x: '${nope}'\n",
        "nodes/n3.yml": "exports:\n  a: 3\n"},
    "g1-nested-reference-with-blank": {
        "nodes/n1.yml": "parameters:\n  b: k\n  ka: 1\n  'k a': 2\n  v: '${${b} a}'\n"},
    "g1-nested-prefixes": {
        "nodes/n1.yml": "parameters:\n  '~a': {'~b': 1, c: {'=d': 2}}\n  '=e': {'~f': 3}\n"},
    "g1-override-inside-referenced-dict": {
        "classes/c.yml": "parameters:\n  b: {l: [1]}\n  '~a': {'~l': [2]}\n",
        "nodes/n1.yml": "classes: [c]\nparameters:\n  b: '${a}'\n"},
    "g1-ignore-errors-drops-whole-export": {
        "nodes/n1.yml": "parameters:\n  q: '$[ +IgnoreErrors exports:ed ]'\n",
        "nodes/n2.yml": "exports:\n  ed: {k1: '${nope}', k2: 2}\n"},
    "g1-dict-merged-into-its-reference": {
        "classes/c.yml": "parameters:\n  y: '${b}'\n  b: {x: '${a}'}\n",
        "nodes/n1.yml": "classes: [c]\nparameters:\n  y: {x: 1}\n  b: {x: 2}\n"},
    "finding-1-key-plain-and-prefixed": {"nodes/n1.yml": "parameters:\n  '=a': 1\n  a: 2\n"},
    "finding-2-prefixed-then-plain-container": {
        "nodes/n1.yml": "parameters:\n  '~a': {x: 1}\n  a: {y: 2}\n"},
    "finding-3-constant-error-in-other-node": {
        "classes/c.yml": "parameters:\n  '=k': 1\n", "classes/d.yml": "parameters:\n  k: 2\n",
        "nodes/n1.yml": "classes: [c, d]\nexports:\n  a: 1\n",
        "nodes/n2.yml": "parameters:\n  q: '$[ exports:a ]'\n"},
}


DEVIATION_OF_CASE = {"g1-dict-merged-into-its-reference": "reference-merge-keeps-target"}


@pytest.mark.parametrize("label", sorted(ISSUE_CASES))
def test_an_open_issue_case_is_recognised_by_its_entry_or_agrees(
        differential_runner: DifferentialRunner, label: str) -> None:
    files = ISSUE_CASES[label]
    case = InventoryCase(files=files, nodes=sorted(Path(path).stem for path in files
                                                   if path.startswith("nodes/")))
    with tempfile.TemporaryDirectory(prefix="differential-") as tmp:
        inventory = write_inventory(Path(tmp) / "inventory", case.files)
        renderings = differential_runner.render_both(inventory, case.nodes, False)
    verdicts = {classify(rendering, case, KNOWN_OPEN) for rendering in renderings}
    expected = DEVIATION_OF_CASE.get(label, label)
    assert all(verdict.kind == "agree" or verdict.label == expected for verdict in verdicts), \
        verdicts


# Differences scripts/differential-fuzz.py found that a documented deviation explains; each
# once fell through to "difference" (or to the catch-all kapicorp-crashes).
DEVIATION_CASES = {
    # kapicorp: "Bad references ... ${d:1:1}" (D2 reached through a nested reference).
    "reference-ends-in-list-index": {
        "nodes/n1.yml": "parameters:\n  d: [{}, [1, 0, '${d:${d:1:1}}']]\n"},
    # Rendering the node whose export is a query: kapicorp's AttributeError, reclass-ng renders.
    "query-as-export-value": {"nodes/n1.yml": "exports:\n  e: '$[ exports:a ]'\n  a: 1\n"},
    # Findings 4 and 5 of the fuzzer (/work/h36-findings.md).
    "list-item-references-its-list": {"nodes/n1.yml": "parameters:\n  d: ['\\\\${d}']\n"},
    "query-in-list-over-null#overriding-scalar": {
        "classes/c.yml": "parameters:\n  d: 1\n",
        "nodes/n1.yml": "classes: [c]\nparameters:\n  '~d': ['$[ exports:x ]']\n"
                        "exports:\n  a: ['${d}']\n",
        "nodes/n2.yml": "exports:\n  x: 1\n"},
    # Finding 7 (/work/h36-findings.md), reduced: a query path through a list index. kapicorp
    # leaves every node out (value and `if` forms), a failing item below the index is no error
    # there, and a list holding the index as text crashes it (TypeError).
    "query-path-through-list-index": {
        "nodes/n1.yml": "parameters:\n  d: '$[ +IgnoreErrors exports:a:0:1 ]'\n",
        "nodes/n2.yml": "exports:\n  a: [[1, 2], ['${nope}']]\n"},
    "query-path-through-list-index#if-test": {
        "nodes/n1.yml": "parameters:\n  d: '$[ if exports:a:0 != 1 ]'\n",
        "nodes/n2.yml": "exports:\n  a: [2]\n"},
    "query-path-through-list-index#failing-item": {
        "nodes/n1.yml": "parameters:\n  d: '$[ exports:a:0 ]'\n",
        "nodes/n2.yml": "exports:\n  a: ['${nope}']\n"},
    "query-path-through-list-index#index-as-text": {
        "nodes/n1.yml": "parameters:\n  d: '$[ exports:a:0 ]'\n",
        "nodes/n2.yml": "exports:\n  a: ['0']\n"},
    # Finding 6 (/work/h36-findings.md), reduced: kapicorp reads the target of a reference
    # through a list index unrendered when the reference comes first.
    "reference-through-list-index-before-its-target": {
        "nodes/n1.yml": "parameters:\n  s: 'x${d:0:a}'\n  d: [{a: '$[ if exports:a == 1 ]'}]\n",
        "nodes/n2.yml": "exports:\n  a: 1\n"},
    "reference-through-list-index-before-its-target#reference": {
        "nodes/n1.yml": "parameters:\n  s: 'x${d:0:a:k}'\n  d: [{a: {k: '${y}'}}]\n  y: 1\n"},
    "reference-through-list-index-before-its-target#dict": {
        "nodes/n1.yml": "parameters:\n  s: 'x${d:0:a}'\n  d: [{a: {k: '${y}'}}]\n  y: 1\n"},
    # scripts/differential-fuzz.py --seed 3607: a container referenced in a string before its
    # values are rendered; kapicorp prints their Value(RefItem(...)) / Value(InvItem(...)).
    "container-in-string#before-its-values": {
        "nodes/n1.yml": "parameters:\n  s: 'x${a}'\n  a: {k: '${y}'}\n  y: 1\n"
                        "  t: 'x${l}'\n  l: [[1], '$[ exports:e ]']\n",
        "nodes/n2.yml": "exports:\n  e: 1\n"},
    # scripts/differential-fuzz.py --seed 36071, reduced: the value kapicorp prints unrendered
    # cannot be rendered; reclass-ng fails the query.
    "container-in-string#failing-value": {
        "nodes/n1.yml": "parameters:\n  q: '$[ exports:k ]'\n",
        "nodes/n2.yml": "parameters:\n  b: ['${nope}']\nexports:\n  k: 'x${b}'\n"},
    # scripts/differential-fuzz.py --seed 36071, reduced: an answer through a list index
    # referenced in a string; a self: operand that holds its own query.
    "query-path-through-list-index#in-a-string": {
        "nodes/n1.yml": "parameters:\n  q: '$[ exports:c:0 ]'\n  s: 'x${q}y'\n",
        "nodes/n2.yml": "exports:\n  c: [1]\n"},
    "query-self-operand-holds-the-query": {
        "nodes/n1.yml": "parameters:\n  b: '${d}'\n"
                        "  d: ['$[ exports:k if self:b != exports:k ]']\n",
        "nodes/n2.yml": "exports:\n  k: 1\n"},
    # scripts/differential-fuzz.py --seed 3607: a node's export reads its own query parameter.
    "query-read-by-an-export": {
        "nodes/n1.yml": "parameters:\n  a: '$[ exports:a ]'\nexports:\n  a: '${a}'\n"},
    "query-read-by-an-export#other-node": {
        "nodes/n1.yml": "parameters:\n  r: '$[ exports:a ]'\n",
        "nodes/n2.yml": "parameters:\n  q: '$[ exports:b ]'\nexports:\n  a: '${q}'\n",
        "nodes/n3.yml": "exports:\n  b: 1\n"},
    "query-in-list-over-null": {
        "classes/c.yml": "parameters:\n  l: null\n",
        "nodes/n1.yml": "classes: [c]\nparameters:\n  l: ['$[ exports:a ]']\n",
        "nodes/n2.yml": "exports:\n  a: 1\n"},
}


@pytest.mark.parametrize("deviation_id", sorted(DEVIATION_CASES))
def test_a_found_difference_is_recognised_by_its_deviation(
        differential_runner: DifferentialRunner, deviation_id: str) -> None:
    files = DEVIATION_CASES[deviation_id]
    case = InventoryCase(files=files, nodes=sorted(Path(path).stem for path in files
                                                   if path.startswith("nodes/")))
    with tempfile.TemporaryDirectory(prefix="differential-") as tmp:
        inventory = write_inventory(Path(tmp) / "inventory", case.files)
        renderings = differential_runner.render_both(inventory, case.nodes, False)
    verdicts = [classify(rendering, case, KNOWN_OPEN) for rendering in renderings]
    deviation_id = deviation_id.partition("#")[0]  # "id#case": one more case of a deviation
    assert all(verdict.kind == "agree" or verdict.label == deviation_id
               for verdict in verdicts), verdicts
    assert any(verdict.kind == "deviation" for verdict in verdicts), verdicts
