"""Backfill: ingest a folder (or the part of it modified in a date range) in batches.

Each batch is its own subflow run named "backfill batch i/n", so a backfill of thousands of files
shows its progress in the Prefect UI and a failed batch can be found and re-run alone. Unchanged
files cost one content hash, so re-running a backfill is cheap.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from prefect import flow, get_run_logger
from pydantic import BaseModel

from flows.artifacts import publish_summary_artifact
from flows.ingest import incremental_flow
from ingest.config import Settings
from ingest.parse import discover
from ingest.parse.roots import resolve_under


class BackfillReport(BaseModel):
    folder: str
    modified_after: datetime | None
    modified_before: datetime | None
    files: int
    batches: int
    written: int
    skipped_unchanged: int
    embedded: int
    failures: list[dict]


def select_files(folder: Path, modified_after: datetime | None = None,
                 modified_before: datetime | None = None) -> list[Path]:
    """Documents under `folder` whose mtime lies in [after, before), in a stable order.

    mtime only narrows *which* files a backfill looks at; whether a file is re-ingested is still
    decided by its content hash."""
    low = modified_after.timestamp() if modified_after else float("-inf")
    high = modified_before.timestamp() if modified_before else float("inf")
    return [p for p in discover(folder) if low <= p.stat().st_mtime < high]


def batches(items: list[Path], size: int) -> list[list[Path]]:
    if size < 1:
        raise ValueError("batch_size must be at least 1")
    return [items[i : i + size] for i in range(0, len(items), size)]


def _run_name() -> str:
    from prefect.runtime import flow_run

    params = flow_run.parameters
    after, before = params.get("modified_after"), params.get("modified_before")
    window = f" [{after or '…'} → {before or '…'})" if after or before else ""
    return f"backfill {params['folder']}{window}"


@flow(name="kbflow-backfill", flow_run_name=_run_name, log_prints=False)
def backfill_flow(folder: str, modified_after: datetime | None = None,
                  modified_before: datetime | None = None, batch_size: int = 50,
                  data_dir: str | None = None) -> BackfillReport:
    """List `folder`, keep the files modified in the range, ingest them batch by batch.

    The folder must lie under KBFLOW_DOCUMENT_ROOTS (a deployment's parameters come from
    outside): OutsideRoots says why not."""
    log = get_run_logger()
    settings = Settings() if data_dir is None else Settings(data_dir=Path(data_dir))
    root = resolve_under(folder, settings.document_roots)
    if not root.exists():
        raise FileNotFoundError(f"no such folder: {folder}")
    files = select_files(root, modified_after, modified_before)
    groups = batches(files, batch_size)
    report = BackfillReport(folder=folder, modified_after=modified_after,
                            modified_before=modified_before, files=len(files),
                            batches=len(groups), written=0, skipped_unchanged=0, embedded=0,
                            failures=[])
    for i, group in enumerate(groups, start=1):
        log.info("batch %d/%d: %d file(s)", i, len(groups), len(group))
        batch = incremental_flow.with_options(flow_run_name=f"backfill batch {i}/{len(groups)}")
        summary = batch([str(p) for p in group], [], data_dir)
        report.written += summary.written
        report.skipped_unchanged += summary.skipped_unchanged
        report.embedded += summary.embedded
        report.failures += [f.model_dump(mode="json") for f in summary.failures]
    publish_summary_artifact(report, f"backfill {folder}")
    return report
