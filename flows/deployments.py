"""Operations: the Prefect deployments that run kbflow unattended, and the flows behind them.

    kbflow-full-rebuild/full-rebuild   cron KBFLOW_REBUILD_CRON (default "0 2 * * *", UTC)
    kbflow-incremental/incremental     changed / deleted paths (the webhook's target)
    kbflow-backfill/backfill           a folder, optionally a modification-date range, in batches
                                       (a whole folder re-scanned: backfill without dates)
    kbflow-rollback/rollback           re-point the aliases to an earlier generation

All four run on the process work pool "kbflow"; the flow code is this repository's folder (a
process worker runs it in place). `kbflow deploy` (or `python -m flows.deployments`) creates the
pool, the per-store concurrency limits and the deployments; all three steps are idempotent.

Store writes of concurrent runs (backfill batches, webhook increments, the nightly rebuild) are
serialised by the global concurrency limits in flows/ingest.py's STORE_LIMITS (`_store_writer`
holds all three while it has the stores open). Imports go one way: this module imports the flows.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import Any
from uuid import UUID

from prefect import flow
from prefect.runner.storage import LocalStorage
from prefect.types.entrypoint import EntrypointType

from flows.artifacts import publish_summary_artifact
from flows.backfill import backfill_flow
from flows.ingest import STORE_LIMITS, incremental_flow
from flows.lifecycle import rebuild_flow, rollback_flow
from ingest.config import Settings

REPO = Path(__file__).resolve().parents[1]
WORK_POOL = "kbflow"


# ---- the one flow of its own: the scheduled rebuild, with its gate verdict as the artifact ------

@flow(name="kbflow-full-rebuild", flow_run_name="full rebuild {data_dir}")
def full_rebuild(data_dir: str | None = None, eval_cases: str | None = None) -> Any:
    """The scheduled rebuild: a new generation, switched to only if it passes the publish gate."""
    report = rebuild_flow(data_dir=data_dir, eval_cases=eval_cases)
    verdict = "published" if report.activated else "NOT published: " + "; ".join(report.reasons)
    publish_summary_artifact(report.model_dump(mode="json", exclude={"summary"}),
                             f"full rebuild {report.generation} {verdict}")
    return report


# ---- registration -----------------------------------------------------------------------------

def deployment_specs(settings: Settings | None = None) -> list[dict[str, Any]]:
    """What `register` creates: the flow and its to_deployment() arguments."""
    settings = settings or Settings()
    return [
        {"flow": full_rebuild, "name": "full-rebuild",
         "cron": settings.rebuild_cron,
         "description": "Full rebuild into a new generation; publishes only past the gate."},
        {"flow": incremental_flow, "name": "incremental",
         "description": "Ingest changed paths, tombstone deleted ones (webhook target)."},
        {"flow": backfill_flow, "name": "backfill",
         "description": "Ingest a folder, optionally a modification-date range, in batches."},
        {"flow": rollback_flow, "name": "rollback",
         "description": "Re-point every store's alias to an earlier generation."},
    ]


def ensure_work_pool(name: str = WORK_POOL) -> None:
    """A process pool with the process worker's default job template (as `prefect work-pool
    create --type process` makes it); an existing pool is left as it is."""
    from prefect import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists
    from prefect.workers.process import ProcessWorker

    with get_client(sync_client=True) as client, suppress(ObjectAlreadyExists):
        client.create_work_pool(WorkPoolCreate(
            name=name, type="process",
            base_job_template=ProcessWorker.get_default_base_job_template()))


def ensure_concurrency_limits(limits: dict[str, int] | None = None) -> None:
    """Create (or re-size) one global concurrency limit per store role."""
    from prefect import get_client

    with get_client(sync_client=True) as client:
        for name, limit in (limits or STORE_LIMITS).items():
            client.upsert_global_concurrency_limit_by_name(name, limit)


def register(repo: Path = REPO, settings: Settings | None = None) -> dict[str, UUID]:
    """Pool, limits and the four deployments against the current PREFECT_API_URL."""
    ensure_work_pool()
    ensure_concurrency_limits()
    ids: dict[str, UUID] = {}
    for spec in deployment_specs(settings):
        spec = dict(spec)
        target = spec.pop("flow")
        deployment = target.to_deployment(work_pool_name=WORK_POOL,
                                          entrypoint_type=EntrypointType.MODULE_PATH, **spec)
        # The worker runs the flow in place, from the repository folder (relative paths in
        # parameters, such as folder=sample_docs, are relative to it).
        deployment.storage = LocalStorage(str(repo))
        ids[f"{target.name}/{spec['name']}"] = deployment.apply()
    return ids


if __name__ == "__main__":
    for deployment, deployment_id in register().items():
        print(f"{deployment}  {deployment_id}")
