-- kbflow manifest, version 1: one row per document version, the chunk records last
-- published for it (the "previous manifest" that diffs run against), every state
-- transition, and one row per run.

CREATE TABLE documents (
    doc_id          TEXT NOT NULL,
    version_id      TEXT NOT NULL,
    state           TEXT NOT NULL,
    reason          TEXT,
    title           TEXT,
    source_path     TEXT NOT NULL,
    source_uri      TEXT,
    file_hash       TEXT,
    tenant_id       TEXT,
    acl             TEXT,            -- JSON array of groups
    effective_from  TEXT,            -- ISO date
    effective_to    TEXT,            -- ISO date, inclusive
    parser_version  TEXT,
    chunker_version TEXT,
    embedding_model TEXT,
    chunk_count     INTEGER NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_run_id     TEXT,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (doc_id, version_id)
);

CREATE TABLE chunks (
    chunk_id     TEXT PRIMARY KEY,
    doc_id       TEXT NOT NULL,
    version_id   TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,      -- hash of the whole record: any change means a rewrite
    record       TEXT NOT NULL,      -- the Chunk model as JSON
    run_id       TEXT
);
CREATE INDEX chunks_by_version ON chunks (doc_id, version_id);

CREATE TABLE transitions (
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
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    summary     TEXT                 -- JSON of the run summary
);
