"""The ingest pipeline as Prefect flows: the DAG, read top to bottom. The logic lives in
ingest/pipeline/ (runnable without Prefect); this module wraps its heavy steps as tasks, so
every stage shows up (and is retried) in Prefect, and starts runs.

Flows: `ingest_flow` (a folder or file; files gone from an ingested folder are tombstoned),
`incremental_flow` (changed and deleted paths, as webhooks report them), `undelete_flow`;
flows/lifecycle.py runs the same `ingest_files` into a new generation for full rebuilds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast
from uuid import uuid4

from prefect import flow, get_run_logger, runtime, task
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectNotFound
from prefect.utilities.annotations import quote as prefect_quote

from flows.artifacts import publish_summary_artifact
from flows.scan import folder_scan
from ingest.chunk import ChunkParams
from ingest.chunk.context import situate
from ingest.config import Settings
from ingest.embed import Embedder, Embedding, TokenCounter
from ingest.manifest import ManifestStore
from ingest.manifest.records import DocumentRecord
from ingest.models import Chunk, ParsedDocument, StoreRole
from ingest.parse import ParsePool
from ingest.parse.folder_meta import FOLDER_META_NAME
from ingest.parse.metadata import SIDECAR_SUFFIX
from ingest.parse.roots import OutsideRoots, resolve_under
from ingest.pipeline import Failure, IngestSummary, Planned, Prepared, RunContext, run_pipeline
from ingest.pipeline.context import Steps, Warm
from ingest.pipeline.prepare import chunk_one, parse_many
from ingest.pipeline.write import write_role
from ingest.stores import Stores

T = TypeVar("T")
# One global concurrency limit per store role, by name: `kbflow deploy` creates them, and
# `store_limits` holds them while it writes. The embedded stores (SQLite files, LadybugDB) take
# one writer at a time; with production engines raise the limits.
STORE_LIMITS = {"kbflow-vectors": 1, "kbflow-lexical": 1, "kbflow-graph": 1}


def quote(value: T) -> T:
    """Prefect's quote(), typed as what it wraps: a task receives the value itself."""
    return cast(T, prefect_quote(value))


# ---- tasks: thin wrappers around ingest/pipeline ------------------------------------------------
# Large arguments are passed quote()d: Prefect would otherwise walk every float of every vector
# looking for upstream futures (about a second per call for a document's vectors).

@task(name="parse", cache_policy=NO_CACHE)
def parse_task(parser: ParsePool, window: list[Prepared]) -> list[ParsedDocument | Failure]:
    """A window of files in one task (thousands of tiny files would otherwise pay one
    orchestrator task each), parsed side by side by the pool's processes. A bad document is an
    outcome, not a crash: its ParseError comes back as its failure."""
    return parse_many(parser, window)


@task(name="chunk", cache_policy=NO_CACHE)
def chunk_task(docs: list[ParsedDocument], params: ChunkParams,
               tokens: TokenCounter) -> list[list[Chunk] | Failure]:
    """A run's parsed documents in one task, each chunked or failed alone."""
    return [chunk_one(doc, params, tokens) for doc in docs]


@task(name="context", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=5)
def context_task(chunks: list[Chunk], settings: Settings, tokens: TokenCounter) -> list[Chunk]:
    """LLM-written situating contexts (cached by request hash) when an endpoint is configured."""
    return situate(chunks, settings, tokens.count, tokens.max_tokens)


@task(name="embed", cache_policy=NO_CACHE)
def embed_task(embedder: Embedder, chunks: list[Chunk]) -> tuple[dict[str, Embedding], int]:
    return embedder.embed_chunks(chunks)


@task(name="write", task_run_name="write-{role}", cache_policy=NO_CACHE, retries=2,
      retry_delay_seconds=1)
def write_task(role: StoreRole, stores: Stores, group: Sequence[Planned],
               vectors: Mapping[str, Embedding]) -> None:
    """One store role's batched write of a group (ROLE_STEPS): stale rows out, writes in."""
    write_role(role, stores, group, vectors)


class PrefectSteps:
    """The pipeline's steps (ingest.pipeline.Steps) as the tasks above."""

    def parse(self, parser: ParsePool, window: Sequence[Prepared]
              ) -> list[ParsedDocument | Failure]:
        try:
            return parse_task(quote(parser), quote(list(window)))
        except Exception as exc:  # noqa: BLE001 - a crashed parse task fails its documents only
            return [Failure.raised("parse", exc, item.path, item.key) for item in window]

    def chunk(self, docs: Sequence[ParsedDocument], params: ChunkParams, tokens: TokenCounter
              ) -> list[list[Chunk] | Failure]:
        return chunk_task(quote(list(docs)), params, quote(tokens))

    def situate(self, chunks: list[Chunk], settings: Settings, tokens: TokenCounter
                ) -> list[Chunk]:
        return context_task(quote(chunks), quote(settings), quote(tokens))

    def embed(self, embedder: Embedder, chunks: list[Chunk]
              ) -> tuple[dict[str, Embedding], int]:
        return embed_task(embedder, quote(chunks))

    def write(self, role: StoreRole, stores: Stores, group: Sequence[Planned],
              vectors: Mapping[str, Embedding]) -> None:
        write_task(role, stores, quote(group), quote(vectors))

    def store_writer(self) -> AbstractContextManager[None]:
        return store_limits()


@contextmanager
def store_limits() -> Iterator[None]:
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


# ---- flows --------------------------------------------------------------------------------------

@flow(name="kbflow-ingest", flow_run_name="ingest {source}")
def ingest_flow(source: str, data_dir: str | None = None) -> IngestSummary:
    """Ingest every document under `source`; files gone from an ingested folder are tombstoned."""
    settings = _settings(data_dir)
    root = Path(source).resolve()
    if settings.document_roots:  # configured: the folder must be one of them or inside one
        resolve_under(root, settings.document_roots)
    with ManifestStore(settings.manifest) as manifest:
        files, gone, refused = folder_scan(manifest, root)
        return ingest_files(run_context(settings, manifest, refused), source, files, gone)


@flow(name="kbflow-incremental", flow_run_name="incremental {changed} -{deleted}")
def incremental_flow(changed: list[str], deleted: list[str],
                     data_dir: str | None = None) -> IngestSummary:
    """Ingest the changed files and tombstone the deleted ones (paths as the webhook sends them);
    a changed folder is re-scanned as `ingest_flow` does (its new, edited and removed files).

    Every path must resolve (symlinks and `..` included) under KBFLOW_DOCUMENT_ROOTS; one that
    does not is a failure with its reason, and the others go on. A changed file keeps the doc id
    it was first ingested under (its recorded folder)."""
    return apply_changes(_settings(data_dir), changed, deleted)


@dataclass(frozen=True)
class Worker:
    """What the warm worker (flows/warm.py) lends a run of `apply_changes`: its parse processes
    and model, its steps, and the run id the webhook tracks."""

    warm: Warm
    run_id: str
    steps: Steps


def apply_changes(settings: Settings, changed: Sequence[str], deleted: Sequence[str],
                  worker: Worker | None = None) -> IngestSummary:
    """incremental_flow's work, also run by the warm worker with what it lends (`worker`)."""
    with ManifestStore(settings.manifest) as manifest:
        changed_paths, refused = _within_roots(changed, settings)
        deleted_paths, refused_deletes = _within_roots(deleted, settings)
        changed_paths += [described_by(p) for p in changed_paths + deleted_paths
                          if is_metadata(p.name) and described_by(p).exists()]
        changed_paths = [p for p in changed_paths if not is_metadata(p.name)]
        deleted_paths = [p for p in deleted_paths if not is_metadata(p.name)]
        candidates = {path: path.parent for path in changed_paths if not path.is_dir()}
        gone: list[str] = []
        for folder in (path for path in changed_paths if path.is_dir()):
            found, gone_here, refused_here = folder_scan(manifest, folder)
            candidates |= {path: root for path, root in found if path not in candidates}
            gone += gone_here
            refused += refused_here
        roots = {r.source_path: Path(r.source_root) for r in manifest.documents(
            source_paths=[str(p) for p in candidates]) if r.source_root}
        files = [(path, roots.get(str(path), root)) for path, root in candidates.items()]
        ctx = run_context(settings, manifest, refused + refused_deletes)
        if worker is not None:
            ctx.warm, ctx.run_id, ctx.steps = worker.warm, worker.run_id, worker.steps
        return ingest_files(ctx, "incremental", files, [str(p) for p in deleted_paths] + gone)


@flow(name="kbflow-undelete", flow_run_name="undelete {doc_id}")
def undelete_flow(doc_id: str, data_dir: str | None = None) -> IngestSummary:
    """Lift the tombstones of a document's versions whose files are still there, and publish
    them again. A tombstone keeps a crash from bringing a deleted document back; it must not
    keep the document's owner from doing so."""
    settings = _settings(data_dir)
    with ManifestStore(settings.manifest) as manifest:
        records = [r for r in manifest.documents(doc_ids=[doc_id])
                   if manifest.is_tombstoned(r.doc_id, r.version_id)]
        if not records:
            raise ValueError(f"{doc_id} has no deleted version in generation "
                             f"{manifest.generation}")
        ctx = run_context(settings, manifest)
        summary = ingest_files(ctx, f"undelete {doc_id}", _lift_tombstones(ctx, records))
        summary.lifted = [r.version_key for r in records if Path(r.source_path).is_file()]
        return summary


def ingest_files(ctx: RunContext, source: str, files: Sequence[tuple[Path, Path]],
                 deleted: Sequence[str] = ()) -> IngestSummary:
    """run_pipeline, then its summary as a Prefect artifact and in the run's log."""
    summary = run_pipeline(ctx, source, files, deleted)
    publish_summary_artifact(summary, f"{source} → {summary.generation}")
    ctx.log.info("%s into %s: %s", source, summary.generation, summary.model_dump_json())
    return summary


def run_context(settings: Settings, manifest: ManifestStore,
                refused: Sequence[Failure] = ()) -> RunContext:
    """A run of this flow: its id and logger are Prefect's; `refused` are the paths turned
    away before (outside the document roots), reported with the failures."""
    return RunContext(settings=settings, manifest=manifest,
                      run_id=str(runtime.flow_run.id or uuid4()), steps=PrefectSteps(),
                      log=get_run_logger(), failures=list(refused))


def _settings(data_dir: str | None) -> Settings:
    return Settings() if data_dir is None else Settings(data_dir=Path(data_dir))


def _within_roots(names: Sequence[str], settings: Settings) -> tuple[list[Path], list[Failure]]:
    """The real paths under the document roots, and a failure for every other name."""
    paths, refused = [], []
    for name in names:
        try:
            paths.append(resolve_under(name, settings.document_roots))
        except OutsideRoots as exc:
            refused.append(Failure.refused("source", str(exc), name))
    return paths, refused


def described_by(path: Path) -> Path:
    """What a metadata file describes: a sidecar its document, a folder's `_meta.yaml` its
    folder. A webhook event for one re-ingests that document, or re-scans that folder, so an
    ACL or tenant change serves at once instead of after the next full scan."""
    if path.name == FOLDER_META_NAME:
        return path.parent
    return path.with_name(path.name.removesuffix(SIDECAR_SUFFIX))


def is_metadata(name: str) -> bool:
    return name == FOLDER_META_NAME or name.endswith(SIDECAR_SUFFIX)


def _lift_tombstones(ctx: RunContext, records: Sequence[DocumentRecord]
                     ) -> list[tuple[Path, Path]]:
    """The files of the versions to publish again; a version whose file is gone is refused."""
    files = []
    for r in records:
        if not Path(r.source_path).is_file():
            ctx.refuse(Failure.refused("source", "its file is gone: add the file again to "
                                       "publish it", r.source_path, (r.doc_id, r.version_id)))
            continue
        ctx.manifest.lift_tombstone(r.doc_id, r.version_id)
        files.append((Path(r.source_path), Path(r.source_root or Path(r.source_path).parent)))
    return files
