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

In client mode (`reclass-puppet --server URL NODE`) the classification is done by a running
`reclass-ng serve`: the node's cached facts are POSTed to `URL/v1/classified/nodes/NODE` and the
answer is turned into the same ENC hash, so Puppet sees no difference (and the service records
the check-in and the facts as observed state).

`$trusted`, `$facts` and `$server_facts` are Puppet's own: an ENC that sets them breaks every
catalog, so a node with such a parameter is an error rather than a silent rename.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

import yaml

import reclass_ng
from reclass_ng.errors import EX_DATAERR, EX_IOERR, ReclassError, UsageError
from reclass_ng.values import to_plain

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
    return to_plain(data, dates_as_text=True)


class _PuppetSafeDumper(yaml.SafeDumper):
    """SafeDumper that also quotes strings Ruby's YAML loader would read as numbers.

    Ruby (Psych) reads base-60 numbers with a leading zero, such as `03:00`, as integers
    (180), while PyYAML's resolver only knows them without one and so would write the string
    `"03:00"` unquoted: Puppet would then get an Integer for a String parameter. Teaching the
    dumper those forms makes it quote such strings.
    """


_PuppetSafeDumper.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+$"),
    list("-+0123456789"))
_PuppetSafeDumper.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*$"),
    list("-+0123456789"))


def enc_yaml(data: Mapping[str, Any]) -> str:
    """The ENC hash as YAML Puppet's safe loader accepts (plain types only, strings quoted as
    needed, including the base-60 forms only Ruby reads as numbers)."""
    return yaml.dump(dict(data), Dumper=_PuppetSafeDumper, default_flow_style=False,
                     sort_keys=False, allow_unicode=True)


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
    return to_plain(data, dates_as_text=True)


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


class ClassifierServerError(ReclassError):
    """The classifier service could not be reached, or refused to classify the node."""

    def __init__(self, message: str, exit_code: int = EX_DATAERR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _server_error_text(body: bytes) -> str:
    """`kind: msg` from the service's `{kind, msg, details}` error, else the body's start."""
    try:
        error = json.loads(body)
    except ValueError:
        error = None
    if isinstance(error, Mapping) and "kind" in error:
        return f"{error.get('kind')}: {error.get('msg')}"
    return body[:500].decode("utf-8", "replace").strip() or "(empty body)"


def request_classification(server_url: str, node: str, fact: Mapping[str, Any],
                           trusted: Mapping[str, Any], *, token: str | None = None,
                           timeout: float = 30.0) -> dict[str, Any]:
    """POST `{fact, trusted}` to `<server_url>/v1/classified/nodes/<node>` and return the
    classification; ClassifierServerError (naming URL and node) when that fails."""
    if urllib.parse.urlsplit(server_url).scheme not in ("http", "https"):
        raise UsageError(f"--server {server_url!r}: expected an http:// or https:// URL such as "
                         "http://127.0.0.1:1261")
    url = f"{server_url.rstrip('/')}/v1/classified/nodes/{urllib.parse.quote(node, safe='')}"
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        headers["X-Authentication"] = token
    body = json.dumps({"fact": dict(fact), "trusted": dict(trusted)}).encode()
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - URL from the operator
            raw = response.read()
    except urllib.error.HTTPError as err:
        text = _server_error_text(err.read())
        raise ClassifierServerError(
            f"The classifier at {url} refused node {node}: HTTP {err.code} {text}") from None
    except (OSError, http.client.HTTPException) as err:  # refused, reset, timed out, garbled
        reason = getattr(err, "reason", err)
        raise ClassifierServerError(
            f"Cannot reach the classifier at {url} to classify node {node}: {reason}",
            EX_IOERR) from None
    except ValueError as err:  # a malformed URL (no scheme, bad port)
        raise UsageError(f"--server {server_url!r} is not a usable URL: {err}") from None
    try:
        result = json.loads(raw)
    except ValueError:
        result = None
    if not (isinstance(result, Mapping) and isinstance(result.get("classes"), Mapping)
            and "environment" in result):
        raise ClassifierServerError(
            f"The classifier at {url} answered for node {node} with something that is not a "
            f"classification: {raw[:200].decode('utf-8', 'replace')!r}")
    return {**result, "name": result.get("name", node)}


def classify_with_server(server_url: str, node: str, *, facts_dir: str = DEFAULT_FACTS_DIR,
                         token: str | None = None, include_environment: bool = True,
                         timeout: float = 30.0) -> dict[str, Any]:
    """Client mode: the ENC hash of `node` as a `reclass-ng serve` at `server_url` classifies
    it, given the facts Puppet cached for the node."""
    from reclass_ng.classifier.errors import FactsNotFoundError
    from reclass_ng.classifier.facts import load_facts_file, puppet_fact_cache_path

    path = puppet_fact_cache_path(facts_dir, node)
    if not path.is_file():
        # The server's rules may read facts; classifying without them would silently put the
        # node into fewer groups, so refuse as the local node-groups mode does.
        raise FactsNotFoundError(
            f"No facts for node {node}: {path} does not exist, so there is nothing to send to "
            f"the classifier at {server_url}. Point --facts-dir at Puppet's YAML fact cache or "
            "run the agent once so its facts are stored.")
    found = load_facts_file(path)
    trusted = found.trusted if found.trusted is not None else {"certname": node}
    classification = request_classification(server_url, node, found.facts, trusted,
                                            token=token, timeout=timeout)
    return enc_data_from_classification(classification, include_environment=include_environment)


def _refuse_reserved_names(parameters: Mapping[str, Any], node: str) -> None:
    reserved = [name for name in RESERVED_TOP_SCOPE_VARIABLES if name in parameters]
    if reserved:
        raise ReservedVariableError(reserved, node)
