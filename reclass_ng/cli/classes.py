"""`reclass-ng classes sync|list -b DIR`: the Puppet class catalogue the node groups are checked
against (classifier/catalog.py).

`sync --code-dir DIR` reads every environment's classes from Puppet code with Puppet's own
parser and writes `puppet-classes.synced.yml` into the inventory; `list` prints the merged
catalogue (synced plus hand-declared classes) as the classifier's class objects.
"""

from __future__ import annotations

import argparse
import os
import sys

from reclass_ng.cli.inventory_args import add_inventory_argument, inventory_dir_from_args
from reclass_ng.errors import MultipleErrors, NotFoundError
from reclass_ng.output import dump


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="classes_action", metavar="ACTION")
    actions.required = True
    sync = actions.add_parser(
        "sync", help="read the classes of Puppet code into the inventory's catalogue",
        description="Run Puppet's parser over CODEDIR/environments/*/modules/*/manifests and "
                    "write puppet-classes.synced.yml; hand-declared classes are kept.")
    add_inventory_argument(sync)
    sync.add_argument("--code-dir", metavar="DIR", required=True,
                      help="Puppet's codedir, holding environments/<env>/modules")
    listing = actions.add_parser("list", help="print the catalogue: [{name, environment, "
                                              "parameters}]")
    add_inventory_argument(listing)
    listing.add_argument("-e", "--environment", help="only this environment")
    listing.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")


def run(args: argparse.Namespace) -> int:
    from reclass_ng.classifier.catalog import load_catalog  # not at start-up of every command

    inventory_dir = inventory_dir_from_args(args)
    if args.classes_action == "sync":
        # subprocess etc. only here
        from reclass_ng.classifier.class_sync import sync_classes, sync_problems

        synced = sync_classes(inventory_dir, args.code_dir)
        for environment, classes in synced.environments.items():
            print(f"{environment}: {len(classes)} class{'es' if len(classes) != 1 else ''}")
        problems = sync_problems(synced)
        if problems:
            print(f"reclass-ng classes sync: environments with unparsable files keep the "
                  f"classes of the previous sync: {', '.join(synced.errors)}", file=sys.stderr)
            raise problems[0] if len(problems) == 1 else MultipleErrors(problems)
        return 0
    if not os.path.isdir(inventory_dir):
        raise NotFoundError(f"No such directory: {inventory_dir} (the inventory, whose "
                            "puppet-classes.yml and puppet-classes.synced.yml hold the "
                            "catalogue)", path=inventory_dir)
    catalog = load_catalog(inventory_dir)
    found: list[dict[str, object]] = []
    if catalog is not None:
        for environment in catalog.environments():
            if args.environment in (None, environment):
                found.extend(c.to_data() for c in catalog.classes(environment).values())
    sys.stdout.write(dump(found, fmt=args.output))
    return 0
