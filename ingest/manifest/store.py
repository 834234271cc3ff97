"""The manifest: generations, the document-version state machine, published chunks, tombstones.

It lives in a SQLite file (embedded profile) or in PostgreSQL (a postgresql:// URL, for many
workers on many hosts); the SQL is the same on both (`ingest/manifest/sql.py`).

Every state change is one transaction that also appends to `transitions`, so a run killed at any
point leaves a state it can resume from. The chunk records of a version are replaced in the same
transaction that marks it READY: they are always the set the stores were last published with.

A ManifestStore is bound to one generation (by default the serving one); a full rebuild binds a
second instance to the generation it is building.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import Any

from ingest.diff import Published, fingerprint
from ingest.manifest.records import (
    ChunkTrace,
    DocumentRecord,
    Generation,
    RunRecord,
    generation_of,
    record_of,
    run_of,
)
from ingest.manifest.sql import Connection, connect
from ingest.models import ROLE_STEPS, Chunk, DocumentIdentity, DocumentMeta, State, version_key

# Forward path of a healthy version: CREATED, one state per store role (ROLE_STEPS), READY.
# FAILED and TOMBSTONED can be entered from anywhere.
_PATH = (State.CREATED, *(state for _, state in ROLE_STEPS), State.READY)
_IN_FLIGHT = _PATH[:-1]
# A version in flight that has chunk records was published before: it is being rewritten, and
# its last published content serves until the rewrite is READY (or failed: it stays READY).
_REWRITTEN = f"""d.state IN ({",".join("?" * len(_IN_FLIGHT))}) AND EXISTS (SELECT 1 FROM chunks c
    WHERE c.generation = d.generation AND c.doc_id = d.doc_id AND c.version_id = d.version_id)"""
_NEXT = dict(pairwise(_PATH))


# The tombstone reason of a version whose file vanished from its folder: the file coming back
# lifts it (a user re-adding a file expects it published again).
FILE_GONE = "source file deleted"


class TransitionError(RuntimeError):
    """A state change the state machine does not allow."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ManifestStore:
    def __init__(self, location: str | Path, generation: str | None = None) -> None:
        """`location`: a SQLite file path or a postgresql:// URL (Settings.manifest)."""
        self._db = connect(location)
        self._migrate()
        serving = self.serving()
        self.generation: str | None = generation or (serving.generation if serving else None)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ManifestStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def _tx(self, document: str | None = None) -> Iterator[Connection]:
        """A write transaction locking one document's rows (its doc id) or the whole manifest."""
        self._db.begin(document)
        try:
            yield self._db
        except BaseException:
            self._db.rollback()
            raise
        self._db.commit()

    def _migrate(self) -> None:
        """Apply the migrations in manifests/sql/ not applied yet, in one transaction under the
        writer lock, so processes opening a new manifest at once apply them once."""
        scripts = sorted((e for e in (resources.files("manifests") / "sql").iterdir()
                          if e.name.endswith(".sql")), key=lambda e: e.name)
        if self._db.read_only:  # a reader of a file it may not write: it can only check
            done = {r[0] for r in self._db.execute("SELECT name FROM schema_migrations")}
            if missing := [e.name for e in scripts if e.name not in done]:
                raise RuntimeError(f"the manifest lacks migrations {', '.join(missing)} and is "
                                   "read-only here: open it once where it is writable")
            return
        with self._tx() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)")
            done = {r[0] for r in db.execute("SELECT name FROM schema_migrations")}
            for entry in scripts:
                if entry.name in done:
                    continue
                script = re.sub(r"--[^\n]*", "", entry.read_text(encoding="utf-8"))
                for statement in script.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute("INSERT INTO schema_migrations VALUES (?)", (entry.name,))

    @property
    def _gen(self) -> str:
        if self.generation is None:
            raise TransitionError("no generation yet: nothing has been ingested")
        return self.generation

    # ---- generations -----------------------------------------------------------------------

    def generations(self) -> list[Generation]:
        rows = self._db.execute("SELECT * FROM generations ORDER BY number")
        return [generation_of(r) for r in rows]

    def get_generation(self, generation: str) -> Generation | None:
        row = self._db.execute(
            "SELECT * FROM generations WHERE generation=?", (generation,)
        ).fetchone()
        return generation_of(row) if row else None

    def serving(self) -> Generation | None:
        row = self._db.execute("SELECT * FROM generations WHERE status='serving'").fetchone()
        return generation_of(row) if row else None

    def create_generation(self, model: str, dimension: int | None, chunker_version: str | None,
                          *, serving: bool = False) -> Generation:
        """The next generation: serving at once for the very first ingest, else building."""
        with self._tx() as db:
            number = db.execute("SELECT coalesce(max(number), 0) + 1 FROM generations").fetchone()
            name = f"g{number[0]}"
            db.execute(
                """INSERT INTO generations (generation, number, status, embedding_model, dimension,
                       chunker_version, created_at, activated_at) VALUES (?,?,?,?,?,?,?,?)""",
                (name, number[0], "serving" if serving else "building", model, dimension,
                 chunker_version, _now(), _now() if serving else None),
            )
        generation = self.get_generation(name)
        assert generation is not None
        return generation

    def set_generation_status(self, generation: str, status: str,
                              gate_report: dict[str, Any] | None = None) -> None:
        self._db.execute(
            "UPDATE generations SET status=?, gate_report=coalesce(?, gate_report) "
            "WHERE generation=?",
            (status, json.dumps(gate_report, ensure_ascii=False) if gate_report else None,
             generation),
        )

    def record_dimension(self, generation: str, dimension: int) -> None:
        self._db.execute(
            "UPDATE generations SET dimension=? WHERE generation=?", (dimension, generation)
        )

    def activate(self, generation: str, gate_report: dict[str, Any] | None = None) -> None:
        """Make `generation` the serving one (with the gate report that let it), in one
        transaction; the previous serving generation is kept."""
        with self._tx() as db:
            db.execute("UPDATE generations SET status='kept' WHERE status='serving'")
            db.execute(
                "UPDATE generations SET status='serving', activated_at=?, "
                "gate_report=coalesce(?, gate_report) WHERE generation=?",
                (_now(), json.dumps(gate_report, ensure_ascii=False) if gate_report else None,
                 generation),
            )

    def drop_generation_rows(self, generation: str) -> None:
        with self._tx() as db:
            for table in ("chunks", "documents", "transitions"):
                db.execute(f"DELETE FROM {table} WHERE generation=?", (generation,))
            db.execute("UPDATE generations SET status='dropped' WHERE generation=?", (generation,))

    # ---- documents -------------------------------------------------------------------------

    def get(self, doc_id: str, version_id: str) -> DocumentRecord | None:
        row = self._db.execute(
            "SELECT * FROM documents WHERE generation=? AND doc_id=? AND version_id=?",
            (self._gen, doc_id, version_id),
        ).fetchone()
        return record_of(row) if row else None

    def documents(self, *, doc_ids: Iterable[str] | None = None,
                  source_paths: Iterable[str] | None = None,
                  under: str | None = None) -> list[DocumentRecord]:
        """This generation's versions: all of them, or only those of the given documents, files
        or of the files in a folder (`under`, at any depth, whatever folder they were ingested
        from): a run reads what it touches, so its cost does not grow with the manifest."""
        if self.generation is None:
            return []
        if doc_ids is None and source_paths is None and under is None:
            return self._select("SELECT * FROM documents WHERE generation=?", [self.generation])
        found = []
        if under is not None:
            prefix = under.rstrip("/") + "/"
            found += self._select(
                "SELECT * FROM documents WHERE generation=? "
                "AND substr(source_path, 1, CAST(? AS INTEGER))=?",
                [self.generation, len(prefix), prefix])
        for column, values in (("doc_id", doc_ids), ("source_path", source_paths)):
            values = sorted(set(values or ()))
            for start in range(0, len(values), 500):
                part = values[start : start + 500]
                found += self._select(
                    f"SELECT * FROM documents WHERE generation=? AND {column} IN "
                    f"({','.join('?' * len(part))})", [self.generation, *part])
        unique = {(r.doc_id, r.version_id): r for r in found}
        return [unique[key] for key in sorted(unique)]

    def source_roots(self) -> list[str]:
        """The folders this generation's documents were ingested from (their doc ids derive
        from them, and their folders' metadata applies from them down)."""
        if self.generation is None:
            return []
        rows = self._db.execute(
            "SELECT DISTINCT source_root FROM documents WHERE generation=? "
            "AND source_root IS NOT NULL ORDER BY 1", (self.generation,))
        return [row[0] for row in rows]

    def _select(self, sql: str, params: Sequence[object]) -> list[DocumentRecord]:
        rows = self._db.execute(sql + " ORDER BY doc_id, version_id", params)
        return [record_of(r) for r in rows]

    def identified(self) -> list[DocumentRecord]:
        """Published versions whose identity was read from their text (no sidecar ids): the
        ones a new sidecar-less file may turn out to be a version of."""
        if self.generation is None:
            return []
        return self._select(
            """SELECT d.* FROM documents d
               LEFT JOIN tombstones t ON t.doc_id = d.doc_id AND t.version_id = d.version_id
               WHERE d.generation=? AND d.state=? AND d.identity IS NOT NULL
                 AND t.doc_id IS NULL""", [self.generation, State.READY])

    def state_counts(self) -> dict[str, int]:
        """Versions per state in this generation."""
        if self.generation is None:
            return {}
        rows = self._db.execute(
            "SELECT state, count(*) FROM documents WHERE generation=? GROUP BY state ORDER BY 1",
            (self.generation,))
        return {str(r[0]): int(r[1]) for r in rows}

    def titles(self) -> set[str]:
        """The titles of this generation's versions that are not deleted."""
        if self.generation is None:
            return set()
        rows = self._db.execute(
            "SELECT DISTINCT title FROM documents WHERE generation=? AND state<>? "
            "AND title IS NOT NULL", (self.generation, State.TOMBSTONED))
        return {r[0] for r in rows}

    def begin(self, meta: DocumentMeta, run_id: str, chunker_version: str, model: str,
              *, source_root: str | None = None, parser_version: str | None = None,
              parse_report: dict[str, Any] | None = None) -> frozenset[str] | None:
        """Enter CREATED for a version about to be (re)written: new, changed, failed or resumed.

        Returns the chunk ids the stores hold of the version when the manifest knows them, so
        a writer need not ask the stores: none for a new version, its published chunk records
        for one that is READY with no failed attempt since. None when an attempt was cut short
        or failed: rows it wrote are recorded nowhere but in the stores."""
        now = _now()
        with self._tx(meta.doc_id) as db:
            if self._tombstoned(db, meta.doc_id, meta.version_id):
                raise TransitionError(f"{version_key(meta.doc_id, meta.version_id)} is tombstoned")
            stored = self._stored_ids(db, meta.doc_id, meta.version_id)
            db.execute(
                """INSERT INTO documents (generation, doc_id, version_id, state, reason, title,
                       source_path, source_root, source_uri, file_hash, tenant_id, acl,
                       effective_from, effective_to, effective_to_declared, parser_version,
                       chunker_version, embedding_model, parse_report, attempts, last_run_id,
                       updated_at, identity, authority)
                   VALUES (?,?,?,?,NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,?,?,?,?)
                   ON CONFLICT (generation, doc_id, version_id) DO UPDATE SET
                       state=excluded.state, reason=NULL, title=excluded.title,
                       source_path=excluded.source_path,
                       source_root=coalesce(excluded.source_root, documents.source_root),
                       source_uri=excluded.source_uri, file_hash=excluded.file_hash,
                       tenant_id=excluded.tenant_id, acl=excluded.acl,
                       effective_from=excluded.effective_from, effective_to=excluded.effective_to,
                       effective_to_declared=excluded.effective_to_declared,
                       parser_version=coalesce(excluded.parser_version, documents.parser_version),
                       chunker_version=excluded.chunker_version,
                       embedding_model=excluded.embedding_model,
                       parse_report=coalesce(excluded.parse_report, documents.parse_report),
                       attempts=documents.attempts + 1, last_run_id=excluded.last_run_id,
                       updated_at=excluded.updated_at, identity=excluded.identity,
                       authority=excluded.authority""",
                (
                    self._gen, meta.doc_id, meta.version_id, State.CREATED, meta.title,
                    meta.source_path, source_root, meta.source_uri, meta.file_hash,
                    meta.tenant_id, json.dumps(meta.acl), _iso(meta.effective_from),
                    _iso(meta.effective_to), _iso(meta.effective_to), parser_version,
                    chunker_version, model,
                    json.dumps(parse_report, ensure_ascii=False) if parse_report else None,
                    run_id, now,
                    meta.identity.model_dump_json() if meta.identity else None,
                    meta.authority,
                ),
            )
            self._log(db, meta.doc_id, meta.version_id, State.CREATED, None, run_id, now)
        return stored

    def _stored_ids(self, db: Connection, doc_id: str, version_id: str) -> frozenset[str] | None:
        """`begin`'s answer, read before the version leaves its state. A READY version with a
        reason kept its content through a failed rewrite, which may have left rows."""
        row = db.execute(
            "SELECT state, reason FROM documents WHERE generation=? AND doc_id=? AND version_id=?",
            (self._gen, doc_id, version_id),
        ).fetchone()
        if row is None:
            return frozenset()
        if row[0] != State.READY or row[1] is not None:
            return None
        rows = db.execute(
            "SELECT chunk_id FROM chunks WHERE generation=? AND doc_id=? AND version_id=?",
            (self._gen, doc_id, version_id),
        )
        return frozenset(r[0] for r in rows)

    def advance(self, doc_id: str, version_id: str, to: State, run_id: str) -> None:
        """Move one step along CREATED→…→NEO4J_READY; any other step is refused."""
        if to == State.READY:
            raise TransitionError("READY is entered through publish(), with the chunk records")
        with self._tx(doc_id) as db:
            current = self._state(db, doc_id, version_id)
            if _NEXT.get(current) != to:
                raise TransitionError(f"{doc_id}@{version_id}: {current} → {to} is not allowed")
            now = _now()
            db.execute(
                """UPDATE documents SET state=?, updated_at=?
                   WHERE generation=? AND doc_id=? AND version_id=?""",
                (to, now, self._gen, doc_id, version_id),
            )
            self._log(db, doc_id, version_id, to, None, run_id, now)

    def publish(self, doc_id: str, version_id: str, chunks: list[Chunk], run_id: str,
                effective_to: date | None = None) -> None:
        """NEO4J_READY → READY, replacing the version's published chunk records atomically.

        `effective_to` is the end date in force (declared, or closed by a later version)."""
        with self._tx(doc_id) as db:
            current = self._state(db, doc_id, version_id)
            if current != State.NEO4J_READY:
                raise TransitionError(f"{doc_id}@{version_id}: {current} → READY is not allowed")
            db.execute(
                "DELETE FROM chunks WHERE generation=? AND doc_id=? AND version_id=?",
                (self._gen, doc_id, version_id),
            )
            db.executemany(
                "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?)",
                [
                    (self._gen, c.chunk_id, doc_id, version_id, c.content_hash, fingerprint(c),
                     c.model_dump_json(), run_id)
                    for c in chunks
                ],
            )
            now = _now()
            db.execute(
                """UPDATE documents SET state=?, chunk_count=?, updated_at=?,
                       effective_to=coalesce(?, effective_to_declared)
                   WHERE generation=? AND doc_id=? AND version_id=?""",
                (State.READY, sum(c.kind != "parent" for c in chunks), now, _iso(effective_to),
                 self._gen, doc_id, version_id),
            )
            self._log(db, doc_id, version_id, State.READY, None, run_id, now)

    def fail(self, key: tuple[str, str], source_path: str, reason: str, run_id: str, *,
             tenant_id: str | None = None, acl: Sequence[str] = ()) -> State:
        """Record a failure with its reason (and whose document it is, when known); the next
        run retries it.

        A version published before (it has chunk records: READY, or a rewrite begun) is READY
        again (its last published content keeps serving); the reason says that its new content
        failed. Anything else becomes FAILED. Returns the state.
        """
        doc_id, version_id = key
        now = _now()
        with self._tx(doc_id) as db:
            row = db.execute(
                "SELECT 1 FROM chunks WHERE generation=? AND doc_id=? AND version_id=? LIMIT 1",
                (self._gen, doc_id, version_id),
            ).fetchone()
            state = State.READY if row else State.FAILED
            note = f"kept last published content; new content failed: {reason}" \
                if state == State.READY else reason
            db.execute(
                """INSERT INTO documents (generation, doc_id, version_id, state, reason,
                       source_path, tenant_id, acl, attempts, last_run_id, updated_at)
                   VALUES (?,?,?,?,?,?,?,?,1,?,?)
                   ON CONFLICT (generation, doc_id, version_id) DO UPDATE SET
                       state=excluded.state, reason=excluded.reason,
                       tenant_id=coalesce(excluded.tenant_id, documents.tenant_id),
                       acl=CASE WHEN excluded.acl = '[]' THEN documents.acl ELSE excluded.acl END,
                       attempts=documents.attempts + 1, last_run_id=excluded.last_run_id,
                       updated_at=excluded.updated_at""",
                (self._gen, doc_id, version_id, state, note, source_path, tenant_id,
                 json.dumps(list(acl)), run_id, now),
            )
            self._log(db, doc_id, version_id, state, note, run_id, now)
        return state

    def inferred_version(self, source_path: str, file_hash: str) -> DocumentRecord | None:
        """The version a sidecar-less file with this content was last ingested as (in this
        generation, else in the newest other one, for a rebuild), so a file grouped with others
        by its text keeps its doc id and version without parsing, or when parsed again."""
        row = self._db.execute(
            """SELECT * FROM documents WHERE source_path=? AND file_hash=?
               AND identity IS NOT NULL AND state<>?
               ORDER BY CASE WHEN generation=? THEN 0 ELSE 1 END, updated_at DESC LIMIT 1""",
            (source_path, file_hash, State.TOMBSTONED, self.generation),
        ).fetchone()
        return record_of(row) if row else None

    def relocate(self, doc_id: str, version_id: str, source_path: str, source_root: str) -> None:
        """Record where an unchanged file lives now (a moved or re-checked-out folder)."""
        self._db.execute(
            """UPDATE documents SET source_path=?, source_root=?
               WHERE generation=? AND doc_id=? AND version_id=?""",
            (source_path, source_root, self._gen, doc_id, version_id),
        )

    def set_duplicates(self, doc_id: str, version_id: str, paths: list[str]) -> None:
        """Identical files (same content and sidecar) ingested once, as this version."""
        self._db.execute(
            """UPDATE documents SET duplicate_paths=?
               WHERE generation=? AND doc_id=? AND version_id=?""",
            (json.dumps(paths, ensure_ascii=False), self._gen, doc_id, version_id),
        )

    def published_keys(self) -> list[str]:
        """Versions a reader may see: READY in this generation, or being rewritten after it was
        (its last published content serves), and not tombstoned."""
        if self.generation is None:
            return []
        rows = self._db.execute(
            f"""SELECT d.doc_id, d.version_id FROM documents d
               LEFT JOIN tombstones t ON t.doc_id = d.doc_id AND t.version_id = d.version_id
               WHERE d.generation=? AND (d.state=? OR {_REWRITTEN}) AND t.doc_id IS NULL
               ORDER BY d.doc_id, d.version_id""",
            (self.generation, State.READY, *_IN_FLIGHT),
        )
        return [version_key(r[0], r[1]) for r in rows]

    def hidden_keys(self) -> list[str]:
        """Versions a reader must not see although the stores may hold rows of them: every
        state but READY (in flight, failed, or deleted), except deleted versions whose rows
        are cleaned from every generation and published versions being rewritten (a hit is
        read back from their last published records). Searches exclude these instead of
        listing every published version, so the filter stays as small as what is wrong now."""
        if self.generation is None:
            return []
        # `state IN (every other state)`, not `state <> READY`, and no ORDER BY: so the
        # planner ranges over documents_by_state (0.05 ms at 100,000 versions, against 20 ms
        # for a scan of the generation).
        hidden = [s for s in State if s is not State.READY]
        rows = self._db.execute(
            f"""SELECT d.doc_id, d.version_id FROM documents d
               LEFT JOIN tombstones t ON t.doc_id = d.doc_id AND t.version_id = d.version_id
               WHERE d.generation=? AND d.state IN ({",".join("?" * len(hidden))})
                 AND NOT (d.state=? AND t.cleaned_at IS NOT NULL) AND NOT ({_REWRITTEN})""",
            (self.generation, *hidden, State.TOMBSTONED, *_IN_FLIGHT),
        )
        return sorted(version_key(r[0], r[1]) for r in rows)

    def _state(self, db: Connection, doc_id: str, version_id: str) -> State:
        row = db.execute(
            "SELECT state FROM documents WHERE generation=? AND doc_id=? AND version_id=?",
            (self._gen, doc_id, version_id),
        ).fetchone()
        if row is None:
            raise TransitionError(f"{doc_id}@{version_id} has no manifest entry")
        return State(row[0])

    def _log(self, db: Connection, doc_id: str, version_id: str, state: State,
             reason: str | None, run_id: str, at: str) -> None:
        db.execute(
            "INSERT INTO transitions VALUES (?,?,?,?,?,?,?)",
            (self._gen, doc_id, version_id, state, reason, run_id, at),
        )

    # ---- tombstones ------------------------------------------------------------------------

    def tombstone(self, doc_id: str, version_id: str | None, reason: str,
                  run_id: str) -> list[tuple[str, str]]:
        """Tombstone one version, or every known version of a document, in every generation.

        Written before any store is touched, so a crash during cleanup never brings it back."""
        now = _now()
        with self._tx(doc_id) as db:
            rows = db.execute(
                "SELECT DISTINCT doc_id, version_id FROM documents WHERE doc_id=?"
                + (" AND version_id=?" if version_id else ""),
                (doc_id, version_id) if version_id else (doc_id,),
            ).fetchall()
            keys = [(r[0], r[1]) for r in rows]
            for doc, version in keys:
                db.execute(
                    "INSERT INTO tombstones VALUES (?,?,?,?,NULL) ON CONFLICT DO NOTHING",
                    (doc, version, reason, now),
                )
                db.execute(
                    """UPDATE documents SET state=?, reason=?, updated_at=?
                       WHERE doc_id=? AND version_id=?""",
                    (State.TOMBSTONED, reason, now, doc, version),
                )
                for (generation,) in db.execute(
                    "SELECT generation FROM documents WHERE doc_id=? AND version_id=?",
                    (doc, version),
                ).fetchall():
                    db.execute(
                        "INSERT INTO transitions VALUES (?,?,?,?,?,?,?)",
                        (generation, doc, version, State.TOMBSTONED, reason, run_id, now),
                    )
        return keys

    def pending_cleanups(self) -> list[tuple[str, str]]:
        rows = self._db.execute(
            "SELECT doc_id, version_id FROM tombstones WHERE cleaned_at IS NULL ORDER BY 1, 2"
        )
        return [(r[0], r[1]) for r in rows]

    def mark_cleaned(self, doc_id: str, version_id: str) -> None:
        with self._tx(doc_id) as db:
            db.execute(
                "UPDATE tombstones SET cleaned_at=? WHERE doc_id=? AND version_id=?",
                (_now(), doc_id, version_id),
            )
            db.execute(
                "DELETE FROM chunks WHERE doc_id=? AND version_id=?", (doc_id, version_id)
            )

    def lift_tombstone_for(self, doc_id: str, version_id: str, file_hash: str) -> bool:
        """Whether a version may be written: not tombstoned, or its tombstone is lifted now
        because the file is back (it was tombstoned for being gone) or has new content. A
        version deleted on purpose whose file is unchanged stays deleted (`kbflow undelete`).

        Tombstones exist so that a crash between a delete and its cleanup never resurrects a
        document; they are not meant to stop a user from publishing it again."""
        row = self._db.execute(
            "SELECT reason FROM tombstones WHERE doc_id=? AND version_id=?", (doc_id, version_id)
        ).fetchone()
        if row is None:
            return True
        record = self.get(doc_id, version_id) if self.generation else None
        if row[0] != FILE_GONE and record is not None and record.file_hash == file_hash:
            return False
        self.lift_tombstone(doc_id, version_id)
        return True

    def lift_tombstone(self, doc_id: str, version_id: str) -> None:
        """Make a deleted version writable again; it is visible once it is published again."""
        self._db.execute(
            "DELETE FROM tombstones WHERE doc_id=? AND version_id=?", (doc_id, version_id)
        )

    def is_tombstoned(self, doc_id: str, version_id: str) -> bool:
        return self._tombstoned(self._db, doc_id, version_id)

    @staticmethod
    def _tombstoned(db: Connection, doc_id: str, version_id: str) -> bool:
        row = db.execute(
            "SELECT 1 FROM tombstones WHERE doc_id=? AND version_id=?", (doc_id, version_id)
        ).fetchone()
        return row is not None

    # ---- chunks ----------------------------------------------------------------------------

    def published(self, doc_id: str, version_id: str) -> dict[str, Published]:
        """chunk_id → (content_hash, fingerprint) of the version's published chunk records."""
        rows = self._db.execute(
            """SELECT chunk_id, content_hash, fingerprint FROM chunks
               WHERE generation=? AND doc_id=? AND version_id=?""",
            (self._gen, doc_id, version_id),
        )
        return {r[0]: Published(r[1], r[2]) for r in rows}

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The records these chunks were last published with (a version being rewritten keeps
        its old records until it is READY again: a hit read back is always a whole version)."""
        ids = list(chunk_ids)
        found: dict[str, Chunk] = {}
        if self.generation is None:
            return found
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for row in self._db.execute(
                f"SELECT chunk_id, record FROM chunks WHERE generation=? AND chunk_id IN ({marks})",
                [self.generation, *part],
            ):
                found[row[0]] = Chunk.model_validate_json(row[1])
        return found

    def published_chunks(self) -> list[Chunk]:
        """Every chunk a reader may be shown (of `published_keys`), in one read."""
        keys = set(self.published_keys())
        rows = self._db.execute(
            "SELECT doc_id, version_id, record FROM chunks WHERE generation=?", (self._gen,))
        return [Chunk.model_validate_json(r[2]) for r in rows if version_key(r[0], r[1]) in keys]

    def version_chunks(self, doc_id: str, version_id: str) -> list[Chunk]:
        rows = self._db.execute(
            "SELECT record FROM chunks WHERE generation=? AND doc_id=? AND version_id=?",
            (self._gen, doc_id, version_id),
        )
        return [Chunk.model_validate_json(r[0]) for r in rows]

    def trace(self, chunk_id: str) -> list[ChunkTrace]:
        """Every generation's record of a chunk, with the run that wrote it."""
        rows = self._db.execute(
            """SELECT c.generation, c.record, c.run_id, r.started_at, r.source, d.identity
               FROM chunks c LEFT JOIN runs r ON r.run_id = c.run_id
               LEFT JOIN documents d ON d.generation = c.generation AND d.doc_id = c.doc_id
                   AND d.version_id = c.version_id
               WHERE c.chunk_id=? ORDER BY c.generation""",
            (chunk_id,),
        )
        return [
            ChunkTrace(generation=r[0], chunk=Chunk.model_validate_json(r[1]), run_id=r[2],
                       run_started_at=r[3], run_source=r[4],
                       identity=DocumentIdentity.model_validate_json(r[5]) if r[5] else None)
            for r in rows
        ]

    # ---- runs ------------------------------------------------------------------------------

    def start_run(self, run_id: str, source: str) -> None:
        self._db.execute(
            """INSERT INTO runs (run_id, source, generation, started_at) VALUES (?,?,?,?)
               ON CONFLICT (run_id) DO UPDATE SET source=excluded.source,
                   generation=excluded.generation, started_at=excluded.started_at,
                   finished_at=NULL, summary=NULL""",
            (run_id, source, self.generation, _now()),
        )

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        self._db.execute(
            "UPDATE runs SET finished_at=?, generation=?, summary=? WHERE run_id=?",
            (_now(), self.generation, json.dumps(summary, ensure_ascii=False), run_id),
        )

    def run(self, run_id: str) -> RunRecord | None:
        """One run, its summary parsed (None until it finished)."""
        row = self._db.execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return run_of(row) if row else None

    def last_run(self) -> RunRecord | None:
        row = self._db.execute(
            "SELECT * FROM runs WHERE finished_at IS NOT NULL ORDER BY finished_at DESC LIMIT 1"
        ).fetchone()
        return run_of(row) if row else None


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value else None
