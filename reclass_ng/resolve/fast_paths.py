"""The resolver's fast paths: values that need nothing rendered, stored directly.

Most values a node's resolver meets are a reference to a value rendered already (`${_param:x}`
once `_param` is done) or a stack of scalars (a class's default overridden by a cluster's
value). `Resolver._render_at` would take each through the reference stack (the loop check),
`lookup` and, for a stack, `Merger.fold`; what it stores then is found here directly, by the
same walk as `Resolver.lookup`'s quick one. Nothing here renders, raises or warns, so skipping
that machinery changes no output, error, warning or order. A value found by a reference counts
nothing towards MAX_REFERENCE_EXPANSION (short scalars only); a string built from several
references counts its length as the full render does (_counted_text), and is left to the
full render when that would cross the limit, which then reports it. A Resolver given `Speed(rendered_references=False)` renders every value the full way:
the reference the tests compare this with (tests/test_subtrees.py).
"""

from __future__ import annotations

from reclass_ng.storage.yaml_rules import MAX_YAML_DEPTH
from reclass_ng.syntax.ast import Ref, Template, Text
from reclass_ng.values import (
    Interpolation,
    OwnedDict,
    OwnedList,
    Stack,
    UnresolvedDict,
    UnresolvedList,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any

    from reclass_ng.resolve.rendered_subtrees import SubtreeReads

# Values that never need rendering: skipped with one set lookup.
PLAIN = frozenset({str, int, float, bool, type(None), dict, list})
# Scalars: a stack of them folds to the last one.
SCALARS = frozenset({str, int, float, bool, type(None)})
# What Resolver.lookup's quick walk passes through or ends at (see there).
WALKED = PLAIN | {OwnedDict, OwnedList}

NOT_RENDERED = object()  # not (completely) rendered yet: the fast path does not apply

# What the references of one node's parameters (and, apart, its exports) may produce at most,
# counted by _expansion_size. Without a limit a few hundred bytes of `b: [${a}, ${a}, ...]`,
# `c: [${b}, ${b}, ...]` (or strings `${s}${s}`) expand exponentially: a 503-byte class took
# 3.1 GB. The largest node of the bench's 2,000-node inventories and of the corpus produces
# far less (doc/performance.rst, "Reference-expansion limit"); a bomb stops within about
# this many values and characters, a few MB. Not a setting, like the YAML loader's limits.
MAX_REFERENCE_EXPANSION = 1_000_000
# A reference to a scalar shorter than this counts nothing: it only shares a value that
# exists already, and writing it takes 4 bytes at least, so what such references add is
# bounded by the files' size. That keeps counting off the fast paths, which take only such
# values (a mapping, list or longer string found by a reference takes the full render).
SHORT_TEXT = 64
# The containers _expansion_size walks into.
_CONTAINERS = frozenset({dict, list, OwnedDict, OwnedList, UnresolvedDict, UnresolvedList})
# How many mappings and lists deep a node's rendered parameters (and, apart, its exports) may
# nest at most, counted from the section (a value at key `a:b` holding a list of scalars: 3).
# One file nests at most storage.yaml_rules.MAX_YAML_DEPTH (200) levels; only references put
# a value deeper (a list holding `${b}`, b a list holding `${c}`, ...: 60 such classes of 150
# levels made 9,000). Each writer must write any node within the limit under Python's
# default recursion limit (1,000), after the render has restored it: PyYAML's dumper (the block
# writer's fallback) fails at 330 levels with `nodes:NODE:parameters` around them, and
# compiled code walking a value recurses on the C stack. Past the limit the node fails with
# the reference that put a value there (Resolver._expanded); doc/performance.rst,
# "Rendered-depth limit". Real inventories nest a dozen levels.
MAX_RENDERED_DEPTH = 256
# A file's container (dict, list) nests at most MAX_YAML_DEPTH levels (the loader refuses a
# deeper file), and so does an inventory query's result, the other plain container of a tree
# (Resolver.render_interp refuses a deeper one): stored no deeper than this, such a container
# needs no walk. Real models' nodes reference flat mappings of hundreds of keys, which a walk
# for each node cost up to 0.8% of the render (mk-packet, callgrind).
PLAIN_STORED_WITHIN = MAX_RENDERED_DEPTH - MAX_YAML_DEPTH


def walked_value(root: Any, keys: tuple) -> Any:
    """The value at `keys` below `root` when each step subscripts an owned or plain mapping
    or list and ends at a WALKED value (nothing to render or copy on the way); NOT_RENDERED
    otherwise (a missing key, a key into a list, an unrendered value). The quick walk of
    Resolver.lookup and of the fast paths, which both must stop where the other does."""
    node = root
    walked = WALKED  # a local: a C set in the compiled build (resolve/fast_paths.pxd)
    try:
        for key in keys:
            node = node[key]
            if type(node) not in walked:
                return NOT_RENDERED
    except (KeyError, TypeError, IndexError):
        return NOT_RENDERED
    return node


def nesting_depth(value: Any, budget: int) -> int:
    """How many mappings and lists deep `value` nests (a scalar 0, `[[x]]` 2), counted to
    budget + 1 at most: recursion goes no deeper than `budget`, whatever the value. The
    containers are those _expansion_size walks into (_CONTAINERS)."""
    if type(value) not in _CONTAINERS:
        return 0
    if budget <= 0:
        return 1
    items = dict.values(value) if isinstance(value, dict) else value
    # Most containers a reference brings hold scalars only: told apart without a step of
    # bytecode for each item (a real model's node walked flat mappings of hundreds of keys).
    if _CONTAINERS.isdisjoint(map(type, items)):
        return 1
    deepest = 0
    containers = _CONTAINERS  # a local: a C set in the compiled build (resolve/fast_paths.pxd)
    for item in items:
        if type(item) in containers:
            depth = nesting_depth(item, budget - 1)
            if depth > deepest:
                deepest = depth
                if deepest >= budget:
                    break  # past the budget already: the rest cannot change the answer
    return deepest + 1


def value_at(tree: Any, keys: tuple, list_index_last: bool = True) -> Any:
    """The value at `keys` in a tree as a reference path selects it (a mapping's key, a
    list's item by its number: deviation D2, not for the last key unless
    `list_index_last`), without rendering anything; NOT_RENDERED when there is none."""
    node = tree
    last = len(keys) - 1
    for i, key in enumerate(keys):
        if isinstance(node, dict):
            if key not in node:
                return NOT_RENDERED
            node = node[key]
        elif isinstance(node, list) and (i < last or list_index_last):
            try:
                node = node[int(key)]
            except (ValueError, IndexError):
                return NOT_RENDERED
        else:
            return NOT_RENDERED
    return node


class FastPaths:
    """The fast paths of `Resolver` (reclass_ng.resolve), which provides what is declared
    here: the cache of values found (`_targets`, cleared when a render ends), the tree
    references point into and its split paths, and the subtree memo's readers."""

    _targets: dict[str, Any]
    _refs_root: Any
    _refs_split: dict[str, tuple[str, ...]]
    _refs_delimiter: str  # what the paths of _refs_split are split on
    _reading: list[SubtreeReads]
    # What references produced so far in this render (MAX_REFERENCE_EXPANSION), and the size
    # of each file container counted (id -> (size, container): held, so no id is reused).
    # Once _rendered_depth walked one, (size, container, nesting depth). No attribute of its
    # own for the depths: see Resolver.in_progress.
    expanded: int
    _plain_sizes: dict[int, tuple]

    if TYPE_CHECKING:  # SharedSubtrees' (reclass_ng.resolve.shared_subtrees); no stub to shadow it
        def _note_read(self, ref_path: str, value: Any, path: tuple) -> None: ...

    def _rendered_now(self, value: Interpolation | Stack, path: tuple, key: Any) -> Any:
        """What _render_at(container, key, path + (key,)) stores for `value` when it needs
        nothing rendered: a string whose references all point at plain values rendered
        already, one reference to a long string or a file's container (_counted_target),
        or a stack of scalars and such references (fold keeps the last: each layer
        replaces the one before). NOT_RENDERED otherwise. Renders nothing, raises
        nothing, warns of nothing; tells the memo's readers what it read, as the full
        render does."""
        if type(value) is Interpolation:
            ref_path = value.reference_path  # most are one reference alone
            if ref_path is not None:
                new = self._rendered_target(ref_path)
                if new is NOT_RENDERED:
                    new = self._counted_target(ref_path, len(path) + 1)
                if new is not NOT_RENDERED and self._reading:
                    self._note_read(ref_path, new, path + (key,))  # counted: not in _targets
                return new
            new = self._counted_text(self._rendered_string(value.template))
        else:
            new = self._folded_scalars(value)  # type: ignore[arg-type]
        if new is not NOT_RENDERED and self._reading:
            self._note_reads(value, path + (key,))
        return new

    def _rendered_string(self, template: Template) -> Any:
        """What render_interp returns for `template` when every reference in it points at
        a plain value rendered already (_rendered_target); NOT_RENDERED otherwise. A text
        of several parts is not counted here: the caller counts it (_counted_text) once
        it knows that the whole value needs nothing rendered."""
        single = template.single
        if type(single) is Ref:
            return self._rendered_target(single.path)
        if single is not None or template.has_query:
            return NOT_RENDERED
        parts = []
        found = self._targets  # _rendered_target's first step inline (see _render_keys)
        for item in template.items:
            if type(item) is Text:
                parts.append(item.value)
            else:
                value = found.get(item.path, NOT_RENDERED)  # type: ignore[union-attr,arg-type]
                if value is NOT_RENDERED:
                    value = self._rendered_target(item.path)  # type: ignore[union-attr]
                    if value is NOT_RENDERED:
                        return value
                parts.append(str(value))
        return "".join(parts)

    def _counted_text(self, text: Any) -> Any:
        """`text`, built by _rendered_string, counted towards MAX_REFERENCE_EXPANSION as
        render_interp counts it (Resolver._expanded: the length of a string longer than
        SHORT_TEXT); NOT_RENDERED when it is not rendered, or when counting it would cross
        the limit (the full render then raises the error where it crosses). Strings built
        from references (URLs and commands made of a host, a port and a path) are often
        longer than SHORT_TEXT in real models: 385 values of a 23-node one (issue 29)."""
        if type(text) is not str or len(text) <= SHORT_TEXT:
            return text
        expanded = self.expanded + len(text)
        if expanded > MAX_REFERENCE_EXPANSION:
            return NOT_RENDERED
        self.expanded = expanded
        return text

    def _folded_scalars(self, stack: Stack, strings: bool = True) -> Any:
        """What fold returns for a stack whose layers are all scalars or references to
        rendered scalars: the last one; NOT_RENDERED otherwise. Repeats Merger.fold's rule
        that a scalar over a scalar replaces it (spec section 3.3, observe.seam.replacing_outcome):
        tests/test_merge.py compares the two. `strings`: layers may be strings of several
        parts (not for an observed render: WriteObserver.rendered_directly tells each
        layer's one reference)."""
        value: Any = NOT_RENDERED
        scalars = SCALARS  # a local: a C set in the compiled build (resolve/fast_paths.pxd)
        counted = 0  # what the layers' strings of several parts count (see _counted_text)
        found = self._targets  # _rendered_target's first step inline (see _render_keys)
        for layer in stack.layers:
            value = layer.value
            if type(value) is Interpolation:
                ref_path = value.reference_path
                if ref_path is None:
                    if not strings:
                        return NOT_RENDERED
                    # fold renders every layer: each string is counted on its own
                    value = self._rendered_string(value.template)
                    if type(value) is str and len(value) > SHORT_TEXT:
                        counted += len(value)
                else:
                    value = found.get(ref_path, NOT_RENDERED)
                    if value is NOT_RENDERED:
                        value = self._rendered_target(ref_path)
            if type(value) not in scalars:
                return NOT_RENDERED
        if counted:
            if self.expanded + counted > MAX_REFERENCE_EXPANSION:
                return NOT_RENDERED
            self.expanded += counted
        return value

    def _note_reads(self, value: Interpolation | Stack, path: tuple) -> None:
        """Tell the memo's readers what a value taken by _rendered_now read, in the order
        the full render reads it."""
        if type(value) is Interpolation:
            items: Any = value.template.items
        else:
            items = [item for layer in value.layers  # type: ignore[union-attr]
                     if type(layer.value) is Interpolation
                     for item in layer.value.template.items]
        for item in items:
            if type(item) is Ref:
                self._note_read(item.path, self._rendered_target(item.path), path)  # type: ignore

    def _rendered_target(self, ref_path: str | None) -> Any:
        """The fast path of a reference: what lookup(ref_path) returns when its quick walk
        ends at a plain value (a scalar, or a file's container with nothing to render),
        found the same way; NOT_RENDERED whenever lookup would render, copy or fail (and
        for a reference with a nested one). Renders
        nothing and raises nothing, so the caller may skip what a render does around it
        (the reference stack of _render_at, the record of an observed render); a caller
        that stores the value tells the memo's readers of the read (_note_read), as the
        full render would.

        The one single-reference fast path. Resolver._render_keys repeats only its first
        step inline, the lookup of a path found before in this render: a call for each of
        these commonest values cost 0.6% of a render's instructions."""
        node: Any = self._targets.get(ref_path, NOT_RENDERED)  # type: ignore[arg-type]
        if node is not NOT_RENDERED:
            return node
        keys = self._refs_split.get(ref_path)  # type: ignore[arg-type]
        if keys is None:
            if ref_path is None:
                return NOT_RENDERED  # a reference with a nested one: the full render
            # Split as Resolver.lookup splits it (SharedSubtrees._split_path), for every
            # resolver of the inventory: a path met here first went to the full render
            # until issue 29 (a fifth of the values a real model's fast paths declined).
            keys = self._refs_split[ref_path] = tuple(ref_path.split(self._refs_delimiter))
        # walked_value's walk, inlined: a path not found before in this render, met for
        # most references (a call here cost 1.3% of a render's instructions);
        # tests/test_resolve.py compares the two.
        node = self._refs_root
        walked = WALKED  # a local: a C set in the compiled build (resolve/fast_paths.pxd)
        try:
            for key in keys:
                node = node[key]
                if type(node) not in walked:
                    return NOT_RENDERED
        except (KeyError, TypeError, IndexError):
            return NOT_RENDERED
        kind = type(node)
        if kind is str:  # the commonest
            if len(node) > SHORT_TEXT:
                return NOT_RENDERED  # counted (_expansion_size): the full render
        elif kind not in SCALARS:
            return NOT_RENDERED  # not plain, or a file's container (counted): the full render
        # The owned and plain mappings on the way are never replaced, nor a plain value
        # changed: every later walk ends at this value.
        self._targets[ref_path] = node  # type: ignore[index]
        return node

    def _counted_target(self, ref_path: str, at: int) -> Any:
        """The fast path of a reference to what _rendered_target leaves to the full render
        because the full render counts it (Resolver._expanded): a string longer than
        SHORT_TEXT, or a file's container with nothing to render inside (a dict or list, as
        parsed: lookup returns it as it is, not a copy). That value, counted as the full
        render counts it; NOT_RENDERED for anything else, or when counting it would cross
        MAX_REFERENCE_EXPANSION (the full render then reports the error). Asked once
        _rendered_target declined, which split the path. Not kept in _targets: every
        reference to it counts again. Such references were the commonest values the real
        Salt models rendered in full (issue 29): 622 of stacklight's 1,205
        (`${public_keys:name}`), 162 of training-lab's 567. `at`: how deep the value is
        stored (its key path's length); one that would nest deeper than MAX_RENDERED_DEPTH
        there is left to the full render too, which reports it."""
        keys = self._refs_split.get(ref_path)
        if keys is None:
            return NOT_RENDERED
        node = walked_value(self._refs_root, keys)
        kind = type(node)
        if kind is not str and kind is not dict and kind is not list:
            return NOT_RENDERED  # a scalar (declined by _rendered_target: not rendered) or more
        size = self._expansion_size(node)
        expanded = self.expanded + size
        if expanded > MAX_REFERENCE_EXPANSION:
            return NOT_RENDERED
        # A container nests less deep than its size (Resolver._expanded), a file's no deeper
        # than a file may: most need no walk.
        if at > PLAIN_STORED_WITHIN and kind is not str and at + size > MAX_RENDERED_DEPTH \
                and at + self._rendered_depth(node) > MAX_RENDERED_DEPTH:
            return NOT_RENDERED
        self.expanded = expanded
        return node

    def _rendered_depth(self, value: Any) -> int:
        """nesting_depth(value) up to MAX_RENDERED_DEPTH + 1; a file's container (shared,
        never changed) walked once per render, its depth memoised by identity beside its
        size (_expansion_size counted it first)."""
        kind = type(value)
        if kind is not dict and kind is not list:
            return nesting_depth(value, MAX_RENDERED_DEPTH)
        known = self._plain_sizes.get(id(value))
        if known is not None and len(known) == 3:
            return known[2]
        depth = nesting_depth(value, MAX_RENDERED_DEPTH)
        if known is not None:
            self._plain_sizes[id(value)] = (known[0], value, depth)
        return depth

    # -- what references produce (MAX_REFERENCE_EXPANSION) --------------------------------

    def _expansion_size(self, value: Any) -> int:
        """What `value`, produced by a reference, counts towards MAX_REFERENCE_EXPANSION: a
        string longer than SHORT_TEXT its length, a shorter one or another scalar nothing;
        a mapping or list 1, plus for each key and item inside 1 and the length of each
        string, as often as it is held. A file's container (dict, list: shared, never
        changed) is walked once per render."""
        kind = type(value)
        if kind is str:
            return len(value) if len(value) > SHORT_TEXT else 0
        if kind not in _CONTAINERS:
            return 0
        if kind is dict or kind is list:
            known = self._plain_sizes.get(id(value))
            if known is not None:
                return known[0]
        size = 1
        containers = _CONTAINERS  # a local: a C set in the compiled build (resolve/fast_paths.pxd)
        items = value
        if isinstance(value, dict):
            for key in value:
                size += len(key) + 1 if type(key) is str else 1
            items = dict.values(value)
        for item in items:
            kind_of_item = type(item)
            if kind_of_item is str:
                size += len(item) + 1
            else:
                size += self._expansion_size(item) if kind_of_item in containers else 1
        if kind is dict or kind is list:
            self._plain_sizes[id(value)] = (size, value)
        return size
