-- kbflow manifest, version 1. Portable SQL: the same file migrates SQLite and PostgreSQL (dates
-- and JSON stay TEXT, so both return the same values to ingest/manifest/store.py).
--
-- generations: one row per generation of physical store collections (full rebuilds write a new
--   one beside the serving one; rollback re-points to an older one).
-- documents: one row per (generation, doc_id, version_id) with its state and reason.
-- chunks: the chunk records last published for a version in a generation (what diffs run
--   against, what search hydrates, what `trace` shows).
-- tombstones: deleted versions; never visible again in any generation, cleaned up afterwards.
-- transitions: every state change; runs: one row per run with its summary.

CREATE TABLE generations (
    generation      TEXT PRIMARY KEY,    -- g1, g2, ...
    number          INTEGER NOT NULL UNIQUE,
    status          TEXT NOT NULL,       -- building | serving | kept | failed | dropped
    embedding_model TEXT NOT NULL,
    dimension       INTEGER,
    chunker_version TEXT,
    created_at      TEXT NOT NULL,
    activated_at    TEXT,
    gate_report     TEXT                 -- JSON of the publish gate's report
);

CREATE TABLE documents (
    generation            TEXT NOT NULL,
    doc_id                TEXT NOT NULL,
    version_id            TEXT NOT NULL,
    state                 TEXT NOT NULL,
    reason                TEXT,
    title                 TEXT,
    source_path           TEXT NOT NULL,   -- absolute path of the file last ingested
    source_root           TEXT,            -- the folder it was ingested from (for doc ids)
    duplicate_paths       TEXT,            -- JSON array: identical files ingested as this one
    source_uri            TEXT,
    file_hash             TEXT,
    tenant_id             TEXT,
    acl                   TEXT,            -- JSON array of groups
    effective_from        TEXT,            -- ISO date
    effective_to          TEXT,            -- ISO date, inclusive; declared or closed by a later version
    effective_to_declared TEXT,            -- ISO date the metadata declared, if any
    parser_version        TEXT,
    chunker_version       TEXT,
    embedding_model       TEXT,
    parse_report          TEXT,            -- JSON of the parse quality report
    chunk_count           INTEGER NOT NULL DEFAULT 0,
    attempts              INTEGER NOT NULL DEFAULT 0,
    last_run_id           TEXT,
    updated_at            TEXT NOT NULL,
    PRIMARY KEY (generation, doc_id, version_id)
);

CREATE TABLE chunks (
    generation   TEXT NOT NULL,
    chunk_id     TEXT NOT NULL,
    doc_id       TEXT NOT NULL,
    version_id   TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,           -- hash of the whole record: any change means a rewrite
    record       TEXT NOT NULL,           -- the Chunk model as JSON
    run_id       TEXT,
    PRIMARY KEY (generation, chunk_id)
);
CREATE INDEX chunks_by_version ON chunks (generation, doc_id, version_id);

CREATE TABLE tombstones (
    doc_id     TEXT NOT NULL,
    version_id TEXT NOT NULL,
    reason     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    cleaned_at TEXT,                      -- NULL while store rows may remain
    PRIMARY KEY (doc_id, version_id)
);

CREATE TABLE transitions (
    generation TEXT NOT NULL,
    doc_id     TEXT NOT NULL,
    version_id TEXT NOT NULL,
    state      TEXT NOT NULL,
    reason     TEXT,
    run_id     TEXT,
    at         TEXT NOT NULL
);
CREATE INDEX transitions_by_version ON transitions (doc_id, version_id);

CREATE TABLE runs (
    run_id      TEXT PRIMARY KEY,
    source      TEXT NOT NULL,
    generation  TEXT,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    summary     TEXT                      -- JSON of the run summary
);
