"""A whole run: tombstone deleted files, prepare, date, plan, embed, write, clean up, report.

Each document version goes

    parse → chunk (+ optional LLM context) → close older versions' dates → diff vs. the published
    manifest → embed (cached) → vectors → lexical → graph → READY

and moves through the manifest states CREATED → MILVUS_READY → ES_READY → NEO4J_READY → READY
(ROLE_STEPS) as each store is written. A document that fails is recorded with its reason and the
run goes on; what was published before keeps serving, and the next run retries it."""

from __future__ import annotations

import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.chunk import chunk_params, over_budget
from ingest.config import Settings
from ingest.embed import Embedder
from ingest.graph.quality import graph_quality
from ingest.graph.relink import relink
from ingest.graph.titles import TitleIndex, base, shortened
from ingest.lifecycle import cleanup_tombstones, open_generation
from ingest.manifest import ManifestStore
from ingest.manifest.records import Generation
from ingest.manifest.store import FILE_GONE
from ingest.models import Chunk, ChunkKind, DocumentMeta, State, Triple, version_key
from ingest.pipeline.context import ENCODING, RunContext
from ingest.pipeline.failures import Failure
from ingest.pipeline.foresee import foresee
from ingest.pipeline.job import Planned, VersionJob, Written
from ingest.pipeline.plan import date_versions, plan
from ingest.pipeline.prepare import Places, Preparing, Selection, prepare
from ingest.pipeline.report import STAGES, ChunkCounts, IngestSummary, ParseRunReport
from ingest.pipeline.write import WRITE_GROUP, write
from ingest.stores import Stores, open_graph, open_stores

EMBED_BATCH = 1_024  # chunks per embed step


@dataclass
class _Window:
    """The titles a window resolved its citations through, kept small: the manifest's titles
    that came and went since the window before, its versions' titles, and the index after its
    last file (the titles read ahead of the files after it)."""

    came: set[str]
    went: set[str]
    own: set[str]
    stop: int


@dataclass
class _Outcome:
    """What a run did, for its summary: counts and the small per-version records, summed over
    its windows (a window's chunks are dropped once it is written)."""

    generation: str
    files: int
    started: float = field(default_factory=time.perf_counter)
    tombstoned: list[str] = field(default_factory=list)
    selection: Selection = field(default_factory=Selection)
    written: dict[str, DocumentMeta] = field(default_factory=dict)  # version key → its meta
    window_of: dict[str, int] = field(default_factory=dict)  # version key → its window
    windows: list[_Window] = field(default_factory=list)
    known: set[str] = field(default_factory=set)  # the manifest's titles at the last window
    ahead: list[tuple[int, str]] | None = None  # titles read ahead: (file index, title)
    chunks: ChunkCounts = field(default_factory=ChunkCounts)
    triples: dict[str, list[Triple]] = field(default_factory=dict)  # of the written versions
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)  # of the planned versions
    llm_graph: Counter[str] = field(default_factory=Counter)
    read: int = 0  # files read so far (the progress bar's documents)
    queued: int = 0  # chunks handed to the embed stage so far (the progress bar's total)
    embedded: int = 0
    encoded: Counter[str] = field(default_factory=Counter)  # "model texts|sentences" → count
    over_budget: int = 0
    cleaned: list[str] = field(default_factory=list)
    relinked: list[str] = field(default_factory=list)


def run_pipeline(ctx: RunContext, source: str, files: Sequence[tuple[Path, Path]],
                 deleted: Sequence[str] = ()) -> IngestSummary:
    """Bring `ctx.manifest`'s generation up to date with `files` (each path with the folder its
    doc id derives from) and tombstone the versions of the `deleted` paths.

    The files go `file_window` at a time from reading to READY (a run holds one window's chunks,
    parse reports and vectors, not the corpus's: bench/RESULTS.md, "Memory bounded by windows
    of files"). What is run-wide reads the manifest as earlier windows publish: a later version
    dates the earlier ones (date_versions rewrites their end dates), a copy is a copy of the
    version any window kept. A citation of a document in a later window resolves through its
    title read ahead (foresee.py); what no title read ahead resolved, the relink at the end
    does."""
    _ = ctx.scopes  # a bad tenant parents file stops the run here, before anything is written
    params = chunk_params(ctx.settings)
    generation = current_generation(ctx.manifest, ctx.settings, params.version)
    outcome = _Outcome(generation.generation, len(files))
    ctx.manifest.start_run(ctx.run_id, source)
    before = ctx.manifest.titles()
    outcome.tombstoned = _tombstone(ctx, deleted)
    with ctx.parser() as parser, ctx.embedder() as embedder:
        run = Preparing(parser, params, ctx.tokens(), Places(ctx.manifest), outcome.selection)
        encoded = Counter(embedder.encoded)
        for start in range(0, len(files), ctx.settings.file_window):
            window = range(start, min(start + ctx.settings.file_window, len(files)))
            outcome.read = window.stop
            jobs = prepare(ctx, run, files, window)
            if jobs and outcome.ahead is None:  # read once a window has something to write
                outcome.ahead = foresee(ctx, run.places, files, window.stop)
            _window(ctx, run, embedder, outcome, jobs)
        outcome.encoded.update({f"{embedder.name} {k}": n
                                for k, n in (embedder.encoded - encoded).items()})
    _settle(ctx, outcome, run.tokens.max_tokens)
    outcome.tombstoned += _retire_replaced(ctx, outcome.written.values())
    outcome.relinked = _relink(ctx, source, before, outcome)
    summary = _summary(ctx, source, outcome)
    ctx.manifest.finish_run(ctx.run_id, summary.model_dump(mode="json"))
    return summary


def _window(ctx: RunContext, run: Preparing, embedder: Embedder, outcome: _Outcome,
            jobs: list[VersionJob]) -> None:
    """One window's prepared versions dated, planned (their citations resolved through the
    corpus's titles, theirs and the later files' read ahead), embedded and written; what the
    summary needs of them is kept, their chunks are not."""
    jobs = date_versions(ctx.manifest, jobs, run.params.version)
    known = ctx.manifest.titles()
    window = _Window(known - outcome.known, outcome.known - known,
                     {j.meta.title for j in jobs if j.meta.title}, outcome.read)  # its end
    outcome.windows.append(window)
    outcome.known = known
    titles = TitleIndex(_indexed(outcome, known, window))
    planned = [p for job in jobs if (p := plan(ctx, job, titles)) is not None]
    outcome.over_budget += sum(over_budget(p.job.chunks, run.tokens.count, run.tokens.max_tokens)
                               for p in planned)
    outcome.reports.update({p.version_key: p.job.parse_report for p in planned
                            if p.job.parse_report})
    outcome.llm_graph += sum((p.llm_graph for p in planned), Counter())
    written = _embed_and_write(ctx, embedder, outcome, planned) if planned else []
    for w in written:
        outcome.window_of[w.planned.version_key] = len(outcome.windows) - 1
        outcome.written[w.planned.version_key] = w.planned.job.meta
        outcome.triples[w.planned.version_key] = w.planned.triples
        for name in ChunkCounts.model_fields:
            setattr(outcome.chunks, name, getattr(outcome.chunks, name)
                    + len(getattr(w.planned.diff, name)))


def _settle(ctx: RunContext, outcome: _Outcome, max_tokens: int) -> None:
    """After the last window: the duplicates recorded, the tombstones cleaned up."""
    if outcome.over_budget:
        ctx.log.warning("%d chunk(s) exceed the embedding model's %d-token input",
                        outcome.over_budget, max_tokens)
    for (doc_id, version_id), paths in outcome.selection.duplicates.items():
        ctx.manifest.set_duplicates(doc_id, version_id, paths)
    if ctx.manifest.pending_cleanups():
        with ctx.clock.stage("manifest"):
            outcome.cleaned = cleanup_tombstones(
                ctx.manifest, lambda g: open_generation(ctx.settings, g))


def current_generation(manifest: ManifestStore, settings: Settings,
                       chunker_version: str) -> Generation:
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


def _tombstone(ctx: RunContext, deleted: Sequence[str]) -> list[str]:
    tombstoned = []
    for record in ctx.manifest.documents(source_paths=deleted):
        if record.state != State.TOMBSTONED:
            ctx.manifest.tombstone(record.doc_id, record.version_id, FILE_GONE, ctx.run_id)
            tombstoned.append(record.version_key)
    return tombstoned


def _retire_replaced(ctx: RunContext, written: Iterable[DocumentMeta]) -> list[str]:
    """A file that now holds another document (its sidecar's doc_id changed, or its text was
    recognised as a version of another document) no longer holds the one it held: that
    version's rows from this file would go on answering with stale text, so it is tombstoned."""
    retired = []
    for meta in written:
        holds = version_key(meta.doc_id, meta.version_id)
        for record in ctx.manifest.documents(source_paths=[meta.source_path]):
            if record.doc_id != meta.doc_id and record.state != State.TOMBSTONED:
                ctx.manifest.tombstone(record.doc_id, record.version_id,
                                       f"its file now holds {holds}", ctx.run_id)
                retired.append(record.version_key)
    return retired


def _relink(ctx: RunContext, source: str, before: set[str], outcome: _Outcome) -> list[str]:
    """Published versions whose citations the run's new or deleted titles resolve otherwise,
    rewritten in the graph without being ingested again (graph/relink.py): those of earlier
    runs, and this run's whose window resolved them through titles other than the run's last
    (a later title not read ahead, one read ahead that no version holds; the summary's graph
    quality then counts their triples as rewritten)."""
    record = ctx.manifest.get_generation(outcome.generation)
    if ctx.settings.graph_extractor == "llm" or record is None or record.dimension is None:
        return []
    try:
        with ctx.clock.stage("relink"):
            complete, again = _resolved(ctx, outcome)
        if ctx.manifest.titles() == before and not again:
            return []
        with ctx.clock.stage("relink"), ctx.steps.store_writer():
            graph = open_graph(ctx.settings, outcome.generation)
            try:
                relinked = relink(ctx.manifest, graph, before, complete, again)
                for key in relinked:
                    if key in outcome.triples:
                        outcome.triples[key] = graph.triples(key)
                return relinked
            finally:
                graph.close()
    except Exception as exc:  # noqa: BLE001 - the run's writes stand; its citations stay as were
        ctx.fail(Failure.raised("graph", exc, source))
        return []


def _resolved(ctx: RunContext, outcome: _Outcome) -> tuple[set[str], set[str]]:
    """The run's versions whose window resolved citations through the run's last titles, and
    those of the other windows that may name a title it lacked or had in vain, with or without
    《》 or article (their text holds its base or short name): a mention that resolved to
    nothing left no dangling triple for relink to find, so they are resolved again."""
    final = ctx.manifest.titles()
    versions: dict[int, list[str]] = {}
    for key, i in outcome.window_of.items():
        versions.setdefault(i, []).append(key)
    known: set[str] = set()
    complete, again = set(), set()
    for i, window in enumerate(outcome.windows):
        known = (known - window.went) | window.came
        differ = {n for t in _indexed(outcome, known, window) ^ final
                  for n in {base(t), *shortened(base(t))} if len(n) > 1}
        for key in versions.get(i, []):
            if not differ:
                complete.add(key)
            elif _mentions(ctx, outcome.written[key], differ):
                again.add(key)
    return complete, again


def _mentions(ctx: RunContext, meta: DocumentMeta, names: set[str]) -> bool:
    """Whether the version's published text holds any of the `names` (NFKC, lower case)."""
    text = unicodedata.normalize("NFKC", "".join(
        c.text for c in ctx.manifest.version_chunks(meta.doc_id, meta.version_id))).lower()
    return any(name in text for name in names)


def _indexed(outcome: _Outcome, known: set[str], window: _Window) -> set[str]:
    """The titles `window` resolved through: the manifest's (`known`), its versions', and
    those read ahead of the files after it."""
    return known | window.own | {title for i, title in outcome.ahead or () if i >= window.stop}


def _embed_and_write(ctx: RunContext, embedder: Embedder, outcome: _Outcome,
                     planned: Sequence[Planned]) -> list[Written]:
    """A window's planned versions embedded, then written (the stores opened for the window)."""
    with ctx.clock.stage("embed"):
        _embed(ctx, embedder, outcome, planned)
    generation = ctx.manifest.get_generation(outcome.generation)
    assert generation is not None
    if generation.dimension is None:
        ctx.manifest.record_dimension(generation.generation, embedder.dimension)
    with ctx.steps.store_writer():
        stores = open_stores(ctx.settings, embedder.name, embedder.dimension,
                             generation.generation)
        try:
            if generation.dimension is None and generation.status == "serving":
                stores.activate()  # the very first ingest: the aliases name g1 from now on
            ctx.progress(outcome.read, outcome.files, "writing the stores")
            written = _write(ctx, stores, embedder, outcome, planned)
            if stores.crosslingual is not None:
                outcome.encoded.update({f"{stores.crosslingual.model} {k}": n for k, n
                                        in stores.crosslingual.encoded.items()})
            return written
        finally:
            stores.close()


def _embed(ctx: RunContext, embedder: Embedder, outcome: _Outcome,
           planned: Sequence[Planned]) -> None:
    """The chunk vectors of the planned writes into the vector cache, EMBED_BATCH chunks at a
    time: the progress bar moves (ENCODING, counted over the run's windows so far), and the
    encoder's work is bounded by a batch. They are dropped here and read back a write group at
    a time (_write)."""
    wanted = _embedded(planned)
    done, outcome.queued = outcome.queued, outcome.queued + len(wanted)
    for start in range(0, len(wanted), EMBED_BATCH):
        ctx.progress(done + start, outcome.queued, ENCODING)
        outcome.embedded += ctx.steps.embed(embedder, wanted[start : start + EMBED_BATCH])[1]
    ctx.progress(outcome.queued, outcome.queued, ENCODING)


def _write(ctx: RunContext, stores: Stores, embedder: Embedder, outcome: _Outcome,
           planned: Sequence[Planned]) -> list[Written]:
    """The planned versions written WRITE_GROUP at a time, each group with its vectors read
    back from the cache the embed stage filled: a run holds one group's vectors, not the
    corpus's (peak RSS 933 → 835 MiB on 117 law files, bench/RESULTS.md). A vector missing
    there (a cache cleared meanwhile) is computed again."""
    written = []
    for start in range(0, len(planned), WRITE_GROUP):
        group = planned[start : start + WRITE_GROUP]
        with ctx.clock.stage("embed"):
            vectors, computed = embedder.embed_chunks(_embedded(group))
        outcome.embedded += computed
        written += write(ctx, stores, group, vectors)
    return written


def _embedded(planned: Sequence[Planned]) -> list[Chunk]:
    """The chunks of the planned writes that get a vector (parents are only read)."""
    return [c for p in planned for c in p.diff.writes if c.kind != ChunkKind.PARENT]


def _summary(ctx: RunContext, source: str, outcome: _Outcome) -> IngestSummary:
    triples = [t for found in outcome.triples.values() for t in found]
    selection = outcome.selection
    return IngestSummary(
        run_id=ctx.run_id, source=source, generation=outcome.generation, files=outcome.files,
        documents=ctx.manifest.state_counts(),
        skipped_unchanged=selection.skipped, written=len(outcome.written),
        chunks=outcome.chunks, embedded=outcome.embedded, encoded=dict(outcome.encoded),
        over_budget_chunks=outcome.over_budget, triples=len(triples),
        graph=graph_quality(triples, ctx.manifest.titles(), outcome.llm_graph),
        tombstoned=outcome.tombstoned, relinked=outcome.relinked, lifted=selection.lifted,
        cleaned=outcome.cleaned,
        failures=ctx.failures, parse=ParseRunReport.of(outcome.reports, ctx.failures,
                                                         ctx.settings.min_coverage),
        duplicates={f"{d}@{v}": paths for (d, v), paths in selection.duplicates.items() if paths},
        seconds={s: round(ctx.clock.seconds[s], 3) for s in STAGES},
        total_seconds=round(time.perf_counter() - outcome.started, 3),
    )
