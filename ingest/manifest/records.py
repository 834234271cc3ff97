"""The manifest's records as other code reads them: generations, document versions, runs and
chunk lineage (pydantic models), and how a stored row becomes one."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel

from ingest.manifest.sql import DbRow
from ingest.models import Chunk, DocumentIdentity, DocumentMeta, State, version_key


class Generation(BaseModel):
    generation: str
    number: int
    status: str  # building | serving | kept | failed | dropped
    embedding_model: str
    dimension: int | None
    chunker_version: str | None
    created_at: datetime
    activated_at: datetime | None
    gate_report: dict[str, Any] | None  # the publish gate's JSON report


class DocumentRecord(BaseModel):
    generation: str
    doc_id: str
    version_id: str
    state: State
    reason: str | None
    title: str | None
    source_path: str
    source_root: str | None
    duplicate_paths: list[str]
    source_uri: str | None
    file_hash: str | None
    tenant_id: str | None
    acl: list[str]
    authority: str | None = None  # its declared authority level
    effective_from: date | None
    effective_to: date | None
    effective_to_declared: date | None
    parser_version: str | None
    chunker_version: str | None
    embedding_model: str | None
    parse_report: dict[str, Any] | None  # the parser's JSON report
    identity: DocumentIdentity | None = None  # inferred from the text (no sidecar ids)
    chunk_count: int
    attempts: int
    last_run_id: str | None
    updated_at: datetime

    @property
    def version_key(self) -> str:
        return version_key(self.doc_id, self.version_id)

    def meta(self) -> DocumentMeta:
        """The metadata this version was published with (to rewrite it without its file)."""
        return DocumentMeta(
            doc_id=self.doc_id, version_id=self.version_id, title=self.title or "",
            tenant_id=self.tenant_id or "", acl=self.acl, authority=self.authority,
            source_uri=self.source_uri or "",
            source_path=self.source_path, effective_from=self.effective_from,
            effective_to=self.effective_to_declared, file_hash=self.file_hash or "",
            identity=self.identity,
        )


class RunRecord(BaseModel):
    """One ingest run as the manifest records it (timestamps as stored, ISO 8601 text)."""

    run_id: str
    source: str
    generation: str | None
    started_at: str
    finished_at: str | None
    summary: dict[str, Any] | None  # the run's summary (JSON); None until it finished


class ChunkTrace(BaseModel):
    """One generation's record of a chunk, with the run that wrote it (`kbflow trace`)."""

    generation: str
    chunk: Chunk
    run_id: str | None
    run_started_at: str | None
    run_source: str | None
    identity: DocumentIdentity | None  # how its version was recognised, if from the text


class ManifestExport(BaseModel):
    """The manifest as `kbflow status --json` prints it, for other tools to read; its JSON
    Schema is manifests/export.schema.json (`python scripts/write_manifest_schema.py`)."""

    generation: str | None
    documents: list[DocumentRecord]
    counts: dict[str, int]  # versions per state
    last_run: RunRecord | None  # the newest finished run and its summary
    # versions whose parse left more of their text unread than min_coverage allows
    low_coverage: dict[str, float] = {}

    @classmethod
    def schema_text(cls) -> str:
        """The JSON Schema document, as manifests/export.schema.json holds it."""
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                  **cls.model_json_schema()}
        return json.dumps(schema, ensure_ascii=False, indent=2) + "\n"


def record_of(row: DbRow) -> DocumentRecord:
    data = dict(row)
    data["acl"] = json.loads(data["acl"] or "[]")
    data["duplicate_paths"] = json.loads(data["duplicate_paths"] or "[]")
    data["parse_report"] = json.loads(data["parse_report"]) if data["parse_report"] else None
    data["identity"] = json.loads(data["identity"]) if data.get("identity") else None
    return DocumentRecord.model_validate(data)


def run_of(row: DbRow) -> RunRecord:
    data = dict(row)
    data["summary"] = json.loads(data["summary"]) if data["summary"] else None
    return RunRecord.model_validate(data)


def generation_of(row: DbRow) -> Generation:
    data = dict(row)
    data["gate_report"] = json.loads(data["gate_report"]) if data["gate_report"] else None
    return Generation.model_validate(data)
