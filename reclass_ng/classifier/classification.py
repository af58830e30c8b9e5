"""Classifying a node by its name and facts against the group tree (the Node Classifier's steps).

1. Match: a group matches when its own rule (pinned nodes OR'd in) and the rule of every
   ancestor that has one match. Groups without a rule or pins match no node; the root matches all.
2. Leaves: matching groups with no matching descendant.
3. Inherited classification per leaf: root to leaf, child wins, `null` deletes; the leaf's own
   environment and environment_trumps.
4. Conflicts between leaves, settled for the environment by environment_trumps.
5. Without conflicts, the leaves' classifications merge into the final classification.

This module knows nothing of reclass files; see node_classification.py for the step that applies
the node's own file and resolves references.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import attrs

from reclass_ng.classifier.conflicts import (
    apply_environment_trumps,
    conflict_message,
    explain_conflicts,
    find_conflicts,
    trump_environments,
)
from reclass_ng.classifier.errors import ClassificationConflictError
from reclass_ng.classifier.groups import Group
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.classifier.merge import merge_and_clean
from reclass_ng.classifier.rule_evaluator import matches, node_map


@attrs.frozen
class ClassificationSteps:
    """Every intermediate result, for `classify`, `explain` and the reclass step."""

    node: dict[str, Any]
    matched: tuple[Group, ...]
    leaves: tuple[Group, ...]
    inherited: dict[str, dict[str, Any]]
    conflicts: dict[str, Any] | None
    conflict_msg: str | None
    final: dict[str, Any] | None
    environment_trumped: bool
    reclass_classes: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.node["name"]

    def raise_if_conflicting(self) -> None:
        if self.conflicts is not None:
            raise ClassificationConflictError(self.name, self.conflict_msg or "", self.conflicts)

    def result(self) -> dict[str, Any]:
        """The classifier's classification response (a copy); raises on conflicts."""
        self.raise_if_conflicting()
        assert self.final is not None
        return copy.deepcopy(with_config_data({
            "name": self.name,
            "groups": [g.id for g in self.matched],
            "environment": self.final["environment"],
            "classes": self.final["classes"],
            "parameters": self.final["variables"],
        }, self.final))


def with_config_data(result: dict[str, Any], final: Mapping[str, Any]) -> dict[str, Any]:
    """`result` with the final classification's `config_data` when a group set any (PE shows
    the key then; a classification without it keeps the classifier's original shape)."""
    if final.get("config_data"):
        result["config_data"] = final["config_data"]
    return result


def matching_groups(tree: GroupTree, node: Mapping[str, Any]) -> list[Group]:
    """Groups whose inherited rule matches `node`, parents before children."""
    own: dict[str, bool | None] = {}
    for group in tree.walk():
        condition = group.own_condition()
        own[group.id] = None if condition is None else matches(condition, node)
    return [
        group for group in tree.walk()
        if own[group.id] and all(own[a.id] is not False for a in tree.ancestors(group))
    ]


def leaf_groups(tree: GroupTree, matched: list[Group]) -> list[Group]:
    """Matching groups that no other matching group descends from."""
    with_matching_descendant = {a.id for g in matched for a in tree.ancestors(g)}
    return [g for g in matched if g.id not in with_matching_descendant]


def inherited_classification(tree: GroupTree, group: Group) -> dict[str, Any]:
    """The group's classification merged from the root down to it."""
    return merge_and_clean(*(g.classification() for g in reversed(tree.chain(group))))


def _reclass_classes(tree: GroupTree, leaves: list[Group]) -> tuple[str, ...]:
    """reclass classes named by the leaves' chains, root side first, each once."""
    found: dict[str, None] = {}
    for leaf in leaves:
        for group in reversed(tree.chain(leaf)):
            found.update(dict.fromkeys(group.reclass_classes))
    return tuple(found)


def classification_steps(tree: GroupTree, name: str, facts: Mapping[str, Any] | None = None,
                         trusted: Mapping[str, Any] | None = None) -> ClassificationSteps:
    """Run every step for one node; conflicts are recorded, not raised."""
    node = node_map(name, facts, trusted)
    matched = matching_groups(tree, node)
    leaves = leaf_groups(tree, matched)
    inherited = {leaf.id: inherited_classification(tree, leaf) for leaf in leaves}
    leaf_classifications = [inherited[leaf.id] for leaf in leaves]
    trumps = trump_environments(leaf_classifications)
    conflicts = apply_environment_trumps(find_conflicts(leaf_classifications), trumps)
    explained = msg = final = None
    if conflicts:
        chains = {leaf.id: tree.chain(leaf) for leaf in leaves}
        explained = explain_conflicts(conflicts, leaves, inherited, chains)
        msg = conflict_message(explained)
    else:
        merged = merge_and_clean(*leaf_classifications)
        environment = trumps[0] if trumps else merged["environment"]
        final = {"environment": environment, "classes": merged.get("classes", {}),
                 "variables": merged.get("variables", {})}
        if merged.get("config_data"):  # absent when no group sets any: the original shape
            final["config_data"] = merged["config_data"]
    return ClassificationSteps(
        node=node, matched=tuple(matched), leaves=tuple(leaves), inherited=inherited,
        conflicts=explained, conflict_msg=msg, final=final, environment_trumped=bool(trumps),
        reclass_classes=_reclass_classes(tree, leaves),
    )


def classify(tree: GroupTree, name: str, facts: Mapping[str, Any] | None = None,
             trusted: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Classify a node by the groups alone: `{name, groups, environment, classes, parameters}`.

    Raises ClassificationConflictError (with the classifier's conflict details) on conflicts.
    """
    return classification_steps(tree, name, facts, trusted).result()
