"""`reclass-ansible`: an Ansible dynamic inventory script backed by a reclass-ng inventory.

    ansible-inventory -i /usr/local/bin/reclass-ansible --list

Ansible runs an inventory script with `--list` (and, without `_meta`, `--host NAME` per host), so
the inventory directory comes from $RECLASS_NG_INVENTORY or reclass-config.yml; a wrapper script
can pass `-b DIR`. Options of the `reclass` config file apply (`applications_postfix`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from reclass_ng.adapters import ansible
from reclass_ng.api import other_nodes_errors
from reclass_ng.cli.adapter_options import (
    adapter_parser,
    add_output_arguments,
    inventory_from_args,
    run_command,
)
from reclass_ng.errors import ReclassError
from reclass_ng.output import dump

TYPE_CHECKING = False
if TYPE_CHECKING:
    from reclass_ng.api import Inventory


def build_parser() -> argparse.ArgumentParser:
    parser = adapter_parser(
        "reclass-ansible",
        "Ansible dynamic inventory: classes and applications as groups, parameters as host "
        "variables, from a reclass-ng inventory.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("-l", "--list", action="store_true",
                      help="every group, and every host's variables under _meta.hostvars")
    mode.add_argument("-t", "--host", metavar="HOST", help="the variables of one host")
    mode.add_argument(
        "--collections-path", action="store_true",
        help="print the directory to add to Ansible's collections_path for the inventory "
             "plugin reclass_ng.reclass.inventory, and exit")
    groups = parser.add_argument_group("groups")
    groups.add_argument(
        "--applications-postfix", metavar="TEXT",
        help="appended to application names to make group names (default: the "
             "applications_postfix setting, _hosts)")
    groups.add_argument(
        "--sanitize-group-names", action="store_true",
        help="replace characters Ansible does not allow in group names (such as the dot in "
             "role.web) with _, and append _group to a group named like a host: names "
             "Ansible takes without a warning")
    add_output_arguments(parser, "json")
    return parser


def ansible_data(args: argparse.Namespace, listed: list[Inventory] | None = None) -> str:
    """The output of one run; a `--list` adds its inventory to `listed`, so that every node's
    errors can be reported when it fails."""
    if args.collections_path:
        return ansible.collections_path() + "\n"
    inventory = inventory_from_args(args)
    if args.host is None and listed is not None:
        listed.append(inventory)
    if args.host is not None:
        data = ansible.host_vars(inventory.nodeinfo(args.host))
    else:
        postfix = args.applications_postfix
        if postfix is None:
            postfix = inventory.settings.applications_postfix
        data = ansible.script_inventory(inventory.inventory(), applications_postfix=postfix,
                                        sanitize=args.sanitize_group_names)
    return dump(data, args.output, pretty=not args.compact)


def main(argv: Sequence[str] | None = None) -> int:
    listed: list[Inventory] = []

    def every_node_error(first: ReclassError) -> list[ReclassError]:
        # Ansible shows the script's whole stderr: every failing node, not only the first.
        return other_nodes_errors(listed[0], first) if listed and first.node else []

    return run_command(build_parser(), lambda args: ansible_data(args, listed), argv,
                       more_errors=every_node_error)


if __name__ == "__main__":
    sys.exit(main())
