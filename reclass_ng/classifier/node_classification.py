"""Classifying a node of an inventory: the groups' result, then the node's own file, then `${}`.

The groups' final classification becomes one reclass entity, merged at the lowest priority
(before class mappings and the node's classes, see `Inventory.nodeinfo(extra=...)`):

* group `variables` become top-level reclass parameters;
* group `classes` (class -> parameters) travel under the reserved parameter `_classes_`, so a
  node file or a reclass class can override one class parameter with ordinary reclass merging
  (`parameters: {_classes_: {apache: {keepalive_timeout: 10}}}`) and `${}` references work in
  and to class parameters;
* `reclass_classes` of the leaf groups' chains become the entity's classes.

After rendering, `_classes_` is taken out again and becomes the result's `classes`; reclass
`applications` are added as classes too, with the parameters of the same-named top-level
parameter (the Puppet ENC's `subtree` rule), under those the groups set. The environment is that of a trumping
group when one decided it; otherwise the node file's `environment` if it sets one, else the
groups' environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import reclass_ng
from reclass_ng.classifier.classification import (
    ClassificationSteps,
    classification_steps,
    inherited_classification,
    with_config_data,
)
from reclass_ng.classifier.errors import REFERENCE_EXPANSION, GroupProblem
from reclass_ng.classifier.explanation import explanation_from_steps
from reclass_ng.classifier.facts import read_puppet_facts
from reclass_ng.classifier.group_files import load_groups
from reclass_ng.classifier.groups import CLASSES_PARAMETER, Group
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.errors import LocatedError, ReclassError, ReferenceExpansionError
from reclass_ng.values import Source

AUTOMATIC_PARAMETER = "_reclass_"


def _group_entity(inventory: reclass_ng.Inventory, steps: ClassificationSteps) -> reclass_ng.Entity:
    """The groups' classification as a reclass entity whose strings may hold `${}` references."""
    assert steps.final is not None
    leaf_names = " + ".join(leaf.name for leaf in steps.leaves)
    uri = f"groups://{leaf_names}"
    raw = {
        "classes": list(steps.reclass_classes),
        "parameters": {**steps.final["variables"], CLASSES_PARAMETER: steps.final["classes"]},
        "environment": steps.final["environment"],
    }
    # Entities given to nodeinfo(extra=...) are merged as they are; preparing this one like a
    # file parses its `${}` references, which group variables and class parameters may hold.
    return inventory.prepared_entity(raw, Source(uri, f"groups of {steps.name}", "extra"))


def group_expansion_problems(inventory: reclass_ng.Inventory, tree: GroupTree,
                             changed: Sequence[Group]) -> list[GroupProblem]:
    """A `reference-expansion` problem for each of the `changed` groups or their descendants
    whose references, in what it gives a node (its inherited variables and class parameters,
    rendered alone), expand past the engine's limit (a reference bomb,
    resolve.MAX_REFERENCE_EXPANSION). Any other failure of that render (such as a
    reference to a value only a node's classes define) is left to classification."""
    problems = []
    seen: set[str] = set()
    pending = list(changed)
    while pending:
        group = pending.pop()
        if group.id in seen:
            continue
        seen.add(group.id)
        pending.extend(tree.children(group))
        classification = inherited_classification(tree, group)
        raw = {"parameters": {**classification.get("variables", {}),
                              CLASSES_PARAMETER: classification.get("classes", {})}}
        source = Source(f"groups://{group.name}", f"group {group.name}", "extra")
        try:
            inventory.entity_parameters(inventory.prepared_entity(raw, source),
                                        f"group {group.name}")
        except ReferenceExpansionError as err:
            problems.append(GroupProblem(
                REFERENCE_EXPANSION, f"What group {group.name!r} gives a node: "
                + " ".join(err.detail_lines()), group.file, group.id, group.name,
                {"group": group.id, "path": err.key_path(), "reference": err.ref,
                 "limit": err.limit}))
        except ReclassError:
            continue
    return problems


def _classes_from(parameters: dict[str, Any], applications: list[str], origin: Source
                  ) -> dict[str, Any]:
    value = parameters.pop(CLASSES_PARAMETER, None) or {}
    if not isinstance(value, Mapping):
        raise LocatedError(f"parameters:{CLASSES_PARAMETER} must map class names to parameters, "
                           f"got {value!r}", origin)
    classes: dict[str, Any] = {}
    for name, params in value.items():
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise LocatedError(f"parameters:{CLASSES_PARAMETER}:{name} must be a mapping of class "
                               f"parameters, got {params!r}", origin)
        classes[str(name)] = dict(params)
    # Applications become classes too, with the ENC's `subtree` rule: application `ntp` takes
    # `parameters:ntp` when that is a mapping; parameters the groups set for it win.
    for application in applications:
        subtree = parameters.get(application)
        defaults = dict(subtree) if isinstance(subtree, Mapping) else {}
        classes[application] = {**defaults, **classes.get(application, {})}
    return classes


def render_classification(inventory: reclass_ng.Inventory, steps: ClassificationSteps) -> dict[str, Any]:
    """Apply the node's own file with reclass semantics and resolve references.

    Raises ClassificationConflictError when the groups conflict, ReclassError when rendering fails.
    """
    steps.raise_if_conflicting()
    assert steps.final is not None
    entity = _group_entity(inventory, steps)
    info = inventory.nodeinfo(steps.name, extra=[entity], node_optional=True)
    parameters = dict(info["parameters"])
    parameters.pop(AUTOMATIC_PARAMETER, None)
    node_file = inventory.storage.nodes.get(steps.name)
    origin = Source(node_file.uri, steps.name, "node", node_file.path) if node_file \
        else entity.origin
    classes = _classes_from(parameters, list(info["applications"]), origin)
    environment = steps.final["environment"] if steps.environment_trumped else info["environment"]
    return with_config_data({
        "name": steps.name,
        "groups": [g.id for g in steps.matched],
        "environment": environment,
        "classes": classes,
        "parameters": parameters,
    }, steps.final)


def _open(inventory_dir: str | os.PathLike[str], tree: GroupTree | None,
          inventory: reclass_ng.Inventory | None) -> tuple[GroupTree, reclass_ng.Inventory]:
    if tree is None:
        tree = load_groups(inventory_dir)
    if inventory is None:
        inventory = reclass_ng.load(os.fspath(inventory_dir))
    return tree, inventory


def classify_node(inventory_dir: str | os.PathLike[str], name: str,
                  facts: Mapping[str, Any] | None = None, trusted: Mapping[str, Any] | None = None,
                  *, tree: GroupTree | None = None,
                  inventory: reclass_ng.Inventory | None = None) -> dict[str, Any]:
    """Classify a node of an inventory: groups, then its nodes/ file, then references.

    Returns `{name, groups, environment, classes, parameters}`; raises
    ClassificationConflictError on group conflicts. Pass `tree`/`inventory` to reuse loaded ones.
    """
    tree, inventory = _open(inventory_dir, tree, inventory)
    return render_classification(inventory, classification_steps(tree, name, facts, trusted))


def explain_node(inventory_dir: str | os.PathLike[str], name: str,
                 facts: Mapping[str, Any] | None = None, trusted: Mapping[str, Any] | None = None,
                 *, tree: GroupTree | None = None,
                 inventory: reclass_ng.Inventory | None = None) -> dict[str, Any]:
    """The classifier's explanation, plus (without conflicts) `classification`: the result
    after the node's own file and references (a reclass-ng addition)."""
    tree, inventory = _open(inventory_dir, tree, inventory)
    steps = classification_steps(tree, name, facts, trusted)
    explanation = explanation_from_steps(tree, steps)
    if steps.conflicts is None:
        explanation["classification"] = render_classification(inventory, steps)
    return explanation


def classify_for_enc(inventory_dir: str | os.PathLike[str], certname: str,
                     facts_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Classify a node for the Puppet ENC from Puppet's YAML fact cache (`<facts_dir>/<certname>.yaml`).

    Raises FactsNotFoundError when the file is missing and the group rules need facts.
    """
    tree = load_groups(inventory_dir)
    found = read_puppet_facts(facts_dir, certname, tree)
    return classify_node(inventory_dir, certname, found.facts, found.trusted, tree=tree)
