"""A document version's journey through a run, one immutable record per phase:

    Prepared (read, selected) → Parsed → VersionJob (chunked, then dated) → Planned (diffed
    against what is published, triples extracted) → Written (in every store, READY)

Each phase holds what the next one needs and nothing optional: a Planned version always has
its diff."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from ingest.diff import ChunkDiff
from ingest.models import Chunk, DocumentMeta, ParsedDocument, Triple


@dataclass(frozen=True)
class Prepared:
    """A file read and chosen for parsing: new, changed, or left unfinished by an earlier run."""

    path: Path
    root: Path
    meta: DocumentMeta
    data: bytes

    @property
    def key(self) -> tuple[str, str]:
        return self.meta.doc_id, self.meta.version_id


@dataclass(frozen=True)
class Parsed:
    path: Path
    root: Path
    doc: ParsedDocument


@dataclass(frozen=True)
class VersionJob:
    """A version's chunks and what the manifest records about it. `effective_to` is its end
    date in force (declared, or closed by a later version), set by `dated` before planning."""

    meta: DocumentMeta
    chunks: list[Chunk]
    chunker_version: str
    source_root: str | None = None
    parser_version: str | None = None
    parse_report: dict[str, Any] | None = None
    effective_to: date | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.meta.doc_id, self.meta.version_id

    @property
    def version_key(self) -> str:
        return f"{self.meta.doc_id}@{self.meta.version_id}"

    def dated(self, effective_to: date | None) -> VersionJob:
        return replace(self, effective_to=effective_to)


@dataclass(frozen=True)
class Planned:
    """A version ready to write: what changed since it was last published, and its triples."""

    job: VersionJob
    diff: ChunkDiff
    triples: list[Triple] = field(default_factory=list)
    llm_graph: Counter[str] = field(default_factory=Counter)  # the LLM extractor's tally
    # Set once the manifest has begun the version: the chunk ids the stores hold of it, when
    # the manifest knows them (ManifestStore.begin); None: the writers ask the stores.
    stored: frozenset[str] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.job.key

    @property
    def version_key(self) -> str:
        return self.job.version_key


@dataclass(frozen=True)
class Written:
    """A version every store holds and the manifest marks READY."""

    planned: Planned
