"""`reclass-ng diff -b DIR --from REV [--to REV]`: what a change does to every node.

Both sides are rendered completely and compared per node and key. A side is a git revision of
the repository holding DIR (`--from`/`--to`), a directory (`--from-dir`/`--to-dir`), or, for
the new side by default, DIR as it is now (the working tree, uncommitted edits included).

The output is grouped by cause (`--format text|markdown|github|junit|json`; `--by node` gives
the listing node by node). A failure is compared without each side's directory in it: a node
that fails the same way on both sides has not changed.

Exit status, as for diff(1): 0 when no node differs, 1 when some do, 2 for a bad command line
or revision, and reclass-ng's error codes (65, 74, 78) when a side cannot be opened at all.
A node that fails to render on one side is a difference, not an error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

from reclass_ng.cli.inventory_args import (
    add_inventory_argument,
    add_kapitan_argument,
    inventory_dir_from_args,
)
from reclass_ng.cli.progress import steps_progress
from reclass_ng.diff.causes import group_by_cause
from reclass_ng.diff.changed_files import changed_files
from reclass_ng.diff.compare import InventoryDiff, KeyChange, NodeChange, compare, render_side
from reclass_ng.diff.review import as_github, as_grouped_text, as_junit, as_markdown, summary
from reclass_ng.diff.sources import exported_revision, short_revision
from reclass_ng.errors import UsageError


def add_side_arguments(parser: argparse.ArgumentParser) -> None:
    """`-b DIR` (`--kapitan`: a Kapitan inventory) and the two sides of a change:
    `--from`/`--to` REV, `--from-dir`/`--to-dir`."""
    add_inventory_argument(parser)
    add_kapitan_argument(parser)
    parser.add_argument("--from", dest="from_rev", metavar="REV",
                        help="the old side: a git revision of the repository holding DIR")
    parser.add_argument("--to", dest="to_rev", metavar="REV",
                        help="the new side: a git revision (default: DIR as it is now)")
    parser.add_argument("--from-dir", metavar="DIR", help="the old side: an inventory directory")
    parser.add_argument("--to-dir", metavar="DIR", help="the new side: an inventory directory")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_side_arguments(parser)
    parser.add_argument("--format", "-o", "--output", dest="output", default="text",
                        choices=("text", "markdown", "github", "junit", "json"),
                        help="output format (default: text); markdown for a pull-request "
                             "comment, github for workflow annotations, junit for CI test "
                             "reports")
    parser.add_argument("--by", choices=("cause", "node"), default="cause",
                        help="text output grouped by cause (default) or listed node by node")
    parser.add_argument("--max-bytes", type=_positive, metavar="N",
                        help=f"cut text and markdown output at a group boundary to at most N "
                             f"bytes (markdown default: {MARKDOWN_LIMIT}, under GitHub's "
                             f"comment limit)")
    parser.epilog = "exit status: 0 no difference, 1 differences, >1 trouble"


MARKDOWN_LIMIT = 60000


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 200:
        raise argparse.ArgumentTypeError("must be at least 200 bytes")
    return value


@contextlib.contextmanager
def inventory_side(directory: str, revision: str | None, other_dir: str | None, which: str,
                   command: str = "reclass-ng diff") -> Iterator[tuple[str, str]]:
    """(inventory directory, label) of one side of a change: `other_dir`, `directory` at git
    `revision` (exported for the time of the `with`), else `directory` as it is."""
    if revision and other_dir:
        raise UsageError(f"{command}: give --{which} or --{which}-dir, not both")
    if other_dir:
        yield os.path.expanduser(other_dir), other_dir
    elif revision:
        with exported_revision(directory, revision, command) as exported:
            yield exported, f"{revision} ({short_revision(directory, revision, command)})"
    else:
        yield directory, f"{directory} (working tree)"


def run(args: argparse.Namespace) -> int:
    if not args.from_rev and not args.from_dir:
        raise UsageError("reclass-ng diff: give the old side with --from REV or --from-dir DIR")
    directory = inventory_dir_from_args(args)
    with inventory_side(directory, args.from_rev, args.from_dir, "from") as (old_dir, old_label), \
            inventory_side(directory, args.to_rev, args.to_dir, "to") as (new_dir, new_label):
        with steps_progress(sys.stderr, "reclass-ng diff: rendering {count} nodes",
                            steps=2) as progress:
            old_side = render_side(old_dir, progress, kapitan=args.kapitan)
            new_side = render_side(new_dir, progress, kapitan=args.kapitan)
        files = changed_files(old_dir, new_dir)
        # Inside: the lines of the writes are read from the files, which an export removes.
        result = compare(old_side, new_side)
    groups = group_by_cause(result, files)
    labels = (old_label, new_label)
    if args.output == "json":
        document = as_json(result, old_label, new_label)
        document["changed_files"] = files
        document["groups"] = [group.as_dict() for group in groups]
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif args.output == "markdown":
        sys.stdout.write(as_markdown(result, groups, files, labels,
                                     args.max_bytes or MARKDOWN_LIMIT))
    elif args.output == "github":
        # The files as checked out: the new side's directory, never a temporary export.
        sys.stdout.write(as_github(result, groups, os.path.expanduser(args.to_dir or directory)))
    elif args.output == "junit":
        sys.stdout.write(as_junit(result, groups, sorted(set(old_side) | set(new_side))))
    elif args.by == "node":
        sys.stdout.write(as_text(result, old_label, new_label))
    else:
        sys.stdout.write(as_grouped_text(result, groups, files, labels, args.max_bytes))
    return 1 if result.nodes else 0


def _value(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _key_line(change: KeyChange) -> str:
    if change.change == "added":
        line = f"    + {change.path}: {_value(change.new)}"
    elif change.change == "removed":
        line = f"    - {change.path}: {_value(change.old)}"
    else:
        line = f"    ~ {change.path}: {_value(change.old)} -> {_value(change.new)}"
    if change.origin is not None:
        line += f"   [{'was ' if change.change == 'removed' else ''}{change.origin.text()}]"
    return line


def _node_lines(node: NodeChange) -> list[str]:
    if node.status == "added":
        return [f"+ {node.node} (node added)"
                + (f": fails to render: {node.new_error}" if node.new_error else "")]
    if node.status == "removed":
        return [f"- {node.node} (node removed)"]
    lines = [f"~ {node.node}"]
    if node.old_error != node.new_error:
        if node.new_error:
            lines.append(f"    ! now fails to render: {node.new_error}")
        if node.old_error:
            lines.append(f"    ! failed to render before: {node.old_error}")
    lines.extend(_key_line(change) for change in node.keys)
    return lines


def as_text(result: InventoryDiff, old_label: str, new_label: str) -> str:
    lines = [f"--- {old_label}", f"+++ {new_label}"]
    for node in result.nodes:
        lines.extend(_node_lines(node))
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


def as_json(result: InventoryDiff, old_label: str, new_label: str) -> dict[str, Any]:
    nodes = []
    for node in result.nodes:
        nodes.append({
            "node": node.node, "status": node.status,
            "old_error": node.old_error, "new_error": node.new_error,
            "changes": [{"path": c.path, "keys": list(c.keys), "change": c.change,
                         "old": c.old, "new": c.new,
                         "source": c.origin.as_dict() if c.origin else None}
                        for c in node.keys],
        })
    return {"from": old_label, "to": new_label, "nodes": nodes,
            "summary": {"nodes_changed": len(result.nodes), "keys_changed": result.keys_changed,
                        "nodes_added": result.count("added"),
                        "nodes_removed": result.count("removed")}}
