"""The outbox: an accepted event is written to an SQLite database under the data directory
before the 202 reply, so an event the sender saw accepted is never lost, and a restart picks up
whatever had not gone out or not reported yet.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import NamedTuple

from flows.webhook.events import ChangeEvent

STATUSES = ("pending", "dispatched", "done", "failed", "quarantined")


class Pending(NamedTuple):
    id: int
    type: str
    uri: str
    received_at: float
    attempts: int


class Replay(Exception):
    """The signature or event id was seen before."""


class EventStore:
    """The outbox: every accepted event, with its status (STATUSES) and the reason of a refusal
    or failure; pending until an incremental run was started for it, done or failed when that
    run recorded its file's outcome."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(
                """CREATE TABLE IF NOT EXISTS events (
                       id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT UNIQUE,
                       signature TEXT NOT NULL UNIQUE, type TEXT NOT NULL, uri TEXT NOT NULL,
                       received_at REAL NOT NULL, flow_run_id TEXT, dispatched_at REAL);"""
            )
            columns = {row[1] for row in db.execute("PRAGMA table_info(events)")}
            if "status" not in columns:  # an outbox from before statuses: dispatched is done
                db.executescript(
                    """ALTER TABLE events ADD COLUMN status TEXT NOT NULL DEFAULT 'pending';
                       ALTER TABLE events ADD COLUMN path TEXT;
                       ALTER TABLE events ADD COLUMN reason TEXT;
                       ALTER TABLE events ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
                       ALTER TABLE events ADD COLUMN finished_at REAL;
                       UPDATE events SET status='done' WHERE dispatched_at IS NOT NULL;"""
                )
            db.execute("DROP INDEX IF EXISTS pending")
            db.execute("CREATE INDEX IF NOT EXISTS by_status ON events (status, id)")

    def _connect(self) -> sqlite3.Connection:
        # A connection per call: the request handlers and the dispatcher run on different threads.
        return sqlite3.connect(self.path, isolation_level=None, timeout=30)

    def _many(self, sql: str, rows: list[tuple]) -> None:
        """One transaction for a batch (autocommit would sync to disk once per row)."""
        with closing(self._connect()) as db:
            db.execute("BEGIN")
            db.executemany(sql, rows)
            db.execute("COMMIT")

    def add(self, event: ChangeEvent, signature: str, received_at: float) -> int:
        """Commit the event (the caller replies only after this returns)."""
        try:
            with closing(self._connect()) as db:
                cursor = db.execute(
                    "INSERT INTO events (event_id, signature, type, uri, received_at) "
                    "VALUES (?,?,?,?,?)",
                    (event.id, signature, event.type, event.uri, received_at))
                return int(cursor.lastrowid or 0)
        except sqlite3.IntegrityError as exc:
            raise Replay(str(exc)) from exc

    def pending(self) -> list[Pending]:
        """Events waiting to go out, oldest first."""
        with closing(self._connect()) as db:
            rows = db.execute("SELECT id, type, uri, received_at, attempts FROM events "
                              "WHERE status='pending' ORDER BY id").fetchall()
        return [Pending(*row) for row in rows]

    def in_flight(self) -> bool:
        """Whether an event went out with a run that has not reported yet."""
        with closing(self._connect()) as db:
            return db.execute("SELECT 1 FROM events WHERE status='dispatched' LIMIT 1"
                              ).fetchone() is not None

    def dispatched(self) -> list[tuple[int, str, str]]:
        """(id, path, flow run id) of events whose run has not reported yet."""
        with closing(self._connect()) as db:
            return db.execute("SELECT id, path, flow_run_id FROM events "
                              "WHERE status='dispatched' ORDER BY id").fetchall()

    def mark_dispatched(self, paths: dict[int, str], flow_run_id: str) -> None:
        """The events (id → the resolved path sent) went out with that run."""
        self._many("UPDATE events SET status='dispatched', path=?, flow_run_id=?, "
                   "dispatched_at=? WHERE id=?",
                   [(path, flow_run_id, time.time(), i) for i, path in paths.items()])

    def finish(self, outcomes: dict[int, tuple[str, str | None]]) -> None:
        """id → (status, reason): done, failed or quarantined, for good."""
        self._many("UPDATE events SET status=?, reason=?, finished_at=? WHERE id=?",
                   [(status, reason, time.time(), i) for i, (status, reason) in outcomes.items()])

    def retry(self, ids: Sequence[int], reason: str) -> None:
        """Back to pending, one attempt more (the dispatcher then sends each alone)."""
        self._many("UPDATE events SET status='pending', attempts=attempts + 1, "
                   "reason=?, flow_run_id=NULL, dispatched_at=NULL WHERE id=?",
                   [(reason, i) for i in ids])

    def attempts(self, ids: Sequence[int]) -> dict[int, int]:
        """id → runs the event went out with that ended without an outcome."""
        found: dict[int, int] = {}
        with closing(self._connect()) as db:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                found |= dict(db.execute("SELECT id, attempts FROM events WHERE id IN "
                                         f"({','.join('?' * len(part))})", part))
        return found

    def prune(self, received_before: float) -> int:
        """Delete finished events received before then; pending and dispatched ones stay."""
        with closing(self._connect()) as db:
            return db.execute("DELETE FROM events WHERE status NOT IN ('pending', 'dispatched') "
                              "AND received_at < ?", (received_before,)).rowcount

    def counts(self) -> dict[str, int]:
        with closing(self._connect()) as db:
            rows = dict(db.execute("SELECT status, count(*) FROM events GROUP BY status"))
        return {status: rows.get(status, 0) for status in STATUSES}

    def listing(self, statuses: Sequence[str] = STATUSES, limit: int = 1000) -> list[dict]:
        """The newest events in those statuses, newest first, as `kbflow events` shows them."""
        marks = ",".join("?" * len(statuses))
        with closing(self._connect()) as db:
            db.row_factory = sqlite3.Row
            rows = db.execute(
                "SELECT id, event_id, type, uri, status, reason, path, attempts, flow_run_id, "
                f"received_at, finished_at FROM events WHERE status IN ({marks}) "
                "ORDER BY id DESC LIMIT ?", [*statuses, limit]).fetchall()
        return [dict(row) for row in rows]
