"""What the embedded SQLite stores (vectors, BM25) share: a connection in WAL mode (readers never
wait for a writer), write transactions, and the row naming the generation an alias serves."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def connect(path: Path) -> sqlite3.Connection:
    """Autocommit unless a transaction is begun; a writer waits up to 30 s for another."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS kbflow_aliases (name TEXT PRIMARY KEY, target TEXT)")
    return db


@contextmanager
def writing(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, all or nothing."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def point_alias(db: sqlite3.Connection, alias: str, table: str) -> None:
    """Record which generation's table the alias names (readers of this file follow it)."""
    db.execute("INSERT OR REPLACE INTO kbflow_aliases VALUES (?, ?)", (alias, table))
