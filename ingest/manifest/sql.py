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

import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
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


class SqliteConnection(Connection):
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._use_wal()

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
