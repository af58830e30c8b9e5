"""`reclass-ng lint -b DIR [--kapitan] [-o json] [--disable RULE ...]`: check an inventory for
mistakes.

Prints one finding per line, `file:line: severity rule: message`, then a summary line; `-o json`
prints a list of finding objects instead. Exit status: 0 when no finding is an error, 1 when
some are, and the usual error codes (>1) when lint itself cannot run (e.g. a bad command line).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from reclass_ng.cli.inventory_args import (
    add_inventory_argument,
    add_kapitan_argument,
    inventory_dir_from_args,
)
from reclass_ng.cli.progress import steps_progress
from reclass_ng.lint import RULES, check_rule_names, lint_inventory


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_inventory_argument(parser)
    add_kapitan_argument(parser)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text",
                        help="output format (default: text, one finding per line)")
    parser.add_argument("--disable", metavar="RULE", action="append", default=[],
                        help="skip a rule (repeatable, or comma-separated); reclass-config.yml "
                             "can also list rules under lint_disable")
    parser.add_argument("--list-rules", action="store_true",
                        help="print the rules with their severity and exit")
    parser.epilog = "rules: " + ", ".join(RULES)


def run(args: argparse.Namespace) -> int:
    if args.list_rules:
        for name, (severity, text) in RULES.items():
            print(f"{name:20} {severity:8} {text}")
        return 0
    disabled = check_rule_names(
        [name.strip() for item in args.disable for name in item.split(",") if name.strip()],
        "--disable")
    base = inventory_dir_from_args(args)
    with steps_progress(sys.stderr, "reclass-ng lint: rendering {count} nodes") as progress:
        result = lint_inventory(base, disabled, progress, kapitan=args.kapitan)
    shown_base = os.path.abspath(base)
    if args.output == "json":
        document = [f.as_dict(shown_base) for f in result.findings]
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        for item in result.findings:
            print(item.text(shown_base))
        print(f"{result.errors} error(s), {result.warnings} warning(s) in {result.files} files, "
              f"{result.nodes} nodes rendered")
    return 1 if result.errors else 0
