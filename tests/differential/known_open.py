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

from differential.deviations import Recogniser, equal_ignoring, only_kapicorp_failed
from differential.inventory_strategy import InventoryCase
from differential.runner import Rendering


def only_reclass_ng_failed(rendering: Rendering) -> bool:
    return rendering.kapicorp.ok and not rendering.reclass_ng.ok


def without_prefix(key: str) -> str:
    return key[1:] if key[:1] in ("~", "=") else key


def g1_failed_export_reference(rendering: Rendering, case: InventoryCase) -> bool:
    """Group 1, cases 1 and 2: an export whose reference cannot be rendered; kapicorp gives the
    other nodes' values (and null for it), reclass-ng fails the query ("Failed inv query")."""
    return only_reclass_ng_failed(rendering) and "Failed inv query" in rendering.reclass_ng.stderr


def g1_recursion_kapicorp_renders(rendering: Rendering, case: InventoryCase) -> bool:
    """Group 1, case 3: a reference through a dict merged over null (`b: null`, `d: '${b:a}'`,
    node `b: {c: '${x}'}`); kapicorp renders, reclass-ng reports "Infinite recursion"."""
    return only_reclass_ng_failed(rendering) and \
        "Infinite recursion" in rendering.reclass_ng.stderr


def g1_nested_prefixes(rendering: Rendering, case: InventoryCase) -> bool:
    """Group 1, case 5: below a key with a `~`/`=` prefix, kapicorp keeps the prefixes of the
    keys (`~a: {~b: 1}` gives `a: {~b: 1}`); reclass-ng strips them. The keys differ, and
    so does everything that depends on them (a reference to `a:b` finds nothing in kapicorp,
    an override does not apply): any difference of an inventory with such keys counts."""
    if prefixed_below_prefixed(case):
        return True
    def prefixes_stripped(theirs: Any, ours: Any) -> bool:
        if not (isinstance(theirs, dict) and isinstance(ours, dict)):
            return False
        if not any(key[:1] in ("~", "=") for key in theirs):
            return False
        if {without_prefix(key) for key in theirs} != ours.keys():
            return False
        # `=a` and `a` side by side below a prefixed key: kapicorp keeps both, reclass-ng one.
        return all(any(equal_values(item, ours[without_prefix(key)], prefixes_stripped)
                       for key, item in theirs.items() if without_prefix(key) == our_key)
                   for our_key in ours)
    return equal_ignoring(rendering, prefixes_stripped)


def equal_values(theirs: Any, ours: Any, ignore: Any) -> bool:
    from differential.compare import differing_paths

    return next(differing_paths(theirs, ours, ignore=ignore), None) is None


def g1_ignore_errors_drops_whole_export(rendering: Rendering, case: InventoryCase) -> bool:
    """Group 1, case 6: `+IgnoreErrors` over an export dict with one failing key; kapicorp keeps
    the other keys (`{"n2": {"k2": 2}}`), reclass-ng leaves the node out (`{}`)."""
    def fewer_entries(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, dict) and isinstance(ours, dict) and ours.keys() < theirs.keys()
    return case.uses("+IgnoreErrors") and equal_ignoring(rendering, fewer_entries)


def g1_nested_reference_with_blank(rendering: Rendering, case: InventoryCase) -> bool:
    """Group 1, case 4: `v: '${${b} a}'` with `b: k`; kapicorp looks up `ka` (the blank is
    lost), reclass-ng `k a`. kapicorp fails where `ka` does not exist."""
    return case.uses("} a}") and (both_rendered(rendering) or only_kapicorp_failed(rendering))


def both_rendered(rendering: Rendering) -> bool:
    return rendering.kapicorp.ok and rendering.reclass_ng.ok


def g1_node_name_in_overridden_export(rendering: Rendering, case: InventoryCase) -> bool:
    """Group 1, case 7: an override holding `${_reclass_:name:short}`, exported and queried;
    the two tools disagree on which node's name each export carries."""
    names = {part for node in case.nodes for part in (node, node.rsplit(".", 1)[-1])}

    def other_node_name(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, str) and isinstance(ours, str) \
            and theirs in names and ours in names
    return case.uses("_reclass_:name") and case.uses("$[") \
        and equal_ignoring(rendering, other_node_name)


def g1_override_inside_referenced_dict(rendering: Rendering, case: InventoryCase) -> bool:
    """Group 1, case 8: a `~key` inside a dict that is referenced elsewhere; kapicorp
    overrides where the reference is merged in (`[2]`), reclass-ng merges (`[1, 2]`)."""
    def merged_not_overridden(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, list) and isinstance(ours, list) \
            and len(ours) > len(theirs) and ours[len(ours) - len(theirs):] == theirs
    return case.uses('"~') and equal_ignoring(rendering, merged_not_overridden)


def g1_dict_merged_into_its_reference(rendering: Rendering, case: InventoryCase) -> bool:
    """Group 1, case 9: class `y: '${b}'`, `b: {x: '${a}'}`, node `y: {x: 1}`, `b: {x: 2}`;
    kapicorp merges the node's `y` into `b` too (`b: {x: 1}`), reclass-ng keeps `b: {x: 2}`.
    Recognised when every differing path lies below a key some whole-string reference names."""
    import re

    from differential.compare import differing_paths, parsed_output

    if not both_rendered(rendering):
        return False
    whole_references = re.compile(r"""[:-][ ]+(["']?)\$\{([^${}]+)\}\1[ ]*$""", re.MULTILINE)
    targets = {match[1].replace(":", "/") for text in case.files.values()
               for match in whole_references.findall(text)}
    whole = rendering.node is None
    try:
        paths = list(differing_paths(parsed_output(rendering.kapicorp, whole),
                                     parsed_output(rendering.reclass_ng, whole)))
    except ValueError:
        return False
    below = [path.split("/parameters/", 1)[-1] for path in paths]
    return bool(paths) and all("/parameters/" in path for path in paths) and all(
        any(path == target or path.startswith(target + "/") for target in targets)
        for path in below)


def g2_kapicorp_fails_reclass_ng_renders(phrase: str) -> Recogniser:
    """Group 2: kapicorp fails cleanly with `phrase`, reclass-ng returns data."""
    def recognise(rendering: Rendering, case: InventoryCase) -> bool:
        return only_kapicorp_failed(rendering) and phrase in rendering.kapicorp.stderr
    return recognise


def loaded_files(case: InventoryCase) -> list[Any]:
    """The YAML documents of the node and class files (those that load)."""
    import yaml

    documents = []
    for path, text in case.files.items():
        if path.startswith(("nodes/", "classes/")):
            try:
                documents.append(yaml.safe_load(text))
            except yaml.YAMLError:
                continue
    return documents


def prefixed_below_prefixed(case: InventoryCase) -> bool:
    """Whether a key with a `~`/`=` prefix sits (at any depth) below another prefixed key."""
    def walk(value: Any, below_prefixed: bool) -> bool:
        if isinstance(value, dict):
            return any((below_prefixed and str(key)[:1] in ("~", "="))
                       or walk(item, below_prefixed or str(key)[:1] in ("~", "="))
                       for key, item in value.items())
        return isinstance(value, list) and any(walk(item, below_prefixed) for item in value)
    return any(walk(document, False) for document in loaded_files(case))


def mappings_with_both_key_forms(case: InventoryCase) -> bool:
    """Whether a mapping of some file holds a key both plain and prefixed (`a` and `~a`)."""
    def walk(value: Any) -> bool:
        if isinstance(value, dict):
            plain = [without_prefix(str(key)) for key in value]
            return len(plain) != len(set(plain)) or any(walk(item) for item in value.values())
        return isinstance(value, list) and any(walk(item) for item in value)
    return any(walk(document) for document in loaded_files(case))


def finding_1_key_plain_and_prefixed(rendering: Rendering, case: InventoryCase) -> bool:
    """Finding 1: one mapping holds `a` and `~a` (or `=a`); kapicorp merges the two in file
    order (`=a: 1` then `a: 2`: "Attempt to change constant value"; `~a: {x: 1}` then `a: ""`:
    "Cannot merge scalar over dictionary"), reclass-ng keeps the later one."""
    return only_kapicorp_failed(rendering) and mappings_with_both_key_forms(case) and any(
        phrase in rendering.kapicorp.stderr
        for phrase in ("Attempt to change constant value", "Cannot merge"))


def finding_2_prefixed_then_plain_container(rendering: Rendering, case: InventoryCase) -> bool:
    """Finding 2: one mapping holds `~a: {x: 1}` then `a: {y: 2}` (or lists); kapicorp merges
    them (`a: {x: 1, y: 2}`, `[1, 2]`), reclass-ng fails "Cannot merge dictionary over scalar"
    pointing twice at the same place."""
    return only_reclass_ng_failed(rendering) and mappings_with_both_key_forms(case) \
        and "Cannot merge" in rendering.reclass_ng.stderr


def finding_3_constant_error_in_other_node(rendering: Rendering, case: InventoryCase) -> bool:
    """Finding 3: another node's parameters change a constant (`=k: 1` in one class, `k: 2` in
    the next); kapicorp's query ignores it (it renders only the exports it needs), reclass-ng
    fails the querying node ("Inventory Queries: -> n1 Attempt to change constant value")."""
    ours = rendering.reclass_ng.stderr
    return only_reclass_ng_failed(rendering) and "Inventory Queries" in ours \
        and "Attempt to change constant value" in ours


KNOWN_OPEN: dict[str, Recogniser] = {
    "finding-1-key-plain-and-prefixed": finding_1_key_plain_and_prefixed,
    "finding-2-prefixed-then-plain-container": finding_2_prefixed_then_plain_container,
    "finding-3-constant-error-in-other-node": finding_3_constant_error_in_other_node,
    "g1-failed-export-reference": g1_failed_export_reference,
    "g1-recursion-kapicorp-renders": g1_recursion_kapicorp_renders,
    "g1-nested-prefixes": g1_nested_prefixes,
    "g1-ignore-errors-drops-whole-export": g1_ignore_errors_drops_whole_export,
    "g1-nested-reference-with-blank": g1_nested_reference_with_blank,
    "g1-node-name-in-overridden-export": g1_node_name_in_overridden_export,
    "g1-override-inside-referenced-dict": g1_override_inside_referenced_dict,
    "g1-dict-merged-into-its-reference": g1_dict_merged_into_its_reference,
    # Group 2: `b: {d: null}` then `b: {d: {l: [1]}}` (reclass-ng duplicated the list).
    "g2-dict-merged-under-null": g2_kapicorp_fails_reclass_ng_renders(
        "Cannot merge scalar over dictionary"),
    # Group 2: `$[ if foo:a == 1 ]`, a test without an `exports:` side.
    "g2-query-test-without-export": g2_kapicorp_fails_reclass_ng_renders("No export"),
    # Group 1 case 8 and group 2: a query test against a `self:` value that is null.
    "g2-self-null-in-query-test": g2_kapicorp_fails_reclass_ng_renders("Failed to render"),
}
