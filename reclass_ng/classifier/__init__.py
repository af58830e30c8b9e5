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
