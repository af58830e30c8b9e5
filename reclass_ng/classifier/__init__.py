"""Node groups: the Puppet Node Classifier's model on a reclass YAML inventory.

Groups live in `<inventory>/groups/*.yml`; their rules match nodes by name and facts, and a
node's classification merges its matching groups, refusing conflicting values. The core works
without reclass files (`load_groups`, `classify`, `explain`, `validate_groups`); the functions
ending in `_node` add the node's own `nodes/` file and `${}` references through the engine.

    from reclass_ng import classifier
    tree = classifier.load_groups("inventory")              # GroupValidationError lists problems
    classifier.classify(tree, "web1", facts={"os": {...}})  # the groups' classification
    classifier.explain(tree, "web1", facts={...})           # the classifier's explanation
    classifier.classify_node("inventory", "web1", facts)    # + nodes/web1.yml and references
"""

from __future__ import annotations

# Imported on first use: a command that needs one submodule (lint reads facts, the Puppet
# ENC classifies) does not pay for the others (classification, explanation, hierarchy).
_LAZY = {
    "ClassificationSteps": "reclass_ng.classifier.classification",
    "classification_steps": "reclass_ng.classifier.classification",
    "classify": "reclass_ng.classifier.classification",
    "ClassificationConflictError": "reclass_ng.classifier.errors",
    "FactsError": "reclass_ng.classifier.errors",
    "FactsNotFoundError": "reclass_ng.classifier.errors",
    "GroupProblem": "reclass_ng.classifier.errors",
    "GroupValidationError": "reclass_ng.classifier.errors",
    "explain": "reclass_ng.classifier.explanation",
    "NodeFacts": "reclass_ng.classifier.facts",
    "load_facts_file": "reclass_ng.classifier.facts",
    "read_puppet_facts": "reclass_ng.classifier.facts",
    "rules_need_facts": "reclass_ng.classifier.facts",
    "has_groups": "reclass_ng.classifier.group_files",
    "load_groups": "reclass_ng.classifier.group_files",
    "read_group_files": "reclass_ng.classifier.group_files",
    "CLASSES_PARAMETER": "reclass_ng.classifier.groups",
    "ROOT_GROUP_ID": "reclass_ng.classifier.groups",
    "Group": "reclass_ng.classifier.groups",
    "group_from_data": "reclass_ng.classifier.groups",
    "GroupTree": "reclass_ng.classifier.hierarchy",
    "validate_group_data": "reclass_ng.classifier.hierarchy",
    "validate_groups": "reclass_ng.classifier.hierarchy",
    "classify_for_enc": "reclass_ng.classifier.node_classification",
    "classify_node": "reclass_ng.classifier.node_classification",
    "explain_node": "reclass_ng.classifier.node_classification",
    "RuleSyntaxError": "reclass_ng.classifier.rule_parser",
    "parse_rule": "reclass_ng.classifier.rule_parser",
}

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:  # what type checkers see of the lazy names above
    from typing import Any

    from reclass_ng.classifier.classification import (
        ClassificationSteps,
        classification_steps,
        classify,
    )
    from reclass_ng.classifier.errors import (
        ClassificationConflictError,
        FactsError,
        FactsNotFoundError,
        GroupProblem,
        GroupValidationError,
    )
    from reclass_ng.classifier.explanation import explain
    from reclass_ng.classifier.facts import (
        NodeFacts,
        load_facts_file,
        read_puppet_facts,
        rules_need_facts,
    )
    from reclass_ng.classifier.group_files import has_groups, load_groups, read_group_files
    from reclass_ng.classifier.groups import (
        CLASSES_PARAMETER,
        ROOT_GROUP_ID,
        Group,
        group_from_data,
    )
    from reclass_ng.classifier.hierarchy import GroupTree, validate_group_data, validate_groups
    from reclass_ng.classifier.node_classification import (
        classify_for_enc,
        classify_node,
        explain_node,
    )
    from reclass_ng.classifier.rule_parser import RuleSyntaxError, parse_rule


__all__ = [
    "CLASSES_PARAMETER",
    "ROOT_GROUP_ID",
    "ClassificationConflictError",
    "ClassificationSteps",
    "FactsError",
    "FactsNotFoundError",
    "Group",
    "GroupProblem",
    "GroupTree",
    "GroupValidationError",
    "NodeFacts",
    "RuleSyntaxError",
    "classification_steps",
    "classify",
    "classify_for_enc",
    "classify_node",
    "explain",
    "explain_node",
    "group_from_data",
    "has_groups",
    "load_facts_file",
    "load_groups",
    "parse_rule",
    "read_group_files",
    "read_puppet_facts",
    "rules_need_facts",
    "validate_group_data",
    "validate_groups",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reclass_ng.classifier' has no attribute {name!r}")
