"""YAML loading as kapicorp-reclass does it: PyYAML safe loading, YAML 1.1 typing, libyaml if present.

Line numbers are not kept while loading (that would slow every file down); when an error or an
explanation needs the line of a key, positions.py composes that one file again
(`compose_yaml_file`).

Hostile files get a clear error naming file and line, never a crash, a hang or unbounded
memory: only regular files are read (a FIFO or a link to /dev/zero is refused before any read),
at most MAX_YAML_FILE_BYTES of them; nesting deeper than MAX_YAML_DEPTH is refused (libyaml's
composer recurses in C, so a 50,000-deep flow list would overflow the C stack), and aliases may
expand to at most MAX_EXPANDED_NODES values (a 455-byte "billion laughs" file expands to 10**9).
"""

from __future__ import annotations

import os
import stat

import yaml

from reclass_ng.errors import YamlFileError
from reclass_ng.storage.yaml_block import STR_TAG, BlockYamlReader, NotSimple, block_yaml_text

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_INFINITY = float("inf")

_TAG = "tag:yaml.org,2002:"
# The str tag is yaml_block's own object: its fast path tells a memoised tag by identity.
_STR, _MAP, _SEQ = STR_TAG, _TAG + "map", _TAG + "seq"
_MERGE, _VALUE = _TAG + "merge", _TAG + "value"
# Scalars whose value the safe constructor computes (and which are immutable, so shareable).
_SCALAR_TAGS = frozenset(_TAG + t for t in ("int", "float", "bool", "null", "timestamp"))
_FLOAT = _TAG + "float"
_BOOL, _NULL, _INT = _TAG + "bool", _TAG + "null", _TAG + "int"


class _LoadedFloats:
    """Whether every float loaded in this process prints the same through orjson as through
    json (`repr`): true unless a file held a float below 1e-4 (orjson writes `0.00001` where
    json writes `1e-05`), a NaN or an infinity. The JSON writer skips searching its output for
    such numbers while this holds (`output_json`)."""

    json_exact = True


LOADED_FLOATS = _LoadedFloats()


def float_json_exact(value: float) -> bool:
    """Whether orjson writes `value` as json does (`float.__repr__`): zero, and finite floats
    of at least 1e-4 in size (tested on random bit patterns in tests/test_output_json.py)."""
    return value == 0.0 or 1e-4 <= abs(value) < _INFINITY

MAX_YAML_FILE_BYTES = 32 * 1024 * 1024
MAX_YAML_DEPTH = 200
MAX_EXPANDED_NODES = 1_000_000
# Spellings of plain scalars each memo table of the loader keeps (about 3 MB at the most).
MAX_MEMO_ENTRIES = 20_000
# A nesting level needs one of these of its own (`[`, `{`, a block entry `-` or an explicit key
# `?` followed by white space, or, for block mappings, more indentation, which a file within
# the size limit cannot have for more than ~8,000 levels). The C composer survives 20,000 levels
# on an 8 MiB thread stack and crashed at 50,000, so files with fewer indicators than this are
# composed directly (the constructor then counts the depth); larger ones are scanned event by
# event first (about 13% of the load time of such a file).
_DEEP_SCAN_THRESHOLD = 16_000


# -- implicit tags of common plain scalars, without PyYAML's regular expressions ---------
# The C composer asks the resolver for the tag of every plain scalar; PyYAML's resolver
# matches it against regular expressions, each compiled on first use (cli/yaml_import.py) at
# about half a million instructions. Words, booleans, nulls and decimal integers are told apart
# here; anything else (floats, timestamps, octal and sexagesimal numbers, merge keys, a newline)
# is left to PyYAML. This is exact only for PyYAML's own table of implicit resolvers, which is
# checked once, on first use; with any other table PyYAML decides every scalar.
_BOOL_SPELLINGS = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF".split())
_NULL_SPELLINGS = frozenset(("~", "null", "Null", "NULL"))
_DIGITS = "0123456789"
_DOT_FLOATS = frozenset(".inf .Inf .INF .nan .NaN .NAN".split())
# First character -> the tags PyYAML's implicit resolvers try, in order (PyYAML 5.1 to 6.0).
_STANDARD_RESOLVERS = {
    "": ["null"], "!": ["yaml"], "&": ["yaml"], "*": ["yaml"], "+": ["float", "int"],
    "-": ["float", "int"], ".": ["float"], "<": ["merge"], "=": ["value"], "~": ["null"],
    **{digit: ["float", "int", "timestamp"] for digit in _DIGITS},
    **{c: ["bool"] for c in "yYtTfFoO"}, "n": ["bool", "null"], "N": ["bool", "null"]}


class _PlainTags:
    """Whether plain_scalar_tag may answer (PyYAML's resolver table is its own)."""

    usable: bool | None = None  # None: not checked yet


def _standard_resolver_table() -> bool:
    table = SafeLoader.yaml_implicit_resolvers
    return not SafeLoader.yaml_path_resolvers and {
        first: [tag[len(_TAG):] for tag, _ in resolvers] for first, resolvers in table.items()
    } == _STANDARD_RESOLVERS


def plain_scalar_tag(value: str) -> str | None:
    """The tag PyYAML's safe resolver gives the plain scalar `value`, for the common cases
    (words, booleans, nulls, decimal integers); None for the others, which it must decide.
    tests/test_yaml_load.py compares it with PyYAML's resolver."""
    if not _standard_tags() or not value or "\n" in value:  # `$` of a pattern matches before a "\n"
        return None
    first = value[0]
    if first in _DIGITS:
        # Decimal digits only, without a leading zero: no float, and the int pattern's
        # `[1-9][0-9_]*` (a leading 0 may be octal: PyYAML decides).
        if value == "0" or (first != "0" and value.isascii() and value.isdigit()):
            return _INT
        # Digits and dots only (versions, addresses): one dot is the float pattern's
        # `[0-9][0-9_]*\.[0-9_]*`; more match no pattern (a timestamp needs `-`).
        dots = value.count(".")
        if dots and value.isascii() and value.replace(".", "").isdigit():
            return _FLOAT if dots == 1 else _STR
        return None
    if first in "yYtTfFoOnN":
        if value in _BOOL_SPELLINGS:
            return _BOOL
        if first in "nN" and value in _NULL_SPELLINGS:
            return _NULL
        return _STR
    if first == "~":
        return _NULL if value == "~" else _STR
    if first == "<":
        return _MERGE if value == "<<" else _STR
    if first == "=":
        return _VALUE if value == "=" else _STR
    if first == ".":  # relative class names: only `.` + digit and .inf/.nan spellings are floats
        second = value[1:2]
        return None if (second and second in _DIGITS) or value in _DOT_FLOATS else _STR
    return None if first in _STANDARD_RESOLVERS else _STR


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

    The two memo tables are shared by every load of the process (what they hold depends on the
    spelling alone, never on a file, and every value is immutable) and bounded: a table that
    reaches MAX_MEMO_ENTRIES starts again empty, so a service reading new files for months
    keeps at most that many short spellings, for the price of one length check per new one.
    """

    _plain_tags: dict[str, str] = {}
    _scalar_values: dict[tuple[str, str], Any] = {}
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
            tag = self._plain_tags.get(value)
            if tag is None:
                tag = plain_scalar_tag(value) or super().resolve(kind, value, implicit)
                if tag == _STR:
                    tag = _STR  # PyYAML's equal string: the fast path compares by identity
                elif tag == _MERGE or tag == _VALUE:
                    self.merge_keys = True
                elif len(value) < 40:
                    _remember(self._plain_tags, value, tag)
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
                return self._scalar(tag, node)
            raise _Unsupported
        if depth > MAX_YAML_DEPTH:
            raise _TooDeep(node.start_mark)
        if walking is not None:
            ident = id(node)
            if ident in walking:
                raise _RecursiveAlias(node)
            walking.add(ident)
            self.expanded += len(node.value) + 1
            if self.expanded > MAX_EXPANDED_NODES:
                raise _TooManyNodes(node.start_mark)
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

    def _scalar(self, tag: str, node: yaml.ScalarNode) -> Any:
        return _typed_scalar(tag, node.value, node)

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


def _typed_scalar(tag: str, text: str, node: yaml.ScalarNode | None) -> Any:
    """The value of a scalar of `tag` (int, float, bool, null or timestamp) spelt `text`.
    These are immutable: one value per spelling, shared by every file."""
    key = (tag, text)
    values = _FastLoader._scalar_values
    try:
        return values[key]
    except KeyError:
        pass
    if node is None:
        node = yaml.ScalarNode(tag, text)
    value = SafeLoader.yaml_constructors[tag](_ScalarConstructor.instance(), node)
    if tag == _FLOAT and not float_json_exact(value):
        LOADED_FLOATS.json_exact = False
    if len(text) < 40:
        _remember(values, key, value)
    return value


class _ScalarConstructor:
    """The safe constructor that scalars are built with (one, made on first use)."""

    made: yaml.constructor.SafeConstructor | None = None

    @classmethod
    def instance(cls) -> yaml.constructor.SafeConstructor:
        if cls.made is None:
            cls.made = yaml.constructor.SafeConstructor()
        return cls.made


class _SafeResolver(yaml.resolver.BaseResolver):
    """PyYAML's implicit resolvers of the safe loader, for plain scalars outside a parser."""

    @property
    def yaml_implicit_resolvers(self) -> dict:  # type: ignore[override]
        return SafeLoader.yaml_implicit_resolvers


# Tags of plain scalars that BlockYamlReader.parse takes the value of here (others: the full way).
_BLOCK_SCALAR_TAGS = frozenset((_INT, _FLOAT, _BOOL, _NULL))


def _plain_value(text: str) -> Any:
    """The value of the plain scalar `text` for BlockYamlReader.parse; NotSimple for a merge key,
    a `=` or a timestamp, which the full loader reads."""
    tags = _FastLoader._plain_tags
    tag = tags.get(text)
    if tag is None:
        tag = plain_scalar_tag(text) or _SafeResolver().resolve(yaml.ScalarNode, text,
                                                                 (True, False))
        if tag == _MERGE or tag == _VALUE:
            raise NotSimple  # never remembered: the loader notes each one (merge_keys)
        if tag == _STR:
            tag = _STR  # BlockYamlReader.parse compares by identity
        if len(text) < 40:
            _remember(tags, text, tag)
    if tag == _STR:
        return text
    if tag in _BLOCK_SCALAR_TAGS:
        return _typed_scalar(tag, text, None)
    raise NotSimple


# The fast path of plain block YAML (memo tables bounded like the loader's).
BLOCK_READER = BlockYamlReader(_FastLoader._plain_tags, _plain_value, MAX_YAML_DEPTH,
                               MAX_MEMO_ENTRIES)


def _remember(table: dict, key: Any, value: Any) -> None:
    """Memoise in one of _FastLoader's tables, which start again empty when full."""
    if len(table) >= MAX_MEMO_ENTRIES:
        table.clear()
    table[key] = value


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


def _parse(data: bytes) -> Any:
    """The document in `data`: plain block YAML by the fast path (storage/yaml_block.py),
    anything else by parse_yaml_full."""
    text = block_yaml_text(data)
    if text is not None and _standard_tags():
        try:
            return BLOCK_READER.parse(text)
        except NotSimple:
            pass
    return parse_yaml_full(data)


def _standard_tags() -> bool:
    """Whether plain_scalar_tag may answer (the fast path needs PyYAML's own resolvers)."""
    usable = _PlainTags.usable
    if usable is None:
        usable = _PlainTags.usable = _standard_resolver_table()
    return usable


def parse_yaml_full(data: bytes) -> Any:
    """The document in `data`, read through PyYAML's parser (the fast path's reference)."""
    _check_depth(data)
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
    # PyYAML's own constructor recurses without counting, so the depth is checked first.
    mark = _deepest_point(data)
    if mark is not None:
        raise _TooDeep(mark)
    LOADED_FLOATS.json_exact = False  # PyYAML's own constructor: floats not checked
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


def read_input_file(path: str) -> bytes:
    """The bytes of `path` if it is a regular file of at most MAX_YAML_FILE_BYTES.

    Opened non-blocking (a FIFO would otherwise wait for a writer forever) and checked on the
    open descriptor, so a symlink to a device or a FIFO is refused, not followed into a read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise YamlFileError(path, f"cannot read file: {err.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise YamlFileError(path, "not a regular file (a FIFO, device or socket); only "
                                "regular files are read")
        if info.st_size > MAX_YAML_FILE_BYTES:
            raise YamlFileError(path, f"the file has {info.st_size} bytes; the limit is "
                                f"{MAX_YAML_FILE_BYTES}")
        chunks = []
        size = 0
        while size <= MAX_YAML_FILE_BYTES:
            chunk = os.read(fd, max(info.st_size - size, 0) + 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if len(data) > MAX_YAML_FILE_BYTES:
            raise YamlFileError(path, f"the file grew past the limit of {MAX_YAML_FILE_BYTES} "
                                "bytes while it was read")
        return data
    except OSError as err:
        raise YamlFileError(path, f"cannot read file: {err.strerror}") from None
    finally:
        os.close(fd)


def load_yaml_file(path: str) -> Any:
    """The document in `path`; invalid YAML is an error naming the file, line and column."""
    return parse_yaml_bytes(read_input_file(path), path)


def parse_yaml_bytes(data: bytes, path: str) -> Any:
    """The document in `data` (read from `path`, named in errors), within the loader's limits."""
    try:
        return _parse(data)
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


def compose_yaml_file(path: str) -> yaml.Node | None:
    """The node graph of `path` (with positions), within the loader's limits: for tools that
    need lines (lint, explain). YamlFileError for a file over a limit, yaml.YAMLError for
    invalid YAML."""
    data = read_input_file(path)
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
