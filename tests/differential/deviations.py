"""Recognisers of the documented deviations from kapicorp-reclass.

doc/compatibility-deviations.yml lists each deliberate or accepted difference (id, summary, the
section of doc/compatibility.rst, corpus scenarios, kind). Here each id has one recogniser: a
function that looks at a differing rendering (both tools' exit status, output and errors) and
the generated inventory, and says whether that deviation explains the difference. A difference
that no recogniser explains fails the fuzzer. A recogniser must be narrow: it explains one
documented behaviour, and never a crash or hang of reclass-ng (classify() rules those out
before asking any recogniser).

To add a deviation: an entry in the YAML file and a function here decorated with
`@recognises("its-id")`; tests/test_differential.py checks that both sides match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from differential.compare import differing_paths, outcomes_agree, parsed_output
from differential.inventory_strategy import InventoryCase
from differential.runner import Rendering

DEVIATIONS_FILE = Path(__file__).resolve().parents[2] / "doc" / "compatibility-deviations.yml"

Recogniser = Callable[[Rendering, InventoryCase], bool]
RECOGNISERS: dict[str, Recogniser] = {}


def recognises(deviation_id: str) -> Callable[[Recogniser], Recogniser]:
    """Register the decorated function as the recogniser of `deviation_id`."""
    def register(function: Recogniser) -> Recogniser:
        assert deviation_id not in RECOGNISERS, deviation_id
        RECOGNISERS[deviation_id] = function
        return function
    return register


def documented_deviations() -> list[dict[str, Any]]:
    """The entries of doc/compatibility-deviations.yml."""
    return yaml.safe_load(DEVIATIONS_FILE.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Verdict:
    """How one rendering compares: `agree`, `deviation` (label: its id), `known-open` (label:
    the issue case) or `difference` (nothing explains it)."""

    kind: str
    label: str = ""


def classify(rendering: Rendering, case: InventoryCase,
             known_open: dict[str, Recogniser] | None = None) -> Verdict:
    """Agreement, a documented deviation, a listed known open case, or a difference."""
    if outcomes_agree(rendering):
        return Verdict("agree", "both rendered" if rendering.kapicorp.ok else "both failed")
    ours = rendering.reclass_ng
    if ours.hung or ours.crashed or "Traceback (most recent call last)" in ours.stderr:
        return Verdict("difference")  # reclass-ng never crashes nor hangs, whatever kapicorp does
    for deviation_id, recogniser in RECOGNISERS.items():
        if recogniser(rendering, case):
            return Verdict("deviation", deviation_id)
    for case_label, recogniser in (known_open or {}).items():
        if recogniser(rendering, case):
            return Verdict("known-open", case_label)
    return Verdict("difference")


def both_ok(rendering: Rendering) -> bool:
    return rendering.kapicorp.ok and rendering.reclass_ng.ok


def only_kapicorp_failed(rendering: Rendering) -> bool:
    theirs = rendering.kapicorp
    return not theirs.ok and not theirs.hung and rendering.reclass_ng.ok


def equal_ignoring(rendering: Rendering, ignore: Callable[[Any, Any], bool]) -> bool:
    """Both printed JSON, equal except where `ignore(kapicorp value, reclass-ng value)`."""
    if not both_ok(rendering):
        return False
    whole = rendering.node is None
    try:
        theirs = parsed_output(rendering.kapicorp, whole)
        ours = parsed_output(rendering.reclass_ng, whole)
    except ValueError:
        return False
    return next(differing_paths(theirs, ours, ignore=ignore), None) is None


# Ordered from the most specific to the most general: the first that matches names the
# deviation in reports.

@recognises("kapicorp-cannot-serialise")
def kapicorp_cannot_serialise(rendering: Rendering, case: InventoryCase) -> bool:
    """kapicorp crashes writing its JSON: a YAML date (D11) or one of its internal ValueList
    objects left in the data ("Object of type ValueList is not JSON serializable")."""
    theirs = rendering.kapicorp
    return theirs.crashed and "is not JSON serializable" in theirs.stderr


@recognises("kapicorp-prints-internal-objects")
def kapicorp_prints_internal_objects(rendering: Rendering, case: InventoryCase) -> bool:
    """kapicorp renders a value as the repr of its internal object
    (`<reclass.values.valuelist.ValueList object at 0x7f...>`), inside a string or as one;
    reclass-ng has a value there. Everything else must be equal."""
    def internal(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, str) and INTERNAL_OBJECT.search(theirs) is not None
    return INTERNAL_OBJECT.search(rendering.kapicorp.stdout) is not None \
        and equal_ignoring(rendering, internal)


INTERNAL_OBJECT = re.compile(r"<reclass\.[\w.]+ object at 0x[0-9a-f]+>")


@recognises("kapicorp-hangs")
def kapicorp_hangs(rendering: Rendering, case: InventoryCase) -> bool:
    """kapicorp does not answer within the timeout (a reference loop through a dict); reclass-ng
    answered (classify() has ruled out a reclass-ng hang)."""
    return rendering.kapicorp.hung


@recognises("reference-ends-in-list-index")
def reference_ends_in_list_index(rendering: Rendering, case: InventoryCase) -> bool:
    """D2: kapicorp cannot resolve a reference whose last component is a list index; every
    reference it reports is of that form and reclass-ng rendered."""
    if not only_kapicorp_failed(rendering):
        return False
    unresolved = re.findall(r"Cannot resolve \$\{([^}]*)\}", rendering.kapicorp.stderr)
    return bool(unresolved) and all(re.search(r"(^|:)-?\d+$", path) for path in unresolved)


@recognises("class-name-reference-resolved-completely")
def class_name_reference_resolved_completely(rendering: Rendering,
                                             case: InventoryCase) -> bool:
    """D7: a reference in a class name whose value holds a reference; kapicorp looks for a
    class named by the unrendered text (`Class ${x} not found`, or skips it with
    ignore_class_notfound and says so), reclass-ng renders the name completely."""
    if rendering.reclass_ng.hung or rendering.kapicorp.hung:
        return False
    unrendered = re.search(r"(Class \S*\$\{[^']*not found|class not found: '[^']*\$\{)",
                           rendering.kapicorp.stderr)
    return unrendered is not None and case.uses("${")


@recognises("all-envs-per-query")
def all_envs_per_query(rendering: Rendering, case: InventoryCase) -> bool:
    """D8: with nodes in several environments, kapicorp's `+AllEnvs` widens every query of the
    node (and --inventory ignores environments); reclass-ng widens only the query that says
    so. The fuzzer compares such inventories node by node."""
    return not case.whole_inventory and case.uses("+AllEnvs") and case.uses("$[")


@recognises("ignore-failed-render-setting")
def ignore_failed_render_setting(rendering: Rendering, case: InventoryCase) -> bool:
    """D9: `inventory_ignore_failed_render: true` leaves failing nodes out of query results in
    reclass-ng; kapicorp ignores the setting and fails the query."""
    return case.settings.get("inventory_ignore_failed_render") is True \
        and only_kapicorp_failed(rendering) \
        and "Failed inv query" in rendering.kapicorp.stderr


@recognises("tab-kept-in-string-with-reference")
def tab_kept_in_string_with_reference(rendering: Rendering, case: InventoryCase) -> bool:
    """D13: kapicorp expands tabs to spaces in a string that holds a reference (pyparsing's
    expandtabs); reclass-ng keeps the tab. Strings equal once every run of blanks is one."""
    def expanded_tab(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, str) and isinstance(ours, str) and "\t" in ours \
            and re.sub(r"[ \t]+", " ", theirs) == re.sub(r"[ \t]+", " ", ours)
    return equal_ignoring(rendering, expanded_tab)


@recognises("nodes-in-sorted-order")
def nodes_in_sorted_order(rendering: Rendering, case: InventoryCase) -> bool:
    """reclass-ng reads nodes in sorted order; kapicorp in directory enumeration order, which
    shows in the node list of a `$[ if ... ]` query."""
    names = set(case.nodes)

    def reordered_nodes(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, list) and isinstance(ours, list) \
            and all(isinstance(item, str) and item in names for item in theirs) \
            and sorted(theirs) == sorted(ours)
    return equal_ignoring(rendering, reordered_nodes)


@recognises("kapicorp-crashes")
def kapicorp_crashes(rendering: Rendering, case: InventoryCase) -> bool:
    """D1 and issue 36 group 3: kapicorp ends with an uncaught Python exception (exit 1:
    TypeError on an empty reclass-config.yml, AttributeError on a query in a list over null,
    RecursionError on a loop); reclass-ng renders, or reports a data error."""
    return rendering.kapicorp.crashed
