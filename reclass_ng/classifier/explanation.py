"""The classifier's explanation of a classification (its `/explanation` endpoint's body).

Keys: `node_as_received`, `match_explanations` (matched group id -> explained inherited rule),
`leaf_groups` (id -> group), `inherited_classifications` (leaf id -> environment, variables,
classes), and either `conflicts` or `final_classification`. An explanation is always returned,
conflicts included, so it is the tool for understanding a conflict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reclass_ng.classifier.classification import ClassificationSteps, classification_steps
from reclass_ng.classifier.groups import inherited_condition
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.classifier.rule_evaluator import explain_condition


def _without_trumps(classification: Mapping[str, Any]) -> dict[str, Any]:
    shown = {k: classification[k] for k in ("environment", "variables", "classes")}
    if classification.get("config_data"):
        shown["config_data"] = classification["config_data"]
    return shown


def explanation_from_steps(tree: GroupTree, steps: ClassificationSteps) -> dict[str, Any]:
    """Build the explanation document from already computed classification steps."""
    match_explanations = {}
    for group in steps.matched:
        condition = inherited_condition(tree.chain(group))
        assert condition is not None  # a matched group always has a rule
        match_explanations[group.id] = explain_condition(condition, steps.node)
    explanation: dict[str, Any] = {
        "node_as_received": steps.node,
        "match_explanations": match_explanations,
        "leaf_groups": {leaf.id: leaf.to_data() for leaf in steps.leaves},
        "inherited_classifications": {
            leaf_id: _without_trumps(c) for leaf_id, c in steps.inherited.items()
        },
    }
    if steps.conflicts is not None:
        explanation["conflicts"] = steps.conflicts
    else:
        explanation["final_classification"] = steps.final
    return explanation


def explain(tree: GroupTree, name: str, facts: Mapping[str, Any] | None = None,
            trusted: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Explain how the groups classify a node; never raises for conflicts."""
    return explanation_from_steps(tree, classification_steps(tree, name, facts, trusted))
