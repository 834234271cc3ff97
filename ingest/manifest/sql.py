"""One connection API over SQLite and PostgreSQL, so the manifest's SQL is written once.

The manifest writes portable SQL (ON CONFLICT upserts, coalesce, TEXT columns) with `?`
placeholders; the PostgreSQL connection rewrites them to psycopg's `%s` (so the manifest's SQL
holds no literal `?` or `%`). Rows answer both `row[0]` and `row["name"]`, as sqlite3.Row does.
A write transaction takes a writer lock, so the read-check-write steps of the state machine
never interleave between processes. SQLite has one writer at a time (BEGIN IMMEDIATE). On
PostgreSQL a transaction about one document locks that document only (transaction-scoped
advisory locks), so workers writing different documents do not wait for each other; a
transaction about the whole manifest (migrations, generations) excludes all of them.
"""

from __future__ import annotations

import os
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_MANIFEST_REMEDY = ("restore it from a backup, or move the data directory aside and ingest the "
                    "documents again")
# pg_advisory_xact_lock key of the whole manifest ("kbflow" in ASCII); it also seeds the
# hash that gives each document its own key.
_WRITE_LOCK = 0x6B62666C6F77


class Cursor(Protocol):
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Any: ...


class DbRow(Protocol):
    """A result row, read by position or by column name (sqlite3.Row, or Row below)."""

    def keys(self) -> Sequence[str]: ...
    def __getitem__(self, key: Any) -> Any: ...


class Connection(ABC):
    """What the manifest needs of a database: statements, and write transactions."""

    _db: Any  # the driver's connection, in autocommit mode: transactions are explicit
    read_only = False  # a SQLite file this process may not write: it is read, never migrated

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor: ...

    @abstractmethod
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    @abstractmethod
    def begin(self, document: str | None = None) -> None:
        """Start a write transaction holding the writer lock: of one document (its doc id),
        or of the whole manifest (None)."""

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        self._db.execute("ROLLBACK")

    def close(self) -> None:
        self._db.close()


def connect(location: str | Path) -> Connection:
    """A PostgreSQL URL (postgresql://user@host/db) or the path of a SQLite file."""
    if str(location).startswith(_POSTGRES_SCHEMES):
        return PostgresConnection(str(location))
    return SqliteConnection(Path(location))


class CorruptStore(RuntimeError):
    """A SQLite file of the data directory is no whole database (overwritten, truncated)."""

    def __init__(self, path: Path, detail: str, remedy: str) -> None:
        self.path = path
        super().__init__(f"{path} is damaged ({detail}): {remedy}")


def check_whole(db: sqlite3.Connection, path: Path, remedy: str) -> None:
    """Raise CorruptStore if `path` is no whole database: its schema is unreadable (a damaged
    first page) or the file is shorter than the pages its header counts (truncated; it would
    fail only when a lost page is read). A non-empty WAL beside it may hold pages the file has
    not got yet: the size is not compared then."""
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        if not (exc.sqlite_errorname or "").startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            raise
        raise CorruptStore(path, str(exc), remedy) from exc
    wal = path.with_name(f"{path.name}-wal")
    size = path.stat().st_size if path.exists() else 0
    if pages * page_size > size and not (wal.exists() and wal.stat().st_size):
        raise CorruptStore(path, f"truncated: {size} bytes of {pages * page_size}", remedy)


class ReadOnlySqlite(sqlite3.Connection):
    """A SQLite file this process may not write (a read-only copy or mount, another user's
    data directory), opened so that reading it writes nothing."""


def open_read_only(path: Path) -> ReadOnlySqlite | None:
    """`path` opened read-only if this process may not write it or its folder (a WAL database
    needs its -wal and -shm files beside it), else None. A -shm file means a writer has it open:
    SQLite then reads through the writer's WAL (`mode=ro`). Without one no writer is connected,
    and a WAL file cannot be opened read-only in a folder no -shm can be created in except as
    `immutable=1` (SQLite reads the file as it is, which a writer appearing later would break)."""
    if not path.exists() or (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return None
    mode = "mode=ro" if path.with_name(f"{path.name}-shm").exists() else "immutable=1"
    return sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, isolation_level=None,
                           timeout=30, factory=ReadOnlySqlite)


class SqliteConnection(Connection):
    def __init__(self, path: Path) -> None:
        read_only = open_read_only(path)
        self.read_only = read_only is not None
        if read_only is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None, timeout=30)
        else:
            self._db = read_only
        check_whole(self._db, path, _MANIFEST_REMEDY)
        if read_only is None:
            self._use_wal()
        self._db.row_factory = sqlite3.Row

    def _use_wal(self) -> None:
        """Switching a new file to WAL needs it alone: workers opening it at once can be refused
        ("database is locked", without SQLite's busy wait; 4 of 200 races of six openers), so
        the switch is retried for as long as the busy timeout."""
        for attempt in range(300):
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 299:
                    raise
                time.sleep(0.1)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        cursor: Cursor = self._db.execute(sql, params)
        return cursor

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._db.executemany(sql, rows)

    def begin(self, document: str | None = None) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def rollback(self) -> None:
        """A full disk or an I/O error rolls the transaction back by itself; a second ROLLBACK
        would raise "no transaction is active" in place of the real error."""
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")


class Row(tuple[Any, ...]):
    """A result row readable by position and by column name."""

    _names: tuple[str, ...]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return super().__getitem__(self._names.index(key))
        return super().__getitem__(key)

    def keys(self) -> tuple[str, ...]:
        return self._names


def _row_factory(cursor: Any) -> Any:
    names = tuple(column.name for column in cursor.description or ())

    def make(values: Sequence[Any]) -> Row:
        row = Row(values)
        row._names = names
        return row

    return make


class PostgresConnection(Connection):
    def __init__(self, url: str) -> None:
        import psycopg  # only a PostgreSQL manifest needs it

        self._db = psycopg.connect(url, autocommit=True, row_factory=_row_factory)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        cursor: Cursor = self._db.execute(sql.replace("?", "%s"), params)
        return cursor

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._db.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s"), rows)

    def begin(self, document: str | None = None) -> None:
        self._db.execute("BEGIN")
        if document is None:
            self._db.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
            return
        # shared on the manifest (a whole-manifest writer waits for all), exclusive on the doc
        self._db.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_WRITE_LOCK,))
        self._db.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))",
                         (document, _WRITE_LOCK))
