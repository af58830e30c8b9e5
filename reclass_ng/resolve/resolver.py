"""Interpolation: resolving `${...}` references over a node's merged parameters.

Values are rendered on demand, depth first: a reference first renders what it points at (and
the containers on the way), so every reference sees the final merged value (late binding).
Paths being rendered are kept in a set; meeting one again is a reference loop, reported as an
error naming the keys, never a RecursionError. Rendering writes into owned containers only:
shared containers from parsed files are copied the first time something inside them changes.
"""

from __future__ import annotations

import sys
from _collections_abc import Callable  # collections.abc without `collections` (6 M)

from reclass_ng.errors import (
    BadReferencesError,
    InfiniteRecursionError,
    QueryPositionError,
    ReclassError,
    ReferenceDefaultError,
    ReferenceExpansionError,
    ResolveError,
    ResolveErrorList,
    format_path,
)
from reclass_ng.merge import Merger
from reclass_ng.resolve.fast_paths import (
    MAX_REFERENCE_EXPANSION,
    MAX_RENDERED_DEPTH,
    MAX_YAML_DEPTH,
    NOT_RENDERED,
    PLAIN,
    PLAIN_STORED_WITHIN,
    walked_value,
)
from reclass_ng.resolve.rendered_subtrees import RenderedSubtrees, SubtreeReads
from reclass_ng.resolve.shared_subtrees import SharedSubtrees
from reclass_ng.settings import Speed
from reclass_ng.syntax.ast import Query, Ref, Text
from reclass_ng.values import (
    Interpolation,
    Layer,
    OwnedDict,
    OwnedList,
    Source,
    Stack,
    UnresolvedDict,
    UnresolvedList,
    layer_files,
    owned_copy,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

    from reclass_ng.observe import WriteObserver  # annotations only: see merge.py

    # `${path::default}` (settings.reference_defaults, off by default): imported by
    # _with_default, the first code that needs it.
    from reclass_ng.syntax import defaults

QueryEvaluator = Callable[[Query, Interpolation, tuple, "Resolver"], "Any"]



# References rendered inside one another at most (a chain `a: ${b}`, `b: ${c}`, ...). Each
# link costs a few calls: interpreted they stay within the raised recursion limit, compiled
# (reclass_ng.compiled) they use about 1.7 KB of C stack, which has no such guard: 2,500
# links take half of the usual 8 MB (4,998 crashed). The same limit in both builds keeps
# their output identical. Documented in doc/performance.rst; real chains have dozens.
MAX_REFERENCE_DEPTH = 2500
# Levels of mappings and lists the references being rendered inside one another may walk
# down together: for each, how much deeper its container is than where its key path parts
# from the one rendering it. Rendering `a: [[...${b}...]]` walks down to the reference, which
# renders b and walks down its value to the next one, and so on: MAX_RENDERED_DEPTH is
# checked on the way back out, once a value is complete, so without this the walk down had
# no bound (600 classes of 150 levels crashed the compiled build, whose recursion uses the C
# stack, and took the interpreted one to its recursion limit). Such values nest about as deep
# as what they walked through, so MAX_RENDERED_DEPTH stops every real case long before. A
# chain of references to keys beside each other (`x: ${y}`, `a:x: ${a:y}`) walks nothing;
# MAX_REFERENCE_DEPTH bounds it. Compiled, a level takes far less C stack than a link.
MAX_NESTING_IN_PROGRESS = 3000


class ReferenceChainTooDeep(ReclassError):
    """More than MAX_REFERENCE_DEPTH references rendered inside one another."""

    def __init__(self, start: tuple) -> None:
        super().__init__(f"Reference chain too deep to resolve (more than "
                         f"{MAX_REFERENCE_DEPTH} references in a row), starting at "
                         f"{format_path(start)}")




class MissingPath(Exception):
    """A reference path that does not exist (turned into a located ResolveError by the caller)."""


class Resolver(SharedSubtrees):  # and FastPaths, SharedSubtrees' base
    """Renders every reference in a tree (`target`) against a parameter tree (`root`)."""

    def __init__(self, root: OwnedDict, merger: Merger, *, delimiter: str = ":",
                 group_errors: bool = True, warn: Callable[[str], None] | None = None,
                 query: QueryEvaluator | None = None, list_index_last: bool = True,
                 refs: Resolver | None = None, record: WriteObserver | None = None,
                 subtrees: RenderedSubtrees | None = None,
                 default_values: defaults.DefaultValues | None = None,
                 speed: Speed | None = None) -> None:
        self.root = root
        self.refs = refs or self  # where references point (exports refer to parameters)
        self.merger = merger
        self.delimiter = delimiter
        self.group_errors = group_errors
        self.warn = warn or (lambda message: None)
        self.query = query
        self.list_index_last = list_index_last  # deviation D2: `${l:1}` selects an element
        # paths being rendered, in order, with the value (Interp or Stack) rendered there
        # and the levels rendered down to it in all (MAX_NESTING_IN_PROGRESS). No attribute
        # of its own for those: past 30 attributes an instance's dict stops sharing its
        # keys, and every `self.x` of the render got slower (+0.9% to 2%, callgrind).
        self.in_progress: dict[tuple, tuple[Any, int]] = {}
        self.errors: list[ResolveError] = []
        self.expanded = 0  # what references produced (resolve.MAX_REFERENCE_EXPANSION)
        self._plain_sizes: dict[int, tuple] = {}
        self._split = merger.split_paths(delimiter)
        # where _rendered_target walks, and the split paths it finds there
        self._refs_root, self._refs_split = self.refs.root, self.refs._split
        self._refs_delimiter = self.refs.delimiter
        # reference path -> the plain value _rendered_target found there (for this tree)
        self._targets: dict[str, Any] = {} if self.refs is self else self.refs._targets
        self.reference_defaults = merger.settings.reference_defaults  # `${path::default}`
        self.default_values = default_values  # their texts read as YAML (made when needed)
        self.record = record  # told how stacks fold and what each value read (provenance)
        # References to values rendered already are stored without the rendering machinery
        # (resolve/fast_paths.py); with Speed.rendered_references off, every reference takes
        # _render_at, the reference the tests compare the fast paths with. An observed render
        # takes them too (fast_observed), telling `record` what the full render would
        # (WriteObserver.rendered_directly).
        fast = (speed or Speed.from_environment()).rendered_references
        self.fast_references = fast and record is None
        self.fast_observed = fast and record is not None
        # Rendered file containers shared with other nodes (rendered_subtrees.py): only for
        # parameters (whose references point into the same tree). An observed render tells
        # its record what a reused copy's render told (SharedSubtrees._reuse).
        self.subtrees = subtrees if self.refs is self else None
        # file containers with at least this many keys to render go through the memo
        self._memo_min_dirty = self.subtrees.min_dirty if self.subtrees is not None \
            else sys.maxsize
        self._memo_given_up = self.subtrees.given_up_files if self.subtrees is not None \
            else frozenset()
        self._reading: list[SubtreeReads] = []  # file containers being rendered for the memo
        self._read_parts: dict[str, Any] = {}  # reference path -> read_part of its value
        self._print_warning = self.warn
        if self.subtrees is not None:
            self.warn = self._warn_unkept

    # -- whole trees --------------------------------------------------------------------

    def resolve_all(self, target: OwnedDict | None = None, prefix: tuple = ()) -> None:
        """Render everything in `target` (default: the root); raise the grouped errors."""
        try:
            self._render_children(self.root if target is None else target, prefix)
        finally:
            # A resolver is in a reference cycle (refs is itself), which the cycle collector,
            # off during a render, frees late: its caches of values found go now.
            self._targets.clear()
            self._read_parts.clear()
            self._plain_sizes.clear()
        if self.errors:
            errors, self.errors = self.errors, []
            raise ResolveErrorList(errors)

    def release(self) -> None:
        """Drop the resolver's references to itself (`refs`, and `warn` bound to it while it
        shares subtrees), once nothing renders through it any more: reference counting then
        frees it and, once the caller lets go of the node, the tree it rendered. The cycle
        collector is off during a render (reclass_ng.collector): without this every rendered
        node stayed in memory until the process ended, whatever its caller kept."""
        self.refs = None  # type: ignore[assignment]
        self.warn = self._print_warning
        self.query = None

    def _render_children(self, container: Any, path: tuple) -> None:
        items = container.items() if isinstance(container, dict) else enumerate(container)
        plain = PLAIN  # a local: a C set in the compiled build (resolve/resolver.pxd)
        keys = [key for key, value in items if type(value) not in plain]
        if keys:  # a quarter of a Salt model's merged mappings hold nothing left to render
            self._render_keys(container, keys, path)

    def _render_keys(self, container: Any, keys: tuple | list, path: tuple  # noqa: C901
                     ) -> None:
        """Render what is unrendered at `keys` of a container (for a fresh copy of a file's
        container, the keys that were not plain in the file)."""
        # Complexity 13, kept whole: the loop over every value to render. Its two cases as
        # methods were called 33,000 and 15,000 times in a 200-node `mcp` render, +1.4% of
        # its instructions (callgrind).
        # _render_at would refuse any reference this deep: then none takes the fast path.
        fast = self.fast_references and len(self.in_progress) < MAX_REFERENCE_DEPTH
        found = self._targets
        for key in keys:
            value = container[key]  # fresh: a lookup may have rendered it meanwhile
            kind = type(value)
            if kind is Interpolation or kind is Stack:
                if fast:
                    if kind is Interpolation:
                        interpolation = value  # (compiled, typed: its field read in C)
                        ref_path = interpolation.reference_path
                    else:
                        ref_path = None
                    if ref_path is None:
                        if self._reading:
                            new = self._rendered_now(value, path, key)
                        elif kind is Stack:  # _rendered_now's cases, without its call where
                            new = self._folded_scalars(value)  # no memo reader is told
                        else:
                            new = self._counted_text(self._rendered_string(value.template))
                    else:
                        # _rendered_target's first step inline: most paths were found
                        # before in this render.
                        new = found.get(ref_path, NOT_RENDERED)
                        if new is NOT_RENDERED:
                            new = self._rendered_target(ref_path)
                            if new is NOT_RENDERED:
                                new = self._counted_target(ref_path, len(path) + 1)
                        if self._reading and new is not NOT_RENDERED:
                            self._note_read(ref_path, new, path + (key,))  # path made if told
                    if new is not NOT_RENDERED:
                        container[key] = new
                        continue
                elif self.fast_observed and self._rendered_observed(container, key, value, path):
                    continue
                self._render_at(container, key, path + (key,))
            elif kind is UnresolvedDict or kind is UnresolvedList:
                # A few values to render are no cheaper to look up in the memo; a shared
                # walk's merged containers read what their few nodes set (measured: more
                # misses than hits).
                # A container given up on (see RenderedSubtrees) skips the memo at once.
                dirty = value.dirty
                if len(dirty) >= self._memo_min_dirty and not value.merged \
                        and id(value) not in self._memo_given_up:
                    self._render_file_container(container, key, value, path + (key,))
                else:
                    copy = container[key] = OwnedDict(value) if kind is UnresolvedDict \
                        else OwnedList(value)
                    self._render_keys(copy, dirty, path + (key,))
            elif kind is OwnedDict or kind is OwnedList:
                self._render_children(value, path + (key,))

    def _render_at(self, container: Any, key: Any, path: tuple, shallow: bool = False) -> Any:
        """Render the unrendered value at container[key] (path), store and return it;
        `shallow`: a mapping or list it becomes is stored with what is inside it left
        unrendered (rendered when read, or by the walk over the whole tree)."""
        value = container[key]
        in_progress = self.in_progress
        if len(in_progress) >= MAX_REFERENCE_DEPTH:
            raise ReferenceChainTooDeep(next(iter(in_progress)))
        # (Outside any other, the levels down to `path`: far below the limit, whatever the
        # tree, as a value nests at most MAX_RENDERED_DEPTH deep.)
        in_progress[path] = (value, self._nesting_at(path, value) if in_progress
                             else len(path) - 1)
        try:
            if type(value) is Interpolation:
                single = value.template.single
                if type(single) is Ref:  # most strings to render are one reference alone
                    new = self._expanded(self._lookup_ref(single, value, path), value, path)
                else:
                    new = self.render_interp(value, path)
                if self.record is not None:
                    self.record.rendered(path, value, new)
            else:
                new = self.merger.fold(value.layers, lambda layer: self._render_layer(layer, path),
                                       path, self.warn, self.record)
            kind = type(new)
            if kind is UnresolvedDict or kind is UnresolvedList:
                container[key] = copy = OwnedDict(new) if kind is UnresolvedDict else OwnedList(new)
                if not shallow:
                    self._render_keys(copy, new.dirty, path)
                new = copy
            else:
                container[key] = new
                if (kind is OwnedDict or kind is OwnedList) and not shallow:
                    self._render_children(new, path)
        except ResolveError as err:
            if not self.group_errors:
                raise
            self._unkeep()
            self.errors.append(err)
            new = container[key] = None  # dependants see null and report nothing more
        finally:
            del in_progress[path]
        return new

    def _nesting_at(self, path: tuple, value: Any) -> int:
        """The levels of mappings and lists rendered down to `path` (where `value` is
        rendered) in all, while another is being rendered: those down to the innermost path
        being rendered, plus the walk down from where the two paths part to the container
        holding `path` (the walk renders one level a call). Past MAX_NESTING_IN_PROGRESS, the
        error naming `value`."""
        last, (_, nesting_there) = next(reversed(self.in_progress.items()))
        shared = 0
        end = min(len(path), len(last))
        while shared < end and path[shared] == last[shared]:
            shared += 1
        # the innermost path's levels, and the walk down from where the two part to
        # `path`'s container (none for a reference to a key beside it)
        walked = len(path) - shared - 1
        nesting = nesting_there + walked if walked > 0 else nesting_there
        if nesting > MAX_NESTING_IN_PROGRESS:
            self._too_deep(value, path, MAX_NESTING_IN_PROGRESS, True)
        return nesting

    def _too_deep(self, value: Any, path: tuple, limit: int, in_progress: bool) -> None:
        """Raise the error of a value nesting too deep at `path` (NestingTooDeepError),
        naming the reference and where it is written (for a stack, its last one)."""
        from reclass_ng.errors.nesting import NestingTooDeepError  # only after an error

        interp = value
        if type(value) is Stack:
            interp = next((layer.value for layer in reversed(value.layers)
                           if type(layer.value) is Interpolation), None)
        if type(interp) is Interpolation:
            text, source = interp.text, interp.source
        else:
            text, source = format_path(path), None
        files: Any = source
        if type(value) is Stack:
            files = layer_files(value.layers) or source
        raise NestingTooDeepError(
            text, limit, path, files, in_progress, source=source, written=text,
            section=self._section(), chain=[format_path(p) for p in self.in_progress])

    @staticmethod
    def _own(value: Any) -> Any:
        kind = type(value)
        if kind is UnresolvedDict:
            return OwnedDict(value)
        if kind is UnresolvedList:
            return OwnedList(value)
        return value

    def _render_layer(self, layer: Layer, path: tuple) -> Any:
        value = layer.value
        if type(value) is not Interpolation:
            return value
        ref_path = value.reference_path
        if self.fast_references and ref_path is not None:
            # What render_interp returns for a reference to a rendered plain value.
            new = self._rendered_target(ref_path)
            if new is NOT_RENDERED:
                new = self._counted_target(ref_path, len(path))
            if new is not NOT_RENDERED:
                if self._reading:
                    self._note_read(ref_path, new, path)
                return new
        elif self.fast_observed and ref_path is not None:
            new = self._rendered_target(ref_path)
            if new is not NOT_RENDERED:
                if self._reading:
                    self._note_read(ref_path, new, path)
                self.record.reference(path, ref_path)  # type: ignore[union-attr]
                return new
        return self.render_interp(value, path)

    def _rendered_observed(self, container: Any, key: Any, value: Interpolation | Stack,
                           path: tuple) -> bool:
        """The fast path of an observed render: store what _rendered_now finds and tell the
        record what _render_at would have told it; False when the full render is needed."""
        if len(self.in_progress) >= MAX_REFERENCE_DEPTH:
            return False  # _render_at refuses a reference this deep
        ref_path = value.reference_path if type(value) is Interpolation else None
        if ref_path is not None or type(value) is Stack:
            # a stack: rendered_directly tells the record each layer's one reference
            new = self._rendered_target(ref_path) if ref_path is not None \
                else self._folded_scalars(value, False)  # type: ignore[arg-type]
            if new is NOT_RENDERED:
                return False
            if self._reading:  # a file container rendered for the memo: what it read
                self._note_reads(value, path + (key,))
        else:
            new = self._rendered_now(value, path, key)  # tells the memo's readers itself
            if new is NOT_RENDERED:
                return False
        container[key] = new
        # Every reference `value` holds was found, so is in _targets (_rendered_target).
        self.record.rendered_directly(path + (key,), value, new,  # type: ignore[union-attr]
                                      self._targets)
        return True

    # -- one string ---------------------------------------------------------------------

    def render_interp(self, interp: Interpolation, path: tuple) -> Any:
        """The value of a string with references: typed when it is one reference alone."""
        template = interp.template
        single = template.single
        if type(single) is Ref:
            return self._expanded(self._lookup_ref(single, interp, path), interp, path)
        if type(single) is Query:
            self._unkeep()  # the other nodes' exports are not among the reads
            if self.query is None:
                raise ResolveError(single.source_text(), path, interp.source,
                                   hint="inventory queries are not available here")
            # Not counted: what a query gathers is bounded by the nodes' exports, each
            # counted in its own node (references to the result count where they copy it).
            # Each export nests within MAX_RENDERED_DEPTH in its node, and the result holds
            # them a level or two deeper: checked where it is stored, and held to what a
            # file may nest, like the other plain containers (fast_paths.PLAIN_STORED_WITHIN).
            result = self.query(single, interp, path, self)
            depth = self._rendered_depth(result)
            if depth > MAX_YAML_DEPTH:
                self._too_deep(interp, path, MAX_YAML_DEPTH, False)
            if len(path) + depth > MAX_RENDERED_DEPTH:
                self._too_deep(interp, path, MAX_RENDERED_DEPTH, False)
            return result
        if template.has_query:
            raise QueryPositionError(interp.text, path, interp.source)
        parts = []
        for item in template.items:
            if type(item) is Text:
                parts.append(item.value)
            else:
                # Only references remain: a query anywhere but alone is refused above.
                parts.append(str(self._lookup_ref(item, interp, path)))  # type: ignore[arg-type]
        return self._expanded("".join(parts), interp, path)

    def _ref_path(self, ref: Ref, interp: Interpolation, path: tuple) -> str:
        if ref.path is not None:
            return ref.path
        parts = []
        for item in ref.items:
            if type(item) is Text:
                parts.append(item.value)
                continue
            try:
                parts.append(str(self._lookup_ref(item, interp, path)))  # type: ignore[arg-type]
            except ResolveError as err:
                raise BadReferencesError(
                    [err.ref], path, interp.source, source=err.source, written=err.written,
                    section=err.section, chain=err.chain, suggest=err.suggest) from None
        return self._expanded("".join(parts), interp, path)

    def _expanded(self, value: Any, interp: Interpolation, path: tuple) -> Any:
        """`value`, produced by the references in `interp` (rendered at `path`), counted
        towards MAX_REFERENCE_EXPANSION; past it, the error naming them. The same for a
        value nesting deeper than MAX_RENDERED_DEPTH where it is stored."""
        size = self._expansion_size(value)
        self.expanded += size
        if self.expanded > MAX_REFERENCE_EXPANSION:
            raise ReferenceExpansionError(
                interp.text, MAX_REFERENCE_EXPANSION, path, interp.source,
                source=interp.source, written=interp.text, section=self._section(),
                chain=[format_path(p) for p in self.in_progress])
        # A mapping or list counts 1 and 1 for each item (_expansion_size), so it nests less
        # deep than its size: only a large one, or one stored deep, is walked; a file's
        # container or a query's result (dict, list) only when stored deeper than
        # PLAIN_STORED_WITHIN. Every value a reference reaches is complete, so within the
        # limit where it is; what it holds is walked with a bounded recursion
        # (fast_paths.nesting_depth).
        # (`size` first: most references bring a short string or another scalar, 0.)
        if size and type(value) is not str:
            at = len(path)
            if at + size > MAX_RENDERED_DEPTH \
                    and (at > PLAIN_STORED_WITHIN or (type(value) is not dict
                                                      and type(value) is not list)) \
                    and at + self._rendered_depth(value) > MAX_RENDERED_DEPTH:
                self._too_deep(interp, path, MAX_RENDERED_DEPTH, False)
        return value

    def _lookup_ref(self, ref: Ref, interp: Interpolation, path: tuple) -> Any:
        ref_path = ref.path
        if ref_path is None:
            ref_path = self._ref_path(ref, interp, path)
        if self.record is not None:
            self.record.reference(path, ref_path)
        try:
            value = self.refs.lookup(ref_path, interp, path)
        except MissingPath:
            self._unkeep()  # a missing path is not among the reads
            if self.reference_defaults:
                return self._with_default(ref, ref_path, interp, path)
            raise self._missing(ref, ref_path, interp, path) from None
        if self._reading:
            self._note_read(ref_path, value, path)
        kind = type(value)
        return owned_copy(value) if kind is OwnedDict or kind is OwnedList else value

    # -- failures and defaults (only reached when a lookup failed) ------------------------

    def _missing(self, ref: Ref, ref_path: str, interp: Interpolation, path: tuple) -> ResolveError:
        """A ResolveError that knows where the reference is written and how it was reached."""
        root, delimiter = self.refs.root, self.delimiter

        def suggest() -> list[str]:
            # imported only when a message is shown: a missing reference that is only
            # warned about (ignore_missing_references) makes the error and shows no message
            from reclass_ng.suggestions import similar_paths

            return ["${" + p + "}" for p in similar_paths(ref_path, root, delimiter)]

        return ResolveError(
            "${" + ref_path + "}", path, interp.source, source=interp.source,
            written=ref.source_text(), section=self._section(),
            chain=[format_path(p) for p in self.in_progress], suggest=suggest)

    def _section(self) -> str:
        """The section this resolver renders (a resolver of exports reads parameters)."""
        return "parameters" if self.refs is self else "exports"

    def _with_default(self, ref: Ref, ref_path: str, interp: Interpolation, path: tuple) -> Any:
        """`${path::default}`: the value at path, or the default when the path is missing
        (the missing path's error when `ref_path` names no default)."""
        from reclass_ng.syntax import defaults  # see the imports

        if defaults.SEPARATOR not in ref_path:
            raise self._missing(ref, ref_path, interp, path) from None
        nested = defaults.nested_default(ref)
        if nested is not None:
            head = self._ref_path(nested[0], interp, path)
            if head.find(defaults.SEPARATOR) == len(head) - len(defaults.SEPARATOR):
                try:
                    return owned_copy(self.refs.lookup(head[:-len(defaults.SEPARATOR)], interp,
                                                       path))
                except MissingPath:
                    return self._lookup_ref(nested[1], interp, path)  # typed, like `${b}`
        target, text = ref_path.split(defaults.SEPARATOR, 1)
        try:
            if self.default_values is None:
                self.default_values = defaults.DefaultValues()
            value = self.default_values.value(text)
        except defaults.DefaultSyntaxProblem as err:
            raise ReferenceDefaultError(
                "${" + ref_path + "}", str(err), path, interp.source, source=interp.source,
                written=ref.source_text(), section=self._section()) from None
        try:
            return owned_copy(self.refs.lookup(target, interp, path))
        except MissingPath:
            return value

    # -- paths --------------------------------------------------------------------------

    def lookup(self, ref_path: str, interp: Interpolation | None, path: tuple) -> Any:
        """The fully rendered value at `ref_path` (keys split on the delimiter)."""
        keys = self._split.get(ref_path)
        if keys is None:
            keys = self._split_path(ref_path)
        # Most references reach a rendered value through owned or plain mappings: walked
        # with one subscript a key. Anything else (a list, something to render or copy on
        # the way, a missing key) takes the full walk below from the start.
        node = walked_value(self.root, keys)
        if node is NOT_RENDERED:
            return self._lookup_walk(keys, ref_path, interp, path)
        if type(node) is OwnedDict or type(node) is OwnedList:
            self._ensure_rendered(node, keys, ref_path, interp, path)
        return node

    def _lookup_walk(self, keys: tuple, ref_path: str, interp: Interpolation | None, path: tuple
                     ) -> Any:
        node: Any = self.root
        walked: tuple = ()
        last = len(keys) - 1
        for i, key in enumerate(keys):
            kind = type(node)
            if kind is OwnedDict or kind is dict or kind is UnresolvedDict:
                if key not in node:
                    raise MissingPath
                index: Any = key
            elif isinstance(node, dict):
                if key not in node:
                    raise MissingPath
                index = key
            elif isinstance(node, list) and (i < last or self.list_index_last):
                try:
                    index = int(key)
                    node[index]
                except (ValueError, IndexError):
                    raise MissingPath from None
            else:
                raise MissingPath
            walked += (index,)
            child = node[index]
            kind = type(child)
            if kind in PLAIN or kind is OwnedDict or kind is OwnedList:
                node = child
            else:
                # A container on the way is rendered without what is inside it (kapicorp
                # renders only the reference's ancestors): `${b:a}` does not render `b:c`,
                # which may refer back to the key being rendered (issue 36).
                node = self._rendered_child(node, index, walked, ref_path, interp, path,
                                            i < last)
        kind = type(node)
        if kind is OwnedDict or kind is OwnedList:
            self._ensure_rendered(node, walked, ref_path, interp, path)
        return node

    def _rendered_child(self, container: Any, index: Any, walked: tuple, ref_path: str,
                        interp: Interpolation | None, path: tuple, shallow: bool = False) -> Any:
        child = container[index]
        kind = type(child)
        if kind is Interpolation or kind is Stack:
            if walked in self.in_progress:
                self._loop(ref_path, walked, interp, path)
            # A value a reference reaches before the walk over the tree does takes the fast
            # paths too (_render_keys' case): such values were a sixth (stacklight) to a third
            # (training-lab) of what the real Salt models rendered in full (issue 29).
            if self.fast_references and len(self.in_progress) < MAX_REFERENCE_DEPTH:
                new = self._rendered_now(child, walked[:-1], index)
                if new is not NOT_RENDERED:
                    container[index] = new
                    return new
            return self._render_at(container, index, walked, shallow)
        if kind is UnresolvedDict or kind is UnresolvedList:
            child = container[index] = self._own(child)
        return child

    def _ensure_rendered(self, node: Any, walked: tuple, ref_path: str, interp: Interpolation | None,
                         path: tuple) -> None:
        """Render whatever is still unrendered below a referenced container."""
        kind = type(node)
        if kind is not OwnedDict and kind is not OwnedList:
            return
        items = node.items() if kind is OwnedDict else enumerate(node)
        plain = PLAIN  # a local: a C set in the compiled build (resolve/resolver.pxd)
        for key, child in list(items):
            # Scalars and file containers are rendered (and stay so): skipped, as a
            # container referenced by a bomb is walked once for each of its references.
            if type(child) in plain:
                continue
            child_path = walked + (key,)
            child = self._rendered_child(node, key, child_path, ref_path, interp, path)
            self._ensure_rendered(child, child_path, ref_path, interp, path)

    def _loop(self, ref_path: str, walked: tuple, interp: Interpolation | None, path: tuple) -> None:
        written_in = interp.source if interp is not None else None
        files: list[Source] | Source | None = written_in
        rendering = self.in_progress.get(path, (None, 0))[0]
        if type(rendering) is Stack:
            # Every file that wrote the looping value, in merge order, as kapicorp lists them.
            files = layer_files(rendering.layers) or written_in
        chain = [format_path(p) for p in self.in_progress] or [format_path(path)]
        loop = "reference loop: " + " -> ".join(chain + [format_path(walked)])
        # "written at": the file of the looping reference.
        raise InfiniteRecursionError("${" + ref_path + "}", path, files, loop, source=written_in)
