"""Backfill: ingest a folder (or the part of it modified in a date range) in batches.

Each batch is its own flow run named "backfill batch i/n", so a backfill of thousands of files
shows its progress in the Prefect UI and a failed batch can be found and re-run alone. Unchanged
files cost one content hash, so re-running a backfill is cheap.

With fan_out=True the batches are flow runs of the incremental deployment, so every process
worker of the pool takes some and they run in parallel; the backfill waits for them all and adds
up their summaries from the manifest's runs table. By default the batches are subflows in this
process, one after another: fanning out only helps when other workers are free, and a backfill
waiting on a pool whose only worker is running it would wait for ever.
"""

from __future__ import annotations

import time
from collections.abc import Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any

from prefect import flow, get_client, get_run_logger
from prefect.client.schemas.objects import FlowRun
from prefect.deployments import run_deployment
from prefect.exceptions import ObjectNotFound
from pydantic import BaseModel

from flows.artifacts import publish_summary_artifact
from flows.ingest import incremental_flow
from ingest.config import Settings
from ingest.manifest import ManifestStore
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
    batch_runs: list[str] = []  # the batches' flow run ids (= the manifest's run ids)

# The deployment a fanned-out batch runs as (flows/deployments.py registers it).
INCREMENTAL = "kbflow-incremental/incremental"
POLL_SECONDS = 2.0


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
                  data_dir: str | None = None, fan_out: bool = False) -> BackfillReport:
    """List `folder`, keep the files modified in the range, ingest them batch by batch.

    The folder must lie under KBFLOW_DOCUMENT_ROOTS (a deployment's parameters come from
    outside): OutsideRoots says why not. `fan_out`: batches as runs of the incremental
    deployment (True) or in this process (False)."""
    log = get_run_logger()
    settings = Settings() if data_dir is None else Settings(data_dir=Path(data_dir))
    root = resolve_under(folder, settings.document_roots)
    if not root.exists():
        raise FileNotFoundError(f"no such folder: {folder}")
    files = select_files(root, modified_after, modified_before)
    groups = [[str(p) for p in group] for group in batches(files, batch_size)]
    report = BackfillReport(folder=folder, modified_after=modified_after,
                            modified_before=modified_before, files=len(files),
                            batches=len(groups), written=0, skipped_unchanged=0, embedded=0,
                            failures=[])
    pool = bool(groups) and _fan_out(fan_out)
    if not pool:
        local = groups
    elif _has_generation(settings):
        local = []
    else:  # the first run into an empty manifest creates the serving generation and the
        local = groups[:1]  # stores: alone, so that parallel batches do not race to create them
    for i, group in enumerate(local, start=1):
        log.info("batch %d/%d: %d file(s)", i, len(groups), len(group))
        batch = incremental_flow.with_options(flow_run_name=f"backfill batch {i}/{len(groups)}")
        _add(report, batch(group, [], data_dir).model_dump(mode="json"))
    if pool and len(local) < len(groups):
        runs = [_submitted(run_deployment(INCREMENTAL, timeout=0, parameters={
                    "changed": group, "deleted": [], "data_dir": data_dir},
                    flow_run_name=f"backfill batch {i}/{len(groups)}"))
                for i, group in enumerate(groups[len(local):], start=len(local) + 1)]
        log.info("%d batch(es) submitted to the %s deployment", len(runs), INCREMENTAL)
        manifest = ManifestStore(settings.manifest)
        try:
            for run in _wait(runs):
                completed = run.state is not None and run.state.is_completed()
                row = manifest.run(str(run.id)) if completed else None
                if row and row.summary:
                    _add(report, row.summary)
                    continue
                reason = (f"ended {run.state.type.value}: {run.state.message or 'no message'}"
                          if run.state is not None and not completed else
                          "completed, but its summary is not in this backfill's manifest "
                          "(a worker with another KBFLOW_DATA_DIR or KBFLOW_MANIFEST_URL?)")
                report.batch_runs.append(str(run.id))
                report.failures.append({"path": run.name, "doc_id": "", "version_id": "",
                                        "reason": f"flow run {run.id} {reason}; files: "
                                                  + ", ".join(run.parameters["changed"])})
        finally:
            manifest.close()
    publish_summary_artifact(report, f"backfill {folder}")
    return report


def _add(report: BackfillReport, summary: dict) -> None:
    report.written += summary["written"]
    report.skipped_unchanged += summary["skipped_unchanged"]
    report.embedded += summary["embedded"]
    report.failures += summary["failures"]
    report.batch_runs.append(summary["run_id"])


def _submitted(run: FlowRun | Coroutine[Any, Any, FlowRun]) -> FlowRun:
    """run_deployment's result in this synchronous flow (its coroutine form is for async
    callers only)."""
    if isinstance(run, Coroutine):
        raise TypeError("run_deployment returned a coroutine in a synchronous flow")
    return run


def _fan_out(wanted: bool) -> bool:
    """Whether the batches go to the pool: asked for, and the incremental deployment exists
    to take them."""
    if not wanted:
        return False
    with get_client(sync_client=True) as client:
        try:
            client.read_deployment_by_name(INCREMENTAL)
        except ObjectNotFound:
            raise ValueError(f"fan_out needs the {INCREMENTAL} deployment: run "
                             "`kbflow deploy` first") from None
    return True


def _has_generation(settings: Settings) -> bool:
    manifest = ManifestStore(settings.manifest)
    try:
        return manifest.generation is not None
    finally:
        manifest.close()


def _wait(runs: list[FlowRun]) -> list[FlowRun]:
    """The runs, re-read until every one has reached a final state."""
    pending = [run.id for run in runs]
    done: dict = {}
    with get_client(sync_client=True) as client:
        while pending:
            for run_id in list(pending):
                run = client.read_flow_run(run_id)
                if run.state and run.state.is_final():
                    done[run_id] = run
                    pending.remove(run_id)
            if pending:
                time.sleep(POLL_SECONDS)
    return [done[run.id] for run in runs]
