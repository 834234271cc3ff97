"""The warm incremental path: a Prefect task worker that applies webhook events (issue #27).

    kbflow worker                                  (PREFECT_API_URL: a running Prefect server)
    KBFLOW_WEBHOOK_RUNNER=worker kbflow serve      (the receiver hands events to the worker)

A deployment run of `incremental_flow` pays for a process worker's poll, a fresh Python process,
Prefect's and kbflow's imports, the parse processes and the model before it parses one file.
Here `kbflow serve` hands each debounced batch to the background task `apply_events`
(`.delay()`, Prefect's task scheduling), and `kbflow worker` runs Prefect's task worker for it:
one long-lived process keeps imports, the Prefect client, the parse processes and the embedding
model between events. Every batch is a task run (state, retries) around a flow run (logs, the
run summary artifact); its steps run as plain calls. Full rebuilds and backfills stay
deployments.

Nothing is lost when the worker dies: the outbox keeps an event until the run it went out with
has recorded its outcome in the manifest. Prefect does not hand a task run a worker took to
another worker, so a worker starting marks the runs of `apply_events` that a dead one left
Pending or Running as Crashed; the receiver's tracker then sends their events again. One worker
per data directory: the embedded stores take one writer at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager

from prefect import flow, runtime, task
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowFilter,
    FlowFilterName,
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
    TaskRunFilter,
    TaskRunFilterState,
    TaskRunFilterStateType,
    TaskRunFilterTags,
)
from prefect.client.schemas.objects import State, StateType
from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
from prefect.states import Crashed

from flows.ingest import Worker, apply_changes, store_limits
from flows.tls import share_tls_context
from ingest.config import Settings
from ingest.embed import Embedder
from ingest.lock import DataDirBusy, writer_lock
from ingest.parse import ParseLimits, ParsePool
from ingest.pipeline import IngestSummary
from ingest.pipeline.context import Warm
from ingest.pipeline.local import InProcess

log = logging.getLogger(__name__)
TAG = "kbflow-events"
_warm: dict[str, Warm] = {}  # per data directory, for the life of the worker process


class WarmSteps(InProcess):
    """The steps as plain calls: a Prefect task run per step cost more than an edit's parse,
    embed and write together. Store writes still hold the store limits a deployment run holds
    (a backfill or rebuild on the work pool may be writing)."""

    def store_writer(self) -> AbstractContextManager[None]:
        return store_limits()


def warm_for(settings: Settings) -> Warm:
    """The worker's parse pool and embedder for `settings`' data directory, made once."""
    key = str(settings.data_dir.resolve())
    if key not in _warm:
        s = settings
        _warm[key] = Warm(
            parser=ParsePool(s.parse_workers, s.parse_timeout_s, ParseLimits.of(s),
                             s.parse_memory_mb),
            embedder=Embedder(s.embedding_model, s.vector_cache_path, s.embedding_batch_size))
    return _warm[key]


def _busy(_task: object, _run: object, state: State) -> bool:
    """Retry only while another writer holds the data directory; other errors fail the run
    (the receiver then sends its events again, each alone)."""
    return isinstance(state.result(raise_on_failure=False), DataDirBusy)


@flow(name="kbflow-events", flow_run_name="events {changed} -{deleted}")
def events_flow(changed: list[str], deleted: list[str], event_run: str) -> IngestSummary:
    """The batch as `incremental_flow` applies it, with the worker's warm parse processes and
    model; a flow run, so its steps and logs are recorded (Prefect sends the logs of a flow
    run, not of a background task alone)."""
    settings = Settings()
    with writer_lock(settings.data_dir, "kbflow worker (webhook events)"):
        return apply_changes(settings, changed, deleted,
                             Worker(warm_for(settings), event_run, WarmSteps()))


@task(name="kbflow-apply-events", tags=[TAG], cache_policy=NO_CACHE, retries=5,
      retry_delay_seconds=[1, 2, 5, 10, 30], retry_condition_fn=_busy)
def apply_events(changed: list[str], deleted: list[str]) -> dict[str, int]:
    """One debounced batch of webhook events (the id the receiver tracks is this task run's);
    retried while another writer (a `kbflow ingest`) holds the data directory.

    Its flow run sends no heartbeats: Prefect's sync flow engine joins its heartbeat thread at
    the end of the run, and that thread sleeps in whole seconds, so every batch ended up to 1 s
    after its work, holding up the next batch (bench/RESULTS.md, "The worker's tail").
    Heartbeats detect crashed flow runs; a dead worker's runs are marked Crashed by the next
    worker (crash_orphans)."""
    with without_heartbeats():
        summary = events_flow(changed, deleted, str(runtime.task_run.id))
    return {"written": summary.written, "embedded": summary.embedded,
            "failures": len(summary.failures)}


def without_heartbeats() -> AbstractContextManager[object]:
    """Prefect settings under which a flow run starts no heartbeat thread (apply_events)."""
    return temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})


def crash_orphans() -> None:
    """Mark Crashed the runs of apply_events (and their kbflow-events flow runs) that a dead
    worker left Pending or Running."""
    dead: State[None] = Crashed(message="its worker died; the webhook sends the events again")
    alive = [StateType.PENDING, StateType.RUNNING]
    with get_client(sync_client=True) as client:
        tasks = client.read_task_runs(task_run_filter=TaskRunFilter(
            tags=TaskRunFilterTags(all_=[TAG]),
            state=TaskRunFilterState(type=TaskRunFilterStateType(any_=alive))))
        flows = client.read_flow_runs(
            flow_filter=FlowFilter(name=FlowFilterName(any_=[events_flow.name])),
            flow_run_filter=FlowRunFilter(state=FlowRunFilterState(
                type=FlowRunFilterStateType(any_=alive))))
        for task_run in tasks:
            client.set_task_run_state(task_run.id, dead, force=True)
        for flow_run in flows:
            client.set_flow_run_state(flow_run.id, dead, force=True)
    if tasks:
        log.warning("%d run(s) of a dead worker marked Crashed", len(tasks))


def serve_worker(settings: Settings) -> None:
    """`kbflow worker`: crash the dead worker's runs, load the model, then take events."""
    share_tls_context()
    crash_orphans()
    warm = warm_for(settings)
    warm.parser.start()
    warm.embedder.encoder  # noqa: B018 - load the model before the first event
    from prefect.task_worker import serve

    try:
        serve(apply_events, limit=1)  # one batch at a time: one writer per store
    finally:  # stopped (SIGTERM, Ctrl-C): the parse processes go with it
        for kept in _warm.values():
            kept.close()


def task_trigger() -> Callable[[list[str], list[str]], str]:
    """The receiver's trigger: schedule apply_events for the worker; the task run's id."""

    def trigger(changed: list[str], deleted: list[str]) -> str:
        return str(apply_events.delay(changed, deleted).task_run_id)

    return trigger
