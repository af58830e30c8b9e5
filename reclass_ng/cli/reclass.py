"""`reclass`: the command-line interface of kapicorp-reclass 2.0.0, flag for flag."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from reclass_ng.cli.failures import run_reporting_errors
from reclass_ng.errors import UsageError
from reclass_ng.version import COMPATIBLE_RECLASS_VERSION, __version__


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="reclass", description="Classify nodes from a reclass inventory.")
    add = parser.add_argument
    add("--version", action="version",
        version=f"{COMPATIBLE_RECLASS_VERSION} (reclass-ng {__version__})")
    add("-s", "--storage-type", help="storage backend (yaml_fs)")
    add("-b", "--inventory-base-uri", help="the base directory of the inventory")
    add("-u", "--nodes-uri", help="nodes directory, relative to the base (default: nodes)")
    add("-c", "--classes-uri", help="classes directory, relative to the base (default: classes)")
    add("-z", "--ignore-class-notfound", metavar="VALUE",
        help="ignore missing classes (true/false)")
    add("-a", "--compose-node-name", action="store_true", default=None,
        help="name nodes by their path below nodes/ (a/b/n1.yml is a.b.n1)")
    add("-x", "--ignore-class-notfound-regexp", metavar="REGEXP",
        help="only ignore missing classes whose names match this regular expression")
    add("-o", "--output", metavar="FORMAT", help="output format: yaml (default) or json")
    add("-y", "--pretty-print", action="store_true", default=None, help="pretty-print output")
    add("-r", "--no-refs", action="store_true", default=None, help="never write YAML aliases")
    add("-1", "--single-error", dest="group_errors", action="store_false", default=None,
        help="stop at the first missing reference")
    add("-0", "--multiple-errors", dest="group_errors", action="store_true",
        help="report all missing references of a node together (default)")
    add("-i", "--inventory", action="store_true", help="output the entire inventory")
    add("-n", "--nodeinfo", metavar="NODENAME", help="output information about one node")
    add("-j", "--jobs", type=int, default=None, metavar="N",
        help="render nodes in N processes (inventory mode)")
    add("-q", "--quiet", action="store_true", help="no progress bar")
    add("args", nargs="*", help=argparse.SUPPRESS)
    return parser


def settings_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the command line sets (None where a flag was not given)."""
    regexp = args.ignore_class_notfound_regexp
    return {
        "storage_type": args.storage_type,
        "nodes_uri": args.nodes_uri,
        "classes_uri": args.classes_uri,
        "ignore_class_notfound": args.ignore_class_notfound,
        "ignore_class_notfound_regexp": [regexp] if regexp is not None else None,
        "compose_node_name": args.compose_node_name,
        "output": args.output,
        "pretty_print": args.pretty_print,
        "no_refs": args.no_refs,
        "group_errors": args.group_errors,
    }


def run(args: argparse.Namespace) -> int:
    from reclass_ng.api import load
    from reclass_ng.output import FORMATS, dump

    if args.args:
        raise UsageError("No arguments allowed")
    if args.inventory and args.nodeinfo is not None:
        raise UsageError("Cannot specify multiple modes")
    if not args.inventory and args.nodeinfo is None:
        raise UsageError("You need to specify exactly one mode (--inventory or --nodeinfo)")
    if args.output is not None and args.output not in FORMATS:
        raise UsageError(f"Unknown output format: {args.output!r} (choose from yaml, json)")
    inventory = load(args.inventory_base_uri, **settings_from_args(args))
    settings = inventory.settings
    if args.inventory:
        data = inventory.inventory()
    else:
        data = inventory.nodeinfo(args.nodeinfo)
    text = dump(data, settings.output, settings.pretty_print)
    sys.stdout.write(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_reporting_errors(lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
