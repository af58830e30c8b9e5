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

_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
_MERGE, _VALUE = _TAG + "merge", _TAG + "value"
# Scalars whose value the safe constructor computes (and which are immutable, so shareable).
_SCALAR_TAGS = frozenset(_TAG + t for t in ("int", "float", "bool", "null", "timestamp"))


class _Unsupported(Exception):
    """A node the fast constructor leaves to PyYAML's own (sets, omaps, odd keys or tags)."""


class _RecursiveAlias(Exception):
    """An alias inside the node it refers to."""

    def __init__(self, node: yaml.Node) -> None:
        self.node = node


class _FastLoader(SafeLoader):  # type: ignore[misc, valid-type]
    """Safe loading with the same results, built without the generator machinery.

    PyYAML's safe constructor turns each node through generators and bookkeeping meant for
    recursive documents; reclass files are plain trees (recursive aliases are refused), so a
    direct walk gives the same values several times faster. Implicit tags of plain scalars
    are memoised: the same few hundred words appear in every file.
    """

    _plain_tags: dict[str, str] = {}
    _scalar_values: dict[tuple[str, str], Any] = {}
    merge_keys = False  # a `<<` or `=` scalar was seen: mappings may need flattening

    # The C composer calls these for every node; no path resolver is ever registered here,
    # so C callables that ignore their arguments save two Python calls a node.
    descend_resolver = staticmethod(slice)
    ascend_resolver = staticmethod(tuple)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        # Called by the C composer for every node; path resolvers are never registered here.
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return _STR  # quoted: always a string
            tag = self._plain_tags.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if tag == _MERGE or tag == _VALUE:
                    self.merge_keys = True
                elif len(value) < 40:
                    self._plain_tags[value] = tag
            return tag
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def construct_tree(self, node: yaml.Node, walking: set[int] | None) -> Any:
        """The value of a node; `walking` holds the containers being built when the document
        has aliases (None when it has none: no node can then contain itself)."""
        tag = node.tag
        if type(node) is yaml.ScalarNode:
            if tag == _STR:
                return node.value
            if tag in _SCALAR_TAGS:
                return self._scalar(tag, node)
            raise _Unsupported
        if walking is not None:
            ident = id(node)
            if ident in walking:
                raise _RecursiveAlias(node)
            walking.add(ident)
        try:
            if type(node) is yaml.SequenceNode and tag == _SEQ:
                return [self.construct_tree(child, walking) for child in node.value]
            if type(node) is yaml.MappingNode and tag == _MAP:
                return self._mapping(node, walking)
            raise _Unsupported
        finally:
            if walking is not None:
                walking.discard(id(node))

    def _scalar(self, tag: str, node: yaml.ScalarNode) -> Any:
        # Ints, floats, booleans, nulls and timestamps are immutable: one value per spelling.
        key = (tag, node.value)
        try:
            return self._scalar_values[key]
        except KeyError:
            pass
        value = self.yaml_constructors[tag](self, node)
        if len(node.value) < 40:
            self._scalar_values[key] = value
        return value

    def _mapping(self, node: yaml.MappingNode, walking: set[int] | None) -> dict[Any, Any]:
        if self.merge_keys and any(key.tag in (_MERGE, _VALUE) for key, _ in node.value):
            self.flatten_mapping(node)  # `<<` merge keys, as the safe constructor does
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node) is not yaml.ScalarNode:
                raise _Unsupported  # PyYAML decides (and refuses unhashable keys)
            key = self.construct_tree(key_node, walking)
            mapping[key] = self.construct_tree(value_node, walking)
        return mapping


def _parse(data: bytes) -> Any:
    loader = _FastLoader(data)
    if b"!" in data:  # explicit tags (a key tagged !!merge is never resolved)
        loader.merge_keys = True
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            return loader.construct_tree(node, set() if b"*" in data else None)
        except _Unsupported:
            pass
    finally:
        loader.dispose()
    return yaml.load(data, Loader=SafeLoader)


def load_yaml_file(path: str) -> Any:
    """The document in `path`; invalid YAML is an error naming the file, line and column."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        return _parse(data)
    except OSError as err:
        raise YamlFileError(path, f"cannot read file: {err.strerror}") from None
    except _RecursiveAlias as err:
        mark = err.node.start_mark
        raise YamlFileError(path, "the mapping or list anchored here contains an alias to "
                            "itself (recursive data cannot be merged)", mark.line + 1,
                            mark.column + 1) from None
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
