"""`reclass-ng affected -b DIR --from REV [--to REV] | --files PATH...`: the nodes (or Kapitan
targets) a change affects, without rendering anything but what the dependencies need.

Each node's recorded inputs (reclass_ng.affected) are compared with the changed files: between
two git revisions or directories (both sides are read, so a node removed or a class dropped is
seen), or a list of files (`git diff --name-only` output, read against DIR as it is now).
Prints one name a line, or `-o json` for CI matrices. Exit status 0, or the usual error codes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any

from reclass_ng.affected import (
    AffectedNodes,
    affected_nodes,
    load_for_dependencies,
    record_dependencies,
)
from reclass_ng.cli.diff import add_side_arguments, inventory_side
from reclass_ng.cli.inventory_args import inventory_dir_from_args
from reclass_ng.diff.changed_files import changed_files
from reclass_ng.errors import NotFoundError, UsageError

COMMAND = "reclass-ng affected"
MAX_LISTED_FILES = 100_000  # a --files-from list longer than this is refused
MAX_LIST_BYTES = 64 << 20  # and a --files-from text larger than this, before it is split


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_side_arguments(parser)
    parser.add_argument("--files", nargs="+", metavar="PATH", default=[],
                        help="changed files (relative to the current directory), read against "
                             "DIR as it is now")
    parser.add_argument("--files-from", metavar="FILE",
                        help="read the changed files from FILE, one a line (- for stdin)")
    parser.add_argument("--other-files", choices=("ignore", "all"), default="ignore",
                        help="when a changed file is read by no node (a Kapitan component, a "
                             "template): ignore it (default) or list every node")
    parser.add_argument("--why", action="store_true", help="text: say why each node is listed")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text",
                        help="one name a line (default) or a JSON document")


def _listed_files(args: argparse.Namespace) -> list[str]:
    files = list(args.files)
    if args.files_from:
        try:
            if args.files_from == "-":
                text = sys.stdin.read(MAX_LIST_BYTES + 1)
            else:
                with open(args.files_from, encoding="utf-8") as handle:
                    text = handle.read(MAX_LIST_BYTES + 1)
        except OSError as err:
            raise NotFoundError(f"{COMMAND}: cannot read --files-from {args.files_from}: "
                                f"{err.strerror}", path=args.files_from) from None
        except UnicodeDecodeError:
            raise UsageError(f"{COMMAND}: --files-from {args.files_from} is not UTF-8 text"
                             ) from None
        if len(text) > MAX_LIST_BYTES:
            raise UsageError(f"{COMMAND}: --files-from {args.files_from} is over "
                             f"{MAX_LIST_BYTES} bytes")
        files += [line.strip() for line in text.splitlines() if line.strip()]
    if len(files) > MAX_LISTED_FILES:
        raise UsageError(f"{COMMAND}: {len(files)} changed files listed, more than "
                         f"{MAX_LISTED_FILES}")
    return files


def _select(args: argparse.Namespace, directory: str, files: list[str]) -> AffectedNodes:
    if files:
        if args.from_rev or args.from_dir or args.to_rev or args.to_dir:
            raise UsageError(f"{COMMAND}: give changed files or --from/--from-dir, not both")
        inventory = load_for_dependencies(directory, args.kapitan)
        layout, dependencies = record_dependencies(inventory, directory)
        relative = [layout.relative(path) or os.path.abspath(path) for path in files]
        return affected_nodes([(layout, dependencies)], relative)
    if not args.from_rev and not args.from_dir:
        raise UsageError(f"{COMMAND}: give the changed files (--files, --files-from) or the "
                         f"old side (--from REV, --from-dir DIR)")
    with contextlib.ExitStack() as stack:
        old_dir, _ = stack.enter_context(inventory_side(directory, args.from_rev, args.from_dir,
                                                        "from", COMMAND))
        new_dir, _ = stack.enter_context(inventory_side(directory, args.to_rev, args.to_dir,
                                                        "to", COMMAND))
        for side in (old_dir, new_dir):
            if not os.path.isdir(side):
                raise NotFoundError(f"No such directory: {side}", path=str(side))
        sides = [record_dependencies(load_for_dependencies(side, args.kapitan), side)
                 for side in (old_dir, new_dir)]
        changed = changed_files(old_dir, new_dir)
    node_list_changed = set(sides[0][1]) != set(sides[1][1])
    return affected_nodes(sides, changed, node_list_changed)


def run(args: argparse.Namespace) -> int:
    directory = inventory_dir_from_args(args)
    result = _select(args, directory, _listed_files(args))
    nodes = dict(result.nodes)
    if args.other_files == "all" and result.unread_files:
        # Every node of the side(s) read: what an unread file (a component) changes is unknown.
        everything = load_for_dependencies(args.to_dir or directory, args.kapitan).node_names
        why = f"{result.unread_files[0]} changed, which no node reads (--other-files all)"
        for name in everything:
            nodes.setdefault(name, (why,))
        nodes = dict(sorted(nodes.items()))
    if args.output == "json":
        sys.stdout.write(json.dumps(as_json(result, nodes), indent=2) + "\n")
    else:
        for name, reasons in nodes.items():
            print(f"{name}: {'; '.join(reasons)}" if args.why else name)
    return 0


def as_json(result: AffectedNodes, nodes: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """The document `-o json` prints."""
    return {"nodes": list(nodes), "reasons": {name: list(why) for name, why in nodes.items()},
            "changed_files": list(result.changed_files),
            "unread_files": list(result.unread_files),
            "settings_changed": result.settings_changed}
