"""`reclass-ng classify -b DIR NODE --facts FILE`: classify one node with the node groups.

Prints `{name, groups, environment, classes, parameters}` (exit 0). When unrelated groups set
conflicting values, prints the classifier's `classification-conflict` error object on stdout,
its message on stderr, and exits 65. `--explain` prints the classifier's explanation instead and
exits 0 even with conflicts, since it is how conflicts are investigated.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from reclass_ng.classifier.classification import classification_steps
from reclass_ng.classifier.errors import ClassificationConflictError
from reclass_ng.classifier.explanation import explanation_from_steps
from reclass_ng.classifier.facts import (
    load_facts_file,
    load_trusted_file,
    rules_need_facts,
    trusted_with_certname,
)
from reclass_ng.classifier.group_files import load_groups
from reclass_ng.classifier.node_classification import render_classification
from reclass_ng.cli.inventory_args import add_inventory_argument, inventory_dir_from_args
from reclass_ng.errors import NodeNotFound, ReclassError
from reclass_ng.output import dump


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_inventory_argument(parser)
    parser.add_argument("node", metavar="NODE", help="the node (certname) to classify")
    parser.add_argument("--facts", metavar="FILE",
                        help="the node's facts: a YAML/JSON mapping, or Puppet's fact-cache file "
                             "(<vardir>/yaml/facts/NODE.yaml)")
    parser.add_argument("--trusted", metavar="FILE",
                        help="trusted facts (default: `trusted` of a Puppet fact-cache file, "
                             "else {certname: NODE})")
    parser.add_argument("--explain", action="store_true",
                        help="print how the classification was reached (matched rule terms "
                             "with fact values, leaf groups, inherited classifications, "
                             "conflicts or final result)")
    parser.add_argument("--groups-only", action="store_true",
                        help="the groups' classification alone, without the node's nodes/ "
                             "file and reclass classes")
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml",
                        help="output format (default: yaml)")


def _facts_and_trusted(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    facts: dict[str, Any] = {}
    trusted: dict[str, Any] | None = None
    if args.facts:
        found = load_facts_file(args.facts)
        facts, trusted = found.facts, found.trusted
    if args.trusted:
        trusted = load_trusted_file(args.trusted)
    return facts, trusted_with_certname(args.node, trusted)


def run(args: argparse.Namespace) -> int:
    inventory_dir = inventory_dir_from_args(args)
    tree = load_groups(inventory_dir)
    facts, trusted = _facts_and_trusted(args)
    if not args.facts and rules_need_facts(tree):
        print("reclass-ng classify: warning: no --facts given, but group rules read facts; "
              "they see none", file=sys.stderr)
    steps = classification_steps(tree, args.node, facts, trusted)
    render = not args.groups_only
    if args.explain:
        document = explanation_from_steps(tree, steps)
        if render and steps.conflicts is None:
            document["classification"] = _render(inventory_dir, steps)
        sys.stdout.write(dump(document, fmt=args.output))
        return 0
    try:
        result = _render(inventory_dir, steps) if render else steps.result()
    except ClassificationConflictError as err:
        sys.stdout.write(dump(err.to_error(), fmt=args.output))
        raise
    sys.stdout.write(dump(result, fmt=args.output))
    return 0


def _render(inventory_dir: str, steps: Any) -> dict[str, Any]:
    import reclass_ng

    # A conflict is the answer whether or not the node has a file (as over HTTP): raise it
    # before rendering, whose NodeNotFound below would otherwise hide it.
    steps.raise_if_conflicting()
    inventory = reclass_ng.load(inventory_dir)
    try:
        return render_classification(inventory, steps)
    except ReclassError as err:
        if steps.name in inventory.storage.nodes:
            raise
        # A node without a nodes/ file that the groups alone cannot classify is most often a
        # misspelt name: say so, rather than show what failed in some group.
        raise NodeNotFound(steps.name, inventory.storage.nodes_uri, inventory.node_names,
                           hint="(--groups-only classifies a node by its groups alone)"
                           ) from err
