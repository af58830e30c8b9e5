"""The activity log: who changed what through the API, kept beside the observed state.

A write and its entry commit together or not at all, without a transaction spanning SQLite
and the file system. Under the inventory lock, before a file changes, the log stores a
*pending* entry holding the file's bytes as they are (`WriteJournal.before_change`); the file
is then replaced; before the lock is released every pending entry is *settled* against the
disk: a file that differs from its recorded bytes was written, and the entry becomes final,
described from the bytes before and after (activity_events.py); a file that is as it was was
not, and the entry goes. A process killed anywhere in between leaves a pending entry that the
next writer (or the next server start) settles the same way under the lock, before it changes
anything itself. So every write that reached the disk has exactly one entry per changed file,
and no entry describes a write that did not happen.

Reads open their own read-only connection: in SQLite's WAL mode they never wait for writers
nor make writers wait.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import attrs

from reclass_ng.server.activity_events import describe_change
from reclass_ng.server.yaml_files import WRITE_JOURNAL
from reclass_ng.storage.regular_file import UnreadableFile, read_regular_file
from reclass_ng.storage.yaml_load import MAX_YAML_FILE_BYTES

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS activity (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    write_id TEXT NOT NULL,
    state TEXT NOT NULL,
    time TEXT NOT NULL,
    subject TEXT NOT NULL,
    file TEXT NOT NULL,
    before BLOB,
    before_present INTEGER NOT NULL DEFAULT 1,
    object_type TEXT,
    object_id TEXT,
    object_name TEXT,
    message TEXT,
    events TEXT
);
CREATE INDEX IF NOT EXISTS activity_pending ON activity (state);
CREATE INDEX IF NOT EXISTS activity_object ON activity (object_type, object_id, id);
"""
PENDING, DONE = "pending", "done"
DEFAULT_LIMIT = 1000
MAX_LIMIT = 10_000


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _read(path: Path) -> bytes | None:
    """An inventory file's bytes; None when it is absent, or refused by the guarded read (a
    FIFO swapped in would otherwise block a write holding the inventory lock)."""
    try:
        return read_regular_file(path, MAX_YAML_FILE_BYTES)[0]
    except (FileNotFoundError, UnreadableFile):
        return None


@attrs.frozen
class EventQuery:
    """The filters of `GET /activity-api/v1/events` (all optional but the order)."""

    subject_ids: tuple[str, ...] = ()
    object_type: str | None = None
    object_ids: tuple[str, ...] = ()
    after: str | None = None  # ISO-8601, UTC
    offset: int = 0
    limit: int = DEFAULT_LIMIT
    ascending: bool = False


class ActivityLog:
    """The activity table of one state database, for one inventory."""

    def __init__(self, path: str | os.PathLike[str], inventory_dir: str | os.PathLike[str],
                 commit: Callable[[Sequence[dict[str, Any]]], None] | None = None) -> None:
        self.path = Path(path)
        self.inventory_dir = Path(inventory_dir)
        # Called with the entries of one write once they are final, under the inventory lock
        # (the git commit of server/git_commits.py).
        self.commit = commit
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        # An entry must be on disk before the file it describes changes: FULL syncs every
        # commit, so even a power cut cannot keep the write and lose its entry. Writes are
        # rare next to classifications, so the flush is affordable here.
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def journal(self, subject: str) -> WriteJournal:
        """The journal of one API write by `subject` (a token's name)."""
        return WriteJournal(self, subject)

    def record_pending(self, write_id: str, subject: str, relative: str,
                       before: bytes | None) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO activity (write_id, state, time, subject, file, before, "
                "before_present) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (write_id, PENDING, _now(), subject, relative, before, before is not None))

    def settle(self) -> None:
        """Make every pending entry final or remove it, by what is on disk now. Call under
        the inventory lock."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, write_id, file, before, before_present FROM activity WHERE state = ? "
                "ORDER BY id", (PENDING,)).fetchall()
        if not rows:
            return
        settled: dict[str, list[dict[str, Any]]] = {}
        with self._lock, self._db:
            for row_id, write_id, relative, before, present in rows:
                before = bytes(before) if present else None
                now = _read(self.inventory_dir / relative)
                change = None if now == before else describe_change(relative, before, now)
                if change is None:
                    self._db.execute("DELETE FROM activity WHERE id = ?", (row_id,))
                    continue
                self._db.execute(
                    "UPDATE activity SET state = ?, before = NULL, object_type = ?, "
                    "object_id = ?, object_name = ?, message = ?, events = ? WHERE id = ?",
                    (DONE, change.object_type, change.object_id, change.object_name,
                     change.message, json.dumps(change.events), row_id))
                settled.setdefault(write_id, [])
        if self.commit is not None:
            for write_id in settled:
                self.commit(self.entries_of_write(write_id))

    def entries_of_write(self, write_id: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM activity WHERE write_id = ? AND "
                                    "state = ? ORDER BY id", (write_id, DONE)).fetchall()
        return [_commit(row) for row in rows]

    def events(self, query: EventQuery) -> tuple[list[dict[str, Any]], int]:
        """One page of final entries matching `query`, and how many match in all."""
        return read_events(self.path, query)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def read_events(path: str | os.PathLike[str], query: EventQuery
                ) -> tuple[list[dict[str, Any]], int]:
    """One page of the final entries of the state database at `path` that match `query`, and
    how many match in all; read through a read-only connection of its own (never blocks a
    writer, never creates anything). sqlite3.OperationalError when there is no log there."""
    where, args = ["state = ?"], [DONE]
    if query.subject_ids:
        where.append(f"subject IN ({','.join('?' * len(query.subject_ids))})")
        args.extend(query.subject_ids)
    if query.object_type is not None:
        where.append("object_type = ?")
        args.append(query.object_type)
    if query.object_ids:
        where.append(f"object_id IN ({','.join('?' * len(query.object_ids))})")
        args.extend(query.object_ids)
    if query.after is not None:
        where.append("time > ?")
        args.append(query.after)
    condition = " AND ".join(where)
    order = "ASC" if query.ascending else "DESC"
    reader = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        total = reader.execute(f"SELECT COUNT(*) FROM activity WHERE {condition}",
                               args).fetchone()[0]
        rows = reader.execute(f"SELECT {_COLUMNS} FROM activity WHERE {condition} "
                              f"ORDER BY id {order} LIMIT ? OFFSET ?",
                              [*args, query.limit, query.offset]).fetchall()
    finally:
        reader.close()
    return [_commit(row) for row in rows], total


_COLUMNS = ("id, time, subject, object_type, object_id, object_name, message, events, write_id, "
            "file")


def _commit(row: tuple[Any, ...]) -> dict[str, Any]:
    """One entry in PE's activity shape (a "commit" with its events), plus our ids."""
    (row_id, time, subject, object_type, object_id, object_name, message, events, write_id,
     file) = row
    return {"id": row_id, "write_id": write_id, "file": file, "timestamp": time,
            "subject": {"id": subject, "name": subject},
            "object": {"id": object_id, "name": object_name, "type": object_type},
            "message": message, "events": json.loads(events)}


class WriteJournal:
    """The entries of one API write: WRITE_JOURNAL while the write runs, called by
    yaml_files.inventory_lock and the file writers it guards."""

    def __init__(self, log: ActivityLog, subject: str) -> None:
        self.log = log
        self.subject = subject
        self.write_id = str(uuid.uuid4())
        self._recorded: set[str] = set()

    def run(self, function: Callable[..., _T], *args: Any) -> _T:
        """`function(*args)` with this journal active (in the thread that runs the write)."""
        token = WRITE_JOURNAL.set(self)
        try:
            return function(*args)
        finally:
            WRITE_JOURNAL.reset(token)

    def locked(self) -> None:
        """The lock was just taken: settle what killed writes left pending."""
        self.log.settle()

    def before_change(self, path: str | os.PathLike[str]) -> None:
        """`path` (inside the inventory) is about to be written or removed."""
        # The directory resolved, the name not: a symbolic link being replaced is the change.
        where = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        relative = os.path.relpath(where, os.path.realpath(self.log.inventory_dir))
        relative = relative.replace(os.sep, "/")
        if relative in self._recorded:
            return  # the first bytes of this write are the "before"
        self._recorded.add(relative)
        self.log.record_pending(self.write_id, self.subject, relative,
                                _read(self.log.inventory_dir / relative))

    def unlocking(self) -> None:
        """The lock is about to be released: this write's entries become final (or go)."""
        if self._recorded:
            self.log.settle()
            self._recorded.clear()
