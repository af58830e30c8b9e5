"""Class expansion: which classes a node gets, in which order, and from which files.

Order (spec section 2.2): a class is merged once, the first time it is listed, after all of its
own classes (post-order); later list entries and then the node override earlier ones. Class
mappings add classes before the node's own. A class that includes itself, directly or through
others, is an error naming the loop.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock, without importing threading

from reclass_ng.entity import Entity
from reclass_ng.errors import (
    ClassIncludeCycle,
    ClassNameResolveError,
    ClassNotFound,
    InvalidClassnameError,
    MappingFormatError,
    ReclassError,
)
from reclass_ng.merge import MAPPING_TYPES, MergedNode, Merger
from reclass_ng.prepare import EntityPreparer, absolute_class_name
from reclass_ng.records import Record
from reclass_ng.resolve import Resolver
from reclass_ng.settings import Settings
from reclass_ng.storage.base import ClassTree
from reclass_ng.values import (
    Interpolation,
    OwnedDict,
    Source,
    frozen_copy,
    owned_copy,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    import re  # imported where a pattern is compiled: most starts need none
    from collections.abc import Callable, Collection, Iterable
    from typing import Any

    # Observed renders only (imported where used): a render without an observer does
    # without the seam and the walk recording (a start's imports, about 1 M instructions).
    from reclass_ng.observe import RenderObserver
    from reclass_ng.observe.walk_recording import WalkRecording


class ClassLoader:
    """Class entities by name, each file read and prepared once per process."""

    def __init__(self, storage: ClassTree, preparer: EntityPreparer) -> None:
        self.storage = storage
        self.preparer = preparer
        self._cache: dict[str, Entity | None] = {}
        self._lock = allocate_lock()
        # False: the storage drops each class file's parsed document once its entity is
        # made (NodeRenderer.release_files); the entity is kept either way.
        self.keeps_parsed = True

    def get(self, name: str) -> Entity | None:
        """The class entity `name`, or None when no such class file exists."""
        # (Not `try: ... except KeyError`: a render's first lookup of each class raised and
        # caught a KeyError, which cost more than a second lookup does.)
        cache = self._cache
        if name in cache:
            return cache[name]
        path = self.storage.class_path(name)
        entity = None
        if path is not None:
            source = Source(self.storage.origin(path), name, "class", path)
            entity = self.preparer.entity(self.storage.parsed(path), source, name)
            if not self.keeps_parsed:
                self.storage.forget_parsed(path)
        with self._lock:
            return self._cache.setdefault(name, entity)

    def adopt(self, other: ClassLoader, changed: Collection[str]) -> None:
        """Take the class entities `other` prepared, but those of the files `changed`: for a
        loader of the same class tree under equal settings once only those files changed (an
        editor's buffer, reclass_ng.lsp). Entities are never changed by a render: sharing
        them between renderers is what sharing them between nodes already is."""
        with other._lock:
            prepared = list(other._cache.items())
        with self._lock:
            for name, entity in prepared:
                path = entity.source.path if entity is not None and entity.source else None
                if path is not None and path not in changed:
                    self._cache.setdefault(name, entity)


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
    import re

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
        self._ignorable: re.Pattern[str] | None = None  # compiled when a class is missing
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
                     walking: list[str], observer: RenderObserver | None = None,
                     entries: tuple[str, ...] | None = None) -> None:
        """Merge the classes of `entity` (recursively), not the entity itself; only the
        class list `entries` of it when given (SharedClassWalks splits a node's list)."""
        plain_names = self._plain_names  # _class_name's first step inline: most names
        for listed in entity.classes if entries is None else entries:
            name = listed if listed in plain_names else self._class_name(listed, node, entity)
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
        from reclass_ng.suggestions import similar_names  # only after an error: not every start

        relative_base = entity.name
        class_names = self.loader.storage.class_paths
        return ClassNotFound(
            name, self.loader.storage.classes_uri, entity.classes_origin, source=entity.source,
            # The entry as written may be relative (`.web`); match it the way it was resolved.
            pick=lambda item: (getattr(item, "value", None) == listed or absolute_class_name(
                str(getattr(item, "value", "")), relative_base) == listed),
            suggest=lambda: similar_names(name, class_names))

    def _ignored_missing(self, name: str) -> bool:
        patterns = self.settings.ignore_class_notfound_regexp
        if not self.settings.ignore_class_notfound or not patterns:
            return False
        if self._ignorable is None:
            import re  # here: the default pattern (`.*`) is only needed for a missing class

            self._ignorable = re.compile("|".join(patterns))
        if not self._ignorable.match(name):
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
    """The classes that several nodes list first, merged once for all of them.

    Nodes whose class lists start with the same entries merge the same files in the same
    order for those entries. When nothing in that walk depends on the node (no reference in
    a class name, no parameter key that the node's automatic parameters also set, no class
    skipped with a warning), those entries are merged once into an empty node; each node
    starts from a frozen copy of the result (values.frozen_copy), walks the rest of its own
    list, and merges its own file: reclass's merge, with the per-key work of the shared
    entries done once. A render announces the class lists of the nodes it is about to merge
    (`expect`); each node takes the longest start of its list that another node's list
    starts with too, and a walk is kept until the last node taking it.
    """

    def __init__(self, expander: ClassExpander) -> None:
        self.expander = expander
        # class list -> its first entries that a shared walk merges (absent: none)
        self._shared_start: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._left: dict[tuple[str, ...], int] = {}  # shared entries -> nodes still to merge
        self._walks: dict[tuple[str, ...], FrozenWalk] = {}
        self._unsafe: set[tuple[str, ...]] = set()

    def expect(self, class_lists: Iterable[tuple[str, ...]]) -> None:
        """The class lists of the nodes merged next (a whole inventory, a chunk of it)."""
        lists = list(class_lists)
        starts: dict[tuple[str, ...], int] = {}  # start of a list -> lists starting so
        for classes in lists:
            for end in range(1, len(classes) + 1):
                start = classes[:end]
                starts[start] = starts.get(start, 0) + 1
        shared_start: dict[tuple[str, ...], tuple[str, ...]] = {}
        takers: dict[tuple[str, ...], int] = {}
        for classes in lists:
            known = shared_start.get(classes)
            if known is None:
                end = len(classes)
                while end and starts[classes[:end]] < 2:
                    end -= 1
                known = shared_start[classes] = classes[:end]
            if known:
                takers[known] = takers.get(known, 0) + 1
        self._shared_start = {classes: start for classes, start in shared_start.items()
                              if takers.get(start, 0) > 1}
        self._left = {start: n for start, n in takers.items() if n > 1}
        self._walks.clear()

    def walk_classes(self, node: MergedNode, entity: Entity, seen: set[str],
                     observer: RenderObserver | None = None) -> bool:
        """Merge the classes of a node's entity into `node`, which holds only its automatic
        parameters so far, starting from a shared walk (telling `observer` the classes it
        contains; one of writes is told the walk's merge as recorded, WalkRecording). False
        when this node cannot use one. The merger then thaws the node's tree along the keys
        of each entity it merges (FrozenWalk.before_merge)."""
        start = self._shared_start.get(entity.classes)
        if start is None or start in self._unsafe or seen or node.classes or node.applications:
            return False
        left = self._left.get(start)
        if left is None:
            return False
        replayed = observer is not None and not observer.reads_only
        walk = self._walks.get(start) or (self._walk_alone(entity, recorded=True) if replayed
                                          else self._walk_alone(entity))
        if walk is None:
            return False
        if replayed and walk.recording is None:
            return False  # walked for nodes without one: this node merges its classes itself
        shared = walk.merged
        if not (node.parameters.keys().isdisjoint(shared.parameters)
                and node.exports.keys().isdisjoint(shared.exports)):
            self._unsafe.add(start)  # e.g. a class setting _reclass_: merged in order instead
            self._walks.pop(start, None)
            return False
        if left == 1:
            del self._left[start]
            self._walks.pop(start, None)
        else:
            self._left[start] = left - 1
            self._walks[start] = walk
        walk.give(node, entity)
        seen.update(walk.walked)
        if observer is not None:
            self._tell(observer, walk, entity)
        if len(start) < len(entity.classes):
            self.expander.walk_classes(node, entity, seen, [], observer,
                                       entity.classes[len(start):])
        return True

    def _tell(self, observer: RenderObserver, walk: FrozenWalk, entity: Entity) -> None:
        """Tell `observer` the walk that `entity`'s node starts from: an observer of reads
        the classes it read, one of writes its merge as recorded."""
        if walk.recording is not None and not observer.reads_only:
            walk.recording.replay(observer, entity)
            return
        storage = self.expander.loader.storage
        for name in walk.walked:
            observer.class_read(name, storage.class_path(name))

    def _walk_alone(self, entity: Entity, recorded: bool = False) -> FrozenWalk | None:
        """The shared walk of `entity`'s list start, merged now; `recorded`: with what its
        merge tells an observer of writes, to be told again to each node (WalkRecording)."""
        expander = self.expander
        if expander.settings.ignore_class_notfound:
            return None  # the warnings of skipped classes are printed for every node
        start = self._shared_start[entity.classes]
        scratch, seen = MergedNode(), set[str]()
        expander.rendered_class_names = False
        recording = None
        if recorded:
            from reclass_ng.observe.walk_recording import WalkRecording  # see the imports

            recording = WalkRecording(entity)
        try:
            expander.walk_classes(scratch, entity, seen, [], recording, start)
        except ReclassError:
            failed = True  # the node's own walk reports it, in its place
        else:
            failed = expander.rendered_class_names
        if failed:
            self._unsafe.add(start)
            return None
        walk = FrozenWalk(scratch, seen)
        if recording is not None:
            recording.freeze({"parameters": scratch.parameters, "exports": scratch.exports},
                             {"parameters": walk.frozen_parameters,
                              "exports": walk.frozen_exports})
            walk.recording = recording if recording.replayable else None
        return walk


class FrozenWalk:
    """The result of a shared class walk, and its frozen copy that its nodes start from.

    A node holds the frozen copy (shared by the walk's nodes, each copying only what it
    renders into) until it merges an entity over it: then the mappings that entity merges
    into, down to the first key that is not a mapping on both sides, become owned copies
    again, with the file that set each key (`merged`'s origins), so merges and their errors
    see what the node's own walk would have made (tests/test_shared_walks.py compares every
    node with its unshared merge)."""

    __slots__ = ("merged", "walked", "frozen_parameters", "frozen_exports", "recording")

    def __init__(self, merged: MergedNode, walked: set[str]) -> None:
        self.merged = merged
        self.walked = walked
        # what the merge told an observer of writes, when walked with one (else None)
        self.recording: WalkRecording | None = None
        self.frozen_parameters = {k: frozen_copy(v) for k, v in merged.parameters.items()}
        self.frozen_exports = {k: frozen_copy(v) for k, v in merged.exports.items()}

    def give(self, node: MergedNode, entity: Entity) -> None:
        """Start `node` from this walk; `entity`, the node's own, is the last one it merges."""
        shared = self.merged
        for mine, theirs, frozen in (
                (node.parameters, shared.parameters, self.frozen_parameters),
                (node.exports, shared.exports, self.frozen_exports)):
            mine.update(frozen)
            if theirs.origin:
                if mine.origin is None:
                    mine.origin = {}
                mine.origin.update(theirs.origin)
        node.classes.extend(shared.classes)
        node._class_set.update(shared.classes)
        node.applications.extend(shared.applications)
        if shared.environment is not None:
            node.environment = shared.environment
        node.frozen_base = _NodeThaw(self, entity)


class _NodeThaw:
    """What the merger asks before each merge into a node started from a FrozenWalk."""

    __slots__ = ("walk", "last")

    def __init__(self, walk: FrozenWalk, last: Entity) -> None:
        self.walk = walk
        self.last = last

    def before_merge(self, node: MergedNode, entity: Entity) -> None:
        """Own copies of the node's frozen mappings along the keys `entity` merges into."""
        walk = self.walk
        thaw(node.parameters, walk.merged.parameters, walk.frozen_parameters, entity.parameters)
        if entity.exports:
            thaw(node.exports, walk.merged.exports, walk.frozen_exports, entity.exports)
        if entity is self.last:
            node.frozen_base = None  # merged: the walk can go once its other nodes are


def thaw(mine: OwnedDict, walked: OwnedDict, frozen: dict, new: Any) -> None:
    """Make the mappings of `mine` that `new` merges into owned, where they are still the
    frozen copy (`frozen`) of a walk's owned mapping (`walked`), keeping which file set
    each key; `mine` started as `frozen`. Follows merge_mapping's rule that a mapping over a
    mapping merges key by key (merge.MAPPING_TYPES): tests/test_shared_walks.py compares
    every node with its own walk."""
    # `in` and `[]`, not .get(): OwnedDict's methods bind through its __getattr__ hook
    for key, new_value in new.items():
        walked_value = walked[key] if key in walked else None
        if type(walked_value) is not OwnedDict or type(new_value) not in MAPPING_TYPES:
            continue  # the merge replaces or stacks it, or copies a file's mapping itself
        value = mine[key] if key in mine else None
        frozen_value = frozen[key]
        if value is frozen_value:
            value = OwnedDict.from_source(frozen_value, walked_value.src)  # same key order
            if walked_value.origin:
                value.origin = dict(walked_value.origin)
            mine[key] = value
        elif type(value) is not OwnedDict:
            continue  # stacked over by an entity merged since
        thaw(value, walked_value, frozen_value, new_value)
