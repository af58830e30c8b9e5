"""The class catalogue as the service sees it: re-read when its files change, synced on demand."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import yaml as pyyaml

from reclass_ng.classifier.catalog import (
    MANUAL_FILE_NAME,
    SYNCED_FILE_NAME,
    CatalogError,
    ClassCatalog,
    load_catalog,
)
from reclass_ng.classifier.class_sync import PuppetUnavailableError, scan_code_dir, store_scan
from reclass_ng.errors import ReclassError
from reclass_ng.server.errors import INVALID_INVENTORY, ApiError
from reclass_ng.server.yaml_files import (
    atomic_write,
    checked_render,
    inventory_lock,
    note_change,
)

# reclass-ng's kinds for a sync the server cannot run.
NO_CODE_DIR = "no-code-dir"
PUPPET_UNAVAILABLE = "puppet-unavailable"
SYNC_FAILED = "sync-failed"
NO_CATALOGUE = "no-catalogue"

_FileKey = tuple[tuple[int, int] | None, ...]


class CatalogState:
    """The catalogue of one inventory, cached until either catalogue file changes."""

    def __init__(self, inventory_dir: str | os.PathLike[str], code_dir: str | None) -> None:
        self.inventory_dir = Path(inventory_dir).resolve()
        self.code_dir = code_dir
        self._lock = threading.Lock()
        self._cached: tuple[_FileKey, ClassCatalog | None] | None = None

    def _key(self) -> _FileKey:
        keys: list[tuple[int, int] | None] = []
        for name in (SYNCED_FILE_NAME, MANUAL_FILE_NAME):
            try:
                stat = (self.inventory_dir / name).stat()
                keys.append((stat.st_size, stat.st_mtime_ns))
            except OSError:
                keys.append(None)
        return tuple(keys)

    def catalog(self) -> ClassCatalog | None:
        """The merged catalogue, None without one; 500 invalid-inventory for a broken file."""
        key = self._key()
        with self._lock:
            if self._cached is None or self._cached[0] != key:
                try:
                    self._cached = (key, load_catalog(self.inventory_dir))
                except CatalogError as err:
                    raise ApiError(500, INVALID_INVENTORY, str(err),
                                   {"inventory": str(self.inventory_dir)}) from err
            return self._cached[1]

    def add_environment(self, name: str) -> bool:
        """PUT /v1/environments/<name>: declare the environment (with no classes) in
        puppet-classes.yml, keeping the file's comments; False when it is known already
        (declared by hand or synced), which writes nothing. Without a catalogue, 409
        no-catalogue: creating one would turn on the class checks of every group write."""
        path = self.inventory_dir / MANUAL_FILE_NAME
        with inventory_lock(self.inventory_dir):
            catalog = self.catalog()
            if catalog is None:
                raise ApiError(409, NO_CATALOGUE, "This inventory has no class catalogue, so "
                               "its environments are the ones its groups use; declaring one "
                               f"would create {MANUAL_FILE_NAME} and turn on the class checks "
                               "of every group write. Sync the classes (POST "
                               f"/v1/update-classes) or write {MANUAL_FILE_NAME} first. "
                               "Nothing was written.", {"environment": name})
            if catalog.has_environment(name):
                return False
            current = path.read_text(encoding="utf-8") if path.is_file() else None
            loaded = pyyaml.safe_load(current) if current else None
            declared = dict(loaded) if isinstance(loaded, dict) else {}
            text = checked_render(current, {**declared, name: {}}, MANUAL_FILE_NAME)
            atomic_write(path, text, self.inventory_dir)
            return True

    def sync(self) -> None:
        """Re-read the classes from the Puppet code (POST /v1/update-classes)."""
        if self.code_dir is None:
            raise ApiError(409, NO_CODE_DIR, "The server has no Puppet code to sync classes "
                           "from: start it with --puppet-code-dir DIR (Puppet's codedir, with "
                           "environments/<env>/modules), or declare classes in "
                           f"{MANUAL_FILE_NAME}.", None)
        try:
            # Puppet runs for seconds: outside the lock, so group writes do not wait for it.
            scan = scan_code_dir(self.code_dir)
            with inventory_lock(self.inventory_dir):
                note_change(self.inventory_dir / SYNCED_FILE_NAME)
                store_scan(self.inventory_dir, scan, self.code_dir)
        except PuppetUnavailableError as err:
            raise ApiError(503, PUPPET_UNAVAILABLE, str(err), {"code_dir": self.code_dir}) \
                from err
        except ReclassError as err:
            raise ApiError(409, SYNC_FAILED, str(err), {"code_dir": self.code_dir}) from err
