"""Rendering: a node from its files to the nodeinfo structure, and the whole inventory serially.

One node's rendering creates all the state it changes (a MergedNode, a Resolver), and only
reads what is shared (parsed files, settings), so nodes can be rendered in parallel
(reclass_ng.parallel, which builds an InventoryRenderer in each worker).
"""

from __future__ import annotations

import sys
import time
from _thread import allocate_lock  # threading.Lock, without importing threading

from reclass_ng.classes import (
    ClassExpander,
    ClassLoader,
    ClassMapping,
    SharedClassWalks,
    first_mappings,
    mapped_classes,
    parse_class_mapping,
)
from reclass_ng.entity import Entity
from reclass_ng.errors import ChangedConstantError, NodeNotFound, ReclassError
from reclass_ng.merge import MergedNode, Merger
from reclass_ng.prepare import EntityPreparer
from reclass_ng.resolve import QueryEvaluator, Resolver
from reclass_ng.resolve.rendered_subtrees import STREAMED_MIN_DIRTY, RenderedSubtrees
from reclass_ng.settings import Settings, Speed
from reclass_ng.storage.base import ClassTree, Storage, open_storage
from reclass_ng.syntax.grammar import ValueParser
from reclass_ng.values import OwnedDict, Source

TYPE_CHECKING = False  # typing costs every start ~2 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Sequence
    from typing import Any

    from reclass_ng.observe import RenderObserver, WriteObserver  # see merge.py
    from reclass_ng.observe.provenance import NodeProvenance
    from reclass_ng.observe.shared_answers import SharedAnswers
    from reclass_ng.queries import QueryEngine, ViewWatcher
    from reclass_ng.storage.positions import KeyPositions
    from reclass_ng.syntax.defaults import DefaultValues

# Each link of a reference chain costs a few Python frames; real inventories have chains of
# dozens, generated ones of thousands.
RECURSION_LIMIT = 30000


class _RecursionLimit:
    """The process-wide recursion limit, raised while any thread renders.

    The limit belongs to the interpreter, not to a thread: with a plain save-and-restore, two
    overlapping renders in different threads could restore in the wrong order and leave it
    raised for good. So the first render in raises it and the last one out restores it."""

    def __init__(self) -> None:
        self._lock = allocate_lock()
        self._holders = 0
        self._saved = 0

    # Entered directly (not through contextlib, 2% of a `--nodeinfo` start): the state is
    # the holder count, so nested and concurrent blocks share this one object.
    def __enter__(self) -> None:
        with self._lock:
            if self._holders == 0:
                self._saved = sys.getrecursionlimit()
                sys.setrecursionlimit(max(self._saved, RECURSION_LIMIT))
            self._holders += 1

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0:
                sys.setrecursionlimit(self._saved)


_RECURSION_LIMIT = _RecursionLimit()


def deep_recursion() -> _RecursionLimit:
    """A recursion limit high enough for long reference chains inside the block."""
    return _RECURSION_LIMIT


def timestamp() -> str:
    """Local time as C's `%c` prints it, like reclass."""
    return time.strftime("%c")


def automatic_parameters(name: str, environment: str) -> dict[str, Any]:
    """The `_reclass_` parameters kapicorp-reclass 2.0.0 writes, keys in its order (`-o json`
    keeps mapping order, so a byte-level diff against kapicorp's output shows only real
    differences)."""
    parts = name.split(".")
    return {"_reclass_": {"name": {"full": name, "short": parts[-1], "path": "/".join(parts),
                                   "parts": parts}, "environment": environment}}


class NodeRenderer:
    """Renders nodes of one storage under one set of settings."""

    def __init__(self, storage: Storage, settings: Settings, preparer: EntityPreparer,
                 mappings: list[ClassMapping], warn: Callable[[str], None],
                 speed: Speed | None = None) -> None:
        self.storage = storage
        self.settings = settings
        self.preparer = preparer
        # Which fast paths this renderer's merges and resolvers take (default: what
        # RECLASS_NG_SPEED says); fixed for the renderer's life.
        self.speed = speed = speed or Speed.from_environment()
        self.merger = Merger(settings, speed, preparer.kept_prefixes)
        self.loader = ClassLoader(storage, preparer)
        self.expander = ClassExpander(self.loader, self.merger, settings, preparer, warn)
        self.shared_walks = SharedClassWalks(self.expander)
        # Storages whose classes depend on the environment (yaml_git, mixed): the walkers of
        # the other environments' class trees, made on first use.
        self._tree_walkers: dict[
            int, tuple[ClassTree, ClassExpander, ClassExpander, SharedClassWalks]] = {}
        self.mappings = mappings
        self.warn = warn
        self._node_entities: dict[str, Entity] = {}
        # False for a render that reads each node once (release_files): no parsed document
        # is kept once its entity is made, and a node's entity goes after its merge.
        self.keeps_files = True
        # `${path::default}` texts read (bounded), for an inventory whose settings allow them
        # (reference_defaults): other starts do without the module.
        self.default_values: DefaultValues | None = None
        if settings.reference_defaults:
            from reclass_ng.syntax.defaults import DefaultValues

            self.default_values = DefaultValues()

    # -- loading ------------------------------------------------------------------------

    def node_entity(self, name: str, optional: bool = False) -> Entity:
        """The prepared entity of node `name` (an empty one when optional and absent)."""
        cached = self._node_entities.get(name)
        if cached is not None:
            return cached
        node_file = self.storage.nodes.get(name)
        if node_file is None:
            if not optional:
                raise NodeNotFound(name, self.storage.nodes_uri, self.storage.nodes)
            return Entity(name=name, uri="", source=Source("", name, "node"))
        source = Source(node_file.uri, name, "node", node_file.path)
        raw = self.storage.parsed(node_file.path)
        entity = self.preparer.entity(raw, source, name)
        if not self.keeps_files:
            self.storage.forget_parsed(node_file.path)
        return self._node_entities.setdefault(name, entity)

    def release_files(self) -> None:
        """Keep no parsed document of a file once its entity is made, node or class, and let
        forget_node drop a node's entity: for a render that reads each node once (the
        command line's `--inventory`), whose memory then does not grow by the nodes' files.
        A file asked for again (an inventory query's node) is read again."""
        self.keeps_files = False
        self.loader.keeps_parsed = False
        for _, _, expander, _ in self._tree_walkers.values():
            expander.loader.keeps_parsed = False

    def forget_node(self, name: str) -> None:
        """Drop the prepared entity of node `name` (once merged) unless files are kept."""
        if not self.keeps_files:
            self._node_entities.pop(name, None)

    def reuse_prepared(self, other: NodeRenderer, changed: Collection[str]) -> None:
        """Take the class and node entities `other` prepared, but those of the files
        `changed`, when both render the same trees under equal settings: a renderer opened
        again after an editor changed only those files (reclass_ng.lsp) prepares no other."""
        if other.settings != self.settings or other.storage.classes_uri != \
                self.storage.classes_uri or other.storage.nodes_uri != self.storage.nodes_uri:
            return
        self.loader.adopt(other.loader, changed)
        for name, entity in list(other._node_entities.items()):
            path = entity.source.path if entity.source is not None else None
            if path is not None and path not in changed:
                self._node_entities.setdefault(name, entity)

    def expect_nodes(self, names: Sequence[str]) -> None:
        """The nodes merged next: nodes among them with the same classes share their walk
        (SharedClassWalks). A node file that fails to load is left for its merge to report."""
        if not self.speed.shared_class_walks:
            return  # every node walks its own classes (merge)
        class_lists: dict[int, tuple[SharedClassWalks, list[tuple[str, ...]]]] = {}
        for name in names:
            try:
                entity = self.node_entity(name)
                walks = self.class_walkers(entity.environment
                                           or self.settings.default_environment)[1]
            except ReclassError:
                continue
            class_lists.setdefault(id(walks), (walks, []))[1].append(entity.classes)
        if id(self.shared_walks) not in class_lists:
            self.shared_walks.expect(())
        for walks, lists in class_lists.values():
            walks.expect(lists)

    def class_walkers(self, environment: str) -> tuple[ClassExpander, SharedClassWalks]:
        """The class expander (and its shared walks) of nodes in `environment`."""
        if environment == self.settings.default_environment:
            return self.expander, self.shared_walks
        tree = self.storage.classes_for(environment)
        if tree is self.storage:
            return self.expander, self.shared_walks
        made = self._tree_walkers.get(id(tree))
        if made is None or made[1] is not self.expander:
            # A copy of this renderer's expander reading the other tree: whatever kind of
            # expander it is (explain's records its walk) walks every environment.
            import copy  # only inventories with several class trees: not part of every start

            expander = copy.copy(self.expander)
            expander.loader = ClassLoader(tree, self.preparer)
            expander.loader.keeps_parsed = self.loader.keeps_parsed
            made = self._tree_walkers[id(tree)] = (tree, self.expander, expander,
                                                   SharedClassWalks(expander))
        return made[2], made[3]

    def environment_of(self, name: str) -> str:
        """The environment of node `name` (its own, else the default)."""
        try:
            entity = self.node_entity(name)
        except ChangedConstantError:
            # `=a` then `a` in the node's own file fails its render, not a query that asks
            # only where the node is (kapicorp reads the parameters a query needs: issue 36);
            # the node's exports, read later, still fail where they change a constant.
            kept = self.settings.replace(strict_constant_parameters=False)
            entity = self.under_settings(kept).node_entity(name)
        return entity.environment or self.settings.default_environment

    # -- merging ------------------------------------------------------------------------

    def own_environment(self, name: str, extra: Sequence[Entity] = (),
                        node_optional: bool = False) -> str:
        """The environment a node's files (or, without one there, the extra entities) give."""
        environment = self.node_entity(name, optional=node_optional).environment
        if environment is None:
            for item in extra:
                environment = item.environment or environment
        return environment or self.settings.default_environment

    def merge(self, name: str, extra: Sequence[Entity] = (), node_optional: bool = False,
              environment: str | None = None, observer: RenderObserver | None = None
              ) -> MergedNode:
        """Expand and merge every entity of a node, in reclass's order (told to `observer`);
        `environment`, when given, replaces the node's own (salt-formulas'
        allow_adapter_env_override)."""
        try:
            if observer is not None:  # before loading: a file that fails to load was read too
                node_file = self.storage.nodes.get(name)
                observer.node_read(name, node_file.path if node_file else None)
            entity = self.node_entity(name, optional=node_optional)
            environment = environment or self.own_environment(name, extra, node_optional)
            expander, shared_walks = self.class_walkers(environment)
            node = MergedNode()
            seen: set[str] = set()
            for item in extra:
                expander.walk(node, self.prepared(item), seen, [], observer)
            expander.walk(node, self._base_entity(name, environment), seen, [], observer)
            # One of reads only is told the classes of the shared walk; one of writes its
            # merge, recorded once (WalkRecording), then the node's own.
            if not extra and self.speed.shared_class_walks \
                    and shared_walks.walk_classes(node, entity, seen, observer):
                if observer is None or observer.reads_only:
                    expander.merger.merge_entity(node, entity)
                else:
                    expander.merger.merge_entity(node, entity, observer)
                    observer.entity_merged(entity, None)
            else:
                expander.walk(node, entity, seen, [], observer)
            node.environment = environment
            node.name = name
        except ReclassError as err:
            # a duplicate name anywhere first, as reclass's start-up scan reports it: nodes,
            # then classes (a node that failed may not have looked up any class yet)
            len(self.storage.nodes)
            self.storage.check_classes()
            raise err.for_node(name) from None
        self.storage.check_classes()
        return node

    def prepared(self, entity: Entity) -> Entity:
        """An entity given through the API, its values parsed like a file's (once)."""
        if entity.source is not None:
            return entity
        source = entity.origin
        raw = {"classes": list(entity.classes), "applications": list(entity.applications),
               "parameters": entity.parameters, "exports": entity.exports,
               "environment": entity.environment}
        return self.preparer.entity(raw, source, entity.name, copy=True)

    def mapping_subject(self, name: str) -> str:
        """What class_mappings patterns match for node `name`: its name, or with
        class_mappings_match_path its file's path in the nodes directory."""
        if self.settings.class_mappings_match_path:
            node_file = self.storage.nodes.get(name)
            return node_file.pathname if node_file else name
        return name

    def _base_entity(self, name: str, environment: str) -> Entity:
        classes: tuple[str, ...] = ()
        if self.mappings:
            classes = mapped_classes(self.mappings, self.mapping_subject(name))
        uri = "class_mappings" + (f" in {self.settings.config_file}"
                                  if self.settings.config_file else "")
        params = automatic_parameters(name, environment) if self.settings.automatic_parameters else {}
        source = Source("automatic parameters", name, "automatic")
        return Entity(name=name, uri=uri, classes=classes, parameters=params, source=source)

    def under_settings(self, settings: Settings) -> NodeRenderer:
        """A renderer of the same storage and class mappings under other `settings`, with
        caches of its own (prepared files, class walks); it reads `~`/`=` keys kept as written
        that either renderer's files had (EntityPreparer.kept_prefixes, shared)."""
        preparer = EntityPreparer(settings, self.preparer.parser, self.speed)
        preparer.kept_prefixes = self.preparer.kept_prefixes
        return NodeRenderer(self.storage, settings, preparer, self.mappings, self.warn,
                            self.speed)

    # -- interpolation ------------------------------------------------------------------

    def resolver(self, root: OwnedDict, query: QueryEvaluator | None = None,
                 group_errors: bool | None = None, refs: Resolver | None = None,
                 record: WriteObserver | None = None,
                 subtrees: RenderedSubtrees | None = None, kind: type[Resolver] = Resolver
                 ) -> Resolver:
        """A Resolver (or the subclass `kind`) of the references in `root` under these
        settings."""
        settings = self.settings
        return kind(root, self.merger, delimiter=settings.delimiter,
                        group_errors=settings.group_errors if group_errors is None else group_errors,
                        warn=self.warn, query=query, refs=refs, record=record, subtrees=subtrees,
                        default_values=self.default_values, speed=self.speed)

    def interpolate(self, node: MergedNode, query: QueryEvaluator | None = None,
                    observer: RenderObserver | None = None,
                    subtrees: RenderedSubtrees | None = None) -> None:
        """Resolve the node's parameters, then its exports against those parameters (reusing
        the rendered file containers of earlier nodes in `subtrees`)."""
        params_record = exports_record = None
        if observer is not None:
            params_record, exports_record = observer.writes("parameters"), observer.writes("exports")
            # An observer keeps the memo: a reused subtree skips no read it must be told. Class and node files are told by the
            # merge, before this. Queries (query_run, export_read, queried_merge) are told by
            # the query evaluator, which only rendering a query string calls; a container
            # whose render ran one, also through a reference rendered from inside it, is
            # never kept (Resolver.render_interp -> _unkeep), nor one that used a reference
            # default, warned or failed (_lookup_ref, _warn_unkept, _render_at). A kept copy
            # is reused only where every value its references read is rendered already in
            # this node (SharedSubtrees._read_key_now renders nothing): whatever those
            # values' render read was told by this node's own render. An observer of writes
            # is told every value rendered: a copy whose render told it something else than
            # the strings rendered inside it is not kept, and a reused copy's render is told
            # again as it was recorded (observe/subtree_recording.py).
        params = exports = None
        try:
            with deep_recursion():
                params = self.resolver(node.parameters, query, record=params_record,
                                       subtrees=subtrees)
                params.resolve_all()
                exports = self.resolver(node.exports, query, group_errors=False, refs=params,
                                        record=exports_record)
                exports.resolve_all()
        except RecursionError:
            raise ReclassError("Reference chain too deep to resolve (more than a few thousand "
                               "references in a row)", node=node.name) from None
        except ReclassError as err:
            raise err.for_node(node.name) from None
        finally:
            # A streamed `--inventory` lets go of each node once written: its resolvers must
            # not keep it (Resolver.release).
            if exports is not None:
                exports.release()
            if params is not None:
                params.release()

    def nodeinfo(self, node: MergedNode) -> dict[str, Any]:
        """The `--nodeinfo` structure of a merged and interpolated node."""
        node_file = self.storage.nodes.get(node.name)
        uri = node_file.uri if node_file else node.uri
        return {
            "__reclass__": {"node": node.name, "name": node.name, "uri": uri,
                            "environment": node.environment, "timestamp": timestamp()},
            "classes": list(node.classes),
            "applications": list(node.applications),
            "parameters": node.parameters,
            "exports": node.exports,
            "environment": node.environment,
        }


def _print_warning(message: str) -> None:
    print(message, file=sys.stderr)


class InventoryRenderer:
    """One inventory's storage (files parsed once), node renderer and query engine.

    The public `reclass_ng.api.Inventory` is one; a parallel render's workers build their own.
    """

    def __init__(self, settings: Settings, warn: Callable[[str], None] | None = None,
                 storage: Storage | None = None,
                 view_watcher: ViewWatcher | None = None, *, speed: Speed | None = None
                 ) -> None:
        self.settings = settings
        self.warn = warn or _print_warning
        self.speed = speed = speed or Speed.from_environment()  # which fast paths are on
        # an open yaml_fs storage is shared by the inventories of one process: files parsed once
        self.storage = open_storage(settings, reuse=storage)
        parser = ValueParser(settings.reference_sentinels, settings.export_sentinels,
                             settings.escape_character)
        mappings = [parse_class_mapping(m) for m in settings.class_mappings]
        self.renderer = NodeRenderer(self.storage, settings,
                                     EntityPreparer(settings, parser, speed),
                                     mappings, self.warn, speed)
        # Made on first use: a start rendering nodes without queries or provenance imports
        # neither queries.py (with its grammar) nor storage/positions.py (about 2.4 M instructions).
        self._view_watcher = view_watcher
        self._queries: QueryEngine | None = None
        self._key_positions: KeyPositions | None = None
        self._lazy_lock = allocate_lock()

    def reuse_prepared(self, other: InventoryRenderer, changed: Collection[str]) -> None:
        """Take the entities `other` prepared from every file but `changed` (see
        NodeRenderer.reuse_prepared): an inventory opened again after an edit."""
        self.renderer.reuse_prepared(other.renderer, changed)

    @property
    def queries(self) -> QueryEngine:
        """The inventory's query engine."""
        if self._queries is None:
            from reclass_ng.queries import QueryEngine

            with self._lazy_lock:
                if self._queries is None:
                    self._queries = QueryEngine(self.renderer, self._view_watcher)
        return self._queries

    @property
    def key_positions(self) -> KeyPositions:
        """Where keys are written, for provenance records."""
        if self._key_positions is None:
            from reclass_ng.storage.positions import KeyPositions

            with self._lazy_lock:
                if self._key_positions is None:
                    # A storage reading an editor's buffers instead of some files (yaml_fs
                    # opened by reclass_ng.lsp) has their keys where the buffers write them.
                    overlay = getattr(self.storage, "overlay", None)
                    self._key_positions = KeyPositions(overlay=overlay)
        return self._key_positions

    def _query_evaluator(self, node: MergedNode, **options: Any) -> QueryEvaluator:
        """The callback the resolver of `node` calls for a query: the engine's evaluator
        (QueryEngine.evaluator_for with these options), the engine made when first asked."""
        def evaluate(query: Any, interp: Any, path: tuple, resolver: Resolver) -> Any:
            return self.queries.evaluator_for(node, **options)(query, interp, path, resolver)
        return evaluate

    @property
    def node_names(self) -> list[str]:
        """The inventory's node names, sorted."""
        return sorted(self.storage.nodes)

    def nodeinfo(self, name: str, extra: Sequence[Entity] = (), node_optional: bool = False,
                 environment: str | None = None) -> dict[str, Any]:
        """The `--nodeinfo` structure of one node.

        `environment` renders the node as if it were in that environment (its classes, its
        `_reclass_` and its output say so); inventory queries still look at the nodes of its
        own environment, as salt-formulas reclass does.
        """
        node = self.renderer.merge(name, extra, node_optional, environment=environment)
        scope = None
        if environment is not None:
            scope = self.renderer.own_environment(name, extra, node_optional)
        self.renderer.interpolate(node, self._query_evaluator(node, scope_environment=scope))
        return self.renderer.nodeinfo(node)

    def prepared_entity(self, document: dict[str, Any], source: Source,
                        relative_base: str = "") -> Entity:
        """An entity from a document shaped like a node or class file (`classes`,
        `parameters`, ...), its values parsed as a file's are, for `nodeinfo(extra=...)`;
        `.x` class names are relative to `relative_base`."""
        return self.renderer.preparer.entity(document, source, relative_base, copy=True)

    def entity_parameters(self, entity: Entity, name: str) -> OwnedDict:
        """The parameters of `entity` rendered alone, as node `name` (named in errors): no
        classes, node file, class mappings, automatic parameters or inventory queries. What
        a classifier group gives a node on its own, checked before the group is written."""
        renderer = self.renderer
        node = MergedNode()
        renderer.merger.merge_entity(node, renderer.prepared(entity))
        # Missing references are collected, whatever group_errors says: rendering goes on
        # past them (they read as null), so every other problem is found.
        resolver = renderer.resolver(node.parameters, group_errors=True)
        try:
            with deep_recursion():
                resolver.resolve_all()
        except RecursionError:
            raise ReclassError("Reference chain too deep to resolve", node=name) from None
        except ReclassError as err:
            raise err.for_node(name) from None
        return node.parameters

    def render_serially(self, progress: Callable[[int, int], None] | None = None, *,
                        memo: RenderedSubtrees | None = None) -> dict[str, Any]:
        """The `--inventory` structure, rendered in this thread (two progress steps a node;
        `memo`: see render_nodes)."""
        names = self.node_names
        self.storage.check_classes()  # reclass scans every class first
        total = 2 * len(names)
        nodes = {}
        done = 0
        for phase, name, value, _ in render_nodes(self, names, memo=memo):
            if isinstance(value, ReclassError):
                raise value
            if phase is INTERPOLATION:
                nodes[name] = value
            done += 1
            if progress is not None:
                progress(done, total)
        return inventory_document(nodes)

    def rendered_nodes(self, progress: Callable[[int, int], None] | None = None, *,
                       around: Callable[[str, str], Any] | None = None,
                       release_files: bool = False
                       ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(name, nodeinfo) of every node in node order, rendered as render_serially renders
        them but one node at a time (render_nodes interleaved): nothing of a node is kept once
        the caller moves on, so a streamed `--inventory` holds one node, not the inventory.

        Raises the error render_serially raises, once every node is merged: the first merge
        error in node order, else the first interpolation error; the caller must not have
        printed what it got before (output.streamed spools it). Two progress steps a node;
        `around`: see render_nodes (the command line holds back interpolation warnings with it,
        to print them in the two-phase order). `release_files`: a one-shot render (the command
        line): from now on this inventory keeps no parsed file once its entity is made, nor a
        node's entity once the node is merged (NodeRenderer.release_files), so what it holds
        does not grow by about 6 KB a node; files asked for again are read again.
        """
        names = self.node_names
        self.storage.check_classes()  # reclass scans every class first
        total = 2 * len(names)
        first_failure: ReclassError | None = None
        renderer = self.renderer
        if release_files:
            renderer.release_files()
        memo = RenderedSubtrees(min_dirty=STREAMED_MIN_DIRTY)  # no node is kept: see there
        for done, (phase, name, value, _) in enumerate(
                render_nodes(self, names, interleaved=True, around=around, memo=memo), 1):
            if phase is MERGE:
                renderer.forget_node(name)
            if isinstance(value, ReclassError):
                if phase is MERGE:
                    raise value  # merge errors come first in the two-phase order
                first_failure = value
                continue
            if progress is not None:
                progress(done, total)
            if phase is INTERPOLATION:
                yield name, value
        if first_failure is not None:
            raise first_failure

    def each_nodeinfo(self, names: Sequence[str] | None = None,
                      progress: Callable[[int, int], None] | None = None
                      ) -> Iterator[tuple[str, dict[str, Any] | Exception]]:
        """(name, nodeinfo) of every node (or of `names`), one node at a time, rendered as
        `--inventory` renders them (shared class walks, rendered subtrees shared between
        nodes); a node that fails gives the exception that stopped it instead, and the next
        node renders. For tools comparing or checking every node without holding them all.
        `progress(done, total)` is told before each node and at the end."""
        names = self.node_names if names is None else list(names)
        self.renderer.expect_nodes(names)
        subtrees = RenderedSubtrees()
        for done, name in enumerate(names):
            if progress is not None:
                progress(done, len(names))
            try:
                info: dict[str, Any] | Exception = self.interpolated_nodeinfo(
                    self.renderer.merge(name), subtrees=subtrees)
            except Exception as err:  # noqa: BLE001 - handed to the caller, node by node
                info = err
            yield name, info
        if progress is not None:
            progress(len(names), len(names))

    def each_provenance(self, names: Sequence[str] | None = None
                        ) -> Iterator[tuple[str, NodeProvenance | Exception]]:
        """(name, provenance) of every node (or of `names`), one node at a time: as
        `provenance(name)` records it, with the class walks that nodes share merged and
        recorded once (SharedClassWalks, WalkRecording), and the file containers whose
        rendered copies nodes share (RenderedSubtrees) rendered and recorded once
        (SubtreeRecording); a node whose render raised something else than the ReclassError
        its record holds gives that exception instead, and the next node renders. For tools
        reading every node's record."""
        names = self.node_names if names is None else list(names)
        self.renderer.expect_nodes(names)
        # The streamed render's bound (STREAMED_MIN_DIRTY), as no record is kept here either:
        # copies of containers with fewer keys to render cost a recorded render more to check,
        # record and keep than they save (lint, instructions: 500 `mcp` nodes 11.91 G with
        # the default 2, 11.82 G with 7; stacklight 3.431 -> 3.413 G).
        subtrees = RenderedSubtrees(min_dirty=STREAMED_MIN_DIRTY) \
            if self.speed.rendered_subtrees else None
        from reclass_ng.observe.shared_answers import SharedAnswers

        # The contested writes below a key where nodes record the same facts, worked out
        # once (lint reads every node's: they were a third of its time).
        share = SharedAnswers()
        for name in names:
            try:
                found: NodeProvenance | Exception = self.provenance(name, subtrees=subtrees,
                                                                    share=share)
            except Exception as err:  # noqa: BLE001 - handed to the caller, node by node
                found = err
            yield name, found

    def provenance(self, name: str, *, subtrees: RenderedSubtrees | None = None,
                   share: SharedAnswers | None = None) -> NodeProvenance:
        """Who wrote each value of node `name`, and what the node read: its render, recorded.

        A node that fails to render still gets the record of what was merged until then, with
        the error in `NodeProvenance.error`. `subtrees`: the rendered copies of file
        containers shared with the nodes recorded before it (each_provenance); `share`: the
        answers about writes of those nodes' records (observe.shared_answers).
        """
        from reclass_ng.observe.provenance import MappedClass
        from reclass_ng.observe.provenance_recorder import ProvenanceRecorder

        recorder = ProvenanceRecorder(name, self.settings, self.key_positions, share)
        mappings = self.renderer.mappings
        if mappings:
            found = first_mappings(mappings, self.renderer.mapping_subject(name))
            recorder.class_mappings = {class_name: MappedClass(class_name, index,
                                                               mappings[index].text)
                                       for class_name, index in found.items()}
        try:
            node = self.renderer.merge(name, observer=recorder)
            recorder.merged = True
            self.renderer.interpolate(node, self._query_evaluator(node, observer=recorder),
                                      observer=recorder, subtrees=subtrees)
            info = self.renderer.nodeinfo(node)
        except ReclassError as err:
            return recorder.result(None, err)
        return recorder.result(info, None)

    def interpolated_nodeinfo(self, node: MergedNode, observer: RenderObserver | None = None,
                              subtrees: RenderedSubtrees | None = None) -> dict[str, Any]:
        """The nodeinfo of a merged node, interpolated as an `--inventory` render does (told
        to `observer`; sharing the rendered containers of `subtrees` unless observed for
        more than its reads, see `NodeRenderer.interpolate`)."""
        self.renderer.interpolate(
            node, self._query_evaluator(node, observer=observer),
            observer=observer, subtrees=subtrees)
        return self.renderer.nodeinfo(node)


# The two phases of render_nodes: every node merged, then every node interpolated.
MERGE, INTERPOLATION = "merge", "interpolation"


class _NothingAround:
    """What render_nodes enters around each step when its caller gives nothing (and a
    caller may give for a step it has nothing to hold)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        return None


NOTHING_AROUND = _NothingAround()


def render_nodes(inventory: InventoryRenderer, names: Sequence[str], *,
                 observer_of: Callable[[str], RenderObserver | None] | None = None,
                 around: Callable[[str, str], Any] | None = None,
                 memo: RenderedSubtrees | None = None, announce: bool = True,
                 interleaved: bool = False) -> Iterator[tuple[str, str, Any, Any]]:
    """The serial render loop of `names` (in this order), as reclass renders an inventory:
    every node's classes expanded and merged first, so class errors come first in node
    order, then each merged node interpolated.

    Yields `(phase, name, value, held)` after each step: `phase` MERGE (value: the
    MergedNode) or INTERPOLATION (value: the nodeinfo), or the ReclassError the step
    raised; a node whose merge failed is not interpolated. `held` is what the context
    `around(name, phase)` gave, entered around the step (the warnings it printed, say).
    `observer_of(name)` is told the node's render. A caller that stops at an error stops
    iterating. The nodes share rendered subtrees (resolve.rendered_subtrees) when the
    inventory's Speed says so: in `memo` when given (other bounds than the default's).
    `announce`: tell the renderer that `names` are the nodes to come (the shared class walks
    keep what they will read); off for a caller that announced a larger set already, as a
    parallel worker does once for all nodes of its chunks.

    `interleaved`: each node interpolated right after its merge, so no merged node waits for
    the others (a streamed `--inventory` holds one node at a time, render.stream_nodes); the
    nodes after one whose interpolation failed are only merged, so that a caller looking for
    the error the two-phase order gives first still meets a later node's merge error."""
    renderer = inventory.renderer
    subtrees = (memo or RenderedSubtrees()) if inventory.speed.rendered_subtrees else None
    if announce:
        renderer.expect_nodes(names)
    merged: list[tuple[MergedNode, RenderObserver | None]] = []
    interpolating = True  # (interleaved) until a node's interpolation fails
    for name in names:
        observer = observer_of(name) if observer_of is not None else None
        with around(name, MERGE) if around is not None else NOTHING_AROUND as held:
            value: Any
            try:
                value = renderer.merge(name, observer=observer)
            except ReclassError as err:
                value = err
            else:
                merged.append((value, observer))
        yield MERGE, name, value, held
        if interleaved and merged:
            node, observer = merged.pop()
            if interpolating:
                step = _interpolation_step(inventory, node, observer, subtrees, around)
                yield step
                interpolating = not isinstance(step[2], ReclassError)
    for node, observer in merged:  # none left when interleaved
        yield _interpolation_step(inventory, node, observer, subtrees, around)


def _interpolation_step(inventory: InventoryRenderer, node: MergedNode,
                        observer: RenderObserver | None, subtrees: RenderedSubtrees | None,
                        around: Callable[[str, str], Any] | None
                        ) -> tuple[str, str, Any, Any]:
    """render_nodes' INTERPOLATION step of a merged node."""
    with around(node.name, INTERPOLATION) if around is not None else NOTHING_AROUND as held:
        value: Any
        try:
            value = inventory.interpolated_nodeinfo(node, observer, subtrees)
        except ReclassError as err:
            value = err
    return INTERPOLATION, node.name, value, held


def inventory_document(nodes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The `--inventory` structure around the nodeinfo of every node (in node order)."""
    classes: dict[str, list[str]] = {}
    applications: dict[str, list[str]] = {}
    for name, info in nodes.items():
        for app in info["applications"]:
            applications.setdefault(app, []).append(name)
        for cls in info["classes"]:
            classes.setdefault(cls, []).append(name)
    return {"__reclass__": {"timestamp": timestamp()}, "nodes": nodes, "classes": classes,
            "applications": applications}
