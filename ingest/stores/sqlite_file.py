"""What the embedded SQLite stores (vectors, BM25) share: a connection in WAL mode (readers never
wait for a writer), write transactions, and the row naming the generation an alias serves. A file
this process may not write is opened read-only (a search of a read-only data directory), and the
stores then skip their DDL."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ingest.config import Settings
from ingest.manifest.sql import ReadOnlySqlite, SqliteConnection, check_whole, open_read_only

_REMEDY = "restore it from a backup, or remove it and run `kbflow rebuild`"


def connect(path: Path) -> sqlite3.Connection:
    """Autocommit unless a transaction is begun; a writer waits up to 30 s for another. A
    damaged file raises CorruptStore."""
    db: sqlite3.Connection | None = open_read_only(path)
    if db is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, isolation_level=None, timeout=30)
    check_whole(db, path, _REMEDY)
    if not is_read_only(db):
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS kbflow_aliases (name TEXT PRIMARY KEY, "
                   "target TEXT)")
    return db


def check_files(settings: Settings) -> None:
    """Open the data directory's SQLite manifest and stores once, as a writer does before its
    flow run: a damaged file raises CorruptStore here, shown as one line, rather than inside
    the run, whose failure Prefect logs with a traceback."""
    if not settings.manifest_url:
        SqliteConnection(Path(settings.manifest)).close()
    for path in (settings.lexical_path, settings.vectors_path):
        if path.exists():
            connect(path).close()


def is_read_only(db: sqlite3.Connection) -> bool:
    return isinstance(db, ReadOnlySqlite)


@contextmanager
def writing(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, all or nothing."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if db.in_transaction:  # SQLite already rolled back after SQLITE_FULL or an I/O error
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def point_alias(db: sqlite3.Connection, alias: str, table: str) -> None:
    """Record which generation's table the alias names (readers of this file follow it)."""
    db.execute("INSERT OR REPLACE INTO kbflow_aliases VALUES (?, ?)", (alias, table))
