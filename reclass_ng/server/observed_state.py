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
from collections.abc import Mapping
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

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
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

    def nodes(self) -> list[dict[str, Any]]:
        """`GET /v1/nodes`: every node that checked in, with its check-ins, oldest first."""
        return [{"name": n, "check_ins": c} for n, c in self._check_ins("", ()).items()]

    def node(self, name: str) -> dict[str, Any] | None:
        found = self._check_ins("WHERE node = ?", (name,)).get(name)
        return None if found is None else {"name": name, "check_ins": found}

    def close(self) -> None:
        with self._lock:
            self._db.close()
