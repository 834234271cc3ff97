"""What the console's pages show, read from the manifest (never from the vector or lexical
stores: a page costs a few SQL reads however large the index).

Every function takes the reader's SearchFilter and returns only what `SearchFilter.admits`
lets through, the tenant-and-groups rule every store query applies: a version of another
tenant or of groups the key lacks is treated as absent, never as forbidden.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import urlsplit

from ingest.chunk.describe import ChunkRow, describe
from ingest.manifest import ManifestStore
from ingest.manifest.records import ChunkTrace, DocumentRecord, RunRecord
from ingest.models import Chunk, ChunkKind, SearchFilter, State

MAX_LISTED = 2000  # versions one documents page lists (the counts cover all of them)


@dataclass
class Listing:
    """The documents page: the versions the filters let through, and counts per state."""

    rows: list[DocumentRecord]
    counts: dict[str, int]
    tenants: list[str]
    folders: list[str]
    runs: dict[str, RunRecord]
    more: int = 0  # versions matched beyond MAX_LISTED
    # Failed files whose metadata was never read (no tenant): no key's to see; counted so an
    # operator knows to look at `kbflow status`.
    unattributed: int = 0


def folder_of(record: DocumentRecord) -> str:
    """The record's folder relative to the root it was ingested from ('' at the root)."""
    path = PurePath(record.source_path)
    if record.source_root and path.is_relative_to(record.source_root):
        path = path.relative_to(record.source_root)
    parent = str(path.parent)
    return "" if parent == "." else parent


def listing(manifest: ManifestStore, reader: SearchFilter, *, state: str = "",
            tenant: str = "", folder: str = "", text: str = "") -> Listing:
    everything = manifest.documents()
    visible = [r for r in everything if reader.admits(r.tenant_id, r.acl)]
    counts = dict(sorted(Counter(str(r.state) for r in visible).items()))
    needle = text.casefold()
    rows = [r for r in visible
            if (not state or r.state == state) and (not tenant or r.tenant_id == tenant)
            and (not folder or folder_of(r) == folder or folder_of(r).startswith(folder + "/"))
            and (not needle or any(needle in (v or "").casefold() for v in (
                r.doc_id, r.title, r.source_path, r.reason)))]
    rows.sort(key=lambda r: (r.state != State.FAILED, r.doc_id, r.version_id))
    runs = {}
    for run_id in {r.last_run_id for r in rows[:MAX_LISTED] if r.last_run_id}:
        if (run := manifest.run(run_id)) is not None:
            runs[run_id] = run
    return Listing(rows=rows[:MAX_LISTED], counts=counts,
                   tenants=sorted({r.tenant_id or "" for r in visible}),
                   folders=sorted({folder_of(r) for r in visible} - {""}), runs=runs,
                   more=max(0, len(rows) - MAX_LISTED),
                   unattributed=sum(r.state == State.FAILED and not r.tenant_id
                                    for r in everything))


def versions(manifest: ManifestStore, reader: SearchFilter, doc_id: str) -> list[DocumentRecord]:
    """The document's visible versions, oldest first (empty: unknown, or not this reader's)."""
    found = [r for r in manifest.documents(doc_ids=[doc_id])
             if reader.admits(r.tenant_id, r.acl)]
    return sorted(found, key=in_force_order)


def in_force_order(r: DocumentRecord) -> tuple[bool, date, str]:
    """Versions oldest first (one with no start date last)."""
    return r.effective_from is None, r.effective_from or date.min, r.version_id


@dataclass
class ChunkView:
    row: ChunkRow
    chunk: Chunk
    number: int  # its position in reading order, from 1


@dataclass
class DocumentView:
    record: DocumentRecord
    versions: list[DocumentRecord]
    chunks: list[ChunkView]
    token_limit: int
    pages: list[int] = field(default_factory=list)  # pages with outlined chunk regions
    link: str | None = None  # the source URI, when it may be a link


@lru_cache(maxsize=4)
def _counter(model: str) -> Any:
    """The model's own token counter (as `kbflow chunks` counts), loaded once per model."""
    from ingest.embed import TokenCounter

    return TokenCounter(model)


def document(manifest: ManifestStore, reader: SearchFilter, doc_id: str,
             version_id: str | None, default_model: str) -> DocumentView | None:
    found = versions(manifest, reader, doc_id)
    record = next((r for r in found if r.version_id == version_id), None) if version_id \
        else (found[-1] if found else None)
    if record is None:
        return None
    chunks = manifest.version_chunks(record.doc_id, record.version_id)
    counter = _counter(record.embedding_model or default_model)
    rows = describe(chunks, counter.count, counter.max_tokens)
    by_id = {c.chunk_id: c for c in chunks}
    views = [ChunkView(row, by_id[row.chunk_id], n) for n, row in enumerate(rows, start=1)]
    pages = sorted({r.page for c in chunks if c.kind != ChunkKind.PARENT for r in c.regions})
    return DocumentView(record=record, versions=found, chunks=views,
                        token_limit=counter.max_tokens, pages=pages,
                        link=web_link(record.source_uri))


def web_link(uri: str | None) -> str | None:
    """The URI if a browser may follow it (http or https with a host), else None."""
    if not uri:
        return None
    parts = urlsplit(uri.strip())
    return uri.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def trace(manifest: ManifestStore, reader: SearchFilter, chunk_id: str) -> list[ChunkTrace]:
    """`kbflow trace` for one chunk, every generation's record the reader may see."""
    return [t for t in manifest.trace(chunk_id)
            if reader.admits(t.chunk.tenant_id, t.chunk.acl)]


def source_paths(manifest: ManifestStore, reader: SearchFilter) -> set[str]:
    """The files of the versions this reader may see (to match webhook events against)."""
    return {r.source_path for r in manifest.documents() if reader.admits(r.tenant_id, r.acl)}


def event_path(event: dict[str, Any]) -> str | None:
    """The real path an outbox event named: as dispatched, else its URI's path resolved."""
    from flows.webhook.events import to_path

    if event.get("path"):
        return str(event["path"])
    try:
        return str(Path(to_path(str(event["uri"]))).resolve())
    except (ValueError, OSError, RuntimeError):
        return None
