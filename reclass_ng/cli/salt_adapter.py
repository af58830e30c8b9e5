"""`reclass-salt`: what Salt's ext_pillar and master_tops get from a reclass-ng inventory.

    reclass-salt -b DIR --pillar NODE   # the pillar data ext_pillar returns for minion NODE
    reclass-salt -b DIR --top           # top data of every node: {env: {node: [applications]}}
    reclass-salt -b DIR --top NODE      # top data master_tops returns for NODE: {env: [apps]}
    reclass-salt -b DIR --pillar NODE --environment dev   # as with Salt's pillarenv=dev
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from reclass_ng.adapters import salt
from reclass_ng.cli.adapter_options import (
    adapter_parser,
    add_output_arguments,
    inventory_from_args,
    run_command,
)
from reclass_ng.output import dump

_ALL_NODES = object()


def build_parser() -> argparse.ArgumentParser:
    parser = adapter_parser(
        "reclass-salt",
        "Show the Salt pillar and top data of a reclass-ng inventory, as the reclass_ng "
        "ext_pillar and master_tops modules give them to Salt.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("-p", "--pillar", metavar="NODE", help="pillar data of minion NODE")
    mode.add_argument("-t", "--top", metavar="NODE", nargs="?", const=_ALL_NODES,
                      help="top data of minion NODE, or of every node when NODE is omitted")
    parser.add_argument(
        "-e", "--environment", metavar="ENV",
        help="Salt's pillarenv/saltenv for --pillar NODE and --top NODE: the node's environment "
             "when allow_adapter_env_override is set, as in Salt (salt-formulas reclass)")
    add_output_arguments(parser, "yaml")
    return parser


def salt_data(args: argparse.Namespace) -> str:
    inventory = inventory_from_args(args)
    environment = salt.environment_override(inventory, args.environment)
    if args.pillar is not None:
        data = salt.pillar_data(inventory.nodeinfo(args.pillar, environment=environment))
    elif args.top is _ALL_NODES:
        data = salt.inventory_top_data(inventory.inventory())
    else:
        data = salt.node_top_data(inventory.nodeinfo(args.top, environment=environment))
    return dump(data, args.output, pretty=not args.compact)


def main(argv: Sequence[str] | None = None) -> int:
    return run_command(build_parser(), salt_data, argv)


if __name__ == "__main__":
    sys.exit(main())
