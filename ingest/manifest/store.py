"""SQLite manifest with the document-version state machine.

Every state change is one transaction that also appends to `transitions`, so a run killed at any
point leaves a state it can resume from. The chunk records of a version are replaced in the same
transaction that marks it READY: they are always the set the stores were last published with.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from ingest.diff import fingerprint
from ingest.models import Chunk, DocumentMeta, State, version_key

# Forward path of a healthy version; FAILED and TOMBSTONED can be entered from anywhere.
_NEXT = {
    State.CREATED: State.MILVUS_READY,
    State.MILVUS_READY: State.ES_READY,
    State.ES_READY: State.NEO4J_READY,
    State.NEO4J_READY: State.READY,
}


class TransitionError(RuntimeError):
    """A state change the state machine does not allow."""


class DocumentRecord(BaseModel):
    doc_id: str
    version_id: str
    state: State
    reason: str | None
    title: str | None
    source_path: str
    source_uri: str | None
    file_hash: str | None
    tenant_id: str | None
    acl: list[str]
    effective_from: date | None
    effective_to: date | None
    chunker_version: str | None
    embedding_model: str | None
    chunk_count: int
    attempts: int
    updated_at: datetime

    @property
    def version_key(self) -> str:
        return version_key(self.doc_id, self.version_id)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ManifestStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._migrate()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _migrate(self) -> None:
        self._db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)")
        done = {r[0] for r in self._db.execute("SELECT name FROM schema_migrations")}
        folder = resources.files("manifests") / "sqlite"
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".sql") and entry.name not in done:
                with self._tx() as db:
                    for statement in entry.read_text(encoding="utf-8").split(";"):
                        if statement.strip():
                            db.execute(statement)
                    db.execute("INSERT INTO schema_migrations VALUES (?)", (entry.name,))

    # ---- documents -------------------------------------------------------------------------

    def get(self, doc_id: str, version_id: str) -> DocumentRecord | None:
        row = self._db.execute(
            "SELECT * FROM documents WHERE doc_id=? AND version_id=?", (doc_id, version_id)
        ).fetchone()
        return _record(row) if row else None

    def documents(self) -> list[DocumentRecord]:
        rows = self._db.execute("SELECT * FROM documents ORDER BY doc_id, version_id")
        return [_record(r) for r in rows]

    def begin(self, meta: DocumentMeta, run_id: str, chunker_version: str, model: str) -> None:
        """Enter CREATED for a version about to be (re)written: new, changed, failed or resumed."""
        now = _now()
        with self._tx() as db:
            prev = db.execute(
                "SELECT state FROM documents WHERE doc_id=? AND version_id=?",
                (meta.doc_id, meta.version_id),
            ).fetchone()
            if prev and prev["state"] == State.TOMBSTONED:
                raise TransitionError(f"{version_key(meta.doc_id, meta.version_id)} is tombstoned")
            db.execute(
                """INSERT INTO documents (doc_id, version_id, state, reason, title, source_path,
                       source_uri, file_hash, tenant_id, acl, effective_from, effective_to,
                       chunker_version, embedding_model, attempts, last_run_id, updated_at)
                   VALUES (?,?,?,NULL,?,?,?,?,?,?,?,?,?,?,1,?,?)
                   ON CONFLICT (doc_id, version_id) DO UPDATE SET
                       state=excluded.state, reason=NULL, title=excluded.title,
                       source_path=excluded.source_path, source_uri=excluded.source_uri,
                       file_hash=excluded.file_hash, tenant_id=excluded.tenant_id,
                       acl=excluded.acl, effective_from=excluded.effective_from,
                       effective_to=excluded.effective_to,
                       chunker_version=excluded.chunker_version,
                       embedding_model=excluded.embedding_model,
                       attempts=documents.attempts + 1, last_run_id=excluded.last_run_id,
                       updated_at=excluded.updated_at""",
                (
                    meta.doc_id, meta.version_id, State.CREATED, meta.title, meta.source_path,
                    meta.source_uri, meta.file_hash, meta.tenant_id, json.dumps(meta.acl),
                    _iso(meta.effective_from), _iso(meta.effective_to), chunker_version, model,
                    run_id, now,
                ),
            )
            _log(db, meta.doc_id, meta.version_id, State.CREATED, None, run_id, now)

    def advance(self, doc_id: str, version_id: str, to: State, run_id: str) -> None:
        """Move one step along CREATED→…→READY; any other step is refused."""
        with self._tx() as db:
            current = self._state(db, doc_id, version_id)
            if _NEXT.get(current) != to:
                raise TransitionError(f"{doc_id}@{version_id}: {current} → {to} is not allowed")
            now = _now()
            db.execute(
                "UPDATE documents SET state=?, updated_at=? WHERE doc_id=? AND version_id=?",
                (to, now, doc_id, version_id),
            )
            _log(db, doc_id, version_id, to, None, run_id, now)

    def publish(self, doc_id: str, version_id: str, chunks: list[Chunk], run_id: str) -> None:
        """NEO4J_READY → READY, replacing the version's published chunk records atomically."""
        with self._tx() as db:
            current = self._state(db, doc_id, version_id)
            if current != State.NEO4J_READY:
                raise TransitionError(f"{doc_id}@{version_id}: {current} → READY is not allowed")
            db.execute("DELETE FROM chunks WHERE doc_id=? AND version_id=?", (doc_id, version_id))
            db.executemany(
                "INSERT INTO chunks VALUES (?,?,?,?,?,?,?)",
                [
                    (c.chunk_id, doc_id, version_id, c.content_hash, fingerprint(c),
                     c.model_dump_json(), run_id)
                    for c in chunks
                ],
            )
            now = _now()
            db.execute(
                """UPDATE documents SET state=?, chunk_count=?, updated_at=?
                   WHERE doc_id=? AND version_id=?""",
                (State.READY, sum(c.kind != "parent" for c in chunks), now, doc_id, version_id),
            )
            _log(db, doc_id, version_id, State.READY, None, run_id, now)

    def fail(self, meta_or_key: DocumentMeta | tuple[str, str], source_path: str, reason: str,
             run_id: str) -> None:
        """Record a failure with its reason; the version is retried by the next run."""
        if isinstance(meta_or_key, DocumentMeta):
            doc_id, version_id = meta_or_key.doc_id, meta_or_key.version_id
        else:
            doc_id, version_id = meta_or_key
        now = _now()
        with self._tx() as db:
            db.execute(
                """INSERT INTO documents (doc_id, version_id, state, reason, source_path,
                       acl, attempts, last_run_id, updated_at)
                   VALUES (?,?,?,?,?,'[]',1,?,?)
                   ON CONFLICT (doc_id, version_id) DO UPDATE SET state=excluded.state,
                       reason=excluded.reason, attempts=documents.attempts + 1,
                       last_run_id=excluded.last_run_id, updated_at=excluded.updated_at""",
                (doc_id, version_id, State.FAILED, reason, source_path, run_id, now),
            )
            _log(db, doc_id, version_id, State.FAILED, reason, run_id, now)

    def set_effective_to(self, doc_id: str, version_id: str, effective_to: date | None) -> None:
        self._db.execute(
            "UPDATE documents SET effective_to=? WHERE doc_id=? AND version_id=?",
            (_iso(effective_to), doc_id, version_id),
        )

    def published_keys(self) -> list[str]:
        """Versions a reader may see: READY (so never a half-written or tombstoned one)."""
        rows = self._db.execute(
            "SELECT doc_id, version_id FROM documents WHERE state=?", (State.READY,)
        )
        return [version_key(r[0], r[1]) for r in rows]

    @staticmethod
    def _state(db: sqlite3.Connection, doc_id: str, version_id: str) -> State:
        row = db.execute(
            "SELECT state FROM documents WHERE doc_id=? AND version_id=?", (doc_id, version_id)
        ).fetchone()
        if row is None:
            raise TransitionError(f"{doc_id}@{version_id} has no manifest entry")
        return State(row[0])

    # ---- chunks ----------------------------------------------------------------------------

    def fingerprints(self, doc_id: str, version_id: str) -> dict[str, str]:
        """chunk_id → fingerprint of the version's published chunk records."""
        rows = self._db.execute(
            "SELECT chunk_id, fingerprint FROM chunks WHERE doc_id=? AND version_id=?",
            (doc_id, version_id),
        )
        return {r[0]: r[1] for r in rows}

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        ids = list(chunk_ids)
        found: dict[str, Chunk] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self._db.execute(
                f"SELECT chunk_id, record FROM chunks WHERE chunk_id IN ({marks})", part
            ):
                found[row[0]] = Chunk.model_validate_json(row[1])
        return found

    def version_chunks(self, doc_id: str, version_id: str) -> list[Chunk]:
        rows = self._db.execute(
            "SELECT record FROM chunks WHERE doc_id=? AND version_id=?", (doc_id, version_id)
        )
        return [Chunk.model_validate_json(r[0]) for r in rows]

    # ---- runs ------------------------------------------------------------------------------

    def start_run(self, run_id: str, source: str) -> None:
        self._db.execute(
            "INSERT INTO runs (run_id, source, started_at) VALUES (?,?,?)", (run_id, source, _now())
        )

    def finish_run(self, run_id: str, summary: dict) -> None:
        self._db.execute(
            "UPDATE runs SET finished_at=?, summary=? WHERE run_id=?",
            (_now(), json.dumps(summary, ensure_ascii=False), run_id),
        )

    def last_run(self) -> dict | None:
        row = self._db.execute(
            "SELECT * FROM runs WHERE finished_at IS NOT NULL ORDER BY finished_at DESC LIMIT 1"
        ).fetchone()
        return dict(row) | {"summary": json.loads(row["summary"])} if row else None


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value else None


def _log(db: sqlite3.Connection, doc_id: str, version_id: str, state: State, reason: str | None,
         run_id: str, at: str) -> None:
    db.execute(
        "INSERT INTO transitions VALUES (?,?,?,?,?,?)",
        (doc_id, version_id, state, reason, run_id, at),
    )


def _record(row: sqlite3.Row) -> DocumentRecord:
    data = dict(row)
    data["acl"] = json.loads(data["acl"] or "[]")
    return DocumentRecord.model_validate(data)
