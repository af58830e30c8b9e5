"""`reclass-ng explain -b DIR [--kapitan] NODE PATH`: where a node's value came from.

`PATH` is a parameter path (`nginx:server_name`, keys separated by the inventory's delimiter);
for a mapping, every leaf below it is explained. `--exports PATH` does the same in the node's
exports. `--class NAME` and `--application NAME` say why the node has that class or application.
"""

from __future__ import annotations

import argparse
import sys

from reclass_ng.cli.inventory_args import add_kapitan_argument, inventory_dir_from_args
from reclass_ng.errors import UsageError

FORMATS = ("text", "json", "yaml")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-b", "--inventory-base-uri", metavar="DIR",
                        help="the inventory directory (default: inventory_base_uri from "
                             "reclass-config.yml, else the current directory)")
    add_kapitan_argument(parser)
    parser.add_argument("-o", "--output", choices=FORMATS, default="text",
                        help="text for people (default); json or yaml for tools")
    parser.add_argument("node", metavar="NODE", help="the node to explain")
    parser.add_argument("path", metavar="PATH", nargs="?",
                        help="a parameter path such as nginx:listen_port, or a mapping such as "
                             "nginx (each leaf below it is explained)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--exports", metavar="PATH",
                      help="explain a path in the node's exports instead of its parameters")
    what.add_argument("--class", dest="class_name", metavar="NAME",
                      help="why the node has this class: the include chain with file:line")
    what.add_argument("--application", metavar="NAME",
                      help="why the node has (or lacks) this application")


def run(args: argparse.Namespace) -> int:
    from reclass_ng.api import load
    from reclass_ng.explain.report import (
        explain_application,
        explain_class,
        explain_parameter,
    )
    from reclass_ng.explain.text import application_text, class_text, parameter_text
    from reclass_ng.explain.trace import NodeTrace
    from reclass_ng.output import dump

    asked = [x for x in (args.path, args.exports, args.class_name, args.application)
             if x is not None]
    if len(asked) != 1:
        raise UsageError("Give exactly one of PATH, --exports PATH, --class NAME or "
                         "--application NAME")
    # (a Kapitan inventory's reclass-config.yml never moves it: -b, else this directory)
    base = inventory_dir_from_args(args) if args.kapitan else args.inventory_base_uri
    trace = NodeTrace(load(base, kapitan=args.kapitan), args.node)
    if args.class_name is not None:
        report, text = explain_class(trace, args.class_name), class_text
    elif args.application is not None:
        report, text = explain_application(trace, args.application), application_text
    elif args.exports is not None:
        report, text = explain_parameter(trace, args.exports, "exports"), parameter_text
    else:
        report, text = explain_parameter(trace, args.path), parameter_text
    sys.stdout.write(text(report) if args.output == "text" else dump(report, args.output))
    return 0
