"""The types a parameter tree is made of while a node is merged and interpolated.

Parsed files are shared by every node that uses them and must never change, so the tree of a
node mixes shared and owned containers, told apart by type (a cheap check on a hot path):

* `dict` / `list`: from a file, with nothing left to interpolate inside: shared, never changed.
* `UnresolvedDict` / `UnresolvedList`: from a file, with references or flagged keys somewhere inside: shared; the
  node copies them before interpolating into them.
* `OwnedDict` / `OwnedList`: created for this node by a merge or a copy; changed in place.

Leaves that still need work are `Interpolation` (a string with references or queries) and `Stack` (the
layers of one key that could not be merged before interpolation).
"""

from __future__ import annotations

import sys

from reclass_ng.records import Record
from reclass_ng.syntax.ast import Query, Ref, Template

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any


class Source(Record):
    """Where a value came from: a class or node file, or something reclass-ng made up."""

    __slots__ = ("uri", "name", "kind", "path")
    _fields = __slots__
    uri: str
    name: str
    kind: str  # "class", "node", "automatic", "mapping" or "extra"
    path: str | None  # the file, when there is one

    def __init__(self, uri: str, name: str, kind: str, path: str | None = None) -> None:
        _set = object.__setattr__
        _set(self, "uri", uri)
        _set(self, "name", name)
        _set(self, "kind", kind)
        _set(self, "path", path)


class UnresolvedDict(dict):
    """A mapping from a file that still has something to interpolate inside (shared).

    `dirty` names the keys that need work, so a node's copy is rendered without visiting
    the plain values around them. `merged`: made by merging files (`frozen_copy`), not
    written in one.
    """

    __slots__ = ("dirty", "merged")

    def __init__(self, data: Any = (), dirty: tuple | None = None, merged: bool = False) -> None:
        super().__init__(data)
        self.dirty = tuple(k for k, v in self.items() if type(v) in NEEDS_RESOLVING) \
            if dirty is None else dirty
        self.merged = merged


class UnresolvedList(list):
    """A list from a file that still has something to interpolate inside (shared).

    `dirty` holds the indexes that need work, and `merged` says how it was made, as for
    UnresolvedDict.
    """

    __slots__ = ("dirty", "merged")

    def __init__(self, data: Any = (), dirty: tuple | None = None, merged: bool = False) -> None:
        super().__init__(data)
        self.dirty = tuple(i for i, v in enumerate(self) if type(v) in NEEDS_RESOLVING) \
            if dirty is None else dirty
        self.merged = merged


class OwnedDict(dict):
    """A mapping owned by the node being rendered. Records which source set each key."""

    # src: the source of every key not listed in origin (a dict key -> Source). Both read as
    # None until set: copies are made by the hundred thousand, with dict's own constructor.
    __slots__ = ("src", "origin")
    src: Source | None
    origin: dict[str, Source] | None

    def __getattr__(self, name: str) -> Any:
        if name == "src" or name == "origin":
            return None
        raise AttributeError(name)

    def __reduce__(self) -> tuple:
        # Spelled out for the compiled build, where this is an extension type that pickle
        # and copy would otherwise rebuild without its items.
        return (_owned_dict, (dict(self), self.src, self.origin))

    @classmethod
    def from_source(cls, data: Any, src: Source | None) -> OwnedDict:
        """A mapping owned by the node, its keys set by `src` unless recorded otherwise."""
        mapping = cls(data)
        mapping.src = src
        mapping.origin = None
        return mapping

    def set_origin(self, key: str, source: Source) -> None:
        """Record that `source` set `key`."""
        if self.origin is None:
            self.origin = {}
        self.origin[key] = source

    def source_of(self, key: str) -> Source | None:
        """The source that set `key`."""
        if self.origin is not None and key in self.origin:
            return self.origin[key]
        return self.src


def _owned_dict(data: dict, src: Source | None, origin: dict | None) -> OwnedDict:
    """An OwnedDict rebuilt from its pickled parts."""
    mapping = OwnedDict.from_source(data, src)
    mapping.origin = origin
    return mapping


class OwnedList(list):
    """A list owned by the node being rendered."""

    __slots__ = ()


class Interpolation:
    """A string value containing references or queries, as written in one file."""

    __slots__ = ("template", "source", "text", "reference_path")

    def __init__(self, template: Template, source: Source, text: str) -> None:
        self.template = template
        self.source = source
        self.text = text
        # The path of the one reference the string is, when written plainly (`${a:b}`, not
        # `${a:${b}}`), else None: the resolver's fast paths read it with one attribute read.
        single = template.single
        self.reference_path: str | None = single.path if type(single) is Ref else None

    @property
    def kind(self) -> str:
        """The layer kind reclass prints in merge errors."""
        single = self.template.single
        if isinstance(single, Ref):
            return "reference"
        if isinstance(single, Query):
            return "inv_query"
        return "composite"

    def __repr__(self) -> str:
        return f"Interpolation({self.text!r})"


class Layer:
    """One contribution to a key's value, with the `~` (override) and `=` (constant) flags."""

    __slots__ = ("value", "source", "override", "constant")

    def __init__(self, value: Any, source: Source | None, override: bool = False,
                 constant: bool = False) -> None:
        self.value = value
        self.source = source
        self.override = override
        self.constant = constant

    @property
    def kind(self) -> str:
        """The kind of the layer's value, as merge errors name it."""
        return kind_of(self.value)


class Stack:
    """The ordered layers of one key, folded during interpolation (reclass's ValueList)."""

    __slots__ = ("layers", "shared")

    def __init__(self, layers: list[Layer], shared: bool = False) -> None:
        self.layers = layers
        self.shared = shared  # part of a parsed file: copy before appending

    def owned_copy(self) -> Stack:
        """The stack itself, or a copy to change when it is shared (part of a parsed file)."""
        return Stack(list(self.layers)) if self.shared else self

    @property
    def constant_layer(self) -> Layer | None:
        """The first constant (`=`) layer, which holds the key, if any."""
        for layer in self.layers:
            if layer.constant:
                return layer
        return None

    def __repr__(self) -> str:
        return f"Stack({[layer.value for layer in self.layers]!r})"


# The type sets of the tree, defined here only. Hot paths test `type(v) in ...` or `is`.
NEEDS_RESOLVING = frozenset({Interpolation, Stack, UnresolvedDict, UnresolvedList})
SHARED_DICT_TYPES = (dict, UnresolvedDict)  # from a file: never changed
SHARED_LIST_TYPES = (list, UnresolvedList)
DICT_TYPES = (dict, UnresolvedDict, OwnedDict)
LIST_TYPES = (list, UnresolvedList, OwnedList)
# What frozen_copy looks at: what it copies, and what marks a key to render.
_FROZEN_AGAIN = NEEDS_RESOLVING | {OwnedDict, OwnedList}
_OWNED_TYPES = frozenset({OwnedDict, OwnedList, Stack})  # what owned_copy copies


def layer_files(layers: Any) -> list[Source]:
    """The distinct files (sources, by URI) that wrote `layers`, in merge order: the files a
    merge error lists."""
    return list({layer.source.uri: layer.source for layer in layers
                 if layer.source is not None}.values())


def kind_of(value: Any) -> str:
    """Kind names used in `Cannot merge X over Y` messages."""
    if isinstance(value, Interpolation):
        return value.kind
    if isinstance(value, dict):
        return "dictionary"
    if isinstance(value, list):
        return "list"
    return "scalar"


def owned_copy(value: Any) -> Any:
    """A copy safe to change: owned containers and the layer stacks a merge made (with the
    owned values in them) are copied; shared ones, from files, are not."""
    kind = type(value)
    if kind is OwnedDict:
        copy = OwnedDict(value)  # dict's own copy; then only the owned values inside
        src = value.src
        if src is not None:
            copy.src = src
        if value.origin:
            copy.origin = dict(value.origin)
        for key, item in dict.items(value):  # not value.items(): OwnedDict's __getattr__ hook
            if type(item) in _OWNED_TYPES:
                copy[key] = owned_copy(item)
        return copy
    if kind is OwnedList:
        items = OwnedList(value)
        for index, item in enumerate(value):
            if type(item) in _OWNED_TYPES:
                items[index] = owned_copy(item)
        return items
    if kind is Stack and not value.shared:  # shared: from a file, copied before any change
        return _copied_stack(value, owned_copy, _OWNED_TYPES, False)
    return value


def _copied_stack(stack: Stack, copy: Any, copied_types: frozenset, shared: bool) -> Stack:
    """A copy of `stack` (shared or not) whose layers' values of `copied_types` are copied by
    `copy`. A layer is never changed once made: the copy holds each one whose value needs no
    copy itself (most: scalars and references), in a list of its own."""
    layers = []
    for layer in stack.layers:
        item = layer.value
        if type(item) in copied_types:
            copied = copy(item)
            if copied is not item:
                layer = Layer(copied, layer.source, layer.override, layer.constant)
        layers.append(layer)
    return Stack(layers, shared)


def frozen_copy(value: Any) -> Any:
    """A copy of a merged value in the shared types of a file's tree: owned mappings and lists
    become `UnresolvedDict`/`UnresolvedList` (with their keys to render) or plain `dict`/`list`,
    owned stacks shared ones. Nothing changes it afterwards (a node copies what it renders into,
    as it does a file's containers), so several nodes can hold it at once. Which file set each
    key (`OwnedDict.origin`) is not kept: only a merge over it would need that."""
    # Every shared class walk freezes its whole tree (classes.FrozenWalk): the containers are
    # copied by dict's and list's own constructors, and only the values that need work
    # (_FROZEN_AGAIN) are visited in Python. tests/test_values.py compares the result with
    # a plain recursive copy.
    kind = type(value)
    again = _FROZEN_AGAIN  # a local: a C set in the compiled build (values.pxd)
    if kind is OwnedDict:
        dirty = []
        replaced = None
        for key, item in dict.items(value):
            kind = type(item)
            if kind in again:
                if kind is OwnedDict or kind is OwnedList or kind is Stack:
                    item = frozen_copy(item)
                    if replaced is None:
                        replaced = []
                    replaced.append((key, item))
                    if type(item) not in NEEDS_RESOLVING:
                        continue
                dirty.append(key)
        out = unresolved_dict(value, dirty, True) if dirty else dict(value)
        if replaced is not None:
            dict.update(out, replaced)
        return out
    if kind is OwnedList:
        return _frozen_list(value)
    if kind is Stack and not value.shared:
        return _copied_stack(value, frozen_copy, again, True)
    return value


def _frozen_list(value: OwnedList) -> list[Any]:
    """frozen_copy of an owned list: an UnresolvedList with the indexes still to render, or a
    plain list."""
    items = list(value)
    dirty = []
    again = _FROZEN_AGAIN
    for index, item in enumerate(items):
        kind = type(item)
        if kind in again:
            if kind is OwnedDict or kind is OwnedList or kind is Stack:
                item = items[index] = frozen_copy(item)
                if type(item) not in NEEDS_RESOLVING:
                    continue
            dirty.append(index)
    return UnresolvedList(items, tuple(dirty), True) if dirty else items


def unresolved_dict(items: dict[Any, Any], dirty: list[Any], merged: bool) -> UnresolvedDict:
    """An UnresolvedDict of `items` whose keys still to render are `dirty` (found by the
    caller, as it copied or prepared them: UnresolvedDict.__init__ would scan the values
    again)."""
    unresolved = dict.__new__(UnresolvedDict)
    dict.update(unresolved, items)
    unresolved.dirty = tuple(dirty)
    unresolved.merged = merged
    return unresolved


def as_written(value: Any) -> Any:
    """A prepared value back in the form its file wrote it: references as their text, `~`/`=`
    keys with their prefixes again, plain dicts and lists."""
    kind = type(value)
    if kind is Interpolation:
        return value.text
    if kind is Stack:  # a key with `~`/`=` alone: its (last) value
        return as_written(value.layers[-1].value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, child in value.items():
            for layer_value, prefix in _written_layers(child):
                out[prefix + str(key)] = as_written(layer_value)
        return out
    if isinstance(value, list):
        return [as_written(item) for item in value]
    return value


def _written_layers(value: Any) -> list[tuple[Any, str]]:
    """(value, `~`/`=` prefix) of each value a prepared key holds (`a` and `~a` in one mapping
    make a Stack of two layers)."""
    if type(value) is not Stack:
        return [(value, "")]
    out = []
    for layer in value.layers:
        if type(layer.value) is Stack:
            out.extend(_written_layers(layer.value))
        else:
            out.append((layer.value, ("~" if layer.override else "") + ("=" if layer.constant else "")))
    return out


def to_plain(value: Any, *, dates_as_text: bool = False, json_compatible: bool = False) -> Any:
    """A deep copy built from dict, list and scalars only (the one plain-data conversion: for
    pickling, JSON, writing YAML, and tools that check types exactly, such as Ansible's
    variable storage or Kapitan's models).

    Mappings and lists of any type become dict and list, tuples lists. With `dates_as_text`,
    dates (PyYAML reads unquoted YAML 1.1 timestamps as dates) become ISO-8601 text; with
    `json_compatible` (data read from outside, such as Puppet facts) dates and bytes become
    text and keys strings too.
    """
    if json_compatible:
        return _json_compatible(value)
    if isinstance(value, dict):
        return {key: to_plain(item, dates_as_text=dates_as_text) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(item, dates_as_text=dates_as_text) for item in value]
    if dates_as_text and _is_date(value):
        return value.isoformat()
    return value


def _is_date(value: Any) -> bool:
    # A date exists only once `datetime` is imported (by PyYAML for a timestamp, or by the
    # caller), which most starts never do: it is not imported for this check.
    datetime = sys.modules.get("datetime")
    return datetime is not None and isinstance(value, (datetime.date, datetime.datetime))


def _json_compatible(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _json_compatible(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_compatible(item) for item in value]
    if _is_date(value):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value
