"""From chunked versions to planned writes: end dates in force, then what changed since each
version was last published, and the triples of what must be written."""

from __future__ import annotations

from collections.abc import Sequence

from ingest.diff import diff_chunks
from ingest.graph.llm import extract
from ingest.graph.titles import TitleIndex
from ingest.lifecycle import VersionDates, closing_dates, superseded_keys
from ingest.manifest import ManifestStore
from ingest.models import State, version_key
from ingest.pipeline.context import RunContext
from ingest.pipeline.failures import Failure
from ingest.pipeline.job import Planned, VersionJob


def date_versions(manifest: ManifestStore, jobs: Sequence[VersionJob],
                  chunker_version: str) -> list[VersionJob]:
    """Every version with its end date in force, followed by the published versions whose end
    date moved (a newer version arrived): those are rewritten from their manifest records — no
    parsing, no embedding."""
    planned = {job.key for job in jobs}
    # only the documents being written: their versions are the ones whose dates can move
    records = manifest.documents(doc_ids={job.meta.doc_id for job in jobs})
    published = {(r.doc_id, r.version_id): r for r in records
                 if r.state == State.READY and not manifest.is_tombstoned(r.doc_id, r.version_id)}
    metas = [j.meta for j in jobs] + [r.meta() for key, r in published.items()
                                      if key not in planned]
    superseded = superseded_keys(m.identity for m in metas)
    versions = [VersionDates(doc_id=m.doc_id, version_id=m.version_id,
                             effective_from=m.effective_from, declared_to=m.effective_to,
                             superseded=version_key(m.doc_id, m.version_id) in superseded)
                for m in metas]
    ends = closing_dates(versions)
    dated = [job.dated(ends[job.key]) if job.key in ends else job for job in jobs]
    for key, end in ends.items():
        record = published.get(key)
        if key not in planned and record is not None and record.effective_to != end:
            dated.append(VersionJob(
                meta=record.meta(), chunks=manifest.version_chunks(*key),
                chunker_version=record.chunker_version or chunker_version,
                parser_version=record.parser_version, effective_to=end,
            ))
    return dated


def plan(ctx: RunContext, job: VersionJob, titles: TitleIndex | None = None) -> Planned | None:
    """The version's diff against what is published, and the triples of its writes, citations
    resolved through `titles` (the run's and the published ones); None when this fails (the
    version's failure, not the run's)."""
    try:
        with ctx.clock.stage("diff"):
            for c in job.chunks:
                c.effective_to = job.effective_to
            diff = diff_chunks(job.chunks, ctx.manifest.published(*job.key))
    except Exception as exc:  # noqa: BLE001 - this version's failure, not the run's
        ctx.fail(Failure.raised("diff", exc, job.meta.source_path, job.key))
        return None
    try:
        with ctx.clock.stage("graph"):
            articles = {c.clause_no for c in job.chunks if c.clause_no}
            extraction = extract(diff.writes, job.meta.title, ctx.settings, titles, articles)
    except Exception as exc:  # noqa: BLE001 - this version's failure, not the run's
        ctx.fail(Failure.raised("graph", exc, job.meta.source_path, job.key))
        return None
    return Planned(job=job, diff=diff, triples=extraction.triples, llm_graph=extraction.llm)
