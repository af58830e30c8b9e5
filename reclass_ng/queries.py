"""Inventory queries `$[ ... ]`: what one node learns from the exports of the others.

Other nodes are seen through `ExportView`s: a node merged once and its exports rendered only
as far as queries ask (a broken export nobody asks for is never an error). Views are cached
per Inventory, so `--inventory` renders each node's exports once, not once per querying node.
Scope: the nodes of the querying node's environment (itself included); `+AllEnvs` widens only
the query it is written in (D8), in `--nodeinfo` and `--inventory` alike.
"""

from __future__ import annotations

import copy
from _thread import allocate_lock  # threading.Lock, without importing threading
from collections.abc import Callable

from reclass_ng.errors import (
    ChangedConstantError,
    EntityFormatError,
    ExpressionError,
    InfiniteRecursionError,
    InventoryQueryNodeError,
    InvQueryError,
    NoExportError,
    ParseError,
    ReclassError,
    ResolveError,
    TwoSidedError,
    YamlFileError,
)
from reclass_ng.merge import MergedNode
from reclass_ng.observe import RenderObserver, WriteObserver
from reclass_ng.resolve import MissingPath, QueryEvaluator, Resolver
from reclass_ng.syntax.ast import Query
from reclass_ng.syntax.grammar import SyntaxProblem
from reclass_ng.syntax.query import ExportPath, QueryExpr, QueryParser, SelfPath, Test
from reclass_ng.values import Interpolation, owned_copy

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

_UNLOADABLE = (YamlFileError, EntityFormatError)
_NEVER_IGNORED = (InfiniteRecursionError, TwoSidedError)  # by `+IgnoreErrors`


class ExportedParameters(Resolver):
    """A queried node's parameters as its exports read them, as kapicorp renders them there.

    kapicorp renders only what an export reads, grouping failures: a value an export refers
    to (or a container on the way) that fails to render is null (issue 36: a node with one
    broken parameter still answers queries). Values inside a container an export copies are
    rendered as part of the export, so their failure is the export's: raised, at the export's
    path (which `+IgnoreErrors` then leaves out).
    """

    reading_export = False  # inside a lookup made by the exports
    # Key path -> the error of a constant changed there, which the merge left unchanged
    # (ExportView): raised where a value read is at, above or below it, never grouped.
    changed_constants: dict[tuple, ChangedConstantError] = {}

    def lookup(self, ref_path: str, interp: Interpolation | None, path: tuple) -> Any:
        """The value at `ref_path`; see the class: an error below it counts for the export."""
        if self.changed_constants:
            keys = self._split.get(ref_path) or self._split_path(ref_path)
            for changed, changed_error in self.changed_constants.items():
                if changed[:len(keys)] == keys[:len(changed)]:
                    raise changed_error
        if self.reading_export:  # a reference inside the parameters: grouped, as kapicorp
            return super().lookup(ref_path, interp, path)
        self.reading_export = True
        try:
            value = super().lookup(ref_path, interp, path)
        finally:
            self.reading_export = False
        keys = self._split[ref_path]  # split by the lookup
        # Every error so far: one grouped while an earlier export read the container counts
        # again, as kapicorp renders the value inside again for each export copying it.
        for err in self.errors:
            if len(err.path) > len(keys) and err.path[:len(keys)] == keys:
                relocated = copy.copy(err)
                relocated.path = path + err.path[len(keys):]
                raise relocated
        return value


class ExportView:
    """Another node as queries see it: merged, exports rendered on demand."""

    def __init__(self, renderer: Any, name: str, observer: RenderObserver | None = None
                 ) -> None:
        self.name = name
        changed: dict[tuple, ChangedConstantError] = {}
        try:
            self.node = renderer.merge(name, observer=observer)
        except ChangedConstantError as err:
            # kapicorp renders only the parameters the exports read: a constant changed in
            # the parameters fails a query only where an export reads it (issue 36, finding 3).
            if err.path[:1] == ("exports",):
                raise
            changes = ChangedConstants(observer)
            kept = renderer.settings.replace(strict_constant_parameters=False)
            self.node = renderer.under_settings(kept).merge(name, observer=changes)
            if changes.in_exports.errors:
                raise next(iter(changes.in_exports.errors.values())).for_node(name) from None
            changed = {tuple(err.path): err, **changes.in_parameters.errors}
        # Queries inside the queried node are not followed (reclass does not either).
        params = renderer.resolver(self.node.parameters, group_errors=True,
                                   kind=ExportedParameters)
        if changed:
            params.changed_constants = changed
        self.exports = renderer.resolver(self.node.exports, group_errors=False, refs=params)
        self.delimiter = renderer.settings.delimiter
        self.lock = allocate_lock()

    def export(self, keys: tuple[str, ...], drop_failed: bool = False) -> tuple[bool, Any]:
        """(found, value) of an export path, rendered. With `drop_failed` (`+IgnoreErrors`), a
        value inside it that cannot be resolved is left out, as kapicorp deletes it, instead
        of failing the whole path."""
        with self.lock:
            while True:
                try:
                    return True, owned_copy(self.exports.lookup(self.delimiter.join(keys),
                                                                None, ()))
                except MissingPath:
                    return False, None
                except ResolveError as err:
                    # Each round deletes one key of the exports, so the rounds are bounded.
                    if not (drop_failed and self._delete(err.path)):
                        raise

    def _delete(self, path: tuple) -> bool:
        """Delete the exports' value at `path`; False when there is none."""
        container: Any = self.node.exports
        for key in path[:-1]:
            try:
                container = container[key]
            except (KeyError, IndexError, TypeError):
                return False
        if not path or not isinstance(container, (dict, list)):
            return False
        try:
            del container[path[-1]]
        except (KeyError, IndexError, TypeError):
            return False
        return True


class ChangedConstants(RenderObserver):
    """Observes the merge of a queried node made with its changed constants kept (as
    `strict_constant_parameters: false` merges): the error a strict merge raises for each,
    by section and key path (WriteObserver.ignored). Reads go on to `reads`."""

    def __init__(self, reads: RenderObserver | None) -> None:
        self.reads = reads
        self.in_parameters = _IgnoredWrites()
        self.in_exports = _IgnoredWrites()

    def writes(self, section: str) -> WriteObserver | None:
        """See the base class."""
        return self.in_parameters if section == "parameters" else self.in_exports

    def node_read(self, name: str, path: str | None) -> None:
        """See the base class."""
        if self.reads is not None:
            self.reads.node_read(name, path)

    def class_read(self, name: str, path: str | None) -> None:
        """See the base class."""
        if self.reads is not None:
            self.reads.class_read(name, path)


class _IgnoredWrites(WriteObserver):
    """The changes of constants told by one section's merge, as ChangedConstantErrors."""

    def __init__(self) -> None:
        self.source: Any = None
        self.errors: dict[tuple, ChangedConstantError] = {}

    def entity_written(self, source: Any, value: Any) -> None:
        """See the base class."""
        self.source = source

    def ignored(self, path: tuple, constant: Any) -> None:
        """See the base class: the error Merger.push_layers raises when strict."""
        self.errors.setdefault(path, ChangedConstantError(
            path, [constant.source, self.source], self.source, constant.source))


class ViewWatcher:
    """Watches the work queries make other nodes do: merging a queried node (once, its view
    is cached) and rendering each export path of it. The default does the work and nothing
    more; a parallel render's workers record the warnings of that work (reclass_ng.parallel).
    """

    def view_created(self, name: str, make: Callable[[], ExportView]) -> ExportView:
        """The view of node `name`, made by `make()` (which may raise ReclassError)."""
        return make()

    def view_used(self, name: str) -> None:
        """A query used the view of node `name` (made now or before)."""

    def export_read(self, view: ExportView, keys: tuple[str, ...], drop_failed: bool = False
                    ) -> tuple[bool, Any]:
        """`view.export(keys, drop_failed)`, the (found, value) of an export path."""
        return view.export(keys, drop_failed)


def _note_export_reads(observer: RenderObserver, name: str, expr: QueryExpr) -> None:
    """Tell `observer` the exports of node `name` that `expr` reads: its tests' export
    paths and the value it collects."""
    for test in expr.tests:
        for side in (test.left, test.right):
            if isinstance(side, ExportPath):
                observer.export_read(name, side.keys)
    observer.export_read(name, expr.value_path)


class QueryEngine:
    """Evaluates inventory queries against the other nodes of an inventory."""

    def __init__(self, renderer: Any, watcher: ViewWatcher | None = None) -> None:
        self.renderer = renderer
        self.settings = renderer.settings
        self.parser = QueryParser(self.settings.delimiter)
        self.watcher = watcher or ViewWatcher()
        self._views: dict[str, ExportView | ReclassError] = {}
        self._lock = allocate_lock()

    def evaluator_for(self, node: MergedNode, scope_environment: str | None = None,
                      observer: RenderObserver | None = None) -> QueryEvaluator:
        """The callback a node's resolver uses for its queries (over the nodes of
        `scope_environment`, by default the node's environment, unless `+AllEnvs`; it tells
        `observer` the exports it reads)."""
        def evaluate(query: Query, interp: Interpolation, path: tuple, resolver: Resolver) -> Any:
            expr = self._parse(query, interp, path)
            self_values = self._self_operands(expr, resolver, interp, path)
            scope = scope_environment or node.environment
            if observer is not None:
                observer.query_run()
            return self._run(expr, query, scope, self_values, interp, path, observer)
        return evaluate

    def _parse(self, query: Query, interp: Interpolation, path: tuple) -> QueryExpr:
        try:
            expr = self.parser.parse(query.text)
        except SyntaxProblem as err:
            raise ParseError(interp.text, err.message, path, interp.source, err.column,
                             query.text) from None
        lacking = expr.test_without_export()
        if lacking is not None:
            raise NoExportError(lacking.source_text(), path, interp.source)
        for test in expr.tests:
            if isinstance(test.left, ExportPath) and isinstance(test.right, ExportPath):
                raise ExpressionError(
                    f"Expression error: Failed to render test '{test.source_text()}': a test "
                    "compares one export with a value, not two exports", path, interp.source)
        return expr

    @staticmethod
    def _self_operands(expr: QueryExpr, resolver: Resolver, interp: Interpolation, path: tuple
                       ) -> dict[str, Any]:
        values = {}
        for test in expr.tests:
            for side in (test.left, test.right):
                if isinstance(side, SelfPath) and side.text not in values:
                    try:
                        value = resolver.refs.lookup(side.text, interp, path)
                    except MissingPath:
                        raise ResolveError("${" + side.text + "}", path,
                                           interp.source) from None
                    if value is None:  # kapicorp refuses a null operand (issue 36)
                        raise ExpressionError(
                            f"Expression error: Failed to render test '{test.source_text()}':"
                            f" self:{side.text} is null", path, interp.source)
                    values[side.text] = value
        return values

    def _run(self, expr: QueryExpr, query: Query, environment: str | None,
             self_values: dict[str, Any], interp: Interpolation, path: tuple,
             observer: RenderObserver | None = None) -> Any:
        ignore = expr.ignore_errors or self.settings.inventory_ignore_failed_render
        result: Any = [] if expr.value_path is None else {}
        for name in self._scope(None if expr.all_envs else environment):
            if observer is not None:  # before the view: a view that fails was read too
                _note_export_reads(observer, name, expr)
            view = self._view(name, observer)
            try:
                if not self._passes(expr, view, self_values, ignore):
                    continue
                if expr.value_path is None:
                    result.append(name)
                    continue
                found, value = self.watcher.export_read(view, expr.value_path, ignore)
                if found:
                    result[name] = value
            except ReclassError as err:
                # A reference loop or a merge conflict is never ignored: kapicorp ignores
                # values that cannot be resolved only.
                if ignore and not isinstance(err, _NEVER_IGNORED):
                    continue
                raise InvQueryError(query.source_text(), err.for_node(name)) from None
        return result

    def _passes(self, expr: QueryExpr, view: ExportView, self_values: dict[str, Any],
                drop_failed: bool) -> bool:
        if not expr.tests:
            return True
        results = [self._test(test, view, self_values, self.watcher, drop_failed)
                   for test in expr.tests]
        passed = results[0]
        for logic, result in zip(expr.logic, results[1:], strict=True):
            passed = (passed and result) if logic == "and" else (passed or result)
        return passed

    @staticmethod
    def _test(test: Test, view: ExportView, self_values: dict[str, Any],
              watcher: ViewWatcher, drop_failed: bool) -> bool:
        export, other = (test.left, test.right) if isinstance(test.left, ExportPath) \
            else (test.right, test.left)
        found, value = watcher.export_read(view, export.keys, drop_failed)
        if not found:
            return False
        if isinstance(other, SelfPath):
            other = self_values[other.text]
        return (value == other) if test.op == "==" else (value != other)

    def _scope(self, environment: str | None) -> list[str]:
        names = []
        for name in self.renderer.storage.nodes:
            try:
                node_env = self.renderer.environment_of(name)
            except _UNLOADABLE as err:
                if self.settings.inventory_ignore_failed_node:
                    continue
                raise InventoryQueryNodeError(err.for_node(name)) from None
            if environment is None or node_env == environment:
                names.append(name)
        return sorted(names)

    def _view(self, name: str, observer: RenderObserver | None = None) -> ExportView:
        view = self._views.get(name)
        if view is None:
            merge_observer = None if observer is None else observer.queried_merge(name)
            try:
                view = self.watcher.view_created(
                    name, lambda: ExportView(self.renderer, name, merge_observer))
            except ReclassError as err:
                view = err
            with self._lock:
                view = self._views.setdefault(name, view)
        self.watcher.view_used(name)
        if isinstance(view, ReclassError):
            raise InventoryQueryNodeError(view)
        return view
