"""Reading a node's facts: plain YAML/JSON files and Puppet's YAML fact cache.

Puppet's fact cache (`<vardir>/yaml/facts/<certname>.yaml` on a server, written by the `yaml`
facts terminus) holds one document tagged `!ruby/object:Puppet::Node::Facts` with `name`,
`values` (the facts; on a server also `trusted`), `timestamp` and `expiration`. Older files use
`!ruby/sym` keys. Ruby tags are read as plain data.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from reclass_ng.classifier.errors import FactsError, FactsNotFoundError
from reclass_ng.classifier.hierarchy import GroupTree
from reclass_ng.classifier.rule_ast import field_keys
from reclass_ng.errors import YamlFileError
from reclass_ng.storage.yaml_load import read_input_file
from reclass_ng.values import to_plain

# Fields a rule can read without any facts: the name, and the certname Puppet vouches for.
_FIELDS_WITHOUT_FACTS = {("name",), ("trusted", "certname")}


class _RubyObject(dict):
    """A mapping that carried a `!ruby/object:<class>` tag in the file."""

    def __init__(self, ruby_class: str, data: Mapping[Any, Any]) -> None:
        super().__init__(data)
        self.ruby_class = ruby_class


class _FactsLoader(yaml.SafeLoader):
    """SafeLoader that reads Ruby-tagged nodes (`!ruby/object:...`, `!ruby/sym`) as plain data."""


def _construct_ruby(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        data = loader.construct_mapping(node, deep=True)
        return _RubyObject(suffix[len("object:"):], data) if suffix.startswith("object:") else data
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_FactsLoader.add_multi_constructor("!ruby/", _construct_ruby)


def _facts_data(value: Any) -> Any:
    """Facts as JSON-compatible data: dates become ISO text, bytes text, keys strings."""
    return to_plain(value, json_compatible=True)


@attrs.frozen
class NodeFacts:
    """What a facts file says about a node."""

    facts: dict[str, Any]
    trusted: dict[str, Any] | None = None
    name: str | None = None
    source: str | None = None


def _parse(text: str, path: Path) -> Any:
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise FactsError(f"{path}:{err.lineno}:{err.colno}: not valid JSON ({err.msg})") from None
    try:
        return yaml.load(text, Loader=_FactsLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise FactsError(f"{where}: not valid YAML ({err.problem})") from None
    except yaml.YAMLError as err:
        raise FactsError(f"{path}: not valid YAML ({err})") from None


def load_facts_file(path: str | os.PathLike[str]) -> NodeFacts:
    """Read facts from a YAML or JSON mapping, or from a Puppet fact-cache document."""
    path = Path(path)
    if not os.path.exists(path):
        raise FactsNotFoundError(f"Facts file {path} does not exist")
    try:
        # As the loader reads (a FIFO or a device in Puppet's fact cache is refused, not read).
        text = read_input_file(str(path)).decode("utf-8")
    except YamlFileError as err:
        raise FactsError(f"Cannot read facts file {path}: {err.problem}") from None
    except UnicodeDecodeError as err:
        raise FactsError(f"Cannot read facts file {path}: {err}") from None
    data = _parse(text, path)
    if isinstance(data, _RubyObject) and data.ruby_class == "Puppet::Node::Facts":
        values = data.get("values")
        if not isinstance(values, Mapping):
            raise FactsError(f"{path}: a Puppet facts document needs a `values` mapping")
        trusted = values.get("trusted")
        name = data.get("name")
        return NodeFacts(_facts_data(values), _facts_data(trusted) if isinstance(trusted, Mapping) else None,
                         name if isinstance(name, str) else None, str(path))
    if data is None:
        return NodeFacts({}, source=str(path))
    if not isinstance(data, Mapping):
        raise FactsError(f"{path}: facts must be a mapping of fact names to values, "
                         f"got {type(data).__name__}")
    return NodeFacts(_facts_data(data), source=str(path))


def load_trusted_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read trusted facts (a mapping, e.g. `{certname: ..., extensions: {...}}`)."""
    return load_facts_file(path).facts


def trusted_with_certname(name: str, trusted: Mapping[str, Any] | None) -> dict[str, Any]:
    """The trusted data a node is classified with: what it sent, else `{certname: NAME}`, the
    part Puppet always sends (so rules on `trusted.certname` see it for every node)."""
    return dict(trusted) if trusted else {"certname": name}


def rules_need_facts(tree: GroupTree) -> bool:
    """True when some group's rule reads a field other than the node name or certname."""
    for group in tree.groups:
        condition = group.own_condition()
        if condition is not None and field_keys(condition) - _FIELDS_WITHOUT_FACTS:
            return True
    return False


def puppet_fact_cache_path(facts_dir: str | os.PathLike[str], certname: str) -> Path:
    """`<facts_dir>/<certname>.yaml`, refusing names that would leave the directory."""
    if not certname or "/" in certname or "\\" in certname or certname.startswith("."):
        raise FactsError(f"Refusing to read facts for unsafe node name {certname!r}")
    return Path(facts_dir) / f"{certname}.yaml"


def read_puppet_facts(facts_dir: str | os.PathLike[str], certname: str,
                      tree: GroupTree | None = None) -> NodeFacts:
    """A node's facts from Puppet's YAML fact cache; trusted defaults to `{certname}`.

    A missing file is an error when the group rules read facts (tree given and
    rules_need_facts); otherwise the node is classified by its name alone.
    """
    path = puppet_fact_cache_path(facts_dir, certname)
    if not path.is_file():
        if tree is None or rules_need_facts(tree):
            raise FactsNotFoundError(
                f"No facts for node {certname}: {path} does not exist. The node groups' rules "
                f"use facts, so the node cannot be classified without them. Point the facts "
                f"directory at Puppet's YAML fact cache (e.g. "
                f"/opt/puppetlabs/server/data/puppetserver/yaml/facts) or run the agent once "
                f"so its facts are stored.")
        return NodeFacts({}, {"certname": certname}, certname, None)
    found = load_facts_file(path)
    trusted = found.trusted if found.trusted is not None else {"certname": certname}
    return attrs.evolve(found, trusted=trusted)
