"""`reclass-ng validate -b DIR [--kapitan] [--node NAME ...] [-o text|json]`: check the rendered
parameters of every node against the JSON Schemas the `schemas` setting of reclass-config.yml
attaches.

Identical violations are grouped across nodes, each naming the key path, the value, the rule
and where it is written in the schema, and the file:line:column of the write that produced
the value. Exit status: 0 when every node checked passes, 1 when some value breaks a schema or
a node fails to render, 78 for a bad schema or setting, the usual codes otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import reclass_ng
from reclass_ng.cli.inventory_args import (
    add_inventory_argument,
    add_kapitan_argument,
    inventory_dir_from_args,
)
from reclass_ng.errors import ConfigError, NotFoundError
from reclass_ng.schemas import CONFIG_KEY, check_nodes, group_violations, load_schemas


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_inventory_argument(parser)
    add_kapitan_argument(parser)
    parser.add_argument("--node", action="append", metavar="NAME",
                        help="check only this node (repeatable)")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text",
                        help="output format (default: text, one line per group)")


def run(args: argparse.Namespace) -> int:
    base = inventory_dir_from_args(args)
    if not os.path.isdir(base):
        raise NotFoundError(f"No such directory: {base}", path=str(base))
    inventory = reclass_ng.load(base, kapitan=args.kapitan)
    schemas = load_schemas(base, inventory.settings.delimiter)
    if schemas is None:
        raise ConfigError(f"reclass-ng validate: no `{CONFIG_KEY}` setting in the "
                          f"reclass-config.yml of {base} (doc/review.rst)")
    names = args.node
    if names:
        unknown = sorted(set(names) - set(inventory.node_names))
        if unknown:
            raise NotFoundError(f"reclass-ng validate: no such node: {', '.join(unknown)}")
    violations, failed = check_nodes(inventory, schemas, names, os.path.abspath(base))
    groups = group_violations(violations)
    checked = len(names or inventory.node_names) - len(failed)
    if args.output == "json":
        document = {"groups": [{"nodes": list(g.nodes), **g.violation.as_dict()}
                               for g in groups],
                    "failed": failed, "nodes_checked": checked,
                    "violations": len(violations)}
        sys.stdout.write(json.dumps(document, indent=2, default=repr) + "\n")
    else:
        for group in groups:
            print(group.text())
        for name, message in failed.items():
            print(f"{name}: not checked, it fails to render: {message}")
        print(f"{len(violations)} violation(s) in {len({v.node for v in violations})} of "
              f"{checked} nodes checked, {len(failed)} failed to render")
    return 1 if violations or failed else 0
