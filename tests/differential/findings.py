"""A differing example written for a person: the inventory as files and both tools' outcomes,
with the temporary inventory directory shown as @INVENTORY@ and timestamps removed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from differential.compare import describe, parsed_output
from differential.inventory_strategy import InventoryCase
from differential.runner import Outcome, Rendering

OUTPUT_LIMIT = 4000


def outcome_text(outcome: Outcome, whole_inventory: bool, inventory: Path) -> str:
    """An outcome's output (the `parameters`/`exports` of a node are what usually matter)."""
    if outcome.hung:
        return "(no answer before the timeout)"
    if outcome.ok:
        try:
            document = parsed_output(outcome, whole_inventory)
            text = json.dumps(compact(document), indent=1, sort_keys=True)
        except ValueError:
            text = outcome.stdout
    else:
        text = f"exit {outcome.status}\n{last_lines(outcome.stderr, 12)}"
    text = text.replace(str(inventory), "@INVENTORY@")
    return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + "\n..."


def compact(document: object) -> object:
    """A nodeinfo (or each node of an inventory) without the parts every node has alike."""
    if isinstance(document, dict) and "nodes" in document and "__reclass__" in document:
        return {name: compact(node) for name, node in document["nodes"].items()}
    if isinstance(document, dict) and "parameters" in document:
        parameters = dict(document["parameters"] or {})
        parameters.pop("_reclass_", None)
        return {"classes": document.get("classes"), "applications": document.get("applications"),
                "parameters": parameters, "exports": document.get("exports")}
    return document


def last_lines(text: str, count: int) -> str:
    return "\n".join(text.rstrip("\n").splitlines()[-count:])


def report(case: InventoryCase, rendering: Rendering, inventory: Path) -> str:
    """The example as files, what differs, and both outcomes."""
    whole = rendering.node is None
    unit = "--inventory" if whole else f"--nodeinfo {rendering.node}"
    return "\n".join([
        case.as_text().rstrip("\n"),
        f"=== reclass -b INV {unit} -o json",
        describe(rendering),
        "--- kapicorp-reclass 2.0.0:",
        outcome_text(rendering.kapicorp, whole, inventory),
        "--- reclass-ng:",
        outcome_text(rendering.reclass_ng, whole, inventory),
    ])


def signature(rendering: Rendering) -> str:
    """A short label grouping differences that look alike: what each tool did, and the first
    line of the error (names, paths and numbers blurred) or the key where outputs differ."""

    def kind(outcome: Outcome) -> str:
        return "hang" if outcome.hung else "ok" if outcome.ok else \
            "crash" if outcome.crashed else "error"

    theirs, ours = rendering.kapicorp, rendering.reclass_ng
    detail = ""
    if theirs.ok and ours.ok:
        detail = output_difference_shape(rendering)
    else:
        failed = ours if theirs.ok or theirs.hung else theirs
        lines = [line.strip() for line in failed.stderr.splitlines()
                 if line.strip() and not line.strip().startswith(("->", "In ", "File "))]
        message = lines[-1] if failed.crashed and lines else (lines[0] if lines else "")
        message = re.sub(r"\$\{[^}]*\}|\$\[[^\]]*\]", "REF", message.split(", at ")[0])
        message = re.sub(r"yaml_fs://\S+|/\S+", "FILE", message)
        detail = re.sub(r"\d+", "#", message)[:80]
    return f"kapicorp {kind(theirs)} / reclass-ng {kind(ours)}: {detail}"


def output_difference_shape(rendering: Rendering) -> str:
    """Where two outputs first differ, with names blurred: the section (parameters, exports,
    classes, ...), whether a key is on one side only, and the form of the last key (`~K`, `=K`,
    `K`, `#` for a list index)."""
    from differential.compare import differing_paths

    whole = rendering.node is None
    try:
        theirs = parsed_output(rendering.kapicorp, whole)
        ours = parsed_output(rendering.reclass_ng, whole)
    except ValueError:
        return "not JSON"
    first = next(differing_paths(theirs, ours), "")
    parts = first.split("/")[1:]
    if whole and parts[:1] == ["nodes"]:
        parts = parts[2:]
    section = parts[0] if parts else "/"
    sides = []
    for document in (theirs, ours):
        node = document["nodes"][first.split("/")[2]] if whole and "/nodes/" in first \
            else document
        sides.append(lookup(node, parts) is not MISSING)
    where = {(True, False): "key only in kapicorp", (False, True): "key only in reclass-ng"}.get(
        (sides[0], sides[1]), "value differs")
    last = parts[-1] if len(parts) > 1 else ""
    shape = "#" if last.isdigit() else (last[:1] if last[:1] in "~=" else "") + "K" if last else ""
    return f"{section} {where} {shape}".rstrip()


MISSING = object()


def lookup(document: object, parts: list[str]) -> object:
    for part in parts:
        if isinstance(document, dict) and part in document:
            document = document[part]
        elif isinstance(document, list) and part.isdigit() and int(part) < len(document):
            document = document[int(part)]
        else:
            return MISSING
    return document
