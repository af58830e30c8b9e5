"""Options and start-up shared by `reclass-puppet`, `reclass-salt` and `reclass-ansible`.

Each adapter command takes the inventory the same way (`-b DIR`, else $RECLASS_NG_INVENTORY, else
reclass-config.yml) and reports errors the same way (message on stderr, non-zero exit, nothing on
stdout), so Puppet, Salt and Ansible see a failed lookup as a failure and never half an answer.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import reclass_ng
from reclass_ng.adapters.inventory_source import INVENTORY_ENV_VAR, open_inventory
from reclass_ng.cli.failures import run_reporting_errors
from reclass_ng.errors import ReclassError
from reclass_ng.version import __version__


def adapter_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A parser with the inventory options every adapter command has."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"{prog} (reclass-ng {__version__})")
    group = parser.add_argument_group("inventory")
    group.add_argument(
        "-b", "--inventory-base-uri", metavar="DIR",
        help=f"the inventory directory (default: ${INVENTORY_ENV_VAR}, else inventory_base_uri "
             "from reclass-config.yml)")
    group.add_argument("-u", "--nodes-uri", metavar="DIR",
                       help="nodes directory, relative to the base (default: nodes)")
    group.add_argument("-c", "--classes-uri", metavar="DIR",
                       help="classes directory, relative to the base (default: classes)")
    group.add_argument("-a", "--compose-node-name", action="store_true", default=None,
                       help="name nodes by their path below nodes/ (a/b/n1.yml is a.b.n1)")
    return parser


def add_output_arguments(parser: argparse.ArgumentParser, default_format: str) -> None:
    """`-o yaml|json` and `--compact`, for the commands whose output people read or pipe."""
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default=default_format,
                        help=f"output format (default: {default_format})")
    parser.add_argument("--compact", action="store_true",
                        help="compact output instead of pretty-printed")


def inventory_from_args(args: argparse.Namespace) -> reclass_ng.Inventory:
    """The inventory the command line names (see module docstring for the lookup order)."""
    return open_inventory(
        args.inventory_base_uri,
        nodes_uri=args.nodes_uri,
        classes_uri=args.classes_uri,
        compose_node_name=args.compose_node_name,
    )


def run_command(parser: argparse.ArgumentParser, body: Callable[[argparse.Namespace], str],
                argv: Sequence[str] | None = None,
                more_errors: Callable[[ReclassError], list[ReclassError]] | None = None) -> int:
    """Parse, run `body` to produce the whole output, then print it; errors go to stderr only.

    `more_errors` (see run_reporting_errors) adds the errors of the other nodes of a command
    that renders them all."""
    args = parser.parse_args(argv)

    def produce_and_print() -> int:
        text = body(args)
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0

    return run_reporting_errors(produce_and_print, more_errors=more_errors)
