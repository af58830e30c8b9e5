"""Observed state: what nodes report (facts) and what the service answered them (check-ins).

Kept in SQLite outside the inventory, never in the YAML: the inventory is desired state that
people edit and review, and the Chef node-state RFC's lesson is that reports from agents must
never overwrite it. SQLite gives atomic writes and safe access from several processes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from hashlib import sha256
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS check_ins (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    node TEXT NOT NULL,
    time TEXT NOT NULL,
    transaction_uuid TEXT,
    groups TEXT NOT NULL,
    explanation TEXT NOT NULL,
    classification TEXT
);
CREATE INDEX IF NOT EXISTS check_ins_node ON check_ins (node, id);
CREATE TABLE IF NOT EXISTS runtime (
    node TEXT PRIMARY KEY,
    time TEXT NOT NULL,
    fact TEXT NOT NULL,
    trusted TEXT NOT NULL
);
"""


# Check-ins kept per node (older ones are deleted as new ones arrive): the history explains
# recent classifications; an unbounded one grows the database with every agent run.
DEFAULT_CHECK_IN_HISTORY = 10
# GET /v1/nodes answers at most this many nodes per page.
DEFAULT_NODES_PAGE = 100
MAX_NODES_PAGE = 1000


def default_state_path(inventory_dir: str | os.PathLike[str]) -> Path:
    """`$XDG_STATE_HOME/reclass-ng/observed-<hash of the inventory path>.sqlite3`: one database
    per inventory, outside it."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                            "state")
    digest = sha256(str(Path(inventory_dir).resolve()).encode()).hexdigest()[:16]
    return Path(base) / "reclass-ng" / f"observed-{digest}.sqlite3"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class ObservedState:
    """Check-ins and last facts per node, in one SQLite file."""

    def __init__(self, path: str | os.PathLike[str],
                 check_in_history: int = DEFAULT_CHECK_IN_HISTORY) -> None:
        self.path = Path(path)
        self.check_in_history = max(1, check_in_history)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL never corrupts the database; a power cut may lose the last few
        # check-ins, which the next agent run reports again. FULL would fsync every check-in,
        # which made a classification wait ~40 ms for the disk.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def record_check_in(self, node: str, transaction_uuid: str | None, groups: list[str],
                        explanation: Mapping[str, Any], classification: Any) -> None:
        """One classification request; `classification` is None when it conflicted."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO check_ins (node, time, transaction_uuid, groups, explanation, "
                "classification) VALUES (?, ?, ?, ?, ?, ?)",
                (node, _now(), transaction_uuid, json.dumps(groups), json.dumps(explanation),
                 None if classification is None else json.dumps(classification)))
            self._db.execute(
                "DELETE FROM check_ins WHERE node = ? AND id <= (SELECT id FROM check_ins "
                "WHERE node = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
                (node, node, self.check_in_history))

    def put_runtime(self, node: str, fact: Mapping[str, Any], trusted: Mapping[str, Any]
                    ) -> dict[str, Any]:
        """Replace the node's last reported facts."""
        time = _now()
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO runtime (node, time, fact, trusted) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(node) DO UPDATE SET time=excluded.time, fact=excluded.fact, "
                "trusted=excluded.trusted",
                (node, time, json.dumps(fact), json.dumps(trusted)))
        return {"name": node, "time": time, "fact": dict(fact), "trusted": dict(trusted)}

    def runtime(self, node: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT time, fact, trusted FROM runtime WHERE node = ?",
                                   (node,)).fetchone()
        if row is None:
            return None
        return {"name": node, "time": row[0], "fact": json.loads(row[1]),
                "trusted": json.loads(row[2])}

    def runtimes(self) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
        """(node, time, fact, trusted) of every node that reported facts, by name; read in
        batches, so memory stays bounded by a batch and the answer being built."""
        after = ""
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT node, time, fact, trusted FROM runtime WHERE node > ? ORDER BY node "
                    "LIMIT 500", (after,)).fetchall()
            if not rows:
                return
            for node, time, fact, trusted in rows:
                yield node, time, json.loads(fact), json.loads(trusted)
            after = rows[-1][0]

    def _check_ins(self, where: str, args: tuple[Any, ...]) -> dict[str, list[dict[str, Any]]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT node, time, transaction_uuid, explanation, classification FROM check_ins "
                f"{where} ORDER BY node, id", args).fetchall()
        by_node: dict[str, list[dict[str, Any]]] = {}
        for node, time, transaction, explanation, classification in rows:
            entry: dict[str, Any] = {"time": time, "explanation": json.loads(explanation),
                                     "transaction_uuid": transaction}
            if classification is not None:
                entry["classification"] = json.loads(classification)
            by_node.setdefault(node, []).append(entry)
        return by_node

    def nodes(self, limit: int = DEFAULT_NODES_PAGE, offset: int = 0
              ) -> tuple[list[dict[str, Any]], int]:
        """`GET /v1/nodes`: one page of the nodes that checked in (by name), each with its
        check-ins, oldest first; and how many nodes there are in all."""
        with self._lock:
            total = self._db.execute("SELECT COUNT(DISTINCT node) FROM check_ins").fetchone()[0]
            names = [row[0] for row in self._db.execute(
                "SELECT DISTINCT node FROM check_ins ORDER BY node LIMIT ? OFFSET ?",
                (limit, offset))]
        if not names:
            return [], total
        marks = ",".join("?" * len(names))
        by_node = self._check_ins(f"WHERE node IN ({marks})", tuple(names))
        return [{"name": n, "check_ins": by_node[n]} for n in names if n in by_node], total

    def node(self, name: str) -> dict[str, Any] | None:
        found = self._check_ins("WHERE node = ?", (name,)).get(name)
        return None if found is None else {"name": name, "check_ins": found}

    def close(self) -> None:
        with self._lock:
            self._db.close()
