"""Puppet external node classifier (ENC): a node's reclass data as the YAML hash Puppet reads.

Puppet runs `external_nodes` with the node name appended and reads three keys from stdout:

- `classes`: a hash `{class: {parameter: value}}`. Every reclass *application* becomes a Puppet
  class. Its class parameters come from the top-level parameter of the same name when that value
  is a mapping (the `subtree` rule): application `ntp` gets `parameters['ntp']`, application
  `apache::vhost` gets `parameters['apache::vhost']`. With the `none` rule every class is declared
  without parameters (Hiera or the class defaults then supply them).
- `parameters`: all of the node's reclass parameters, as top-scope variables (`$site`, `$ntp`...).
- `environment`: the node's reclass environment, which Puppet treats as authoritative.

When the inventory has a `groups/` directory (node-classifier mode, doc/node-groups.rst), the node
is classified by its groups first, with the facts Puppet cached for it, and reclass's data on
top; the classifier then applies the subtree rule itself.

`$trusted`, `$facts` and `$server_facts` are Puppet's own: an ENC that sets them breaks every
catalog, so a node with such a parameter is an error rather than a silent rename.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

import reclass_ng
from reclass_ng.adapters.plain_data import plain_data
from reclass_ng.errors import ReclassError, UsageError

# How application classes get their parameters; see the module docstring.
CLASS_PARAMETER_RULES = ("subtree", "none")
DEFAULT_CLASS_PARAMETER_RULE = "subtree"

RESERVED_TOP_SCOPE_VARIABLES = ("trusted", "facts", "server_facts")

# Where Puppet Server caches each node's facts (`<dir>/<certname>.yaml`), read in node-classifier
# mode because Puppet passes an ENC nothing but the node name.
DEFAULT_FACTS_DIR = "/opt/puppetlabs/server/data/puppetserver/yaml/facts"


class ReservedVariableError(ReclassError):
    """A node parameter whose name Puppet keeps for itself."""

    def __init__(self, names: list[str], node: str) -> None:
        listed = ", ".join(f"'{name}'" for name in names)
        super().__init__(
            f"Parameter {listed} cannot be passed to Puppet: $trusted, $facts and $server_facts "
            "are reserved top-scope variables. Rename the parameter in the inventory.",
            node=node,
        )


def class_parameters(parameters: Mapping[str, Any], puppet_class: str, rule: str) -> dict:
    """The parameters of one application class under the given rule."""
    if rule == "none":
        return {}
    if rule != "subtree":
        raise ValueError(f"unknown class parameter rule {rule!r}; use one of {CLASS_PARAMETER_RULES}")
    subtree = parameters.get(puppet_class)
    return dict(subtree) if isinstance(subtree, Mapping) else {}


def enc_data(
    nodeinfo: Mapping[str, Any],
    *,
    class_parameter_rule: str = DEFAULT_CLASS_PARAMETER_RULE,
    include_environment: bool = True,
) -> dict[str, Any]:
    """The ENC hash for one node from its `nodeinfo` (as `reclass --nodeinfo` prints it)."""
    node = nodeinfo["__reclass__"]["node"]
    parameters = nodeinfo.get("parameters") or {}
    _refuse_reserved_names(parameters, node)
    data: dict[str, Any] = {
        "classes": {
            app: class_parameters(parameters, app, class_parameter_rule)
            for app in nodeinfo.get("applications") or []
        },
        "parameters": dict(parameters),
    }
    if include_environment:
        data["environment"] = str(nodeinfo["environment"])
    # Dates become text: Puppet's safe YAML loader refuses Ruby Date objects.
    return plain_data(data, dates_as_text=True)


def enc_yaml(data: Mapping[str, Any]) -> str:
    """The ENC hash as YAML Puppet's safe loader accepts (plain types only, strings quoted as needed)."""
    return yaml.safe_dump(dict(data), default_flow_style=False, sort_keys=False, allow_unicode=True)


def enc_data_from_classification(classification: Mapping[str, Any], *,
                                 include_environment: bool = True) -> dict[str, Any]:
    """The ENC hash from a node-groups classification (`{name, groups, environment, classes,
    parameters}`, as reclass_ng.classifier.classify_node returns it)."""
    parameters = classification.get("parameters") or {}
    _refuse_reserved_names(parameters, classification["name"])
    data: dict[str, Any] = {"classes": dict(classification.get("classes") or {}),
                            "parameters": dict(parameters)}
    if include_environment:
        data["environment"] = str(classification["environment"])
    return plain_data(data, dates_as_text=True)


def classify(
    inventory: reclass_ng.Inventory,
    node: str,
    *,
    class_parameter_rule: str = DEFAULT_CLASS_PARAMETER_RULE,
    include_environment: bool = True,
    use_groups: bool = True,
    facts_dir: str = DEFAULT_FACTS_DIR,
) -> dict[str, Any]:
    """The ENC hash of `node`: by its node groups when the inventory has any, else by reclass."""
    from reclass_ng import classifier  # only node-classifier mode needs it

    base = inventory.settings.inventory_base_uri or "."
    if not (use_groups and classifier.has_groups(base)):
        return enc_data(inventory.nodeinfo(node), class_parameter_rule=class_parameter_rule,
                        include_environment=include_environment)
    if class_parameter_rule != DEFAULT_CLASS_PARAMETER_RULE:
        raise UsageError(
            f"--class-parameters {class_parameter_rule} cannot be used in node-classifier mode "
            f"(the inventory has {base}/groups): the classifier passes each application the "
            "parameters of the same name. Use --no-groups to classify by reclass alone.")
    tree = classifier.load_groups(base)
    found = classifier.read_puppet_facts(facts_dir, node, tree)
    classification = classifier.classify_node(base, node, found.facts, found.trusted,
                                              tree=tree, inventory=inventory)
    return enc_data_from_classification(classification, include_environment=include_environment)


def _refuse_reserved_names(parameters: Mapping[str, Any], node: str) -> None:
    reserved = [name for name in RESERVED_TOP_SCOPE_VARIABLES if name in parameters]
    if reserved:
        raise ReservedVariableError(reserved, node)
