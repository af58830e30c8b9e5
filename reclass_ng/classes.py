"""Class expansion: which classes a node gets, in which order, and from which files.

Order (spec section 2.2): a class is merged once, the first time it is listed, after all of its
own classes (post-order); later list entries and then the node override earlier ones. Class
mappings add classes before the node's own. A class that includes itself, directly or through
others, is an error naming the loop.
"""

from __future__ import annotations

import re
from _thread import allocate_lock  # threading.Lock, without importing threading
from collections.abc import Callable, Iterable

from reclass_ng.entity import Entity
from reclass_ng.errors import (
    ClassIncludeCycle,
    ClassNameResolveError,
    ClassNotFound,
    InvalidClassnameError,
    MappingFormatError,
    ReclassError,
)
from reclass_ng.merge import MergedNode, Merger
from reclass_ng.observe import RenderObserver
from reclass_ng.prepare import EntityPreparer, absolute_class_name
from reclass_ng.records import Record
from reclass_ng.resolve import Resolver
from reclass_ng.settings import Settings
from reclass_ng.storage.base import ClassTree
from reclass_ng.suggestions import similar_names
from reclass_ng.values import (
    SHARED_DICT_TYPES,
    Interpolation,
    OwnedDict,
    Source,
    frozen_copy,
    owned_copy,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from typing import Any


class ClassLoader:
    """Class entities by name, each file read and prepared once per process."""

    def __init__(self, storage: ClassTree, preparer: EntityPreparer) -> None:
        self.storage = storage
        self.preparer = preparer
        self._cache: dict[str, Entity | None] = {}
        self._lock = allocate_lock()

    def get(self, name: str) -> Entity | None:
        """The class entity `name`, or None when no such class file exists."""
        try:
            return self._cache[name]
        except KeyError:
            pass
        path = self.storage.class_path(name)
        entity = None
        if path is not None:
            source = Source(self.storage.origin(path), name, "class", path)
            entity = self.preparer.entity(self.storage.parsed(path), source, name)
        with self._lock:
            return self._cache.setdefault(name, entity)


class ClassMapping(Record):
    """`<pattern> <class> ...` from the class_mappings setting."""

    __slots__ = ("text", "regex", "glob", "classes")
    _fields = __slots__
    text: str
    regex: re.Pattern[str] | None
    glob: str | None
    classes: tuple[str, ...]

    def __init__(self, text: str, regex: re.Pattern[str] | None, glob: str | None,
                 classes: tuple[str, ...]) -> None:
        _set = object.__setattr__
        _set(self, "text", text)
        _set(self, "regex", regex)
        _set(self, "glob", glob)
        _set(self, "classes", classes)

    def classes_for(self, subject: str) -> list[str]:
        """The classes this mapping gives a node matching `subject` (none when it does not
        match)."""
        if self.regex is not None:
            match = self.regex.search(subject)
            return [match.expand(c) for c in self.classes] if match else []
        import fnmatch  # here: only class mappings use it, not every start

        return list(self.classes) if fnmatch.fnmatchcase(subject, self.glob or "") else []


def parse_class_mapping(text: str) -> ClassMapping:
    """Split a mapping like a POSIX shell does; a leading `/` quotes a regular expression."""
    import shlex  # here: only class mappings use it, not every start

    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    is_regex = text.startswith("/")
    if is_regex:
        lexer.quotes += "/"
        lexer.escapedquotes += "/"
    try:
        words = list(lexer)
    except ValueError:
        raise MappingFormatError(text, "missing closing quote (or slash)") from None
    if not words:
        raise MappingFormatError(text, "empty mapping")
    pattern, classes = words[0], tuple(words[1:])
    if not is_regex:
        return ClassMapping(text, None, pattern, classes)
    try:
        return ClassMapping(text, re.compile(pattern), None, classes)
    except re.error as err:
        raise MappingFormatError(text, f"invalid regular expression: {err}") from None


def mapped_classes(mappings: list[ClassMapping], subject: str) -> tuple[str, ...]:
    """Classes every matching mapping adds, in mapping order, without duplicates."""
    return tuple(first_mappings(mappings, subject))


def first_mappings(mappings: list[ClassMapping], subject: str) -> dict[str, int]:
    """Each class the mappings give `subject`, in mapping order, with the index of the first
    mapping giving it."""
    found: dict[str, int] = {}
    for index, mapping in enumerate(mappings):
        for name in mapping.classes_for(subject):
            found.setdefault(name, index)
    return found


class ClassExpander:
    """Walks entities depth first, merging every class once into a MergedNode."""

    def __init__(self, loader: ClassLoader, merger: Merger, settings: Settings,
                 preparer: EntityPreparer, warn: Callable[[str], None]) -> None:
        self.loader = loader
        self.merger = merger
        self.settings = settings
        self.preparer = preparer
        self.warn = warn
        patterns = settings.ignore_class_notfound_regexp
        self.ignorable = re.compile("|".join(patterns)) if patterns else None
        self._plain_names: set[str] = set()  # class names as listed, with nothing to render
        self.rendered_class_names = False  # set when a class name had references to render

    def walk(self, node: MergedNode, entity: Entity, seen: set[str], walking: list[str],
             observer: RenderObserver | None = None, listed_by: Entity | None = None) -> None:
        """Merge the classes of `entity` (recursively), then the entity itself."""
        self.walk_classes(node, entity, seen, walking, observer)
        self.merger.merge_entity(node, entity, observer)
        if observer is not None:
            observer.entity_merged(entity, listed_by)

    def walk_classes(self, node: MergedNode, entity: Entity, seen: set[str],
                     walking: list[str], observer: RenderObserver | None = None) -> None:
        """Merge the classes of `entity` (recursively), not the entity itself."""
        for listed in entity.classes:
            name = self._class_name(listed, node, entity)
            if name in seen:
                continue
            if name in walking:
                cycle = walking[walking.index(name):] + [name]
                raise ClassIncludeCycle(cycle, entity.classes_origin)
            if observer is not None:  # before loading: a file that fails to load was read too
                observer.class_read(name, self.loader.storage.class_path(name))
            class_entity = self.loader.get(name)
            if class_entity is None:
                if self._ignored_missing(name):
                    continue
                raise self._not_found(name, listed, entity)
            walking.append(name)
            self.walk(node, class_entity, seen, walking, observer, entity)
            walking.pop()
            seen.add(name)

    def _not_found(self, name: str, listed: str, entity: Entity) -> ClassNotFound:
        """ClassNotFound pointing at the list entry, with the nearest existing class names."""
        relative_base = entity.name
        class_names = self.loader.storage.class_paths
        return ClassNotFound(
            name, self.loader.storage.classes_uri, entity.classes_origin, source=entity.source,
            # The entry as written may be relative (`.web`); match it the way it was resolved.
            pick=lambda item: (getattr(item, "value", None) == listed or absolute_class_name(
                str(getattr(item, "value", "")), relative_base) == listed),
            suggest=lambda: similar_names(name, class_names))

    def _ignored_missing(self, name: str) -> bool:
        if not self.settings.ignore_class_notfound or self.ignorable is None:
            return False
        if not self.ignorable.match(name):
            return False
        if self.settings.ignore_class_notfound_warning:
            self.warn(f"[WARNING] Reclass class not found: '{name}'. Skipped!")
        return True

    def _class_name(self, listed: str, node: MergedNode, entity: Entity) -> str:
        if listed in self._plain_names:
            return listed
        name = listed
        if self.preparer.parser.may_contain_syntax(listed):
            self.rendered_class_names = True
            name = self._render_class_name(listed, node, entity)
        for char in (" ", "/"):
            if char in name:
                raise InvalidClassnameError(char, name)
        if name is listed:
            self._plain_names.add(listed)
        return name

    def _render_class_name(self, listed: str, node: MergedNode, entity: Entity) -> str:
        """References in a class name, against the parameters merged so far (fully, D7)."""
        value = self.preparer.string(listed, entity.origin, ("classes",))
        if type(value) is not Interpolation:
            return str(value)
        snapshot = owned_copy(node.parameters)
        resolver = Resolver(snapshot, self.merger, delimiter=self.settings.delimiter,
                            group_errors=False)
        try:
            return str(resolver.render_interp(value, ("classes",)))
        except ReclassError as err:
            # Point at the list entry; suggest what the failing reference may have meant.
            raise ClassNameResolveError(
                listed, entity.classes_origin, source=entity.source, suggest=err.suggest,
                pick=lambda item: getattr(item, "value", None) == listed) from None


class SharedClassWalks:
    """The classes of a class list that several nodes list, merged once for all of them.

    Nodes listing the same classes merge the same files in the same order. When nothing in
    that walk depends on the node (no reference in a class name, no parameter key that the
    node's automatic parameters also set, no class skipped with a warning), the classes are
    merged once into an empty node and every node gets a copy of the result (the last one
    the result itself): reclass's merge, with the per-key work done once. A render announces
    the class lists of the nodes it is about to merge (`expect`); only lists met again are
    kept, each until its last node.
    """

    def __init__(self, expander: ClassExpander) -> None:
        self.expander = expander
        self._left: dict[tuple[str, ...], int] = {}  # class list -> nodes still to merge
        self._walks: dict[tuple[str, ...], tuple[MergedNode, set[str]]] = {}
        # class list -> frozen copies of its walk's parameters and exports (see _take)
        self._frozen: dict[tuple[str, ...], tuple[dict, dict]] = {}
        self._unsafe: set[tuple[str, ...]] = set()

    def expect(self, class_lists: Iterable[tuple[str, ...]]) -> None:
        """The class lists of the nodes merged next (a whole inventory, a chunk of it)."""
        counts: dict[tuple[str, ...], int] = {}
        for classes in class_lists:
            counts[classes] = counts.get(classes, 0) + 1
        self._left = {classes: n for classes, n in counts.items() if n > 1 and classes}
        self._walks.clear()
        self._frozen.clear()

    def walk_classes(self, node: MergedNode, entity: Entity, seen: set[str],
                     observer: RenderObserver | None = None) -> bool:
        """Merge the classes of a node's entity into `node`, which holds only its automatic
        parameters so far, from a shared walk (telling a reads-only `observer` the classes it
        contains). False when this node cannot use one."""
        key = entity.classes
        left = self._left.get(key)
        if left is None or key in self._unsafe or seen or node.classes or node.applications:
            return False
        walk = self._walks.get(key) or self._walk_alone(entity)
        if walk is None:
            return False
        shared, walked = walk
        if not (node.parameters.keys().isdisjoint(shared.parameters)
                and node.exports.keys().isdisjoint(shared.exports)):
            self._unsafe.add(key)  # e.g. a class setting _reclass_: merged in order instead
            self._walks.pop(key, None)
            return False
        frozen = self._frozen.get(key)
        if frozen is None:
            frozen = ({k: frozen_copy(v) for k, v in shared.parameters.items()},
                      {k: frozen_copy(v) for k, v in shared.exports.items()})
        if left == 1:
            del self._left[key]
            self._walks.pop(key, None)
            self._frozen.pop(key, None)
            _take(node, shared, frozen, entity, last=True)
        else:
            self._left[key] = left - 1
            self._walks[key] = walk
            self._frozen[key] = frozen
            _take(node, shared, frozen, entity, last=False)
        seen.update(walked)
        if observer is not None:
            storage = self.expander.loader.storage
            for name in walked:
                observer.class_read(name, storage.class_path(name))
        return True

    def _walk_alone(self, entity: Entity) -> tuple[MergedNode, set[str]] | None:
        expander = self.expander
        if expander.settings.ignore_class_notfound:
            return None  # the warnings of skipped classes are printed for every node
        scratch, seen = MergedNode(), set[str]()
        expander.rendered_class_names = False
        try:
            expander.walk_classes(scratch, entity, seen, [])
        except ReclassError:
            failed = True  # the node's own walk reports it, in its place
        else:
            failed = expander.rendered_class_names
        if failed:
            self._unsafe.add(entity.classes)
            return None
        return scratch, seen


def _take(node: MergedNode, shared: MergedNode, frozen: tuple[dict, dict], entity: Entity,
          last: bool) -> None:
    """Put a shared walk's result into a node, which merges `entity` into it next.

    What the node's own merge reaches (the keys its entity sets, where both are mappings
    down to the first key that is not) is an owned copy, with the files that set each key;
    everything else is the walk's frozen copy (values.frozen_copy), shared by its nodes and
    copied by each one only where it renders references."""
    sections = ((node.parameters, shared.parameters, frozen[0], entity.parameters),
                (node.exports, shared.exports, frozen[1], entity.exports))
    for mine, theirs, theirs_frozen, new in sections:
        for key, value in theirs.items():
            mine[key] = _owned_where_merged(value, theirs_frozen[key], new[key], last) \
                if key in new else theirs_frozen[key]
        if theirs.origin:
            if mine.origin is None:
                mine.origin = {}
            mine.origin.update(theirs.origin)
    node.classes.extend(shared.classes)
    node._class_set.update(shared.classes)
    node.applications.extend(shared.applications)
    if shared.environment is not None:
        node.environment = shared.environment


def _owned_where_merged(value: Any, frozen: Any, new: Any, last: bool) -> Any:
    """`value` of a shared walk as a node holds it when `new` is merged over it: owned
    (copied unless `last`) along the keys `new` sets, frozen elsewhere."""
    if type(value) is not OwnedDict or type(new) not in SHARED_DICT_TYPES:
        return value if last else owned_copy(value)
    copy = OwnedDict.from_source(frozen, value.src)  # the same keys, in the same order
    if value.origin:
        copy.origin = dict(value.origin)
    for key in new:  # a node's few keys, not the walk's many (_param: hundreds)
        if key in value:
            copy[key] = _owned_where_merged(value[key], frozen[key], new[key], last)
    return copy
