"""The ingest pipeline in one file. Each document version goes

    parse → chunk (+ optional LLM context) → close older versions' dates → diff vs. the published
    manifest → embed (cached) → vectors → lexical → graph → READY

and moves through the manifest states CREATED → MILVUS_READY → ES_READY → NEO4J_READY → READY as
each store is written. Every store write first removes the version's rows that are not in the
new chunk set, so a run killed anywhere and started again converges to the same stores as an
uninterrupted run. A document that fails is recorded with its reason and the run goes on; what
was published before keeps serving, and the next run retries it.

Flows: `ingest_flow` (a folder or file; files gone from an ingested folder are tombstoned),
`incremental_flow` (changed and deleted paths, as webhooks report them); flows/lifecycle.py runs
the same `run_pipeline` into a new generation for full rebuilds.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from uuid import uuid4

from prefect import flow, get_run_logger, runtime, task
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectNotFound
from prefect.futures import PrefectFuture
from prefect.utilities.annotations import quote
from pydantic import BaseModel

from flows.artifacts import publish_summary_artifact
from ingest.chunk import ChunkParams, chunk_document, chunk_params, over_budget
from ingest.chunk.context import situate
from ingest.config import Settings
from ingest.diff import ChunkDiff, diff_chunks
from ingest.embed import Embedder, Embedding, TokenCounter
from ingest.graph.llm import extract
from ingest.graph.quality import GraphQuality, graph_quality
from ingest.lifecycle import VersionDates, cleanup_tombstones, closing_dates, open_generation
from ingest.manifest import ManifestStore
from ingest.manifest.store import FILE_GONE, Generation
from ingest.models import Chunk, ChunkKind, DocumentMeta, ParsedDocument, State, Triple
from ingest.parse import ParseError, ParsePool, read_meta, walk
from ingest.parse.identity import identify
from ingest.parse.metadata import default_doc_id
from ingest.parse.roots import OutsideRoots, resolve_under
from ingest.stores import Stores, open_stores

STAGES = ("parse", "chunk", "diff", "embed", "vectors", "lexical", "graph", "manifest")
STORE_LIMITS = ("kbflow-vectors", "kbflow-lexical", "kbflow-graph")  # see flows/deployments.py
WRITE_GROUP = 50  # versions per batched store write
PARSE_WINDOW = 16  # files read into memory and parsed side by side at a time
# Identical files are ingested once only when they hold this much: two empty or one-line files
# with the same bytes are unrelated documents, not copies of one.
MIN_DUPLICATE_BYTES = 256

# Set by the CLI to draw a progress bar: called with (done, total, description).
progress_listener: Callable[[int, int, str], None] | None = None


class Failure(BaseModel):
    path: str
    doc_id: str
    version_id: str
    reason: str


class ChunkCounts(BaseModel):
    added: int = 0
    changed: int = 0  # new content
    updated: int = 0  # same content, new links/pages/metadata: rewritten, never re-embedded
    removed: int = 0
    unchanged: int = 0


class ParseRunReport(BaseModel):
    """Parse quality over the documents this run parsed (the publish gate reads the rates)."""

    documents: int = 0
    pages: int = 0
    ocr_pages: int = 0
    tables: int = 0
    table_rows: int = 0
    empty_pages: int = 0
    parse_errors: int = 0
    missing_titles: int = 0

    @property
    def parse_error_rate(self) -> float:
        return self.parse_errors / self.documents if self.documents else 0.0

    @property
    def missing_title_rate(self) -> float:
        return self.missing_titles / self.documents if self.documents else 0.0


class IngestSummary(BaseModel):
    run_id: str
    source: str
    generation: str
    files: int
    documents: dict[str, int]  # document versions per state, in this generation
    skipped_unchanged: int
    written: int
    chunks: ChunkCounts
    embedded: int
    over_budget_chunks: int  # chunks longer than the model's input (expected 0)
    triples: int
    graph: GraphQuality = GraphQuality()  # of the relations this run wrote
    tombstoned: list[str]
    lifted: list[str] = []  # deleted versions published again (re-added, or undeleted)
    cleaned: list[str]
    duplicates: dict[str, list[str]]  # version → identical files ingested as that version
    parse: ParseRunReport
    failures: list[Failure]
    seconds: dict[str, float]
    total_seconds: float


@dataclass
class _Plan:
    """A document version that needs writing, and what changed since it was last published."""

    meta: DocumentMeta
    chunks: list[Chunk]
    chunker_version: str
    source_root: str | None = None
    parser_version: str | None = None
    parse_report: dict | None = None
    effective_to: date | None = None  # in force: declared, or closed by a later version
    diff: ChunkDiff | None = None
    triples: list[Triple] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return self.meta.doc_id, self.meta.version_id

    @property
    def version_key(self) -> str:
        return f"{self.meta.doc_id}@{self.meta.version_id}"


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
def parse_task(parser: ParsePool, meta: DocumentMeta, data: bytes) -> ParsedDocument | str:
    """A bad document is an outcome, not a crash: its ParseError (a timeout too: the worker
    process is killed) comes back as the reason."""
    try:
        return parser.parse(meta, data)
    except ParseError as exc:
        return str(exc)


@task(name="chunk", cache_policy=NO_CACHE)
def chunk_task(doc: ParsedDocument, params: ChunkParams, tokens: TokenCounter) -> list[Chunk]:
    """Budgeted in the embedding model's own tokens, so no chunk is truncated when embedded."""
    return chunk_document(doc, params, tokens.count, tokens.max_tokens)


@task(name="context", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=5)
def context_task(chunks: list[Chunk], settings: Settings, tokens: TokenCounter) -> list[Chunk]:
    """LLM-written situating contexts (cached by request hash) when an endpoint is configured."""
    return situate(chunks, settings, tokens.count, tokens.max_tokens)


@task(name="embed", cache_policy=NO_CACHE)
def embed_task(embedder: Embedder, chunks: list[Chunk]) -> tuple[dict[str, Embedding], int]:
    return embedder.embed_chunks(chunks)


# Each write first collects the version's rows that are not in its new chunk set (left by an
# earlier version of the document, or by a run killed half-way) and deletes them.

@task(name="write-vectors", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def write_vectors_task(stores: Stores, group: list[_Plan],
                       vectors: dict[str, Embedding]) -> None:
    stale: set[str] = set()
    for plan in group:
        indexed = {c.chunk_id for c in plan.chunks if c.kind != ChunkKind.PARENT}
        stale |= stores.vectors.chunk_ids(plan.version_key) - indexed
    writes = [c for plan in group for c in plan.diff.writes if c.kind != ChunkKind.PARENT]
    stores.vectors.upsert(writes, vectors)
    stores.vectors.delete(sorted(stale))


@task(name="write-lexical", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def write_lexical_task(stores: Stores, group: list[_Plan]) -> None:
    stale: set[str] = set()
    for plan in group:
        stale |= stores.lexical.chunk_ids(plan.version_key) - {c.chunk_id for c in plan.chunks}
    stores.lexical.upsert([c for plan in group for c in plan.diff.writes])
    stores.lexical.delete(sorted(stale))


@task(name="write-graph", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def write_graph_task(stores: Stores, group: list[_Plan]) -> None:
    stale: set[str] = set()
    for plan in group:
        stale |= stores.graph.chunk_ids(plan.version_key) - {c.chunk_id for c in plan.chunks}
        stale |= {c.chunk_id for c in plan.diff.changed}
    stores.graph.delete_chunks(sorted(stale))
    stores.graph.upsert([c for plan in group for c in plan.diff.writes],
                        [t for plan in group for t in plan.triples],
                        {plan.version_key: plan.meta.title for plan in group})


# ---- flows --------------------------------------------------------------------------------------

@flow(name="kbflow-ingest", flow_run_name="ingest {source}")
def ingest_flow(source: str, data_dir: str | None = None) -> IngestSummary:
    """Ingest every document under `source`; files gone from an ingested folder are tombstoned."""
    settings = _settings(data_dir)
    root = Path(source).resolve()
    if settings.document_roots:  # configured: the folder must be one of them or inside one
        resolve_under(root, settings.document_roots)
    manifest = ManifestStore(settings.manifest)
    try:
        gone = [r.source_path for r in manifest.documents()
                if root.is_dir() and r.source_root == str(root) and r.state != State.TOMBSTONED
                and not any(Path(p).exists() for p in [r.source_path, *r.duplicate_paths])]
        found, links = walk(root)
        files = [(path, root if root.is_dir() else path.parent) for path in found]
        refused = [Failure(path=str(link), doc_id="", version_id="", reason=reason)
                   for link, reason in links]
        return run_pipeline(settings, manifest, files, source=source, deleted=gone,
                            refused=refused)
    finally:
        manifest.close()


@flow(name="kbflow-incremental", flow_run_name="incremental {changed} -{deleted}")
def incremental_flow(changed: list[str], deleted: list[str],
                     data_dir: str | None = None) -> IngestSummary:
    """Ingest the changed files and tombstone the deleted ones (paths as the webhook sends them).

    Every path must resolve (symlinks and `..` included) under KBFLOW_DOCUMENT_ROOTS; one that
    does not is a failure with its reason, and the others go on. A changed file keeps the doc id
    it was first ingested under (its recorded folder)."""
    settings = _settings(data_dir)
    manifest = ManifestStore(settings.manifest)
    try:
        roots = {r.source_path: Path(r.source_root) for r in manifest.documents() if r.source_root}
        changed_paths, refused = _within_roots(changed, settings)
        files = [(path, roots.get(str(path), path.parent)) for path in changed_paths]
        deleted_paths, refused_deletes = _within_roots(deleted, settings)
        return run_pipeline(settings, manifest, files, source="incremental",
                            deleted=[str(p) for p in deleted_paths],
                            refused=refused + refused_deletes)
    finally:
        manifest.close()


@flow(name="kbflow-undelete", flow_run_name="undelete {doc_id}")
def undelete_flow(doc_id: str, data_dir: str | None = None) -> IngestSummary:
    """Lift the tombstones of a document's versions whose files are still there, and publish
    them again. A tombstone keeps a crash from bringing a deleted document back; it must not
    keep the document's owner from doing so."""
    settings = _settings(data_dir)
    manifest = ManifestStore(settings.manifest)
    try:
        records = [r for r in manifest.documents()
                   if r.doc_id == doc_id and manifest.is_tombstoned(r.doc_id, r.version_id)]
        if not records:
            raise ValueError(f"{doc_id} has no deleted version in generation "
                             f"{manifest.generation}")
        files, refused = [], []
        for r in records:
            if not Path(r.source_path).is_file():
                refused.append(Failure(path=r.source_path, doc_id=r.doc_id,
                                       version_id=r.version_id, reason="its file is gone: "
                                       "add the file again to publish it"))
                continue
            manifest.lift_tombstone(r.doc_id, r.version_id)
            files.append((Path(r.source_path), Path(r.source_root or Path(r.source_path).parent)))
        summary = run_pipeline(settings, manifest, files, source=f"undelete {doc_id}",
                               refused=refused)
        summary.lifted = [r.version_key for r in records if Path(r.source_path).is_file()]
        return summary
    finally:
        manifest.close()


def _settings(data_dir: str | None) -> Settings:
    return Settings() if data_dir is None else Settings(data_dir=Path(data_dir))


def _within_roots(names: Sequence[str], settings: Settings) -> tuple[list[Path], list[Failure]]:
    """The real paths under the document roots, and a failure for every other name."""
    paths, refused = [], []
    for name in names:
        try:
            paths.append(resolve_under(name, settings.document_roots))
        except OutsideRoots as exc:
            refused.append(Failure(path=name, doc_id="", version_id="", reason=str(exc)))
    return paths, refused


def run_pipeline(settings: Settings, manifest: ManifestStore, files: list[tuple[Path, Path]],
                 *, source: str, deleted: Sequence[str] = (),
                 refused: Sequence[Failure] = ()) -> IngestSummary:
    """Bring `manifest`'s generation (the serving one by default) up to date with `files`.

    `files` pairs each path with the folder its doc id is derived from; `refused` are paths
    turned away before (outside the document roots), reported with the failures."""
    log = get_run_logger()
    run_id = str(runtime.flow_run.id or uuid4())
    clock = _Clock()
    started = time.perf_counter()
    params = chunk_params(settings)
    generation = _generation(manifest, settings, params.version)
    manifest.start_run(run_id, source)
    failures: list[Failure] = list(refused)
    lifted: list[str] = []

    tombstoned = []
    for record in manifest.documents():
        if record.source_path in deleted and record.state != State.TOMBSTONED:
            manifest.tombstone(record.doc_id, record.version_id, FILE_GONE, run_id)
            tombstoned.append(record.version_key)

    tokens = TokenCounter(settings.embedding_model)
    duplicates: dict[tuple[str, str], list[str]] = {}
    with ParsePool(settings.parse_workers, settings.parse_timeout_s,
                   settings.max_file_mb, settings.allow_repaired_pdf) as parser:
        plans, skipped = _prepare(files, settings, manifest, params, tokens, parser, clock,
                                  failures, duplicates, run_id, lifted)
    plans += _close_versions(plans, manifest, params.version)
    over = 0
    diffed = []
    for plan in plans:
        try:
            with clock.stage("diff"):
                for chunk in plan.chunks:
                    chunk.effective_to = plan.effective_to
                plan.diff = diff_chunks(plan.chunks, manifest.published(*plan.key))
            with clock.stage("graph"):
                plan.triples = extract(plan.diff.writes, plan.meta.title, settings)
        except Exception as exc:  # noqa: BLE001 - this version's failure, not the run's
            _record_failure(plan, exc, manifest, run_id, failures, log)
            continue
        diffed.append(plan)
        over += over_budget(plan.chunks, tokens.count, tokens.max_tokens)
    plans = diffed
    if over:
        log.warning("%d chunk(s) exceed the embedding model's %d-token input", over,
                    tokens.max_tokens)

    counts, embedded, triples, written = ChunkCounts(), 0, 0, 0
    written_triples: list[Triple] = []
    cleaned: list[str] = []
    embedder = Embedder(settings.embedding_model, settings.vector_cache_path,
                        settings.embedding_batch_size)
    try:
        if plans:
            with clock.stage("embed"):
                wanted = [c for p in plans for c in p.diff.writes if c.kind != ChunkKind.PARENT]
                vectors, embedded = embed_task(embedder, quote(wanted))
            if generation.dimension is None:
                manifest.record_dimension(generation.generation, embedder.dimension)
            with _store_writer():
                stores = open_stores(settings, embedder.name, embedder.dimension,
                                     generation.generation)
                try:
                    _notify(len(files), len(files), "writing the stores")
                    published = _write(plans, stores, vectors, manifest,
                                       settings.embedding_model, clock, run_id, failures, log)
                finally:
                    stores.close()
            written = len(published)
            for plan in published:
                triples += len(plan.triples)
                written_triples += plan.triples
                for name in ChunkCounts.model_fields:
                    setattr(counts, name, getattr(counts, name) + len(getattr(plan.diff, name)))
        for (doc_id, version_id), paths in duplicates.items():
            manifest.set_duplicates(doc_id, version_id, paths)
        if manifest.pending_cleanups():
            with clock.stage("manifest"):
                cleaned = cleanup_tombstones(manifest, lambda g: open_generation(settings, g))
    finally:
        embedder.close()

    records = manifest.documents()
    states = Counter(str(d.state) for d in records)
    parsed = [p.parse_report for p in plans if p.parse_report]
    parse_errors = sum(1 for f in failures if f.reason.startswith("ParseError"))
    parse = ParseRunReport(
        documents=len(parsed) + parse_errors, parse_errors=parse_errors,
        **{name: sum(r.get(name) or 0 for r in parsed)
           for name in ("pages", "ocr_pages", "tables", "table_rows", "empty_pages")},
        missing_titles=sum(1 for r in parsed if r.get("missing_title")),
    )
    summary = IngestSummary(
        run_id=run_id, source=source, generation=generation.generation, files=len(files),
        documents=dict(sorted(states.items())), skipped_unchanged=skipped, written=written,
        chunks=counts, embedded=embedded, over_budget_chunks=over, triples=triples,
        graph=graph_quality(written_triples, [r.title for r in records
                                              if r.state != State.TOMBSTONED]),
        tombstoned=tombstoned, lifted=lifted, cleaned=cleaned, failures=failures, parse=parse,
        duplicates={f"{d}@{v}": paths for (d, v), paths in duplicates.items() if paths},
        seconds={s: round(clock.seconds[s], 3) for s in STAGES},
        total_seconds=round(time.perf_counter() - started, 3),
    )
    manifest.finish_run(run_id, summary.model_dump(mode="json"))
    publish_summary_artifact(summary, f"{source} → {generation.generation}")
    log.info("%s into %s: %s", source, generation.generation, summary.model_dump_json())
    return summary


def _generation(manifest: ManifestStore, settings: Settings, chunker_version: str) -> Generation:
    """The generation this run writes; the first run ever creates g1 and serves it."""
    if manifest.generation is None:
        first = manifest.create_generation(settings.embedding_model, None, chunker_version,
                                           serving=True)
        manifest.generation = first.generation
    generation = manifest.get_generation(manifest.generation)
    assert generation is not None
    if generation.embedding_model != settings.embedding_model:
        raise ValueError(
            f"generation {generation.generation} holds {generation.embedding_model} vectors but "
            f"KBFLOW_EMBEDDING_MODEL is {settings.embedding_model}: run `kbflow rebuild` to "
            "embed everything with the new model in a new generation"
        )
    return generation


@contextmanager
def _store_writer() -> Iterator[None]:
    """One writer per store role at a time across runs: the limits `kbflow deploy` creates (the
    embedded store files take a single writer). Without them (a CLI run), no wait."""
    with get_client(sync_client=True) as client:
        try:
            for name in STORE_LIMITS:
                client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            yield
            return
    with concurrency(list(STORE_LIMITS), occupy=1):
        yield


def _notify(done: int, total: int, what: str) -> None:
    if progress_listener is not None:
        progress_listener(done, total, what)


def _prepare(files: list[tuple[Path, Path]], settings: Settings, manifest: ManifestStore,
             params: ChunkParams, tokens: TokenCounter, parser: ParsePool, clock: _Clock,
             failures: list[Failure], duplicates: dict[tuple[str, str], list[str]],
             run_id: str, lifted: list[str]) -> tuple[list[_Plan], int]:
    """Parse and chunk every new, changed or unfinished version; unchanged files cost one hash.

    Identical files (same bytes, same sidecar, at least MIN_DUPLICATE_BYTES) are ingested once;
    the other paths are collected in `duplicates` under the version they are copies of. A
    deleted version comes back when its file does (it was tombstoned because the file had
    gone) or with new content; one deleted by `kbflow delete` and unchanged stays deleted (and
    is listed). Files are parsed in windows, a window's documents side by side
    (`KBFLOW_PARSE_WORKERS` processes)."""
    plans: list[_Plan] = []
    skipped = 0
    claimed: dict[str, str] = {}
    kept: dict[str, tuple[str, str]] = {}  # file hash → the version it was ingested as
    pending: list[tuple[Path, Path, DocumentMeta, bytes]] = []
    parsed: list[tuple[Path, Path, ParsedDocument]] = []

    def fail(path: Path, key: tuple[str, str], exc: Exception) -> None:
        reason = f"{type(exc).__name__}: {exc}"
        with clock.stage("manifest"):
            manifest.fail(key, str(path), reason, run_id)
        failures.append(Failure(path=str(path), doc_id=key[0], version_id=key[1], reason=reason))

    def parse_pending() -> None:
        with clock.stage("parse"):
            futures = [parse_task.submit(quote(parser), meta, quote(data))
                       for _, _, meta, data in pending]
            outcomes = [_outcome(future) for future in futures]
        for (path, root, meta, _), doc in zip(pending, outcomes, strict=True):
            key = (meta.doc_id, meta.version_id)
            try:
                if isinstance(doc, Exception):
                    raise doc
                if isinstance(doc, str):
                    raise ParseError(doc)
                parsed.append((path, root, doc))
            except Exception as exc:  # noqa: BLE001 - a bad document fails alone, with its reason
                fail(path, key, exc)
        pending.clear()

    for i, (path, folder) in enumerate(files, start=1):
        _notify(i - 1, len(files), path.name)
        root = folder.resolve()
        key = (default_doc_id(path, root), "1")
        try:
            with clock.stage("parse"):
                meta, data = read_meta(path, root, settings.default_tenant, settings.default_acl)
            meta.source_path = str(path.resolve())
            substantial = len(data.strip()) >= MIN_DUPLICATE_BYTES
            if substantial and meta.file_hash in kept:
                duplicates.setdefault(kept[meta.file_hash], []).append(meta.source_path)
                continue
            if known := manifest.inferred_version(meta.source_path, meta.file_hash):
                meta.doc_id, meta.version_id, meta.identity = (  # recognised by its text before
                    known.doc_id, known.version_id, known.identity)
            key = (meta.doc_id, meta.version_id)
            if substantial:
                kept[meta.file_hash] = key
            duplicates.setdefault(key, [])
            version = f"{meta.doc_id}@{meta.version_id}"
            record = manifest.get(*key)
            if manifest.is_tombstoned(*key):
                if not manifest.lift_tombstone_for(*key, meta.file_hash):
                    failures.append(Failure(
                        path=str(path), doc_id=key[0], version_id=key[1],
                        reason=f"{version} was deleted; change the file, or run `kbflow "
                               f"undelete {meta.doc_id}`, to publish it again"))
                    continue
                lifted.append(version)
            if (record and record.state == State.READY and record.file_hash == meta.file_hash
                    and record.chunker_version == params.version
                    and record.embedding_model == settings.embedding_model):
                if (record.source_path, record.source_root) != (meta.source_path, str(root)):
                    manifest.relocate(*key, meta.source_path, str(root))
                skipped += 1
                continue
            if version in claimed:
                raise ValueError(f"{version} is also declared by {claimed[version]}")
            claimed[version] = str(path)
            pending.append((path, root, meta, data))
        except Exception as exc:  # noqa: BLE001 - a bad document fails alone, with its reason
            fail(path, key, exc)
        if len(pending) >= PARSE_WINDOW:
            parse_pending()
    parse_pending()
    # versions recognised from the text decide doc ids and versions, so before chunking
    with clock.stage("parse"):
        docs = identify([doc for _, _, doc in parsed], manifest)
    for (path, root, _), doc in zip(parsed, docs, strict=True):
        try:
            plans.append(_chunk(doc, root, settings, params, tokens, clock))
        except Exception as exc:  # noqa: BLE001 - a bad document fails alone, with its reason
            fail(path, (doc.meta.doc_id, doc.meta.version_id), exc)
    return plans, skipped


def _outcome(future: PrefectFuture) -> ParsedDocument | str | Exception:
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - a crashed parse task fails its document only
        return exc


def _chunk(doc: ParsedDocument, root: Path, settings: Settings, params: ChunkParams,
           tokens: TokenCounter, clock: _Clock) -> _Plan:
    with clock.stage("chunk"):
        chunks = chunk_task(quote(doc), params, quote(tokens))
        if settings.llm_base_url:
            chunks = context_task(quote(chunks), quote(settings), quote(tokens))
        for chunk in chunks:
            if chunk.kind != ChunkKind.PARENT:
                chunk.embedding_model = settings.embedding_model
    return _Plan(
        meta=doc.meta, chunks=chunks, chunker_version=params.version, source_root=str(root),
        parser_version=doc.parser_version, parse_report=doc.report.model_dump(mode="json"),
    )


def _close_versions(plans: list[_Plan], manifest: ManifestStore,
                    chunker_version: str) -> list[_Plan]:
    """Set every version's end date in force; published versions whose end date moved (a newer
    version arrived) are rewritten from their manifest records — no parsing, no embedding."""
    planned = {p.key: p for p in plans}
    published = {(r.doc_id, r.version_id): r for r in manifest.documents()
                 if r.state == State.READY and not manifest.is_tombstoned(r.doc_id, r.version_id)}
    versions = [VersionDates(doc_id=p.meta.doc_id, version_id=p.meta.version_id,
                             effective_from=p.meta.effective_from, declared_to=p.meta.effective_to)
                for p in plans]
    versions += [VersionDates(doc_id=r.doc_id, version_id=r.version_id,
                              effective_from=r.effective_from, declared_to=r.effective_to_declared)
                 for key, r in published.items() if key not in planned]
    extra = []
    for key, end in closing_dates(versions).items():
        if key in planned:
            planned[key].effective_to = end
        elif published[key].effective_to != end:
            record = published[key]
            extra.append(_Plan(
                meta=record.meta(), chunks=manifest.version_chunks(*key),
                chunker_version=record.chunker_version or chunker_version,
                parser_version=record.parser_version, effective_to=end,
            ))
    return extra


def _write(plans: list[_Plan], stores: Stores, vectors: dict[str, Embedding],
           manifest: ManifestStore, model: str, clock: _Clock, run_id: str,
           failures: list[Failure], log: logging.LoggerAdapter) -> list[_Plan]:
    """Write versions through the three stores in groups, one batched write per store and group,
    advancing every version's state after each store. A group whose write fails is written
    again one version at a time, so a bad document fails alone. Returns the published plans."""
    published: list[_Plan] = []
    for start in range(0, len(plans), WRITE_GROUP):
        group = plans[start : start + WRITE_GROUP]
        try:
            _write_group(group, stores, vectors, manifest, model, clock, run_id)
            published += group
            continue
        except Exception as exc:  # noqa: BLE001 - narrowed down below, one version at a time
            if len(group) == 1:
                _record_failure(group[0], exc, manifest, run_id, failures, log)
                continue
        for plan in group:
            try:
                _write_group([plan], stores, vectors, manifest, model, clock, run_id)
                published.append(plan)
            except Exception as exc:  # noqa: BLE001 - the version stays unpublished
                _record_failure(plan, exc, manifest, run_id, failures, log)
    return published


def _write_group(group: list[_Plan], stores: Stores, vectors: dict[str, Embedding],
                 manifest: ManifestStore, model: str, clock: _Clock, run_id: str) -> None:
    def advance(state: State) -> None:
        with clock.stage("manifest"):
            for plan in group:
                manifest.advance(*plan.key, state, run_id)

    with clock.stage("manifest"):
        for plan in group:
            manifest.begin(plan.meta, run_id, plan.chunker_version, model,
                           source_root=plan.source_root, parser_version=plan.parser_version,
                           parse_report=plan.parse_report)
    with clock.stage("vectors"):
        write_vectors_task(stores, quote(group), quote(vectors))
    advance(State.MILVUS_READY)
    with clock.stage("lexical"):
        write_lexical_task(stores, quote(group))
    advance(State.ES_READY)
    with clock.stage("graph"):
        write_graph_task(stores, quote(group))
    advance(State.NEO4J_READY)
    with clock.stage("manifest"):
        for plan in group:
            manifest.publish(*plan.key, plan.chunks, run_id, plan.effective_to)


def _record_failure(plan: _Plan, exc: Exception, manifest: ManifestStore, run_id: str,
                    failures: list[Failure], log: logging.LoggerAdapter) -> None:
    reason = f"{type(exc).__name__}: {exc}"
    log.warning("%s failed: %s", plan.version_key, reason)
    manifest.fail(plan.key, plan.meta.source_path, reason, run_id)
    failures.append(Failure(path=plan.meta.source_path, doc_id=plan.key[0],
                            version_id=plan.key[1], reason=reason))
