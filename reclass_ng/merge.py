"""Merging entities into one node: parameters, exports, classes, applications, environment.

Mappings merge key by key at once and lists concatenate at once; every other meeting of two
values for one key becomes a `Stack` of layers, folded during interpolation when references are
known (so `${a}` pointing at a dict still merges with a dict layer). Folding is here too, since
it follows the same rules.
"""

from __future__ import annotations

from reclass_ng.entity import Entity
from reclass_ng.errors import ChangedConstantError, ResolveError, TypeMergeError
from reclass_ng.settings import Settings, Speed
from reclass_ng.values import (
    DICT_TYPES,
    LIST_TYPES,
    SHARED_DICT_TYPES,
    SHARED_LIST_TYPES,
    Layer,
    OwnedDict,
    OwnedList,
    Source,
    Stack,
    layer_files,
)

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    # The observer seam is imported where an observed merge or fold uses it: a render
    # without an observer does without the module (a start's import, about 0.6 M
    # instructions with observe/__init__).
    from reclass_ng.observe import RenderObserver, WriteObserver

# What merges key by key into an owned copy (merge_value's first case), as one set: the rule
# that a mapping merged over a mapping merges key by key (classes.thaw repeats it).
MAPPING_TYPES = frozenset({*SHARED_DICT_TYPES, OwnedDict})
# Values fold merges or appends to (a change to or from one is _kind_changed's). Every class
# of values.DICT_TYPES is a dict and every one of LIST_TYPES a list, so fold tests `dict` and
# `list`: isinstance with a tuple tries each class in turn, reading the value's __class__
# again for each one it is not an instance of (written with the tuples, fold's three cases
# cost 1.9 M instructions more on a 150-node `mcp` render).
_CONTAINER_TYPES = (dict, list)


class MergedNode:
    """What merging a node's entities accumulates, in reclass's merge order."""

    __slots__ = ("name", "uri", "classes", "applications", "parameters", "exports",
                 "environment", "_class_set", "frozen_base")

    def __init__(self) -> None:
        self.name = ""
        self.uri = ""
        self.classes: list[str] = []
        self._class_set: set[str] = set()
        self.applications: list[str] = []
        self.parameters = OwnedDict.from_source((), None)
        self.exports = OwnedDict.from_source((), None)
        self.environment: str | None = None
        # The shared class walk the node started from (classes.FrozenWalk), until the node's
        # own entity is merged: told before each merge, it makes what the merge reaches owned.
        self.frozen_base: Any = None



def _appended(output: Any, owned: bool, new: Any) -> OwnedList:
    """fold's step where a layer's list `new` appends to the list `output` (to an owned copy
    of it unless `owned`): the owned list."""
    if not owned:
        output = OwnedList(output)
    output.extend(new)
    return output

class Merger:
    """Merges entities and folds layer stacks under one set of settings."""

    def __init__(self, settings: Settings, speed: Speed | None = None,
                 kept_prefixes: set[str] | None = None) -> None:
        self.settings = settings
        # EntityPreparer.kept_prefixes: which `~`/`=` prefixes some file kept as written
        # (below a prefixed key); fold reads such keys only when it is not empty.
        self.kept_prefixes: set[str] = set() if kept_prefixes is None else kept_prefixes
        self._prefixes = {settings.dict_key_override_prefix: "override",
                          settings.dict_key_constant_prefix: "constant"}
        # False: merge_mapping merges every key through merge_value (the reference of its
        # inlined cases, Speed.inlined_merge).
        self.inlined_merge = (speed or Speed.from_environment()).inlined_merge
        # Reference paths split on a delimiter, shared by the resolvers of this inventory
        # (paths repeat a lot); as large as the inventory's distinct reference paths.
        self._split_paths: dict[str, dict[str, tuple[str, ...]]] = {}

    def split_paths(self, delimiter: str) -> dict[str, tuple[str, ...]]:
        """The cache of reference paths split on `delimiter` (see Resolver.lookup)."""
        return self._split_paths.setdefault(delimiter, {})

    def merge_entity(self, node: MergedNode, entity: Entity,
                     observer: RenderObserver | None = None) -> None:
        """Merge one entity into the node (its classes are merged already)."""
        if node.frozen_base is not None:
            node.frozen_base.before_merge(node, entity)
        for name in entity.classes:
            if name not in node._class_set:
                node._class_set.add(name)
                node.classes.append(name)
        if entity.applications:
            self.merge_applications(node.applications, entity.applications)
        source = entity.origin
        if observer is None:
            self.merge_mapping(node.parameters, entity.parameters, source, ())
            if entity.exports:
                self.merge_mapping(node.exports, entity.exports, source, ("exports",))
        else:
            self._merge_observed(node, entity, source, observer)
        if entity.environment is not None:
            node.environment = entity.environment
        node.name, node.uri = entity.name, entity.uri

    def _merge_observed(self, node: MergedNode, entity: Entity, source: Source,
                        observer: RenderObserver) -> None:
        from reclass_ng.observe import ExportsPrefix  # observed merges only (see above)

        record = observer.writes("parameters")
        if record is not None:
            record.entity_written(source, entity.parameters)
        self.merge_mapping(node.parameters, entity.parameters, source, (), record)
        record = observer.writes("exports")
        if record is not None:
            record.entity_written(source, entity.exports)
        if entity.exports:  # merge paths of exports start with "exports"
            self.merge_mapping(node.exports, entity.exports, source, ("exports",),
                               ExportsPrefix(record) if record is not None else None)

    @staticmethod
    def merge_applications(applications: list[str], new: Sequence[str]) -> None:
        """Add `new` applications to the list; `~app` removes one added before."""
        # `~app` removes what is there now; it never blocks a later addition (kapicorp 2.0.0).
        for app in new:
            if app.startswith("~"):
                if app[1:] in applications:
                    applications.remove(app[1:])
            elif app not in applications:
                applications.append(app)

    def merge_mapping(self, target: OwnedDict, new: Any, source: Source | None, path: tuple,
                      record: WriteObserver | None = None) -> None:
        """Merge a mapping into an owned mapping, recording which source set each key (and
        telling `record` what became of the values already there)."""
        if not self.inlined_merge:
            self.merge_mapping_per_key(target, new, source, path, record)
            return
        # The hottest loop of a render: OwnedDict.set_origin/source_of are inlined here, and
        # so is merge_value's commonest case, a mapping over a mapping (copying a file's
        # one): the rules of merge_mapping_per_key, its reference (Speed.inlined_merge;
        # tests/test_merge.py compares the two).
        origin = target.origin
        default_source = target.src
        record_new = source is not None and source is not default_source
        mapping_types = MAPPING_TYPES  # a local: a C set in the compiled build (merge.pxd)
        for key, value in new.items():
            if key not in target:
                target[key] = value
                if not record_new:
                    continue
            else:
                old = target[key]
                old_type = type(old)
                new_type = type(value)
                if new_type in mapping_types and old_type in mapping_types:
                    if old_type is not OwnedDict:  # a file's mapping: the node's own copy
                        owned = OwnedDict(old)
                        # both set: an unset slot is read through OwnedDict.__getattr__, slowly
                        owned.src = origin.get(key, default_source) if origin else default_source
                        owned.origin = None
                        target[key] = old = owned
                    self.merge_mapping(old, value, source, path + (key,), record)
                else:
                    old_source = origin.get(key, default_source) if origin else default_source
                    merged = self.merge_value(old, value, old_source, source, path + (key,),
                                              record)
                    if merged is not old:
                        target[key] = merged
                if source is None:
                    continue
            # `source` set the key: a new key from another source than the mapping's own, or
            # any key merged over
            if origin is None:
                origin = target.origin = {}
            origin[key] = source  # type: ignore[assignment]  # not None: checked above

    def merge_mapping_per_key(self, target: OwnedDict, new: Any, source: Source | None,
                              path: tuple, record: WriteObserver | None = None) -> None:
        """merge_mapping written plainly, the reference of its inlined cases: every key
        already there goes through merge_value, origins through OwnedDict's own methods."""
        for key, value in new.items():
            if key not in target:
                target[key] = value
                if source is not None and source is not target.src:
                    target.set_origin(key, source)
                continue
            old = target[key]
            merged = self.merge_value(old, value, target.source_of(key), source, path + (key,),
                                      record)
            if merged is not old:
                target[key] = merged
            if source is not None:
                target.set_origin(key, source)

    def merge_value(self, old: Any, new: Any, old_source: Source | None, source: Source | None,
                    path: tuple, record: WriteObserver | None = None) -> Any:
        """The value of a key after `new` is merged over `old`."""
        new_type, old_type = type(new), type(old)
        if new_type in SHARED_DICT_TYPES or new_type is OwnedDict:
            if old_type is OwnedDict:
                self.merge_mapping(old, new, source, path, record)
                return old
            if old_type in SHARED_DICT_TYPES:
                owned = OwnedDict.from_source(old, old_source)
                self.merge_mapping(owned, new, source, path, record)
                return owned
        elif new_type in SHARED_LIST_TYPES or new_type is OwnedList:
            if old_type is OwnedList:
                old.extend(new)
                if record is not None:
                    record.appended(path)
                return old
            if old_type in SHARED_LIST_TYPES:
                items = OwnedList(old)
                items.extend(new)
                if record is not None:
                    record.appended(path)
                return items
        return self.push_layers(old, new, old_source, source, path, record)

    def push_layers(self, old: Any, new: Any, old_source: Source | None, source: Source | None,
                    path: tuple, record: WriteObserver | None = None) -> Stack:
        """A layer stack for the key: the value there (or its stack) with `new` on top, unless
        a constant layer (`=`) holds the key."""
        if type(old) is not Stack:
            # The commonest case (a class's value overridden by a cluster's): two layers,
            # no constant one (only a stack holds flagged layers).
            wrapped = Layer(old, old_source)
            new_layers = new.layers if type(new) is Stack else [Layer(new, source)]
            stack = Stack([wrapped, *new_layers])
            if record is not None:
                record.stacked(path, new_layers, wrapped)
            return stack
        stack = old.owned_copy()
        constant = stack.constant_layer
        if constant is not None:
            if record is not None:
                record.ignored(path, constant)
            if self.settings.strict_constant_parameters:
                raise ChangedConstantError(path, [constant.source, source], source,
                                           constant.source)
            return stack  # later layers are ignored, the constant stays
        if type(new) is Stack:
            new_layers = new.layers
        else:
            new_layers = [Layer(new, source)]
        stack.layers.extend(new_layers)
        if record is not None:
            record.stacked(path, new_layers, None)
        return stack

    # -- folding (called by the resolver with each layer already rendered) ------------------

    def fold(self, layers: Sequence[Layer], render: Callable[[Layer], Any], path: tuple,
             warn: Callable[[str], None], record: WriteObserver | None = None) -> Any:
        """Render and fold the layers of a stack: the merge table of reclass (spec section 3.3).

        A layer whose reference is missing is skipped with a warning when it is not the last
        one and only scalars came before (ignore_overwritten_missing_references), but the error
        still counts if the result ends up a dict or list.
        """
        output: Any = None
        owned = False
        skipped: ResolveError | None = None
        for i, layer in enumerate(layers):
            try:
                new = render(layer)
            except ResolveError as err:
                self._skip_missing_reference(err, layers, i, output, warn)
                new, skipped = None, err
            if output is None or layer.override:
                if record is not None:
                    from reclass_ng.observe.seam import replacing_outcome  # see the imports

                    record.folded(path, layers, i, replacing_outcome(layer), new)
                output, owned = new, False
                continue
            # Same kinds merge (dicts) or append (lists) here; every change of kind is
            # _kind_changed's.
            if isinstance(output, dict) and isinstance(new, dict):
                output = self._merge_layer(output, owned, new, layers, i, path, record)
                owned = True
                continue
            if isinstance(output, list) and isinstance(new, list):
                output, owned, outcome = _appended(output, owned, new), True, "append"
            elif isinstance(output, _CONTAINER_TYPES) or isinstance(new, _CONTAINER_TYPES):
                output, owned, outcome = self._kind_changed(output, new, layers, i, path)
            else:
                output, owned, outcome = new, False, "replace"
            if record is not None:
                record.folded(path, layers, i, outcome, new)
        if skipped is not None and isinstance(output, _CONTAINER_TYPES):
            raise skipped
        return output

    def _merge_layer(self, output: Any, owned: bool, new: Any, layers: Sequence[Layer], i: int,
                     path: tuple, record: WriteObserver | None) -> OwnedDict:
        """fold's step where layer `i`'s mapping `new` merges into the mapping `output` (into
        an owned copy of it unless `owned`): the owned mapping."""
        if self.kept_prefixes:
            output, new, owned = self._read_kept_prefixes(output, new, owned, layers, i, path,
                                                          record)
        if not owned:
            output = OwnedDict(output)
        source = layers[i].source
        if record is None:
            self.merge_mapping(output, new, source, path)
        else:
            record.folded(path, layers, i, "merge", new)
            self.merge_mapping(output, new, source, path, record)
            record.fold_merged()
        return output

    def _read_kept_prefixes(self, output: Any, new: Any, owned: bool, layers: Sequence[Layer],
                            i: int, path: tuple, record: WriteObserver | None
                            ) -> tuple[Any, Any, bool]:
        """fold's step before layer `i`'s mapping `new` merges into the mapping `output`:
        kapicorp merges two mappings into a new tree, which reads the `~`/`=` keys kept as
        written below a prefixed key (issue 36), so both are read so (prefixes_applied).
        Returns output, new and whether output is owned now."""
        new = self.prefixes_applied(new, layers[i], path, record)
        if not owned:  # not a merge of earlier layers: the value of layer i - 1 as it came
            read = self.prefixes_applied(output, layers[i - 1], path, record)
            output, owned = read, read is not output
        return output, new, owned

    def prefixes_applied(self, mapping: Any, layer: Layer, path: tuple,
                         record: WriteObserver | None = None) -> Any:
        """`mapping` (at `path`, from `layer`), or an owned copy where each `~`/`=` key kept as
        written is read as a flagged layer, as EntityPreparer reads a file's keys (not inside
        lists: reclass never reads those). `record` is told each key read so."""
        prefixes = self._prefixes
        source = layer.source
        changed = False
        items = []
        for key, value in mapping.items():
            if type(key) is str and key[:1] in prefixes:
                flags = {"override": False, "constant": False}
                flags[prefixes[key[0]]] = True
                read_as = Layer(value, source, **flags)
                if record is not None:
                    record.kept_key_read(path + (key[1:],), key, read_as, layer)
                key, value, changed = key[1:], Stack([read_as]), True
            elif isinstance(value, DICT_TYPES):
                read = self.prefixes_applied(value, layer, path + (key,), record)
                changed = changed or read is not value
                value = read
            items.append((key, value))
        if not changed:
            return mapping
        out = OwnedDict.from_source((), source)
        for key, value in items:  # `~b` and `b` side by side: layers of `b`, in file order
            out[key] = self.merge_value(out[key], value, source, source, path + (key,)) \
                if key in out else value
        return out

    def _skip_missing_reference(self, err: ResolveError, layers: Sequence[Layer], i: int,
                                output: Any, warn: Callable[[str], None]) -> None:
        """Warn that layer `i`'s reference is undefined when fold may skip it (not the last
        layer, only scalars before it: ignore_overwritten_missing_references); raise `err`
        otherwise."""
        if not (self.settings.ignore_overwritten_missing_references and i != len(layers) - 1
                and not isinstance(output, _CONTAINER_TYPES)):
            raise err
        layer = layers[i]
        warn(f"[WARNING] Reference '{getattr(layer.value, 'text', layer.value)}' undefined")

    def _kind_changed(self, output: Any, new: Any, layers: Sequence[Layer], i: int,
                      path: tuple) -> tuple[Any, bool, str]:
        """fold's step where layer `i`'s value `new` meets an `output` of another kind (a
        dict or list and anything else, a scalar and a dict or list): the new output, whether
        it is owned, and the outcome recorded; TypeMergeError where the settings refuse it."""
        settings = self.settings
        if isinstance(output, DICT_TYPES):
            if isinstance(new, LIST_TYPES) or not (
                    settings.allow_scalar_over_dict
                    or (settings.allow_none_override and new is None)):
                self._type_error(layers, i, path)
            return new, False, "replace"
        if isinstance(output, LIST_TYPES):
            if isinstance(new, DICT_TYPES) or not (
                    settings.allow_scalar_over_list
                    or (settings.allow_none_override and new is None)):
                self._type_error(layers, i, path)
            return new, False, "replace"
        if isinstance(new, DICT_TYPES):
            if not settings.allow_dict_over_scalar:
                self._type_error(layers, i, path)
            return new, False, "replace"
        if not settings.allow_list_over_scalar:
            self._type_error(layers, i, path)
        return OwnedList([output, *new]), True, "append"

    @staticmethod
    def _type_error(layers: Sequence[Layer], i: int, path: tuple) -> None:
        raise TypeMergeError(layers[i].kind, layers[i - 1].kind, path, layer_files(layers),
                             layers[i].source, layers[i - 1].source)
