"""Preparing: the content of one node or class file, checked and turned into an Entity once.

Preparing a file turns its `parameters` and `exports` into the tree types of `values`: keys
become strings (as reclass does with `str()`), `~`/`=` key prefixes become flagged layers, and
strings containing a sentinel are parsed once into templates.
"""

from __future__ import annotations

from reclass_ng.entity import Entity
from reclass_ng.errors import (
    ChangedConstantError,
    EntityFormatError,
    NoExportError,
    ParseError,
    YamlFileError,
)
from reclass_ng.settings import Settings, Speed
from reclass_ng.syntax.ast import Query
from reclass_ng.syntax.grammar import SyntaxProblem, ValueParser
from reclass_ng.values import (
    NEEDS_RESOLVING,
    Interpolation,
    Layer,
    Source,
    Stack,
    UnresolvedDict,
    UnresolvedList,
    unresolved_dict,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from reclass_ng.syntax.query import QueryParser


# Strings with syntax whose templates an EntityPreparer keeps (see _templates).
MAX_PREPARED_TEMPLATES = 20_000


class EntityPreparer:
    """Turns raw YAML documents into Entities for one set of settings."""

    def __init__(self, settings: Settings, parser: ValueParser, speed: Speed | None = None
                 ) -> None:
        self.settings = settings
        self.parser = parser
        # Whether a file's mappings and lists that need no change are kept as parsed
        # (_shared_mapping), else copied (_mapping, the reference): Speed.shared_file_mappings.
        self.shares_mappings = (speed or Speed.from_environment()).shared_file_mappings
        self.prefixes = {settings.dict_key_override_prefix: "override",
                         settings.dict_key_constant_prefix: "constant"}
        # String with syntax -> its Template, or its text when that has no reference left
        # (escapes only): the parser's own cache answers the same, at a method call and a
        # scan of the template's items more per string. Bounded: cleared when full.
        self._templates: dict[str, Any] = {}
        self._queries: QueryParser | None = None  # made for the first query (pyparsing)
        # The prefixes of keys kept as written (below a `~`/`=` key, or in a list): reclass
        # reads them when a mapping holding them is merged into another (Merger.fold).
        self.kept_prefixes: set[str] = set()

    def entity(self, raw: Any, source: Source, relative_base: str, copy: bool = False
               ) -> Entity:
        """An Entity from a file's document; `relative_base` is the name `.x` class names use.
        `copy`: the document is the caller's (an entity given through the API), so no mapping
        or list of it is kept in the entity, even one that needs no change."""
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise EntityFormatError(f"{_where(source)}: a node or class file must be a mapping")
        classes = self._names(raw.get("classes"), "classes", source)
        for name in classes:
            if name[:1] == ".":  # a relative name: all made absolute (a generator per file
                # cost more than the check)
                classes = tuple([absolute_class_name(c, relative_base) for c in classes])
                break
        environment = raw.get("environment")
        return Entity(
            name=source.name,
            uri=source.uri,
            classes=classes,
            applications=self._names(raw.get("applications"), "applications", source, unique=False),
            parameters=self.mapping(raw.get("parameters"), "parameters", source, copy),
            exports=self.mapping(raw.get("exports"), "exports", source, copy),
            environment=None if environment is None else str(environment),
            source=source,
        )

    def _names(self, value: Any, key: str, source: Source, unique: bool = True
               ) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise EntityFormatError(
                f"{_where(source)}: '{key}' must be a list of names, not {type(value).__name__}"
                f" ({value!r})")
        for item in value:
            if not isinstance(item, str):
                raise EntityFormatError(
                    f"{_where(source)}: '{key}' must be a list of names; {item!r} is not a string")
        return tuple(dict.fromkeys(value)) if unique else tuple(value)

    def mapping(self, value: Any, key: str, source: Source, copy: bool = False) -> Any:
        """A `parameters` or `exports` mapping of a file, prepared (`{}` for none); `copy`:
        see `entity`."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise EntityFormatError(f"{_where(source)}: '{key}' must be a mapping")
        path = (key,) if key == "exports" else ()
        if self.shares_mappings and not copy and type(value) is dict:
            return self._shared_mapping(value, source, path)
        return self._mapping(value, source, path)

    # -- the fast path: what needs no change is kept as parsed ------------------------------

    def _shared_mapping(self, mapping: dict, source: Source, path: tuple  # noqa: C901
                        ) -> Any:
        """_mapping's fast path: `mapping` itself when nothing in it changes (no string to
        parse, no container below that changes), else a copy with the changed values in
        place; a mapping with a key to change (a number, a `~`/`=` prefix, an empty key) is
        _mapping's. Most of a real model's mappings are left as parsed: about half of the
        4,000 of the files training-lab's 23 nodes read (issue 29). Parsed documents are
        never changed (a node copies what it renders into), so the entity may hold them."""
        # Kept whole, complex as it is: the loop over every key of every file (a method per
        # kind of value would cost each value a Python call).
        out: UnresolvedDict | None = None  # the copy, made at the first value that changes
        dirty: list[str] = []
        prefixes = self.prefixes
        ref_open, query_open = self.parser.ref_open, self.parser.query_open
        needs_resolving = NEEDS_RESOLVING  # a local: a C set in the compiled build
        templates = self._templates
        for key, raw_value in mapping.items():
            if type(key) is not str or not key or key[0] in prefixes:
                return self._mapping(mapping, source, path)  # from the start: the reference
            kind = type(raw_value)
            if kind is str:
                text = raw_value  # (compiled, a typed str: `in` is str's own search in C)
                if ref_open not in text and query_open not in text:
                    continue
                # _syntax_string's answer for a string parsed before (most: a model writes
                # the same references in many files), without its call and the key's path
                known = templates.get(raw_value)
                if known is not None and type(known) is not str:
                    value = Interpolation(known, source, raw_value)
                else:
                    value = self._syntax_string(raw_value, source, path + (key,))
            elif kind is dict:
                value = self._shared_mapping(raw_value, source, path + (key,))
            elif kind is list:
                value = self._shared_list(raw_value, source, path + (key,))
            else:
                continue
            if value is raw_value:
                continue
            if out is None:
                # Made an UnresolvedDict at once (most mappings that change hold a reference),
                # as unresolved_dict makes one; a plain dict again below if none does.
                out = dict.__new__(UnresolvedDict)
                dict.update(out, mapping)
            out[key] = value
            if type(value) in needs_resolving:
                dirty.append(key)
        if out is None:
            return mapping
        if not dirty:
            return dict(out)  # escapes only (`\${`): plain text
        out.dirty = tuple(dirty)
        out.merged = False
        return out

    def _shared_list(self, items: list, source: Source, path: tuple) -> Any:
        """_list's fast path: `items` itself when no item changes, else a copy (see
        _shared_mapping)."""
        out: list[Any] | None = None
        dirty: list[int] = []  # what UnresolvedList would find again (a generator)
        ref_open, query_open = self.parser.ref_open, self.parser.query_open
        for index, item in enumerate(items):
            if type(item) is str and ref_open not in item and query_open not in item:
                continue  # plain text, the commonest item: no call
            value = self._shared_item(item, source, path, index)
            if value is item:
                continue
            if out is None:
                out = list(items)
            out[index] = value
            if type(value) in NEEDS_RESOLVING:
                dirty.append(index)
        if out is None:
            return items
        return UnresolvedList(out, tuple(dirty)) if dirty else out

    def _shared_item_mapping(self, mapping: dict, source: Source, path: tuple) -> Any:
        """_list_item's fast path for a mapping in a list (its keys kept as written):
        `mapping` itself when no value changes, else a copy (see _shared_mapping)."""
        out: dict[Any, Any] | None = None
        dirty: list[Any] = []  # see _shared_list
        ref_open, query_open = self.parser.ref_open, self.parser.query_open
        for key, item in mapping.items():
            if type(item) is str and ref_open not in item and query_open not in item:
                continue
            value = self._shared_item(item, source, path, key)
            if value is item:
                continue
            if out is None:
                out = dict(mapping)
            out[key] = value
            if type(value) in NEEDS_RESOLVING:
                dirty.append(key)
        self._keep_prefixes(mapping)
        if out is None:
            return mapping
        return UnresolvedDict(out, tuple(dirty)) if dirty else out

    def _shared_item(self, item: Any, source: Source, path: tuple, key: Any) -> Any:
        """An item of a list, or a value of a mapping in a list, at `key` below `path`,
        prepared: `item` itself when it needs no change (see _shared_mapping). A string here
        holds an opening sentinel: the callers' loops keep plain text without a call."""
        kind = type(item)
        if kind is str:
            known = self._templates.get(item)  # a string parsed before: see _shared_mapping
            if known is not None and type(known) is not str:
                return Interpolation(known, source, item)
            return self._syntax_string(item, source, path + (key,))
        if kind is dict:
            return self._shared_item_mapping(item, source, path + (key,))
        if kind is list:
            return self._shared_list(item, source, path + (key,))
        return item

    def _keep_prefixes(self, mapping: dict) -> None:
        # A mapping in a list keeps its `~`/`=` keys as written: reclass reads them when a
        # mapping holding them is merged (Merger.fold), which kept_prefixes tells it.
        prefixes = self.prefixes
        for key in mapping:
            if type(key) is str and key[:1] in prefixes:
                self.kept_prefixes.add(key[0])

    # -- the reference: every mapping and list copied ---------------------------------------

    def _mapping(self, mapping: dict, source: Source, path: tuple) -> Any:
        # Every key and value of every file passes here: plain strings and scalars are
        # handled inline, and a key's path is built only for what needs it (errors, nesting).
        out: dict[str, Any] = {}
        dirty: list[str] = []
        prefixes = self.prefixes
        # ValueParser.may_contain_syntax, inline (the same test): a string is parsed only
        # when it holds an opening sentinel.
        ref_open, query_open = self.parser.ref_open, self.parser.query_open
        needs_resolving = NEEDS_RESOLVING  # a local: a C set in the compiled build

        # Whether a key was changed (str() of a number, a prefix stripped): only then can
        # two keys of the file's mapping become one key here.
        altered = False
        for raw_key, raw_value in mapping.items():
            key = raw_key
            flags = None
            if type(key) is not str or not key or key[0] in prefixes:
                key, flags = self._parameter_key(raw_key, source, path)
                altered = True
            kind = type(raw_value)
            if kind is str:
                if ref_open in raw_value or query_open in raw_value:
                    value = self._syntax_string(raw_value, source, path + (key,))
                elif altered:
                    value = raw_value
                else:
                    out[key] = raw_value  # most values: plain text under a plain key
                    continue
            elif kind is dict:
                # Below a prefixed key reclass keeps the keys as written (issue 36), as it
                # does in a list's items.
                value = self._mapping(raw_value, source, path + (key,)) if flags is None \
                    else self._list_item(raw_value, source, path + (key,))
            elif kind is list:
                value = self._list(raw_value, source, path + (key,))
            else:
                value = raw_value
            if altered:
                value = self._layered(out, key, value, flags, source, path)
            if type(value) in needs_resolving and (key not in out or key not in dirty):
                dirty.append(key)
            out[key] = value
        return unresolved_dict(out, dirty, False) if dirty else out

    def _parameter_key(self, raw_key: Any, source: Source, path: tuple
                       ) -> tuple[str, dict[str, bool] | None]:
        """The key that `raw_key` of a mapping at `path` stands for, when it is not a plain
        string key (`str()` of a number, `~`/`=` prefixes stripped), and its flags (None
        without a prefix); YamlFileError for an empty key."""
        key = raw_key if type(raw_key) is str else str(raw_key)
        flags = None
        prefixes = self.prefixes
        if key and key[0] in prefixes:
            flags = {"override": False, "constant": False}
            # reclass strips one prefix character per merge and merges every file twice.
            for _ in range(2):
                if key and key[0] in prefixes:
                    flags[prefixes[key[0]]] = True
                    key = key[1:]
        if key == "":
            raise YamlFileError(source.path or source.uri,
                                f"empty parameter key {raw_key!r} at {_path(path) or 'top level'}")
        return key, flags

    def _layered(self, out: dict[str, Any], key: str, value: Any, flags: dict[str, bool] | None,
                 source: Source, path: tuple) -> Any:
        """The value to store at `key` of a mapping whose keys were changed (_parameter_key):
        `value` as a layer with its `~`/`=` flags, over the value of an earlier key that became
        the same key (`a` and `~a` in one mapping: both are layers of `a`)."""
        if flags is not None:
            value = Stack([Layer(value, source, **flags)], shared=True)
        if key not in out:
            return value
        earlier = out[key]
        if type(earlier) is Stack and earlier.constant_layer is not None:
            # `=a` then `a`: the later key changes the constant, as merging them does across
            # files (Merger.push_layers): an error, or ignored (the earlier value stays).
            if self.settings.strict_constant_parameters:
                raise ChangedConstantError(path + (key,), [source], source, source)
            return earlier
        return Stack([*_layers(earlier, source), *_layers(value, source)], shared=True)

    def _value(self, value: Any, source: Source, path: tuple) -> Any:
        kind = type(value)
        if kind is str:
            return self.string(value, source, path)
        if kind is dict:
            return self._mapping(value, source, path)
        if kind is list:
            return self._list(value, source, path)
        return value

    def _list(self, items: list, source: Source, path: tuple) -> Any:
        out = [self._list_item(item, source, path + (i,)) for i, item in enumerate(items)]
        dirty = any(type(v) in NEEDS_RESOLVING for v in out)
        return UnresolvedList(out) if dirty else out

    def _list_item(self, value: Any, source: Source, path: tuple) -> Any:
        # Mappings inside lists keep their keys as written (no str(), no prefixes): reclass
        # never merges into them.
        if type(value) is dict:
            out = {k: self._list_item(v, source, path + (k,)) for k, v in value.items()}
            self._keep_prefixes(out)
            dirty = any(type(v) in NEEDS_RESOLVING for v in out.values())
            return UnresolvedDict(out) if dirty else out
        return self._value(value, source, path)

    def string(self, text: str, source: Source, path: Sequence[object]) -> Any:
        """A string value: plain text, or an Interpolation when it holds references or queries."""
        if not self.parser.may_contain_syntax(text):
            return text
        return self._syntax_string(text, source, path)

    def _syntax_string(self, text: str, source: Source, path: Sequence[object]) -> Any:
        # `string` for a text holding an opening sentinel.
        known: Any = self._templates.get(text)
        if known is None:
            try:
                template = self.parser.parse(text)
            except SyntaxProblem as err:
                raise ParseError(text, err.message, path, source, err.column) from None
            if template.has_query:
                self._check_queries(template.items, text, source, path)
            known = template.literal if template.is_literal else template
            if len(self._templates) >= MAX_PREPARED_TEMPLATES:
                self._templates.clear()
            self._templates[text] = known
        if type(known) is str:
            return known
        return Interpolation(known, source, text)


    def _check_queries(self, items: Sequence[Any], text: str, source: Source,
                       path: Sequence[object]) -> None:
        # kapicorp parses every query of every file a node reads, so a malformed one fails
        # the node even where a later value replaces it (issue 36).
        if self._queries is None:
            # imported here: the query grammar costs a start without queries its import
            from reclass_ng.syntax.query import QueryParser

            self._queries = QueryParser(self.settings.delimiter)
        for item in items:
            if type(item) is not Query:
                continue
            try:
                lacking = self._queries.parse(item.text).test_without_export()
            except SyntaxProblem as err:
                raise ParseError(text, err.message, path, source, err.column, item.text) from None
            if lacking is not None:
                raise NoExportError(lacking.source_text(), path, source)


def _layers(value: Any, source: Source) -> list[Layer]:
    return list(value.layers) if type(value) is Stack else [Layer(value, source)]


def _path(path: Sequence[object]) -> str:
    return ":".join(str(p) for p in path)


def _where(source: Source) -> str:
    return source.path or source.uri


def absolute_class_name(name: str, relative_base: str) -> str:
    """Resolve a leading-dot class name against the dotted name of the entity listing it."""
    if not name.startswith("."):
        return name
    rest = name.lstrip(".")
    if "/" in rest or " " in rest:
        return name  # not a class name: refused later, quoted as written (`../x`, not `/x`)
    dots = len(name) - len(rest)
    parts = relative_base.split(".") if relative_base else []
    parent = parts[: max(len(parts) - dots, 0)]
    return ".".join(parent + [rest]) if parent else rest
