"""Known open differences: cases of issue 36 (groups 1 and 2, and the fuzzer's own findings
appended to it) that reclass-ng does not yet answer as kapicorp does.

TEMPORARY. Each entry is keyed by its case in the issue ("g1-..." for group 1, "g2-..." for
group 2, "finding-N" for entry N of the findings the fuzzer added to the issue), is recognised
as narrowly as its symptom allows, and goes away when the fix lands: then the fuzzer must agree
with kapicorp, or the case becomes a documented deviation (doc/compatibility-deviations.yml and
a recogniser in deviations.py). tests/test_differential.py and scripts/differential-fuzz.py
report these apart from agreements and deviations, so what is still open stays visible.
"""

from __future__ import annotations

from typing import Any

from differential.deviations import Recogniser, equal_ignoring
from differential.inventory_strategy import InventoryCase
from differential.runner import Rendering

# Nothing of issue 36 is left open after h36-fix and h36-prefix: group 1 cases 1-6 and 8
# (case 5, the nested prefixes, and 8: scenarios fuzz-tilde-nested-*), group 2 (no-export test,
# self: null, dict merged under null) and findings 1-3 (finding 3: scenarios
# fuzz-query-constant-changed-in-*) agree with kapicorp; cases 7, 9, the dict merged under a
# null and findings 4 and 5 are documented deviations (doc/compatibility-deviations.yml:
# list-item-references-its-list; finding 5 is query-in-list-over-null's crash, reached by a
# `~` key). A new open case goes here with its recogniser until it is fixed or documented.


def finding_6_reference_to_a_query_in_a_string_gives_its_text(rendering: Rendering,
                                                                case: InventoryCase) -> bool:
    """Finding 6 (/work/h36-findings.md): a reference inside a longer string (`\\\\${d:0:k:a}`)
    to a key whose value is an `if` query: kapicorp puts the query's parsed text into the
    string (`\\IF exports:a != None AND exports:a == n1`), reclass-ng its answer. Likely a
    kapicorp corruption to document. Only that symptom: kapicorp's value is a string holding
    an upper-cased `IF` with an `exports:` path where reclass-ng's differs."""
    def query_text(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, str) and "IF exports:" in theirs and theirs != ours
    return case.uses("$[ if ") and equal_ignoring(rendering, query_text)


KNOWN_OPEN: dict[str, Recogniser] = {
    "finding-6-reference-to-a-query-in-a-string-gives-its-text":
        finding_6_reference_to_a_query_in_a_string_gives_its_text,
}
