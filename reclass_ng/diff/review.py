"""The grouped diff written for review: text, Markdown (a pull-request comment), GitHub
workflow annotations and JUnit XML.

Every format takes the same groups (reclass_ng.diff.causes). Text and Markdown are cut to a
size limit at a group boundary, saying how many groups were left out, because a CI comment has
a maximum size (GitHub: 65,536 characters).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence

from reclass_ng.diff.causes import CauseGroup, SharedChange
from reclass_ng.diff.compare import InventoryDiff

NODES_SHOWN = 10  # node names listed per change before "and N more"
VALUE_CHARS = 120  # a value longer than this is cut in Markdown and annotations
# Characters XML 1.0 cannot hold at all (a YAML string may contain them, escaped).
NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def summary(result: InventoryDiff) -> str:
    """`N nodes changed, K keys changed (A nodes added, R removed)`."""
    return (f"{len(result.nodes)} nodes changed, {result.keys_changed} keys changed "
            f"({result.count('added')} nodes added, {result.count('removed')} removed)")


def node_list(nodes: Sequence[str]) -> str:
    """The first node names, and how many more."""
    shown = ", ".join(nodes[:NODES_SHOWN])
    more = len(nodes) - NODES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _count(nodes: Sequence[str]) -> str:
    return f"{len(nodes)} node{'s' if len(nodes) != 1 else ''}"


def _where(change: SharedChange) -> str:
    origin = change.origin
    if origin is None:
        return ""
    where = f"line {origin.line}" if origin.line else ""
    if origin.via:
        where += (", " if where else "") + f"via {origin.via}"
    return where


def files_line(changed_files: dict[str, str]) -> str:
    """`changed files: a (modified), b (added)`."""
    listed = ", ".join(f"{path} ({status})" for path, status in changed_files.items())
    return f"changed files: {listed or 'none'}"


def limited(blocks: list[str], max_bytes: int | None, what: str) -> str:
    """The blocks joined, cut at a block boundary to at most `max_bytes` UTF-8 bytes with a
    closing line saying how many were left out (a first block that is alone too big is cut at
    a line)."""
    text = "".join(blocks)
    if max_bytes is None or len(text.encode()) <= max_bytes:
        return text
    kept: list[str] = []
    used = 0
    for index, block in enumerate(blocks):
        note = (f"\n... {len(blocks) - index} more {what} not shown: the output is limited to "
                f"{max_bytes} bytes (--max-bytes)\n")
        size = len(block.encode())
        if used + size + len(note.encode()) > max_bytes:
            budget = max_bytes - used - len(note.encode())
            for line in block.splitlines(keepends=True):
                if len(line.encode()) > budget:
                    break
                kept.append(line)
                budget -= len(line.encode())
            kept.append(note)
            return "".join(kept)
        kept.append(block)
        used += size
    return "".join(kept)


def as_grouped_text(result: InventoryDiff, groups: list[CauseGroup], changed: dict[str, str],
                    labels: tuple[str, str], max_bytes: int | None = None) -> str:
    """Plain text: one block per cause, each shared change with its nodes."""
    blocks = [f"--- {labels[0]}\n+++ {labels[1]}\n{files_line(changed)}\n"]
    for group in groups:
        lines = [f"{group.title}: {_count(group.nodes)}"]
        for change in group.changes:
            where = _where(change)
            lines.append(f"    {change.path}: {change.values_text()}"
                         + (f"   [{where}]" if where else ""))
            lines.append(f"        {_count(change.nodes)}: {node_list(change.nodes)}")
        if not group.changes:
            lines.append(f"    {node_list(group.nodes)}")
        blocks.append("\n".join(lines) + "\n")
    return limited(blocks, max_bytes, "groups") + summary(result) + "\n"


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    if len(text) > VALUE_CHARS:
        text = text[:VALUE_CHARS] + "…"
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def _code(text: str) -> str:
    text = _md(text)
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


def as_markdown(result: InventoryDiff, groups: list[CauseGroup], changed: dict[str, str],
                labels: tuple[str, str], max_bytes: int | None = None) -> str:
    """Markdown for a pull-request comment: a summary, a table per cause, node lists folded."""
    head = [f"### reclass-ng diff: {summary(result)}\n\n",
            f"From {_code(labels[0])} to {_code(labels[1])}.\n\n"]
    if changed:
        head.append("Changed files: " + ", ".join(f"{_code(p)} ({s})" for p, s in changed.items())
                    + "\n\n")
    if not groups:
        head.append("No node changes.\n")
    blocks = ["".join(head)]
    for group in groups:
        lines = [f"#### {_md(group.title)}: {_count(group.nodes)}", ""]
        if group.changes:
            lines += ["| key | change | nodes | written |", "|---|---|---|---|"]
            for change in group.changes:
                lines.append(f"| {_code(change.path)} | {_code(change.values_text())} "
                             f"| {len(change.nodes)} | {_md(_where(change))} |")
            lines.append("")
        lines += [f"<details><summary>{_count(group.nodes)}</summary>", "",
                  ", ".join(_md(name) for name in group.nodes), "", "</details>", "", ""]
        blocks.append("\n".join(lines))
    return limited(blocks, max_bytes, "groups")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def as_github(result: InventoryDiff, groups: list[CauseGroup], base_dir: str) -> str:
    """GitHub workflow commands: a notice on the written line for each cause, an error for
    nodes that now fail. File paths are `base_dir`/file relative to the working directory,
    as GitHub expects when the job runs at the repository's top."""
    lines = []
    for group in groups:
        level = "error" if group.kind == "fails" else "notice"
        details = [f"{group.title}: {_count(group.nodes)}"]
        details += [f"{c.path}: {c.values_text()} ({_count(c.nodes)})" for c in group.changes]
        if not group.changes:
            details.append(node_list(group.nodes))
        message = "\n".join(d if len(d) <= VALUE_CHARS * 2 else d[:VALUE_CHARS * 2] + "…"
                            for d in details)
        properties = [f"title={_escape_property('reclass-ng diff')}"]
        if group.file:
            path = os.path.relpath(os.path.join(base_dir, group.file))
            properties.insert(0, f"file={_escape_property(path.replace(os.sep, '/'))}")
            if group.first_line:
                properties.insert(1, f"line={group.first_line}")
        lines.append(f"::{level} {','.join(properties)}::{_escape_data(message)}")
    lines.append(f"::notice title=reclass-ng diff::{_escape_data(summary(result))}")
    return "\n".join(lines) + "\n"


def as_junit(result: InventoryDiff, groups: list[CauseGroup], all_nodes: Sequence[str]) -> str:
    """JUnit XML: one test case per node of either side, failed when the node changed."""
    causes: dict[str, list[str]] = {}
    for group in groups:
        for change in group.changes:
            for node in change.nodes:
                causes.setdefault(node, []).append(
                    f"{change.path}: {change.values_text()}   [{group.title}]")
        if not group.changes:
            for node in group.nodes:
                causes.setdefault(node, []).append(group.title)
    suite = ElementTree.Element("testsuite", name="reclass-ng diff", tests=str(len(all_nodes)),
                                failures=str(len(result.nodes)), errors="0", skipped="0")
    statuses = {node.node: node.status for node in result.nodes}
    for name in all_nodes:
        case = ElementTree.SubElement(suite, "testcase", classname="reclass-ng.diff",
                                      name=NOT_XML.sub("\ufffd", name))
        if name in statuses:
            reasons = causes.get(name, [])
            failure = ElementTree.SubElement(
                case, "failure", type=statuses[name],
                message=f"node {statuses[name]}: {len(reasons)} change(s)")
            failure.text = NOT_XML.sub("\ufffd", "\n".join(reasons))
    suites = ElementTree.Element("testsuites")
    suites.append(suite)
    ElementTree.indent(suites)
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            + ElementTree.tostring(suites, encoding="unicode") + "\n")
