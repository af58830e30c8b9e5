"""`reclass-ng groups validate -b DIR`: check an inventory's node groups without writing anything.

Every problem is listed (file, Node Classifier error kind, message), so CI on an inventory
repository shows all of them at once; the exit status is 65 when there is any.
"""

from __future__ import annotations

import argparse
import sys

from reclass_ng.classifier.errors import GroupValidationError
from reclass_ng.classifier.group_files import groups_dir, read_group_files
from reclass_ng.cli.inventory_args import add_inventory_argument, inventory_dir_from_args
from reclass_ng.output import dump

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from reclass_ng.classifier.errors import GroupProblem
    from reclass_ng.classifier.hierarchy import GroupTree


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="groups_action", metavar="ACTION")
    actions.required = True
    validate = actions.add_parser(
        "validate", help="check the groups/ tree and list every problem",
        description="Check every group file and the tree they form (one root, parents exist, "
                    "no cycles, all reachable, unique ids and names, well-formed rules) and, "
                    "where puppet-classes.yml or puppet-classes.synced.yml give an environment "
                    "a class catalogue, that the classes and parameters exist "
                    "(missing-referents) and required parameters are set "
                    "(unspecified-parameters).")
    add_inventory_argument(validate)
    validate.add_argument("-o", "--output", choices=("text", "yaml", "json"), default="text",
                          help="text for people (default); yaml/json list the problems as the "
                               "classifier's error objects with `file` and `line` keys")


def run(args: argparse.Namespace) -> int:
    inventory_dir = inventory_dir_from_args(args)
    groups, problems = read_group_files(inventory_dir)
    if not problems and groups:
        # The class catalogue checks, where puppet-classes*.yml give the environment one
        # (imported here: every reclass-ng command imports this module to build its parser).
        from reclass_ng.classifier.catalog import load_catalog
        from reclass_ng.classifier.hierarchy import GroupTree
        from reclass_ng.classifier.referents import referent_problems

        tree = GroupTree.build(groups)
        problems = referent_problems(tree, load_catalog(inventory_dir)) \
            + _expansion_problems(inventory_dir, tree)
    where = str(groups_dir(inventory_dir))
    if args.output != "text":
        listed = [{"file": p.file, "line": p.line(inventory_dir), **p.to_error()}
                  for p in problems]
        sys.stdout.write(dump(listed, fmt=args.output))
    if problems:
        raise GroupValidationError(problems, where)
    if args.output == "text":
        print(f"{where}: {len(groups)} group{'s' if len(groups) != 1 else ''}, no problems")
    return 0


def _expansion_problems(inventory_dir: str, tree: GroupTree) -> list[GroupProblem]:
    """The groups whose `${}` references expand past the engine's limit (as the service
    refuses them); none when the reclass inventory itself does not load (other commands
    report that)."""
    import reclass_ng
    from reclass_ng.classifier.node_classification import group_expansion_problems
    from reclass_ng.errors import ReclassError

    try:
        inventory = reclass_ng.load(inventory_dir)
    except ReclassError:
        return []
    return group_expansion_problems(inventory, tree, [tree.root])
