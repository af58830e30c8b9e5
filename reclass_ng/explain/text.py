"""Text output of `reclass-ng explain`, from the plain reports of reclass_ng.explain.report."""

from __future__ import annotations

import json
from typing import Any

from reclass_ng.output import dump

INDENT = "  "


def show(value: Any) -> str:
    """A value on one line: strings as written, everything else as JSON."""
    if isinstance(value, str):
        return value if value else "''"
    return json.dumps(value, default=str)


def label(item: dict[str, Any]) -> str:
    """Who wrote: `node n1`, `automatic parameters`, a class name."""
    kind = item.get("source_kind")
    if kind == "node":
        return f"node {item['source']}"
    if kind == "automatic":
        return "automatic parameters"
    if kind == "extra":
        return f"extra entity {item['source']}"
    return str(item["source"])


def place(item: dict[str, Any]) -> str:
    """`file:line` of a write (or `(no file)`)."""
    file = item.get("file")
    if file is None:
        return "(no file)"
    line = item.get("line")
    return f"{file}:{line}" if line is not None else file


def _by(item: dict[str, Any]) -> str:
    return f"{label(item)} ({place(item)}, {item['key']})"


# What became of a write, when no later write is named.
_EFFECTS = {"merged": "merged (mappings merge key by key)",
            "appended": "appended to the list",
            "removes": "removes what earlier writes put below it"}
# What a later write (`{by}`) did to it.
_EFFECTS_BY = {"overridden": "overridden by {by}",
               "replaced": "replaced by {by} with ~",
               "ignored": "ignored: constant set by {by}",
               "removed": "removed by {by}"}


def _set_text(flag: str) -> str:
    text = "set"
    if "~" in flag:
        text += " with ~ (replaces what was there)"
    if "=" in flag:
        text += " as a constant (later writes are ignored)"
    return text


def effect_text(c: dict[str, Any]) -> str:
    """What became of a write, in words."""
    effect, by = c["effect"], c.get("by")
    if effect == "set":
        text = _set_text(c.get("flag", ""))
    elif effect in _EFFECTS:
        text = _EFFECTS[effect]
    elif by is not None and effect in _EFFECTS_BY:
        text = _EFFECTS_BY[effect].format(by=_by(by))
    else:
        text = effect
    return text + (" -> in the final value" if c.get("final") else "")


def contribution_lines(c: dict[str, Any], indent: str, number: int | None = None) -> list[str]:
    """The lines of one write: who, where, what was written, what became of it."""
    head = f"{number}. " if number is not None else ""
    lines = [f"{indent}{head}{label(c)}  {place(c)}"]
    inner = indent + " " * len(head)
    via = "  (a reference to a mapping; the value comes from inside it)" if c.get("via") else ""
    lines.append(f"{inner}{c['key']}: {show(c['written'])}{via}")
    lines.append(f"{inner}{effect_text(c)}")
    references = c.get("references", [])
    for ref in references:
        lines.extend(reference_lines(ref, inner + INDENT, len(references) > 1))
    return lines


def reference_lines(ref: dict[str, Any], indent: str, say_where: bool = False) -> list[str]:
    """The lines of a followed reference, with the writes behind its value; `say_where`: the
    item of the written list or mapping holding it (when a write holds several)."""
    head = ref["reference"]
    if "path" in ref and ref["path"] != ref["reference"][2:-1]:
        head += f" -> {ref['path']}"
    if "value" in ref:
        head += f" = {show(ref['value'])}"
    if "note" in ref:
        head += f"  [{ref['note']}]"
    within = ref.get("within")
    if say_where and within is not None:
        head += (f"  (item {within} of this write)" if within.isdigit()
                 else f"  (at {within} of this write)")
    lines = [indent + head]
    for inner in ref.get("inner", []):
        lines.extend(reference_lines(inner, indent + INDENT))
    for source in ref.get("sources", []):
        if "effect" in source:
            lines.append(f"{indent}{INDENT}{label(source)}  {place(source)}  "
                         f"{source['key']}: {show(source['written'])}")
            for deeper in source.get("references", []):
                lines.extend(reference_lines(deeper, indent + INDENT * 2))
        else:
            lines.append(f"{indent}{INDENT}{label(source)}  {place(source)}  {source['key']}")
    return lines


def _value_lines(value: Any, indent: str) -> list[str]:
    if isinstance(value, (dict, list)) and value:
        return [indent + line for line in dump(value, "yaml").rstrip("\n").splitlines()]
    return [indent + show(value)]


def _leaf_lines(report: dict[str, Any], indent: str) -> list[str]:
    if report["present"]:
        value = report["value"]
        if isinstance(value, (dict, list)) and len(show(value)) > 60:
            lines = [f"{indent}{report['path']} =", *_value_lines(value, indent + INDENT * 2)]
        else:
            lines = [f"{indent}{report['path']} = {show(value)}"]
    else:
        lines = [f"{indent}{report['path']}: not in the final parameters"]
    for number, c in enumerate(report["contributions"], 1):
        lines.extend(contribution_lines(c, indent + INDENT, number))
    return lines


def parameter_text(report: dict[str, Any]) -> str:
    """The text output of a parameter (or export) explanation."""
    what = "parameter" if report.get("section", "parameters") == "parameters" else "export"
    lines = [f"node {report['node']}, {what} {report['path']}"]
    if "note" in report:
        lines.append(f"note: {report['note']}")
    if "element" in report:
        element = report["element"]
        lines.append(f"item {element['index']} ({show(element['value'])}) was written by "
                     f"{_by(element['from'])}")
    if report["present"]:
        lines.append("final value:")
        lines.extend(_value_lines(report["value"], INDENT))
    else:
        lines.append("final value: none (the key is not in the final parameters)")
    if report["kind"] == "value":
        lines.append("writes, in merge order:")
        for number, c in enumerate(report["contributions"], 1):
            lines.extend(contribution_lines(c, INDENT, number))
    else:
        count = len(report["leaves"])
        lines.append(f"a mapping: {'its leaf' if count == 1 else f'each of its {count} leaves'}"
                     ", with the writes in merge order:")
        for leaf in report["leaves"]:
            lines.append("")
            lines.extend(_leaf_lines(leaf, INDENT))
    return "\n".join(lines) + "\n"


def _link_line(link: dict[str, Any]) -> str:
    if link["source_kind"] == "automatic":
        return f"{INDENT}class_mappings  {place(link)}  {link['listed']}"
    listed = link["listed"]
    shown = listed if listed == link["class"] else f"{listed} (= {link['class']})"
    return f"{INDENT}{label(link)}  {place(link)}  classes: {shown}"


def class_text(report: dict[str, Any]) -> str:
    """The text output of a class explanation."""
    lines = [f"node {report['node']} has class {report['class']} "
             f"(class {report['merge_position']} of {report['merged_classes']} in merge order)",
             "include chain:"]
    lines.extend(_link_line(link) for link in report["chain"])
    if report["also_listed_by"]:
        lines.append("also listed by (already merged there, so not merged again):")
        lines.extend(_link_line(link) for link in report["also_listed_by"])
    return "\n".join(lines) + "\n"


def application_text(report: dict[str, Any]) -> str:
    """The text output of an application explanation."""
    state = "has" if report["present"] else "does not have"
    lines = [f"node {report['node']} {state} application {report['application']}",
             "applications entries, in merge order:"]
    for event in report["events"]:
        lines.append(f"{INDENT}{label(event)}  {place(event)}  applications: {event['written']}"
                     f"  -> {event['effect']}")
    if report.get("chain"):
        lines.append("added through:")
        lines.extend(_link_line(link) for link in report["chain"])
    return "\n".join(lines) + "\n"
