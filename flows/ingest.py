"""The ingest pipeline in one file: each document version goes

    parse → chunk → diff vs. the published manifest → embed (cached) → vectors → lexical → graph
    → READY

and moves through the manifest states CREATED → MILVUS_READY → ES_READY → NEO4J_READY → READY as
each store is written. A document that fails is recorded FAILED with its reason and the run goes
on; the stores keep what was published before, and the next run retries it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from uuid import uuid4

from prefect import flow, get_run_logger, runtime, task
from prefect.cache_policies import NO_CACHE
from prefect.utilities.annotations import quote
from pydantic import BaseModel

from ingest.chunk import CHUNKER_VERSION, chunk_document
from ingest.config import Settings
from ingest.diff import ChunkDiff, diff_chunks
from ingest.embed import Embedder, Embedding
from ingest.graph import extract_triples
from ingest.manifest import ManifestStore
from ingest.models import Chunk, ChunkKind, DocumentMeta, ParsedDocument, State, Triple
from ingest.parse import discover, parse_document, read_meta
from ingest.parse.metadata import default_doc_id
from ingest.stores import Stores, open_embedded

STAGES = ("parse", "chunk", "diff", "embed", "vectors", "lexical", "graph", "manifest")

# Set by the CLI to draw a progress bar: called with (done, total, description).
progress_listener: Callable[[int, int, str], None] | None = None


class Failure(BaseModel):
    path: str
    doc_id: str
    version_id: str
    reason: str


class ChunkCounts(BaseModel):
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0


class IngestSummary(BaseModel):
    run_id: str
    source: str
    files: int
    documents: dict[str, int]  # documents per state, across the whole manifest
    skipped_unchanged: int
    written: int
    chunks: ChunkCounts
    embedded: int
    triples: int
    failures: list[Failure]
    seconds: dict[str, float]
    total_seconds: float


@dataclass
class _Plan:
    """A document version that needs writing, with what changed since it was last published."""

    doc: ParsedDocument
    chunks: list[Chunk]
    diff: ChunkDiff
    triples: list[Triple]
    embedding_model: str

    @property
    def meta(self) -> DocumentMeta:
        return self.doc.meta


class _Clock:
    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start


# ---- tasks: thin wrappers, so every stage shows up (and is retried) in Prefect ------------------
# Large arguments are passed quote()d: Prefect would otherwise walk every float of every vector
# looking for upstream futures (about a second per call for a document's vectors).

@task(name="parse", cache_policy=NO_CACHE)
def parse_task(meta: DocumentMeta, data: bytes) -> ParsedDocument:
    return parse_document(meta, data)


@task(name="chunk", cache_policy=NO_CACHE)
def chunk_task(doc: ParsedDocument, token_cap: int) -> list[Chunk]:
    return chunk_document(doc, token_cap)


@task(name="embed", cache_policy=NO_CACHE)
def embed_task(embedder: Embedder, chunks: list[Chunk]) -> tuple[dict[str, Embedding], int]:
    return embedder.embed_chunks(chunks)


@task(name="write-vectors", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def write_vectors_task(stores: Stores, plan: _Plan, vectors: dict[str, Embedding]) -> None:
    indexed = [c for c in plan.diff.writes if c.kind != ChunkKind.PARENT]
    stores.vectors.upsert(indexed, vectors)
    stores.vectors.delete(plan.diff.removed)


@task(name="write-lexical", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def write_lexical_task(stores: Stores, plan: _Plan) -> None:
    stores.lexical.upsert(plan.diff.writes)
    stores.lexical.delete(plan.diff.removed)


@task(name="write-graph", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def write_graph_task(stores: Stores, plan: _Plan) -> None:
    stores.graph.delete_chunks(plan.diff.removed + [c.chunk_id for c in plan.diff.changed])
    stores.graph.upsert(plan.diff.writes, plan.triples)


# ---- the flow ---------------------------------------------------------------------------------

@flow(name="kbflow-ingest", flow_run_name="ingest {source}", log_prints=False)
def ingest_flow(source: str, data_dir: str | None = None) -> IngestSummary:
    """Ingest every document under `source` into the stores of `data_dir`."""
    settings = Settings() if data_dir is None else Settings(data_dir=Path(data_dir))
    log = get_run_logger()
    run_id = str(runtime.flow_run.id or uuid4())
    root = Path(source)
    clock = _Clock()
    started = time.perf_counter()
    manifest = ManifestStore(settings.manifest_path)
    manifest.start_run(run_id, source)
    try:
        files = discover(root)
        failures: list[Failure] = []
        plans, skipped = _prepare(files, root, settings, manifest, clock, failures, run_id)
        counts, embedded, triples, written = ChunkCounts(), 0, 0, 0
        if plans:
            embedder = Embedder(settings.embedding_model, settings.vector_cache_path,
                                settings.embedding_batch_size)
            with clock.stage("embed"):
                wanted = [c for p in plans for c in p.diff.writes if c.kind != ChunkKind.PARENT]
                vectors, embedded = embed_task(embedder, quote(wanted))
            stores = open_embedded(settings, embedder.name, embedder.dimension)
            try:
                for i, plan in enumerate(plans, start=1):
                    _notify(len(files) - len(plans) + i, len(files), plan.meta.doc_id)
                    if _write(plan, stores, vectors, manifest, clock, run_id, failures, log):
                        written += 1
                        for field in ChunkCounts.model_fields:
                            value = getattr(plan.diff, field)
                            setattr(counts, field, getattr(counts, field) + len(value))
                        triples += len(plan.triples)
            finally:
                stores.close()
                embedder.close()
        states = Counter(str(d.state) for d in manifest.documents())
        summary = IngestSummary(
            run_id=run_id, source=source, files=len(files), documents=dict(sorted(states.items())),
            skipped_unchanged=skipped, written=written,
            chunks=counts, embedded=embedded, triples=triples, failures=failures,
            seconds={s: round(clock.seconds[s], 3) for s in STAGES},
            total_seconds=round(time.perf_counter() - started, 3),
        )
        manifest.finish_run(run_id, summary.model_dump(mode="json"))
        log.info("ingested %s: %s", source, summary.model_dump_json())
        return summary
    finally:
        manifest.close()


def _notify(done: int, total: int, what: str) -> None:
    if progress_listener is not None:
        progress_listener(done, total, what)


def _prepare(files: list[Path], root: Path, settings: Settings, manifest: ManifestStore,
             clock: _Clock, failures: list[Failure], run_id: str) -> tuple[list[_Plan], int]:
    """Parse, chunk and diff every new or changed version; unchanged files cost one hash."""
    plans: list[_Plan] = []
    skipped = 0
    claimed: dict[str, str] = {}
    for i, path in enumerate(files, start=1):
        _notify(i - 1, len(files), path.name)
        key = (default_doc_id(path, root), "1")
        try:
            with clock.stage("parse"):
                meta, data = read_meta(path, root, settings.default_tenant, settings.default_acl)
            key = (meta.doc_id, meta.version_id)
            record = manifest.get(*key)
            if record and record.state == State.TOMBSTONED:
                skipped += 1
                continue
            if (record and record.state == State.READY and record.file_hash == meta.file_hash
                    and record.chunker_version == CHUNKER_VERSION
                    and record.embedding_model == settings.embedding_model):
                skipped += 1
                continue
            version = f"{meta.doc_id}@{meta.version_id}"
            if version in claimed:
                raise ValueError(f"{version} is also declared by {claimed[version]}")
            claimed[version] = str(path)
            with clock.stage("parse"):
                doc = parse_task(meta, quote(data))
            with clock.stage("chunk"):
                chunks = chunk_task(quote(doc), settings.chunk_token_cap)
                for chunk in chunks:
                    if chunk.kind != ChunkKind.PARENT:
                        chunk.embedding_model = settings.embedding_model
            with clock.stage("diff"):
                diff = diff_chunks(chunks, manifest.fingerprints(*key))
            with clock.stage("graph"):
                triples = extract_triples(diff.writes, doc.meta.title)
            plans.append(_Plan(doc=doc, chunks=chunks, diff=diff, triples=triples,
                               embedding_model=settings.embedding_model))
        except Exception as exc:  # noqa: BLE001 - a bad document fails alone, with its reason
            reason = f"{type(exc).__name__}: {exc}"
            with clock.stage("manifest"):
                manifest.fail(key, str(path), reason, run_id)
            failures.append(Failure(path=str(path), doc_id=key[0], version_id=key[1],
                                    reason=reason))
    return plans, skipped


def _write(plan: _Plan, stores: Stores, vectors: dict[str, Embedding], manifest: ManifestStore,
           clock: _Clock, run_id: str, failures: list[Failure], log) -> bool:
    """Write one version through the three stores, advancing its state after each."""
    meta = plan.meta
    key = (meta.doc_id, meta.version_id)
    try:
        with clock.stage("manifest"):
            manifest.begin(meta, run_id, CHUNKER_VERSION, plan.embedding_model)
        with clock.stage("vectors"):
            write_vectors_task(stores, quote(plan), quote(vectors))
        with clock.stage("manifest"):
            manifest.advance(*key, State.MILVUS_READY, run_id)
        with clock.stage("lexical"):
            write_lexical_task(stores, quote(plan))
        with clock.stage("manifest"):
            manifest.advance(*key, State.ES_READY, run_id)
        with clock.stage("graph"):
            write_graph_task(stores, quote(plan))
        with clock.stage("manifest"):
            manifest.advance(*key, State.NEO4J_READY, run_id)
            manifest.publish(*key, plan.chunks, run_id)
        return True
    except Exception as exc:  # noqa: BLE001 - the version stays unpublished; the run goes on
        reason = f"{type(exc).__name__}: {exc}"
        log.warning("%s@%s failed: %s", *key, reason)
        manifest.fail(key, meta.source_path, reason, run_id)
        failures.append(Failure(path=meta.source_path, doc_id=key[0], version_id=key[1],
                                reason=reason))
        return False
