"""The Prefect side of the dispatcher: how it starts an incremental run (a run of the
deployment) and how it learns the run's outcome (the manifest's run summary, else Prefect's
final state)."""

from __future__ import annotations

import time

from flows.webhook.dispatch import COLLECT_INTERVAL, RunOutcome, Tracker, Trigger
from ingest.config import Settings


def deployment_trigger(name: str) -> Trigger:
    """Start a run of the deployment `name` and return at once (timeout=0)."""

    def trigger(changed: list[str], deleted: list[str]) -> str:
        from prefect.client.schemas.objects import FlowRun
        from prefect.deployments import run_deployment

        run = run_deployment(name=name, parameters={"changed": changed, "deleted": deleted},
                             timeout=0)
        if not isinstance(run, FlowRun):  # a sync call returns the run, not a coroutine
            raise TypeError(f"run_deployment returned {type(run).__name__}, not a flow run")
        return str(run.id)

    return trigger


def manifest_tracker(settings: Settings, task_runs: bool = False) -> Tracker:
    """Outcomes from the manifest's run summaries (the incremental flow records one per run,
    with every failed file and its reason); a run Prefect reports ended without one, crashed.
    Runs are flow runs of the deployment, or with `task_runs` the warm worker's task runs.
    The dispatcher asks at every tick while events wait behind a run: the manifest each time
    (under a millisecond), Prefect once per COLLECT_INTERVAL and run (~25 ms of CPU a call)."""
    asked: dict[str, float] = {}  # run id → when Prefect was last asked about it

    def track(run_id: str) -> RunOutcome | None:
        from uuid import UUID

        from prefect.client.orchestration import get_client

        from ingest.manifest import ManifestStore

        manifest = ManifestStore(settings.manifest)
        try:
            run = manifest.run(run_id)
        finally:
            manifest.close()
        if run is not None and run.finished_at:
            asked.pop(run_id, None)
            failures = (run.summary or {}).get("failures") or []
            return RunOutcome(True, {f["path"]: f["reason"] for f in failures})
        if run_id in asked and time.monotonic() - asked[run_id] < COLLECT_INTERVAL:
            return None
        try:
            with get_client(sync_client=True) as client:
                read = client.read_task_run if task_runs else client.read_flow_run
                state = read(UUID(run_id)).state
        finally:  # from the answer (or the error) on: an unreachable Prefect retries slowly
            asked[run_id] = time.monotonic()
        if state is None or not state.is_final():
            return None
        asked.pop(run_id)
        if state.is_completed():  # finished, but its summary went to another manifest
            return RunOutcome(True)
        return RunOutcome(False, note=f"{state.name}: {state.message or ''}".strip(": "))

    return track
