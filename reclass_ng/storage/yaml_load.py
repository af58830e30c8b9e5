"""YAML loading as kapicorp-reclass does it: PyYAML safe loading, YAML 1.1 typing, libyaml if present.

Line numbers are not kept while loading (that would slow every file down); when an error or an
explanation needs the line of a key, `key_line` parses that one file again with positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from reclass_ng.errors import YamlFileError

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml_file(path: str) -> Any:
    """The document in `path`; invalid YAML is an error naming the file, line and column."""
    try:
        with open(path, "rb") as handle:
            return yaml.load(handle, Loader=SafeLoader)
    except OSError as err:
        raise YamlFileError(path, f"cannot read file: {err.strerror}") from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = " ".join(p for p in (err.context, err.problem) if p) or "invalid YAML"
        if mark is None:
            raise YamlFileError(path, f"invalid YAML: {problem}") from None
        raise YamlFileError(path, f"invalid YAML: {problem}", mark.line + 1, mark.column + 1) from None
    except yaml.YAMLError as err:
        raise YamlFileError(path, f"invalid YAML: {err}") from None


def key_line(path: str, keys: Sequence[object]) -> int | None:
    """1-based line of the mapping key at `keys` (strings or list indexes) in a YAML file."""
    try:
        with open(path, "rb") as handle:
            node = yaml.compose(handle, Loader=SafeLoader)
    except (OSError, yaml.YAMLError):
        return None
    line = None
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if _key_matches(key_node, key):
                    line, node = key_node.start_mark.line + 1, value_node
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _key_matches(key_node: yaml.Node, key: object) -> bool:
    if not isinstance(key_node, yaml.ScalarNode):
        return False
    text = key_node.value
    return text == key or text.lstrip("~=") == key
