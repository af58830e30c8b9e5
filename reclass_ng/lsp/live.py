"""One inventory kept current for an editor: the files on disk with the unsaved buffers on top.

`EditedInventory` renders every node once (`render_all`), keeping for each node its nodeinfo or
its errors and the files it read (its node file and the files of its classes). After a buffer
changes (`set_buffer`) or a file is saved, a new engine Inventory is opened over a storage that
reads the buffers before the disk (reclass_ng.storage.yaml_fs, `overlay`), taking the parsed
documents of every other file from the previous one; only the nodes that read the changed file
are rendered again, and the nodes that failed (a failure may be cured by any file). A file
created or deleted changes the listing: every node is rendered again.

Limits: a node whose inventory queries (`$[ ]`) read other nodes is re-rendered only when its
own files change; overlays apply to yaml_fs inventories (yaml_git and mixed are read as
committed); a buffer of a file not yet saved once is not part of the listing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import Any, cast

from reclass_ng.api import Inventory
from reclass_ng.cache import BoundedCache
from reclass_ng.collector import cycle_collection_paused
from reclass_ng.errors import ConfigError, MultipleErrors, ReclassError
from reclass_ng.errors.values import ResolveErrorList
from reclass_ng.lint.findings import Finding
from reclass_ng.lsp.roots import InventoryRoot
from reclass_ng.observe.provenance import NodeProvenance
from reclass_ng.render import INTERPOLATION, render_nodes
from reclass_ng.schemas import SchemaSet, Violation, check_node, load_schemas
from reclass_ng.settings import Settings
from reclass_ng.storage import load_settings
from reclass_ng.storage.base import Storage
from reclass_ng.storage.regular_file import read_regular_file
from reclass_ng.storage.yaml_fs import YamlFsStorage
from reclass_ng.storage.yaml_fs import open_storage as open_yaml_fs
from reclass_ng.storage.yaml_load import MAX_YAML_FILE_BYTES, parse_yaml_bytes

PROVENANCES_KEPT = 32  # provenance records one generation keeps


class NodeState:
    """One node as last rendered: its nodeinfo or its errors, the files it read, and the
    values of its parameters that break the schemas (reclass_ng.schemas)."""

    __slots__ = ("name", "info", "errors", "files", "last_info", "violations")

    def __init__(self, name: str, info: dict[str, Any] | None, errors: list[ReclassError],
                 files: frozenset[str], last_info: dict[str, Any] | None = None,
                 violations: list[Violation] | None = None) -> None:
        self.name = name
        self.info = info
        self.errors = errors
        self.files = files
        self.violations = violations or []
        # The last nodeinfo that rendered: completion keeps offering keys while a buffer is
        # half typed (and the node fails).
        self.last_info = info if info is not None else last_info


def disk_content(path: str) -> bytes | None:
    """The bytes of file `path` (None: it cannot be read, or is no regular file of at most
    MAX_YAML_FILE_BYTES: a FIFO must not block the server)."""
    try:
        return read_regular_file(path, MAX_YAML_FILE_BYTES)[0]
    except OSError:
        return None


def single_errors(err: ReclassError) -> list[ReclassError]:
    """The errors a grouped error (several nodes, several references) is made of."""
    if isinstance(err, (MultipleErrors, ResolveErrorList)):
        return [single for inner in err.errors for single in single_errors(inner)]
    return [err]


class Generation:
    """One opening of the inventory (settings, storage, engine Inventory, listing) and the node
    states rendered from it. Published whole: a reader takes `EditedInventory.current` once
    and is never shown a half-made one, while the next generation renders in another thread."""

    __slots__ = ("settings", "storage", "inventory", "class_files", "node_files", "states",
                 "failure", "provenances", "schemas", "schema_failure", "write_findings")

    def __init__(self, settings: Settings | None = None, storage: YamlFsStorage | None = None,
                 inventory: Inventory | None = None,
                 failure: ReclassError | None = None, schemas: SchemaSet | None = None,
                 schema_failure: ConfigError | None = None) -> None:
        self.settings = settings
        self.storage = storage
        self.inventory = inventory
        self.failure = failure  # settings or directories that cannot be read
        self.schemas = schemas  # the `schemas` setting's, None without one
        self.schema_failure = schema_failure  # a schema file that cannot be used
        self.states: dict[str, NodeState] = {}
        self.class_files: dict[str, str] = {}  # class name -> file
        self.node_files: dict[str, str] = {}  # node name -> file
        # Provenance records asked for (a hover asks the same few nodes again and again); a
        # record costs a render with every write recorded.
        self.provenances: BoundedCache[str, NodeProvenance] = BoundedCache(PROVENANCES_KEPT)
        # file -> lint's write findings located there, once its nodes' records were read
        # (reclass_ng.lsp.lint_pass; an edit makes a new generation, without them)
        self.write_findings: dict[str, list[Finding]] = {}
        if storage is not None:
            self.class_files = dict(storage.class_paths)
            self.node_files = {name: storage.nodes[name].path for name in storage.nodes}
        elif inventory is not None:
            self.node_files = dict.fromkeys(inventory.node_names, "")

    def listing(self) -> set[str]:
        """Every node and class file."""
        return {*self.class_files.values(), *self.node_files.values()}


def _is_schema_file(generation: Generation, path: str) -> bool:
    """Whether `path` is one of the schema files `generation` checks nodes against (an edit
    to it changes what every node is checked against)."""
    schemas = generation.schemas
    return schemas is not None and "file://" + path in schemas.documents


class EditedInventory:
    """The live state of one inventory root (see the module docstring)."""

    def __init__(self, root: InventoryRoot, warn: Callable[[str], None] | None = None) -> None:
        self.root = root
        self.warn = warn or (lambda message: None)
        self.buffers: dict[str, bytes] = {}
        self.current = Generation()
        self.lock = threading.Lock()  # one render at a time

    # The current generation's parts, for readers.
    @property
    def nodes(self) -> dict[str, NodeState]:
        return self.current.states

    @property
    def failure(self) -> ReclassError | None:
        return self.current.failure

    @property
    def settings(self) -> Settings | None:
        return self.current.settings

    @property
    def class_files(self) -> dict[str, str]:
        return self.current.class_files

    @property
    def node_files(self) -> dict[str, str]:
        return self.current.node_files

    # -- opening ---------------------------------------------------------------------------

    def _open(self, edited: tuple[Generation, str] | None = None) -> Generation:
        """A new generation over the disk and the buffers (its nodes not rendered yet).
        `edited`: (the current generation, the listed file whose buffer changed): under the
        same settings the new storage keeps its listing and its other parsed files
        (YamlFsStorage.with_overlay), so an edit walks no directory."""
        try:
            settings = self._settings()
            storage: YamlFsStorage | None = None
            if settings.storage_type == "yaml_fs":
                if edited is not None and edited[0].storage is not None \
                        and edited[0].settings == settings:
                    storage = edited[0].storage.with_overlay(self.buffers, edited[1])
                else:
                    storage = open_yaml_fs(settings, overlay=self.buffers)
            # YamlFsStorage is the engine's own yaml_fs storage: what open_storage would give.
            inventory = Inventory(settings, warn=self.warn,
                                  storage=cast("Storage | None", storage))
        except ReclassError as err:
            return Generation(failure=err)
        # Read again with each generation (a few small files): an edit to a schema file or
        # to the setting is seen on the next edit or save.
        try:
            schemas = load_schemas(self.root.path, settings.delimiter)
        except ConfigError as err:
            return Generation(settings, storage, inventory, schema_failure=err)
        return Generation(settings, storage, inventory, schemas=schemas)

    def _settings(self) -> Settings:
        """The settings, from the editor's buffer of reclass-config.yml when it has one that
        parses to a mapping (else from the file)."""
        config = os.path.join(self.root.path, "reclass-config.yml")
        buffer = self.buffers.get(config)
        if buffer is not None:
            try:
                written = parse_yaml_bytes(buffer, config)
            except ReclassError:
                written = None
            if isinstance(written, dict):
                return load_settings(self.root.path, {**written, **self.root.overrides},
                                     read_config=False)
        return load_settings(self.root.path, dict(self.root.overrides), read_config=True)

    def render_all(self, progress: Callable[[int, int], None] | None = None,
                   cancelled: Callable[[], bool] | None = None) -> None:
        """Render every node from scratch (the first load, or after the listing changed)."""
        with self.lock:
            generation = self._open()
            self._render(generation, sorted(generation.node_files), {}, progress, cancelled,
                         collect=True)
            self.current = generation

    def node_names(self) -> list[str]:
        """The node names as of the last render."""
        return sorted(self.current.node_files)

    def _render(self, generation: Generation, names: list[str], kept: dict[str, NodeState],
                progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None, collect: bool = False) -> None:
        """Render `names` into `generation.states` (with the `kept` states), through the
        engine's serial batch loop: every node merged, then every node interpolated, the
        nodes sharing rendered subtrees and class walks (render.render_nodes).

        The cycle collector is paused meanwhile (collector.cycle_collection_paused): its
        full passes over the 2,000-node states took half of an edit's render. A whole render
        (`collect`) collects before and freezes what it leaves alive; an edit's render
        freezes nothing, so the states it replaced, cyclic garbage, go at the collector's
        next pass over the youngest objects instead of staying until the next whole render."""
        if generation.inventory is None:
            return
        previous = self.current.states
        states = dict(kept)
        steps = 0
        with cycle_collection_paused(collect, freeze=collect):
            for phase, name, value, _ in render_nodes(generation.inventory, names):
                if cancelled is not None and cancelled():
                    progress = None
                    break
                steps += 1
                if isinstance(value, ReclassError) or phase is INTERPOLATION:
                    states[name] = self._node_state(generation, name, value,
                                                    kept.get(name) or previous.get(name))
                if progress is not None:  # two steps a node: merge, interpolation
                    progress(steps // 2, len(names))
        if progress is not None and steps:
            progress(len(names), len(names))
        generation.states = states

    @staticmethod
    def _node_state(generation: Generation, name: str, rendered: dict[str, Any] | ReclassError,
                    previous: NodeState | None) -> NodeState:
        """The state of node `name` from its render: its nodeinfo, or the error it raised."""
        assert generation.inventory is not None
        node_file = generation.node_files.get(name)
        own = {node_file} if node_file else set()
        if isinstance(rendered, ReclassError):
            errors = single_errors(rendered)
            files = own | {path for single in errors if (path := single.file())}
            if previous is not None:  # a failed render stops early: what it read before counts
                files |= previous.files
            return NodeState(name, None, errors, frozenset(files),
                             previous.last_info if previous else None)
        info = rendered
        classes = info.get("classes") or []
        files = own | {path for cls in classes if (path := generation.class_files.get(cls))}
        violations: list[Violation] = []
        if generation.schemas is not None:
            inventory = generation.inventory
            base = (generation.settings.inventory_base_uri if generation.settings else None) \
                or "."
            try:
                violations = check_node(
                    generation.schemas, name, info["parameters"],
                    lambda: generation.provenances.get(name, inventory.provenance),
                    os.path.abspath(base))
            except ReclassError as err:  # a schema that loops on this node's values
                generation.schema_failure = ConfigError(err.message)
        return NodeState(name, info, [], frozenset(files), violations=violations)

    # -- keeping current -------------------------------------------------------------------

    def set_buffer(self, path: str, content: bytes | None) -> list[str]:
        """The editor's text of `path` (None: closed, read the disk again); renders again what
        read it. Returns the nodes rendered again."""
        path = os.path.abspath(path)
        before = self.buffers.get(path)
        if content is None:
            self.buffers.pop(path, None)
        else:
            self.buffers[path] = content
        if content == before:
            return []  # the same text (or the disk both times: its changes come as events)
        if content is None and before == disk_content(path):
            return []  # saved: the file holds what was rendered
        return self.file_changed(path, edited=True)

    def file_changed(self, path: str, edited: bool = False) -> list[str]:
        """Bring the nodes reading `path` up to date (after an edit, a save, a create).
        `edited`: only the editor's text of `path` changed, not what the directories hold."""
        path = os.path.abspath(path)
        with self.lock:
            old = self.current
            listed = edited and path in old.listing()
            generation = self._open((old, path) if listed else None)
            if generation.failure is not None:
                self.current = generation
                return []
            if old.storage is None or generation.storage is None \
                    or generation.listing() != old.listing() \
                    or os.path.basename(path) == "reclass-config.yml" \
                    or _is_schema_file(old, path) or _is_schema_file(generation, path):
                names = sorted(generation.node_files)
                self._render(generation, names, {})
                self.current = generation
                return names
            if not listed:
                generation.storage.reuse_parsed(old.storage, generation.listing() - {path})
            if generation.inventory is not None and old.inventory is not None:
                generation.inventory.reuse_prepared(old.inventory, {path})
            stale = [name for name, state in old.states.items()
                     if path in state.files or state.errors]
            stale += [name for name in generation.node_files if name not in old.states]
            kept = {name: state for name, state in old.states.items() if name not in stale}
            self._render(generation, stale, kept)
            self.current = generation
            return stale

    def files_read(self, names: Iterable[str], before: Generation) -> set[str]:
        """The files nodes `names` read in `before` or read now: where the diagnostics a
        render of them changes are (an error or a violation is published for a file its
        node read, NodeState.files)."""
        found: set[str] = set()
        for states in (before.states, self.current.states):
            for name in names:
                state = states.get(name)
                if state is not None:
                    found |= state.files
        return found

    # -- reading ---------------------------------------------------------------------------

    def nodes_reading(self, path: str) -> list[NodeState]:
        """The nodes whose render read file `path`, by name."""
        path = os.path.abspath(path)
        return [state for _, state in sorted(self.nodes.items()) if path in state.files]

    def provenance(self, node: str) -> NodeProvenance | None:
        """The provenance record of `node` as the current files and buffers give it."""
        current = self.current
        inventory = current.inventory
        return None if inventory is None else current.provenances.get(node, inventory.provenance)

    def class_name_of(self, path: str) -> str | None:
        """The class whose file is `path`, if any."""
        path = os.path.abspath(path)
        for name, file in self.class_files.items():
            if file == path:
                return name
        return None

    def text_of(self, path: str) -> str:
        """The text of `path` as the user sees it: the buffer, else the file ('' unreadable)."""
        content = self.buffers.get(os.path.abspath(path))
        if content is None:
            content = disk_content(path) or b""
        return content.decode("utf-8", "replace")

    def files(self) -> Iterable[str]:
        """Every node and class file."""
        current = self.current
        return [path for path in (*current.node_files.values(), *current.class_files.values())
                if path]
