"""Interpolation: resolving `${...}` references over a node's merged parameters.

Values are rendered on demand, depth first: a reference first renders what it points at (and
the containers on the way), so every reference sees the final merged value (late binding).
Paths being rendered are kept in a set; meeting one again is a reference loop, reported as an
error naming the keys, never a RecursionError. Rendering writes into owned containers only:
shared containers from parsed files are copied the first time something inside them changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reclass_ng.errors import (
    BadReferencesError,
    InfiniteRecursionError,
    QueryPositionError,
    ReclassError,
    ResolveError,
    ResolveErrorList,
    format_path,
)
from reclass_ng.merge import Merger
from reclass_ng.syntax.ast import Query, Ref, Template, Text
from reclass_ng.values import Interp, Layer, MDict, MList, RDict, RList, Stack, owned_copy

QueryEvaluator = Callable[[Query, Interp, tuple, "Resolver"], Any]

_DICTS = (dict, RDict, MDict)


class MissingPath(Exception):
    """A reference path that does not exist (turned into a located ResolveError by the caller)."""


class Resolver:
    """Renders every reference in a tree (`target`) against a parameter tree (`root`)."""

    def __init__(self, root: MDict, merger: Merger, *, delimiter: str = ":",
                 group_errors: bool = True, warn: Callable[[str], None] | None = None,
                 query: QueryEvaluator | None = None, list_index_last: bool = True,
                 refs: Resolver | None = None) -> None:
        self.root = root
        self.refs = refs or self  # where references point (exports refer to parameters)
        self.merger = merger
        self.delimiter = delimiter
        self.group_errors = group_errors
        self.warn = warn or (lambda message: None)
        self.query = query
        self.list_index_last = list_index_last  # deviation D2: `${l:1}` selects an element
        self.in_progress: dict[tuple, str] = {}  # path -> uri of the value being rendered
        self.errors: list[ResolveError] = []

    # -- whole trees --------------------------------------------------------------------

    def resolve_all(self, target: MDict | None = None, prefix: tuple = ()) -> None:
        """Render everything in `target` (default: the root); raise the grouped errors."""
        self._render_children(self.root if target is None else target, prefix)
        if self.errors:
            errors, self.errors = self.errors, []
            raise ResolveErrorList(errors)

    def _render_children(self, container: Any, path: tuple) -> None:
        keys = list(container) if isinstance(container, dict) else range(len(container))
        for key in keys:
            value = container[key]  # fresh: a lookup may have rendered it meanwhile
            kind = type(value)
            if kind is Interp or kind is Stack:
                self._render_at(container, key, path + (key,))
            elif kind is RDict:
                copy = MDict(value)
                container[key] = copy
                self._render_children(copy, path + (key,))
            elif kind is RList:
                copy = MList(value)
                container[key] = copy
                self._render_children(copy, path + (key,))
            elif kind is MDict or kind is MList:
                self._render_children(value, path + (key,))

    def _render_at(self, container: Any, key: Any, path: tuple) -> Any:
        """Render the unrendered value at container[key] (path), store and return it."""
        value = container[key]
        uri = value.source.uri if type(value) is Interp else _stack_uri(value)
        self.in_progress[path] = uri
        try:
            if type(value) is Interp:
                new = self.render_interp(value, path)
            else:
                new = self.merger.fold(value.layers, lambda layer: self._render_layer(layer, path),
                                       path, self.warn)
            new = self._own(new)
            container[key] = new
            if type(new) is MDict or type(new) is MList:
                self._render_children(new, path)
        except ResolveError as err:
            if not self.group_errors:
                raise
            self.errors.append(err)
            new = container[key] = None  # dependants see null and report nothing more
        finally:
            del self.in_progress[path]
        return new

    @staticmethod
    def _own(value: Any) -> Any:
        kind = type(value)
        if kind is RDict:
            return MDict(value)
        if kind is RList:
            return MList(value)
        return value

    def _render_layer(self, layer: Layer, path: tuple) -> Any:
        value = layer.value
        return self.render_interp(value, path) if type(value) is Interp else value

    # -- one string ---------------------------------------------------------------------

    def render_interp(self, interp: Interp, path: tuple) -> Any:
        """The value of a string with references: typed when it is one reference alone."""
        template = interp.template
        single = template.single
        if type(single) is Ref:
            return self._lookup_ref(single, interp, path)
        if type(single) is Query:
            if self.query is None:
                raise ResolveError(single.source_text(), path, interp.source.uri,
                                   hint="inventory queries are not available here")
            return self.query(single, interp, path, self)
        if template.has_query:
            raise QueryPositionError(interp.text, path, interp.source.uri)
        return "".join(self._piece_text(item, interp, path) for item in template.items)

    def render_template(self, template: Template, interp: Interp, path: tuple) -> Any:
        return self.render_interp(Interp(template, interp.source, interp.text), path)

    def _piece_text(self, item: Text | Ref | Query, interp: Interp, path: tuple) -> str:
        if type(item) is Text:
            return item.value
        return str(self._lookup_ref(item, interp, path))  # type: ignore[arg-type]

    def _ref_path(self, ref: Ref, interp: Interp, path: tuple) -> str:
        if ref.is_simple:
            return ref.simple_path
        parts = []
        for item in ref.items:
            if type(item) is Text:
                parts.append(item.value)
                continue
            try:
                parts.append(str(self._lookup_ref(item, interp, path)))
            except ResolveError as err:
                raise BadReferencesError([err.ref], path, interp.source.uri) from None
        return "".join(parts)

    def _lookup_ref(self, ref: Ref, interp: Interp, path: tuple) -> Any:
        ref_path = self._ref_path(ref, interp, path)
        try:
            return owned_copy(self.refs.lookup(ref_path, interp, path))
        except MissingPath:
            raise ResolveError("${" + ref_path + "}", path, interp.source.uri) from None

    # -- paths --------------------------------------------------------------------------

    def lookup(self, ref_path: str, interp: Interp | None, path: tuple) -> Any:
        """The fully rendered value at `ref_path` (keys split on the delimiter)."""
        keys = ref_path.split(self.delimiter)
        node: Any = self.root
        walked: tuple = ()
        last = len(keys) - 1
        for i, key in enumerate(keys):
            if isinstance(node, _DICTS):
                if key not in node:
                    raise MissingPath
                index: Any = key
            elif isinstance(node, list) and (i < last or self.list_index_last):
                try:
                    index = int(key)
                    node[index]
                except (ValueError, IndexError):
                    raise MissingPath from None
            else:
                raise MissingPath
            walked += (index,)
            node = self._rendered_child(node, index, walked, ref_path, interp, path)
        self._ensure_rendered(node, walked, ref_path, interp, path)
        return node

    def _rendered_child(self, container: Any, index: Any, walked: tuple, ref_path: str,
                        interp: Interp | None, path: tuple) -> Any:
        child = container[index]
        kind = type(child)
        if kind is Interp or kind is Stack:
            if walked in self.in_progress:
                self._loop(ref_path, walked, interp, path)
            return self._render_at(container, index, walked)
        if kind is RDict or kind is RList:
            child = container[index] = self._own(child)
        return child

    def _ensure_rendered(self, node: Any, walked: tuple, ref_path: str, interp: Interp | None,
                         path: tuple) -> None:
        """Render whatever is still unrendered below a referenced container."""
        kind = type(node)
        if kind is not MDict and kind is not MList:
            return
        items = node.items() if kind is MDict else enumerate(node)
        for key, child in list(items):
            child_path = walked + (key,)
            child = self._rendered_child(node, key, child_path, ref_path, interp, path)
            self._ensure_rendered(child, child_path, ref_path, interp, path)

    def _loop(self, ref_path: str, walked: tuple, interp: Interp | None, path: tuple) -> None:
        uri = interp.source.uri if interp is not None else None
        chain = [format_path(p) for p in self.in_progress] or [format_path(path)]
        loop = "reference loop: " + " -> ".join(chain + [format_path(walked)])
        raise InfiniteRecursionError("${" + ref_path + "}", path, uri, loop)


def _stack_uri(stack: Stack) -> str:
    for layer in reversed(stack.layers):
        if layer.source is not None:
            return layer.source.uri
    return ""


def located(err: ReclassError, node: str) -> ReclassError:
    """Attach the node name to an error raised while rendering it."""
    return err.with_node(node)
