"""Full rebuilds behind a publish gate, rollbacks and deletes.

A rebuild writes every live document into a new generation beside the serving one (new Milvus
collection, new lexical tables, new graph file; unchanged text comes from the vector cache, so an
unchanged model embeds nothing), scores it against the publish gate, and only then switches the
alias of every store. A failed gate switches nothing. Rollback re-points the aliases to a kept
generation. Old generations beyond `KBFLOW_KEEP_GENERATIONS` are dropped. The manifest says which
generation serves; a rebuild holds the writer lock while it builds and first repairs what a killed
one left (ingest/lifecycle/generations.py).
"""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

from prefect import flow, get_run_logger, runtime
from pydantic import BaseModel

from flows.artifacts import publish_summary_artifact
from flows.ingest import ingest_files, run_context
from ingest.chunk import chunk_params
from ingest.config import Settings
from ingest.evaluate import evaluate, hybrid_search_fn, load_cases
from ingest.lifecycle import GateReport, delete_documents, publish_gate
from ingest.lifecycle.generations import drop_generation, reconcile, serve
from ingest.lock import writer_lock
from ingest.manifest import ManifestStore
from ingest.models import State
from ingest.pipeline import IngestSummary


class RebuildReport(BaseModel):
    generation: str
    previous: str
    activated: bool
    gate: GateReport
    reasons: list[str]
    summary: IngestSummary
    dropped: list[str]


class RollbackReport(BaseModel):
    serving: str
    previous: str


def _settings(data_dir: str | None) -> Settings:
    return Settings() if data_dir is None else Settings(data_dir=Path(data_dir))


@flow(name="kbflow-rebuild", flow_run_name="rebuild")
def rebuild_flow(data_dir: str | None = None, eval_cases: str | None = None) -> RebuildReport:
    """Rebuild every live document into a new generation; publish it only if the gate passes."""
    settings = _settings(data_dir)
    with writer_lock(settings.data_dir, "rebuild"):  # already held when run from the CLI
        return _rebuild(settings, eval_cases)


def _rebuild(settings: Settings, eval_cases: str | None) -> RebuildReport:
    log = get_run_logger()
    with ManifestStore(settings.manifest) as manifest:
        reclaimed = reconcile(settings, manifest)
        serving = manifest.serving()
        if serving is None:
            raise ValueError("nothing to rebuild: no generation is serving yet")
        sources = sorted({
            (Path(r.source_path), Path(r.source_root or Path(r.source_path).parent))
            for r in manifest.documents()
            if r.state != State.TOMBSTONED and Path(r.source_path).exists()
        })
        built = manifest.create_generation(settings.embedding_model, None,
                                           chunk_params(settings).version)

    with ManifestStore(settings.manifest, built.generation) as target:
        summary = ingest_files(run_context(settings, target), f"rebuild {built.generation}",
                               sources)
        ready = [r for r in target.documents() if r.state == State.READY]
        record = target.get_generation(built.generation)
    assert record is not None  # created above
    cases_path = eval_cases or settings.eval_cases
    recall = baseline = None
    if cases_path and record.dimension is not None:
        cases = load_cases(Path(cases_path))
        recall = _recall(settings, built.generation, cases)
        baseline = _recall(settings, serving.generation, cases)
    same_model = serving.embedding_model == settings.embedding_model
    gate = publish_gate(
        # the rate the run's summary reports: parse errors over the documents parsed
        documents=summary.parse.documents, parse_errors=summary.parse.parse_errors,
        missing_titles=sum(1 for r in ready if not r.title),
        dimension=record.dimension or 0,
        expected_dimension=serving.dimension if same_model else record.dimension,
        recall=recall, baseline_recall=baseline,
        max_parse_error_rate=settings.max_parse_error_rate,
        max_missing_title_rate=settings.max_missing_title_rate,
    )

    with ManifestStore(settings.manifest) as manifest:
        dropped = reclaimed
        if gate.passed:
            serve(settings, manifest, built.generation, gate.model_dump())
            dropped += _drop_old_generations(settings, manifest)
            log.info("rebuild %s published: %s", built.generation, gate.model_dump_json())
        else:
            manifest.set_generation_status(built.generation, "failed", gate.model_dump())
            log.warning("rebuild %s not published: %s", built.generation, gate.reasons)
    return RebuildReport(generation=built.generation, previous=serving.generation,
                         activated=gate.passed, gate=gate, reasons=gate.reasons,
                         summary=summary, dropped=dropped)


@flow(name="kbflow-rollback", flow_run_name="rollback to {to}")
def rollback_flow(to: str | None = None, data_dir: str | None = None) -> RollbackReport:
    """Re-point every store's alias (and the manifest) at a kept generation: by default the one
    that served most recently before the current one."""
    settings = _settings(data_dir)
    manifest = ManifestStore(settings.manifest)
    try:
        serving = manifest.serving()
        kept = [g for g in manifest.generations() if g.status == "kept"]
        if serving is None or not kept:
            raise ValueError("no kept generation to roll back to")
        chosen = (max(kept, key=lambda g: (g.activated_at or g.created_at, g.number))
                  if to is None else next((g for g in kept if g.generation == to), None))
        if chosen is None:
            names = ", ".join(g.generation for g in kept)
            raise ValueError(f"{to} is not a kept generation (kept: {names})")
        target = chosen
        serve(settings, manifest, target.generation)
    finally:
        manifest.close()
    get_run_logger().info("rolled back from %s to %s", serving.generation, target.generation)
    report = RollbackReport(serving=target.generation, previous=serving.generation)
    publish_summary_artifact(report, "rollback")
    return report


@flow(name="kbflow-delete", flow_run_name="delete {doc_ids}")
def delete_flow(doc_ids: list[str], data_dir: str | None = None) -> dict[str, list[str]]:
    """Tombstone documents first, then clean the stores (retried by later runs if it fails)."""
    run_id = str(runtime.flow_run.id or uuid4())
    tombstoned, cleaned = delete_documents(_settings(data_dir), doc_ids, "deleted", run_id)
    return {"tombstoned": tombstoned, "cleaned": cleaned}


def _recall(settings: Settings, generation: str, cases: list, k: int = 10) -> float:
    with hybrid_search_fn(settings, generation) as search:
        return evaluate(cases, search, k).overall.recall


def _drop_old_generations(settings: Settings, manifest: ManifestStore) -> list[str]:
    """Keep the newest `keep_generations` (serving included); drop the stores of older ones."""
    alive = [g for g in manifest.generations() if g.status in {"serving", "kept", "failed"}]
    alive.sort(key=lambda g: g.number, reverse=True)
    serving = [g for g in alive if g.status == "serving"]
    others = [g for g in alive if g.status != "serving"]
    dropped = []
    for generation in others[max(settings.keep_generations - len(serving), 0):]:
        drop_generation(settings, manifest, generation)
        dropped.append(generation.generation)
    return dropped
