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
    ours = rendering.reclass_ng
    # Before agreement: "both failed" must not cover a reclass-ng crash next to a kapicorp error.
    if ours.hung or ours.crashed or "Traceback (most recent call last)" in ours.stderr:
        return Verdict("difference")  # reclass-ng never crashes nor hangs, whatever kapicorp does
    if outcomes_agree(rendering):
        return Verdict("agree", "both rendered" if rendering.kapicorp.ok else "both failed")
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

def kapicorp_exception(rendering: Rendering) -> str:
    """The name of the uncaught exception kapicorp ended with ("" when it did not crash)."""
    if not rendering.kapicorp.crashed:
        return ""
    last = re.findall(r"^(\w+(?:Error|Exception)):", rendering.kapicorp.stderr, re.MULTILINE)
    return last[-1] if last else ""


def loaded_files(case: InventoryCase) -> list[Any]:
    """The YAML documents of the node and class files (those that load)."""
    documents = []
    for path, text in case.files.items():
        if path.startswith(("nodes/", "classes/")):
            try:
                documents.append(yaml.safe_load(text))
            except yaml.YAMLError:
                continue
    return documents


def any_value(value: Any, test: Callable[[Any], bool]) -> bool:
    """Whether `test` holds for `value` or anything nested in it (keys not included)."""
    if test(value):
        return True
    if isinstance(value, dict):
        return any(any_value(item, test) for item in value.values())
    return isinstance(value, list) and any(any_value(item, test) for item in value)


def is_query(value: Any) -> bool:
    return isinstance(value, str) and "$[" in value


def settings_files(case: InventoryCase) -> list[str]:
    return [text for path, text in case.files.items()
            if path in ("reclass-config.yml", "kapicorp-reclass-config.yml")]


@recognises("empty-config-file")
def empty_config_file(rendering: Rendering, case: InventoryCase) -> bool:
    """kapicorp reads an empty settings file as None and crashes ("TypeError: 'NoneType' object
    is not iterable"); reclass-ng uses the defaults."""
    return kapicorp_exception(rendering) == "TypeError" and rendering.reclass_ng.ok \
        and any(yaml.safe_load(text) is None for text in settings_files(case))


@recognises("ignore-errors-list-items")
def ignore_errors_list_items(rendering: Rendering, case: InventoryCase) -> bool:
    """+IgnoreErrors over an exported list with failing items: kapicorp removes the failing items
    while it walks the list and crashes with an IndexError; reclass-ng leaves them out."""
    return kapicorp_exception(rendering) == "IndexError" and rendering.reclass_ng.ok \
        and case.uses("+IgnoreErrors")


def query_texts(case: InventoryCase) -> list[str]:
    """The text inside every `$[ ... ]` of the node and class files."""
    return [query for path, text in case.files.items() if path.startswith(("nodes/", "classes/"))
            for query in re.findall(r"\$\[([^\]]*)\]", text)]


def has_list_index_path(query: str) -> bool:
    """Whether a query's text holds a path with a list index after its first component
    (`exports:a:0`, `exports:a:0:x`)."""
    return any(re.fullmatch(r"-?\d+", part) is not None
               for word in query.split() for part in word.split(":")[1:])


@recognises("query-path-through-list-index")
def query_path_through_list_index(rendering: Rendering, case: InventoryCase) -> bool:
    """A query path through a list index (`$[ exports:a:0:1 ]`): kapicorp looks the index up as
    text among the list's items, so it leaves every node out of the answer (value and `if`
    forms), never renders the item (a failing one is no error there) and crashes with a
    TypeError when the list holds that text; reclass-ng reads the item. Recognised when a query
    has such a path and: kapicorp's answers are ours with nodes left out (in a string that
    refers to one: kapicorp's empty `{}` / `[]` filled in ours); or ours
    failed in a
    query with such a path at a path through a list index while kapicorp rendered; or kapicorp's
    TypeError."""
    if not any(has_list_index_path(query) for query in query_texts(case)):
        return False
    theirs, ours = rendering.kapicorp, rendering.reclass_ng
    if kapicorp_exception(rendering) == "TypeError":
        return "list indices must be integers or slices, not str" in theirs.stderr \
            and (ours.ok or ours.status == 65)
    if theirs.ok and ours.status == 65:
        failed = re.findall(r"Failed inv query \$\[([^\]]*)\]", ours.stderr)
        return bool(failed) and all(has_list_index_path(query) for query in failed) \
            and re.search(r", at [^,\n]*:-?\d+(:|,)", ours.stderr) is not None
    names = set(case.nodes)

    def nodes_left_out(theirs_value: Any, ours_value: Any) -> bool:
        if isinstance(theirs_value, dict) and isinstance(ours_value, dict):
            return set(ours_value) <= names and set(theirs_value) < set(ours_value) \
                and all(theirs_value[node] == ours_value[node] for node in theirs_value)
        if isinstance(theirs_value, str) and isinstance(ours_value, str):
            # An answer referenced inside a string: kapicorp's empty one where ours has nodes.
            return filled_in(theirs_value, ours_value)
        return isinstance(theirs_value, list) and isinstance(ours_value, list) \
            and all(isinstance(item, str) for item in theirs_value + ours_value) \
            and set(ours_value) <= names and set(theirs_value) < set(ours_value)
    return equal_ignoring(rendering, nodes_left_out)


def filled_in(theirs: str, ours: str) -> bool:
    """Whether `ours` is `theirs` with each of its empty `{}` / `[]` filled with something (the
    text around them kept, in order; generated strings may hold unbalanced brackets, so the
    fillings are not parsed)."""
    pieces = re.split(r"\{\}|\[\]", theirs)
    if len(pieces) < 2 or len(ours) <= len(theirs) or not ours.startswith(pieces[0]) \
            or not ours.endswith(pieces[-1]):
        return False
    position = len(pieces[0])
    for piece in pieces[1:-1]:
        position = ours.find(piece, position + 1)
        if position < 0:
            return False
        position += len(piece)
    return position < len(ours) - len(pieces[-1])


@recognises("reference-through-list-index-before-its-target")
def reference_through_list_index_before_its_target(rendering: Rendering,
                                                   case: InventoryCase) -> bool:
    """A reference through a list index (`x ${d:0:a}`) rendered before its target: kapicorp
    never finds the target among the values still to render (the index compared as text), so
    it writes the target's unrendered text into the string: a reference (`${y}`), a query's
    parsed form (`IF exports:a == 1`, `exports:a`) or an internal `Value(...)` repr;
    reclass-ng writes the rendered value. Equal except for strings where kapicorp's holds
    more of those texts than ours. (The whole-value form is kapicorp-cannot-serialise.)"""
    if re.search(r"\$\{[^}]*:-?\d+:[^}]*\}", "".join(case.files.values())) is None:
        return False
    query_words = {word for query in query_texts(case) for word in query.split() if ":" in word}

    def unrendered_marks(text: str) -> int:
        return text.count("${") + text.count("Value(") + len(re.findall(r"\bIF\b", text)) \
            + sum(text.count(word) for word in query_words)

    def unrendered_text(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, str) and isinstance(ours, str) \
            and unrendered_marks(theirs) > unrendered_marks(ours)
    return equal_ignoring(rendering, unrendered_text)


@recognises("query-as-export-value")
def query_as_export_value(rendering: Rendering, case: InventoryCase) -> bool:
    """A query written as an export value: kapicorp crashes (AttributeError on None.items,
    it renders exports without an inventory); reclass-ng reports a data error (exit 65) where
    another node queries that export, and renders the node that holds it."""
    return kapicorp_exception(rendering) == "AttributeError" \
        and (rendering.reclass_ng.status == 65 or rendering.reclass_ng.ok) \
        and any(isinstance(document, dict) and any_value(document.get("exports"), is_query)
                for document in loaded_files(case))


@recognises("query-in-list-over-null")
def query_in_list_over_null(rendering: Rendering, case: InventoryCase) -> bool:
    """A query inside a list merged over a null, or replacing a scalar as a `~` key: kapicorp
    crashes (AttributeError on None.items), reclass-ng evaluates the query."""
    def list_with_query(value: Any) -> bool:
        return isinstance(value, list) and any(is_query(item) for item in value)

    def over_null_or_overriding(value: Any) -> bool:
        return isinstance(value, dict) and (None in value.values() or any(
            str(key)[:1] == "~" and list_with_query(item) for key, item in value.items()))
    documents = loaded_files(case)
    return kapicorp_exception(rendering) == "AttributeError" and rendering.reclass_ng.ok \
        and any(any_value(document, list_with_query) for document in documents) \
        and any(any_value(document, over_null_or_overriding) for document in documents)


@recognises("query-read-by-an-export")
def query_read_by_an_export(rendering: Rendering, case: InventoryCase) -> bool:
    """An export that refers to a parameter holding a query (`a: '${q}'`, `q: '$[ ... ]'`),
    rendered for another node's query: kapicorp renders exports without an inventory and
    crashes (AttributeError on None.items), reclass-ng does not evaluate queries inside a
    queried node, so the export is null there."""
    documents = [document for document in loaded_files(case) if isinstance(document, dict)]

    def reference(value: Any) -> bool:
        return isinstance(value, str) and "${" in value
    return kapicorp_exception(rendering) == "AttributeError" \
        and "'NoneType' object has no attribute 'items'" in rendering.kapicorp.stderr \
        and (rendering.reclass_ng.status == 65 or rendering.reclass_ng.ok) \
        and any(any_value(document.get("exports"), reference) for document in documents) \
        and any(any_value(document.get("parameters"), is_query) for document in documents)


@recognises("list-item-references-its-list")
def list_item_references_its_list(rendering: Rendering, case: InventoryCase) -> bool:
    """A string in a list refers to the list itself (`d: ['x${d}']`): reclass-ng reports the
    reference loop (exit 65); kapicorp exits 0 and prints its internal
    `Value(CompItem(...))` repr inside the string."""
    return rendering.kapicorp.ok and rendering.reclass_ng.status == 65 \
        and "Infinite recursion" in rendering.reclass_ng.stderr \
        and "CompItem(" in rendering.kapicorp.stdout


@recognises("query-self-operand-holds-the-query")
def query_self_operand_holds_the_query(rendering: Rendering, case: InventoryCase) -> bool:
    """A query test's `self:` operand refers to a container holding that query
    (`d: ['$[ exports:k if self:d != exports:k ]']`): reclass-ng reports the reference loop
    (exit 65); kapicorp compares the container as it is, the query unrendered, and answers."""
    return rendering.kapicorp.ok and rendering.reclass_ng.status == 65 \
        and "Infinite recursion" in rendering.reclass_ng.stderr \
        and any(" self:" in query for query in query_texts(case))


@recognises("reference-loop-through-dict")
def reference_loop_through_dict(rendering: Rendering, case: InventoryCase) -> bool:
    """A reference loop through a dict (`a: {b: '${c}'}`, `c: '${a}'`): kapicorp recurses until
    RecursionError or never answers; reclass-ng names the loop ("Infinite recursion") or, when
    the loop is not on the way of any value it needs, renders."""
    theirs_looped = rendering.kapicorp.hung or kapicorp_exception(rendering) == "RecursionError"
    ours = rendering.reclass_ng
    return theirs_looped and case.uses("${") and (
        ours.ok or (ours.status == 65 and "Infinite recursion" in ours.stderr))


@recognises("override-export-node-name")
def override_export_node_name(rendering: Rendering, case: InventoryCase) -> bool:
    """An overridden (`~`) dict holding `${_reclass_:name:short}`, exported and queried: kapicorp
    gives every exporting node the querying node's name, reclass-ng each node its own. Equal
    except where kapicorp has the querying node's name and reclass-ng another node's."""
    if rendering.node is None:
        return False
    names = {part for node in case.nodes for part in (node, node.rsplit(".", 1)[-1])}
    querying = {rendering.node, rendering.node.rsplit(".", 1)[-1]}

    def querying_node_name(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, str) and isinstance(ours, str) \
            and theirs in querying and ours in names and ours != theirs
    return case.uses("_reclass_:name") and case.uses("$[") and case.uses("~") \
        and equal_ignoring(rendering, querying_node_name)


@recognises("reference-merge-keeps-target")
def reference_merge_keeps_target(rendering: Rendering, case: InventoryCase) -> bool:
    """Class `y: '${b}'`, node `y: {x: 1}`: kapicorp writes what is merged over `y` into `b` too,
    reclass-ng leaves `b` its own value. Recognised when every differing path lies at or below
    a key that a whole-string reference names (`key: '${b}'`)."""
    if not both_ok(rendering):
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


@recognises("reference-to-dict-final-value")
def reference_to_dict_final_value(rendering: Rendering, case: InventoryCase) -> bool:
    """A reference to a dict of which a key is merged over a null (`b: {d: null}` then
    `b: {d: {l: [1]}}`): kapicorp fails "Cannot merge scalar over dictionary" when the referencing
    key comes first in its file; reclass-ng gives the dict's final value."""
    documents = loaded_files(case)
    return only_kapicorp_failed(rendering) \
        and re.search(r"Cannot merge (scalar|reference) over dictionary",
                      rendering.kapicorp.stderr) is not None \
        and case.uses("${") \
        and any(any_value(document, lambda value: isinstance(value, dict) and None in
                          value.values()) for document in documents)


@recognises("container-in-string")
def container_in_string(rendering: Rendering, case: InventoryCase) -> bool:
    """A reference to a dict or list inside a longer string: kapicorp may print the repr of its
    internal ValueList there, or, when the string is rendered before the container's values
    (a reference, a query), their `Value(RefItem(...))` reprs; reclass-ng the rendered
    container. Equal everywhere else, or reclass-ng failed (exit 65) where kapicorp printed
    such a repr: one of the values kapicorp never rendered cannot be rendered."""
    def embedded_reference(value: Any) -> bool:
        return isinstance(value, str) and "${" in value \
            and re.fullmatch(r"\$\{[^}]*\}", value.strip()) is None

    def internal_in_string(theirs: Any, ours: Any) -> bool:
        return isinstance(theirs, str) and isinstance(ours, str) \
            and (INTERNAL_OBJECT.search(theirs) is not None
                 or (VALUE_REPR.search(theirs) is not None and VALUE_REPR.search(ours) is None))
    printed_unrendered = VALUE_REPR.search(rendering.kapicorp.stdout) is not None
    if printed_unrendered and rendering.kapicorp.ok and rendering.reclass_ng.status == 65:
        # reclass-ng rendered the values kapicorp printed unrendered, and one of them failed.
        return any(any_value(document, embedded_reference) for document in loaded_files(case))
    return (INTERNAL_OBJECT.search(rendering.kapicorp.stdout) is not None or printed_unrendered) \
        and any(any_value(document, embedded_reference) for document in loaded_files(case)) \
        and equal_ignoring(rendering, internal_in_string)


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
# The repr of one of kapicorp's unrendered values (reclass.values.value.Value) and its item.
VALUE_REPR = re.compile(r"Value\((?:RefItem|InvItem|CompItem|ScaItem|DictItem|ListItem)\(")


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
    stderr = rendering.kapicorp.stderr
    unresolved = re.findall(r"Cannot resolve \$\{([^}]*)\}", stderr)
    # "Bad references" lists each reference it could not resolve on a line of its own (a
    # nested one, `${d:${d:1:1}}`, reports the inner `${d:1:1}`).
    for listing in re.findall(r"Bad references[^\n]*\n((?:[ \t]+\$\{[^\n]*\n?)+)", stderr):
        unresolved += re.findall(r"^[ \t]+\$\{([^${}]*)\}[ \t]*$", listing, re.MULTILINE)
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
    """D1: kapicorp ends with an uncaught RecursionError (class include cycles, references
    through their own ancestors) or KeyError (a class file that does not parse); reclass-ng
    renders, or reports a data error (that one is already "both failed"). Issue 36's crashes
    have their own ids above; any other exception stays a difference, so that a new kapicorp
    crash is looked at rather than hidden."""
    return kapicorp_exception(rendering) in ("RecursionError", "KeyError")
