"""`LiveRender`: an inventory that stays current with its files, re-rendering only what changed.

Each `refresh()` reads the settings again, lists the node and class directories and takes a
digest of every file (content, never mtime). When anything differs from the last generation,
a new generation (an InventoryRenderer) is opened; the results of nodes whose recorded inputs
(reclass_ng.observe.inputs.NodeInputs: node file, class files, missing class names, the nodes their
queries read) are all unchanged are kept, every other node is rendered again when asked for.
Parsed documents of unchanged files move to the new generation, so only changed files are
parsed again.

`refresh(node)` is the quick form for a long-lived caller about to serve one node: the
settings, the directory check (dir_watch) and the digests of the files that node read; a full
refresh only when one of them differs. The digests are not read again where kernel
notifications cover every file (dir_watch.DirectoryCheck.sees_file_changes: a local file
system, no symbolic links): any write to a file would have been an event.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn

from reclass_ng.entity import Entity
from reclass_ng.errors import ConfigError, ReclassError
from reclass_ng.incremental import result_store
from reclass_ng.incremental.dir_watch import AlwaysCheck, DirectoryCheck, watch_directories
from reclass_ng.incremental.node_results import (
    OK,
    NodeResult,
    Snapshot,
    WarningCapture,
    render_results,
    served_inventory,
    served_nodeinfo,
)
from reclass_ng.incremental.snapshot import (
    ConfigPlaces,
    InventorySnapshot,
    config_stamps,
    digests_match,
    local_devices,
    storage_directories,
    yaml_fs,
)
from reclass_ng.incremental.split_snapshot import CommitDigests, SplitSnapshot
from reclass_ng.observe.inputs import InputsRecorder
from reclass_ng.records import Record
from reclass_ng.render import InventoryRenderer
from reclass_ng.settings import Settings, Speed
from reclass_ng.storage import load_settings
from reclass_ng.storage.base import floats_json_exact
from reclass_ng.storage.split import SplitStorage

# Storages refresh() keeps current: yaml_fs (snapshot.py) and the split storages yaml_git and
# mixed (split_snapshot.py).
LIVE_STORAGE_TYPES = ("yaml_fs", "yaml_git", "mixed")

# A node whose files change while it is rendered is rendered again; this bounds how often.
_RENDER_ATTEMPTS = 3
# After this many nodes were rendered one at a time in a generation, the next miss renders
# every node still to render at once: a caller asking for node after node (Salt, once per
# minion) is served by one batch render, which shares class walks between nodes (several
# times cheaper per node than one node at a time).
BATCH_AFTER_MISSES = 8
USE_INOTIFY = True  # kernel notifications for the quick check where available (dir_watch)


def _print_warning(message: str) -> None:
    print(message, file=sys.stderr)


class Refresh(Record):
    """What a refresh found: nodes added, removed, and to be rendered again."""

    __slots__ = ("added", "removed", "stale", "settings_changed")
    _fields = __slots__
    added: tuple[str, ...]
    removed: tuple[str, ...]
    stale: tuple[str, ...]  # nodes whose inputs changed (added ones included), sorted
    settings_changed: bool

    def __init__(self, added: tuple[str, ...] = (), removed: tuple[str, ...] = (),
                 stale: tuple[str, ...] = (), settings_changed: bool = False) -> None:
        _set = object.__setattr__
        _set(self, "added", added)
        _set(self, "removed", removed)
        _set(self, "stale", stale)
        _set(self, "settings_changed", settings_changed)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.stale or self.settings_changed)


class LiveRender:
    """Generations of one inventory and the node results still valid in the newest."""

    def __init__(self, base_uri: str | None, overrides: Mapping[str, Any],
                 read_config: bool = True, warn: Callable[[str], None] | None = None, *,
                 told_config_warnings: Sequence[str] = (), speed: Speed | None = None) -> None:
        self.base_uri = base_uri
        # Which fast paths every generation's render takes (default: RECLASS_NG_SPEED's).
        self.speed = speed or Speed.from_environment()
        self.overrides = dict(overrides)
        self.read_config = read_config
        self.capture = WarningCapture(warn or _print_warning)
        self.generation: InventoryRenderer | None = None
        self.snapshot: Snapshot | None = None
        self.failure: ReclassError | None = None  # settings or storage failing to open
        self.recorder = InputsRecorder()
        self.directories: DirectoryCheck | None = None
        self.commit_digests = CommitDigests()
        self.events_cover_files = False  # see refresh_for
        self.results: dict[str, NodeResult] = {}
        self.misses = 0  # nodes rendered one at a time in this generation
        self.collected = False  # whether a render of this generation ran the collector
        self.settings_stamps: tuple[object, ...] | None = None  # config_stamps of the settings
        self.local_devices = local_devices() if read_config else frozenset()
        self.config_places = ConfigPlaces(base_uri)
        self.stored = False  # whether the results of this generation are on disk (cache_dir)
        # Whether results kept from an earlier generation were rendered from files with floats
        # that orjson and json print differently (floats_json_exact).
        self.kept_inexact_floats = False
        # The config file's warnings (unknown keys) last told: told again when they change,
        # as a fresh load would tell them.
        self.told_config_warnings = tuple(told_config_warnings)

    # -- keeping current ---------------------------------------------------------------

    def _settings(self) -> Settings:
        warnings: list[str] = []
        settings = load_settings(self.base_uri, self.overrides, read_config=self.read_config,
                                 warn=warnings.append)
        if tuple(warnings) != self.told_config_warnings:
            self.told_config_warnings = tuple(warnings)
            for message in warnings:
                self.capture.forward(message)
        return settings

    def _config_stamps(self) -> tuple[object, ...] | None:
        return config_stamps(self.config_places, self.local_devices) if self.read_config else ()

    def _settings_unchanged(self) -> bool:
        """True when the settings are those of the snapshot: the config files' stat data as
        when they were read, else read again and compared."""
        assert self.snapshot is not None
        stamps = self._config_stamps()
        if stamps is not None and stamps == self.settings_stamps:
            return True
        try:
            if self._settings() != self.snapshot.settings:
                return False
        except ReclassError:
            return False
        self.settings_stamps = stamps
        return True

    def refresh(self) -> Refresh:
        """Compare everything with the files on disk; open a new generation if anything changed.

        Raises the ReclassError of settings or directories that cannot be opened (what
        `reclass_ng.load` would raise); the inventory then raises it until a refresh succeeds.
        """
        old = self.snapshot
        stamps = self._config_stamps()
        try:
            settings = self._settings()
            if settings.storage_type not in LIVE_STORAGE_TYPES:
                raise ConfigError(f"Inventory.refresh(): storage type {settings.storage_type!r} "
                                  f"is not supported (only {', '.join(LIVE_STORAGE_TYPES)})")
            directories: DirectoryCheck = (
                watch_directories(storage_directories(settings), USE_INOTIFY)
                if settings.storage_type == "yaml_fs" else AlwaysCheck())
        except ReclassError as err:
            self._failed(err)
        try:  # the directories are watched before the scan: a change during it is seen
            generation = InventoryRenderer(settings, warn=self.capture.warn, speed=self.speed)
            snapshot = self._snapshot(settings, generation, old)
        except ReclassError as err:
            directories.close()
            self._failed(err)
        if self.directories is not None:
            self.directories.close()
        self.directories = directories
        # A symbolic link's target may be in a directory nobody watches.
        self.events_cover_files = (
            directories.sees_file_changes and isinstance(snapshot, InventorySnapshot)
            and not any(os.path.islink(path) for path in snapshot.digests))
        if self.failure is None and snapshot.same_as(old):
            self.settings_stamps = stamps
            return Refresh()
        previous = self.generation
        kept_inexact_floats = False
        if previous is not None and old is not None and old.settings == settings:
            kept_inexact_floats = self.kept_inexact_floats or not floats_json_exact(
                previous.storage)
            if isinstance(old, InventorySnapshot) and isinstance(snapshot, InventorySnapshot):
                unchanged = set(old.digests) - old.changed_paths(snapshot)
                yaml_fs(generation.storage).reuse_parsed(yaml_fs(previous.storage), unchanged)
            kept = {name: moved for name, result in self.results.items()
                    if result.deps.current(name, snapshot)
                    and (moved := self._moved(result, old, snapshot, generation)) is not None}
        elif previous is None and settings.cache_dir and isinstance(snapshot, InventorySnapshot):
            # A new process: the results a previous one stored, where still current.
            kept = result_store.load_results(settings, snapshot, self.capture.forward)
        else:
            kept = {}
        self.recorder = InputsRecorder()
        self.generation, self.snapshot, self.failure = generation, snapshot, None
        self.settings_stamps = stamps
        self.results = kept
        self.kept_inexact_floats = kept_inexact_floats
        self.stored = previous is None and len(kept) == len(snapshot.nodes)
        self.misses = 0
        self.collected = False
        before = set(old.nodes) if old is not None else set()
        return Refresh(added=tuple(sorted(snapshot.nodes.keys() - before)),
                       removed=tuple(sorted(before - snapshot.nodes.keys())),
                       stale=tuple(sorted(snapshot.nodes.keys() - kept.keys())),
                       settings_changed=old is None or old.settings != settings)

    def _snapshot(self, settings: Settings, generation: InventoryRenderer,
                  old: Snapshot | None) -> Snapshot:
        if settings.storage_type == "yaml_fs":
            return InventorySnapshot(settings, yaml_fs(generation.storage))
        storage = generation.storage
        if not isinstance(storage, SplitStorage):
            raise ConfigError(f"incremental rendering: storage {settings.storage_type!r} has "
                              "no environment trees")
        environments = [settings.default_environment]
        if isinstance(old, SplitSnapshot) and old.settings == settings:
            environments += old.environments
        return SplitSnapshot(settings, storage, environments, self.commit_digests)

    @staticmethod
    def _moved(result: NodeResult, old: Snapshot, snapshot: Snapshot,
               generation: InventoryRenderer) -> NodeResult | None:
        """A result still current by content, as served from the new snapshot's files: the
        same unless the node file moved (a new commit), then with the node's new URI. Only
        clean results move: errors and warnings quote the paths of the files they name."""
        if not snapshot.paths_move:
            return result
        if result.phase != OK or result.merge_warnings or result.interpolation_warnings:
            return None
        name = result.name
        if old.node_paths.get(name) == snapshot.node_paths.get(name):
            return result
        info = dict(result.value)
        info["__reclass__"] = dict(info["__reclass__"], uri=generation.storage.nodes[name].uri)
        return NodeResult(name, OK, info, (), (), result.deps)

    def _failed(self, err: ReclassError) -> NoReturn:
        self.generation, self.snapshot, self.failure = None, None, err
        if self.directories is not None:
            self.directories.close()
        self.directories = None
        self.results.clear()
        raise err.with_traceback(None) from None

    def close(self) -> None:
        """Stop watching the directories (also done when the inventory is freed)."""
        if self.directories is not None:
            self.directories.close()

    def refresh_for(self, name: str) -> Refresh:
        """Make sure what `name` reads is current: its files' digests, the directory listings
        and the settings; a full refresh() when any of them may differ."""
        if (self.generation is None or self.snapshot is None or self.directories is None
                or self.snapshot.paths_move):  # yaml_git, mixed: a fetch tells what changed
            return self.refresh()
        if not self._settings_unchanged() or not self.directories.unchanged():
            return self.refresh()
        result = self.results.get(name)
        if result is None or self.events_cover_files:
            # Rendered on demand (and checked after its render); or every write to the files
            # would have been an event.
            return Refresh()
        if not digests_match(result.deps.files):
            return self.refresh()
        if result.deps.nodes_key is not None and not digests_match(
                (path, self.snapshot.digests.get(path)) for path in self.snapshot.nodes.values()):
            return self.refresh()  # a query's scope: any node's environment may have changed
        return Refresh()

    # -- serving -----------------------------------------------------------------------

    @property
    def node_names(self) -> list[str]:
        self._check_open()
        assert self.snapshot is not None
        return sorted(self.snapshot.nodes)

    def _check_open(self) -> None:
        if self.failure is not None:
            raise self.failure.with_traceback(None)

    def _results(self, names: Sequence[str]) -> list[NodeResult]:
        """The results of `names`, rendering those without one (with a check that the files
        they read did not change while they were rendered). Results of names that are not
        nodes (NodeNotFound) are not kept: callers may ask for any name."""
        found: dict[str, NodeResult] = {}
        for attempt in range(_RENDER_ATTEMPTS):
            self._check_open()
            assert self.generation is not None and self.snapshot is not None
            found = {name: self.results[name] for name in names if name in self.results}
            missing = [name for name in names if name not in found]
            if not missing:
                break
            wanted = missing
            if len(missing) < BATCH_AFTER_MISSES:
                self.misses += len(missing)
                if self.misses > BATCH_AFTER_MISSES:
                    wanted = sorted({*missing, *(n for n in self.snapshot.nodes
                                                 if n not in self.results)})
            # Garbage of earlier generations is collected by the first render of this one.
            rendered = render_results(self.generation, self.recorder, self.snapshot, wanted,
                                    self.capture, collect=not self.collected)
            self.collected = True
            found.update((name, rendered[name]) for name in missing)
            if (attempt + 1 < _RENDER_ATTEMPTS and not self.snapshot.paths_move
                    and not self._files_unchanged(rendered.values())):
                self.refresh()  # a file changed under the render: read it again
                continue
            self.results.update((name, result) for name, result in rendered.items()
                                if name in self.snapshot.nodes)
            self._store_if_complete()
            break
        return [found[name] for name in names]

    def _store_if_complete(self) -> None:
        """With `cache_dir`, write the results for the next process once every node of this
        generation has one (result_store.py)."""
        assert self.generation is not None and self.snapshot is not None
        settings = self.generation.settings
        if (self.stored or not settings.cache_dir
                or not isinstance(self.snapshot, InventorySnapshot)
                or len(self.results) != len(self.snapshot.nodes)):
            return
        self.stored = True
        result_store.save_results(settings, self.results, self.capture.forward,
                                  self.floats_json_exact)

    @property
    def floats_json_exact(self) -> bool:
        """Whether every float of the results served now prints the same through orjson as
        through json: of the files this generation read, and of earlier generations' where
        their results are still served (storage.base.floats_json_exact)."""
        generation = self.generation
        return (generation is not None and not self.kept_inexact_floats
                and floats_json_exact(generation.storage))

    def _files_unchanged(self, rendered: Iterable[NodeResult]) -> bool:
        """True when the files the `rendered` results read have the digests they had: no
        kernel event since the snapshot was taken where events cover every file, else
        hashed again (each file once)."""
        if (self.events_cover_files and self.directories is not None
                and self.directories.unchanged()):
            return True
        read = {path: digest for result in rendered for path, digest in result.deps.files}
        return digests_match(read.items())

    def nodeinfo(self, name: str, extra: Sequence[Entity] = (), node_optional: bool = False,
                 environment: str | None = None) -> dict[str, Any]:
        """The `--nodeinfo` structure of `name` as of the last refresh."""
        if extra or node_optional or environment:  # more than files: rendered every time
            self._check_open()
            assert self.generation is not None
            return self.generation.nodeinfo(name, extra, node_optional, environment)
        return served_nodeinfo(self._results([name])[0], self.capture.forward)

    def inventory(self) -> dict[str, Any]:
        """The `--inventory` structure as of the last refresh."""
        return served_inventory(self._results(self.node_names), self.capture.forward)
