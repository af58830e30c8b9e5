"""YAML the full way: PyYAML's parser (libyaml if present) and a direct constructor, for the
documents storage.yaml_block declines, and every YAML error's message and line.

Imported by storage.yaml_load only when a document needs it (a flow mapping, a tag, two merge
keys in a mapping, a multi-line quoted scalar, invalid YAML, ...): a run whose files are all plain block
YAML never imports PyYAML (storage/yaml_import.py).
"""

from __future__ import annotations

from reclass_ng.errors import YamlFileError
from reclass_ng.storage.yaml_import import pyyaml
from reclass_ng.storage.yaml_rules import (
    _MAP,
    _MERGE,
    _SCALAR_TAGS,
    _SEQ,
    _STR,
    _VALUE,
    MAX_EXPANDED_NODES,
    MAX_YAML_DEPTH,
    plain_scalar_tag,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

    import yaml

    from reclass_ng.cache import BoundedCache
    from reclass_ng.storage.yaml_load import YamlLoader
else:
    yaml = pyyaml()

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# A nesting level needs one of these of its own (`[`, `{`, a block entry `-` or an explicit key
# `?` followed by white space, or, for block mappings, more indentation, which a file within
# the size limit cannot have for more than ~8,000 levels). The C composer survives 20,000 levels
# on an 8 MiB thread stack and crashed at 50,000, so files with fewer indicators than this are
# composed directly (the constructor then counts the depth); larger ones are scanned event by
# event first (about 13% of the load time of such a file).
_DEEP_SCAN_THRESHOLD = 16_000


class _TooDeep(Exception):
    def __init__(self, mark: yaml.Mark | None) -> None:
        self.mark = mark


class _TooManyNodes(Exception):
    def __init__(self, mark: yaml.Mark | None) -> None:
        self.mark = mark


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

    The memo tables are those of the storage's YamlLoader (`owner`, given to each parse): what
    they hold depends on the spelling alone, never on a file, and they are bounded.
    """

    _plain_tags: BoundedCache[str, str]
    _kept_tag: Any  # its peek
    _scalar: Any  # the owner's typed_scalar(tag, text)
    merge_keys = False  # a `<<` or `=` scalar was seen: mappings may need flattening
    expanded = 0  # containers built so far, counted only when the document has aliases

    # The C composer calls these for every node; no path resolver is ever registered here,
    # so C callables that ignore their arguments save two Python calls a node.
    descend_resolver = staticmethod(slice)
    ascend_resolver = staticmethod(tuple)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        # Called by the C composer for every node; path resolvers are never registered here.
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return _STR  # quoted: always a string
            kept_tag = self._kept_tag  # a local: see storage.yaml_load.YamlLoader
            tag = kept_tag(value)
            if tag is None:
                tag = plain_scalar_tag(value) or super().resolve(kind, value, implicit)
                if tag == _STR:
                    tag = _STR  # PyYAML's equal string: the fast path compares by identity
                elif tag == _MERGE or tag == _VALUE:
                    self.merge_keys = True
                elif len(value) < 40:
                    self._plain_tags.put(value, tag)
            return tag
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def construct_tree(self, node: yaml.Node, walking: set[int] | None, depth: int = 1) -> Any:
        """The value of a node at nesting `depth`; `walking` holds the containers being built
        when the document has aliases (None when it has none: no node can then contain itself).

        The depth is checked here, not left to Python's recursion limit: that limit is
        process-wide and raised while rendering, so it cannot bound a file's nesting."""
        tag = node.tag
        if type(node) is yaml.ScalarNode:
            if tag == _STR:
                return node.value
            if tag in _SCALAR_TAGS:
                return self._scalar(tag, node.value)
            raise _Unsupported
        if depth > MAX_YAML_DEPTH:
            raise _TooDeep(node.start_mark)
        if walking is not None:
            self._enter_aliased(node, walking)
        try:
            if type(node) is yaml.SequenceNode and tag == _SEQ:
                depth += 1
                return [self.construct_tree(child, walking, depth) for child in node.value]
            if type(node) is yaml.MappingNode and tag == _MAP:
                return self._mapping(node, walking, depth + 1)
            raise _Unsupported
        finally:
            if walking is not None:
                walking.discard(id(node))

    def _enter_aliased(self, node: yaml.Node, walking: set[int]) -> None:
        """construct_tree's step into container `node` of a document with aliases: refuse it
        inside itself, and count what the aliases expand to (MAX_EXPANDED_NODES)."""
        ident = id(node)
        if ident in walking:
            raise _RecursiveAlias(node)
        walking.add(ident)
        self.expanded += len(node.value) + 1
        if self.expanded > MAX_EXPANDED_NODES:
            raise _TooManyNodes(node.start_mark)

    def _mapping(self, node: yaml.MappingNode, walking: set[int] | None,
                 depth: int) -> dict[Any, Any]:
        if self.merge_keys and any(key.tag in (_MERGE, _VALUE) for key, _ in node.value):
            self.flatten_mapping(node)  # `<<` merge keys, as the safe constructor does
        mapping: dict[Any, Any] = {}
        scalar_node = yaml.ScalarNode
        for key_node, value_node in node.value:
            if type(key_node) is not scalar_node:
                raise _Unsupported  # PyYAML decides (and refuses unhashable keys)
            # Strings, most keys and values, inline: construct_tree would return node.value.
            key = key_node.value if key_node.tag == _STR \
                else self.construct_tree(key_node, walking, depth)
            if type(value_node) is scalar_node and value_node.tag == _STR:
                mapping[key] = value_node.value
            else:
                mapping[key] = self.construct_tree(value_node, walking, depth)
        return mapping


class _ScalarConstructor:
    """The safe constructor that scalars are built with (one, made on first use)."""

    made: yaml.constructor.SafeConstructor | None = None

    @classmethod
    def instance(cls) -> yaml.constructor.SafeConstructor:
        if cls.made is None:
            cls.made = yaml.constructor.SafeConstructor()
        return cls.made


def constructed_scalar(tag: str, text: str) -> Any:
    """The value PyYAML's safe constructor makes of the scalar `text` tagged `tag`."""
    return SafeLoader.yaml_constructors[tag](_ScalarConstructor.instance(),
                                             yaml.ScalarNode(tag, text))


class _SafeResolver(yaml.resolver.BaseResolver):
    """PyYAML's implicit resolvers of the safe loader, for plain scalars outside a parser."""

    @property
    def yaml_implicit_resolvers(self) -> dict:  # type: ignore[override]
        return SafeLoader.yaml_implicit_resolvers


def resolved_plain_tag(text: str) -> str:
    """The tag PyYAML's safe resolver gives the plain scalar `text`."""
    return _SafeResolver().resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-any-return,unused-ignore]


def _deepest_point(data: bytes) -> yaml.Mark | None:
    """Where the document first nests deeper than MAX_YAML_DEPTH, by its parse events (the
    parser keeps its own stack, unlike the composer); None when it never does.

    libyaml 0.2.6 (bundled with PyYAML 6.0.4) refuses more than 1,000 levels itself, and its
    scanner reads up to 1,024 characters ahead, so on a deep flow line it can stop before the
    event that crosses our limit: then the point where libyaml stopped is returned (deeper
    than our limit too)."""
    loader = SafeLoader(data)
    depth = 0
    try:
        while True:
            try:
                event = loader.get_event()
            except yaml.MarkedYAMLError as err:
                if _is_libyaml_depth_limit(err):
                    return err.problem_mark
                raise
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return None
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    return event.start_mark  # type: ignore[no-any-return,return-value,unused-ignore]
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    finally:
        loader.dispose()


def _is_libyaml_depth_limit(err: yaml.MarkedYAMLError) -> bool:
    """Whether `err` is libyaml's own nesting limit (0.2.6 and later: 1,000 levels), which a
    document meets only after it has crossed MAX_YAML_DEPTH."""
    return "exceeded maximum nesting depth" in (err.problem or "")


def _check_depth(data: bytes) -> None:
    if len(data) <= _DEEP_SCAN_THRESHOLD:
        return  # every indicator is at least a byte: a file this small has too few to count
    indicators = data.count(b"[") + data.count(b"{") + sum(
        data.count(indicator + space) for indicator in (b"-", b"?")
        for space in (b" ", b"\n", b"\t", b"\r"))
    if indicators > _DEEP_SCAN_THRESHOLD:
        mark = _deepest_point(data)
        if mark is not None:
            raise _TooDeep(mark)


def parse_yaml_full(data: bytes, owner: YamlLoader) -> Any:
    """The document in `data`, read through PyYAML's parser (the fast path's reference), with
    the memo tables of `owner`, whose floats_json_exact it clears where it cannot check."""
    _check_depth(data)
    loader = _FastLoader(data)
    loader._plain_tags = owner.plain_tags
    loader._kept_tag = owner.plain_tags.peek
    loader._scalar = owner.typed_scalar
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
    # PyYAML's own constructor recurses without counting, so the depth is checked first.
    mark = _deepest_point(data)
    if mark is not None:
        raise _TooDeep(mark)
    owner.floats_json_exact = False  # PyYAML's own constructor: floats not checked
    return yaml.load(data, Loader=SafeLoader)


def yaml_problem(err: yaml.MarkedYAMLError) -> str:
    """PyYAML's problem, and where the construct it was reading opened (an unclosed bracket or
    quote is found where parsing stopped, often lines below the mistake)."""
    problem = err.problem or "invalid YAML"
    opened, stopped = err.context_mark, err.problem_mark
    if err.context and opened is not None and stopped is not None and \
            (opened.line, opened.column) != (stopped.line, stopped.column):
        where = f"line {opened.line + 1}, column {opened.column + 1}"
        return f"{problem} ({err.context} opened at {where})"
    return " ".join(p for p in (err.context, err.problem) if p) or "invalid YAML"


def parse_yaml_bytes_full(data: bytes, path: str, owner: YamlLoader) -> Any:
    """YamlLoader.parse_bytes the full way: the document in `data` (read from `path`, named
    in errors), within the loader's limits, with the memo tables of `owner`."""
    try:
        return parse_yaml_full(data, owner)
    except _TooDeep as err:
        raise _limit_error(path, f"the document nests deeper than {MAX_YAML_DEPTH} levels",
                           err.mark) from None
    except RecursionError:
        mark = _deepest_point(data)
        raise _limit_error(path, f"the document nests deeper than the loader supports (at "
                           f"most {MAX_YAML_DEPTH} levels are guaranteed)", mark) from None
    except _TooManyNodes as err:
        raise _limit_error(path, f"its aliases expand to more than {MAX_EXPANDED_NODES} "
                           "values (an alias bomb?)", err.mark) from None
    except _RecursiveAlias as err:
        mark = err.node.start_mark
        raise YamlFileError(path, "the mapping or list anchored here contains an alias to "
                            "itself (recursive data cannot be merged)", mark.line + 1,
                            mark.column + 1) from None
    except yaml.MarkedYAMLError as err:
        if _is_libyaml_depth_limit(err):
            raise _limit_error(path, f"the document nests deeper than {MAX_YAML_DEPTH} levels",
                               _deepest_point(data)) from None
        mark = err.problem_mark or err.context_mark
        problem = yaml_problem(err)
        if mark is None:
            raise YamlFileError(path, f"invalid YAML: {problem}") from None
        raise YamlFileError(path, f"invalid YAML: {problem}", mark.line + 1, mark.column + 1) from None
    except yaml.YAMLError as err:
        raise YamlFileError(path, f"invalid YAML: {err}") from None


def _limit_error(path: str, problem: str, mark: yaml.Mark | None) -> YamlFileError:
    if mark is None:
        return YamlFileError(path, problem)
    return YamlFileError(path, problem, mark.line + 1, mark.column + 1)


def compose_yaml_bytes(data: bytes, path: str) -> yaml.Node | None:
    """The node graph of `data` (read from `path`, named in errors), with positions, within the
    loader's limits: for tools that need lines (lint, explain; storage.yaml_load.
    compose_yaml_file reads the file) and an editor's unsaved buffer (reclass_ng.lsp).
    YamlFileError for a document over a limit, yaml.YAMLError for invalid YAML."""
    try:
        _check_depth(data)
        return yaml.compose(data, Loader=SafeLoader)
    except _TooDeep as err:
        raise _limit_error(path, f"the document nests deeper than {MAX_YAML_DEPTH} levels",
                           err.mark) from None
    except RecursionError:
        raise _limit_error(path, "the document nests deeper than the loader supports",
                           _deepest_point(data)) from None
    except yaml.MarkedYAMLError as err:
        if not _is_libyaml_depth_limit(err):
            raise
        raise _limit_error(path, f"the document nests deeper than {MAX_YAML_DEPTH} levels",
                           _deepest_point(data)) from None
