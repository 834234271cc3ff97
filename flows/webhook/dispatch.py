"""The dispatcher: a background thread that turns the outbox's pending events into incremental
runs and finishes them from the runs' outcomes. It knows runs only through a Trigger and a
Tracker (flows/webhook/runs.py gives the Prefect ones), so it runs and is tested without Prefect.

It sends events at once when no batch is in flight (every run sent has recorded its outcome), so
an edit waits no debounce; the events arriving while a batch runs coalesce behind it and go
together the moment it reports, or once the oldest has waited 10 debounce windows (a run that
hangs holds nothing up for good). Without a tracker nothing says when a run ends: a batch counts
as in flight until events stop arriving for a debounce window, unless the first came a window
after the last send. It resolves each event's path (symlinks and `..` included) and
quarantines, with its reason, any that leaves the document roots; it keeps the last event per
path and starts the incremental deployment with the changed and deleted paths, in as many runs
as keep each run's parameters under Prefect's limit. An event is done when the run it went out
with has recorded its file's outcome (the manifest's run summary); a run that ends without one
(crashed, cancelled) sends its events again, each alone, so an event that keeps crashing its run
is quarantined after MAX_ATTEMPTS and costs no other event anything. If Prefect cannot be reached
the events stay pending and go out on a later attempt (also after a restart): delivery is at
least once, which the pipeline tolerates because ingesting an unchanged file is a no-op.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from flows.webhook.events import to_path
from flows.webhook.outbox import EventStore, Pending
from ingest.parse.roots import OutsideRoots, resolve_under

PARAMETER_LIMIT_BYTES = 512 * 1024  # Prefect refuses flow-run parameters larger than this
MAX_BATCH_BYTES = PARAMETER_LIMIT_BYTES // 2  # headroom for other parameters and encodings
MAX_ATTEMPTS = 3  # runs an event may end without an outcome before it is quarantined
COLLECT_INTERVAL = 1.0  # seconds between looks at the dispatched runs' outcomes

log = logging.getLogger(__name__)

# Called with (changed, deleted) paths; returns the id of the flow run it started.
Trigger = Callable[[list[str], list[str]], str]


@dataclass
class RunOutcome:
    """What a finished flow run recorded: `finished` False when it ended without a summary."""

    finished: bool
    failures: dict[str, str] = field(default_factory=dict)  # path → reason
    note: str = ""


# Called with a flow run id: None while the run goes on, else its outcome.
Tracker = Callable[[str], RunOutcome | None]


def coalesce(events: Sequence[tuple[int, str, str]]) -> dict[str, tuple[str, list[int]]]:
    """(id, type, path) → path → (the last event's type, every event id for that path), in the
    order of the deciding events."""
    last: dict[str, tuple[str, list[int]]] = {}
    for event_id, kind, path in events:
        ids = last.pop(path, (kind, []))[1]  # re-insert, so the order is that of the last events
        last[path] = (kind, [*ids, event_id])
    return last


def batches(paths: dict[str, tuple[str, list[int]]], max_bytes: int
            ) -> list[dict[str, tuple[str, list[int]]]]:
    """Consecutive slices whose parameters, as JSON, stay under max_bytes."""
    out: list[dict[str, tuple[str, list[int]]]] = []
    size = max_bytes
    for path, entry in paths.items():
        cost = len(json.dumps(path)) + 2  # quoted, escaped, and a separator
        if size + cost > max_bytes:
            out.append({})
            size = len('{"changed": [], "deleted": []}')
        out[-1][path] = entry
        size += cost
    return out


class Dispatcher:
    """Sends pending events on at once when no batch is in flight, coalesced behind one that is,
    and retries with backoff on failure; with a tracker, finishes dispatched events from their
    runs' outcomes; prunes finished events older than `keep` seconds."""

    def __init__(self, store: EventStore, trigger: Trigger, debounce: float, keep: float,
                 roots: Sequence[Path] = (), tracker: Tracker | None = None,
                 max_batch_bytes: int = MAX_BATCH_BYTES) -> None:
        self.store = store
        self.trigger = trigger
        self.debounce = debounce
        self.keep = keep
        self.roots = list(roots)
        self.tracker = tracker
        self.max_batch_bytes = max_batch_bytes
        self.failures = 0
        self.last_error: str | None = None
        self._retry_at = 0.0
        self._collect_at = 0.0
        self._sent_at = 0.0  # when a run was last started

    def tick(self, now: float) -> str | None:
        """Collect outcomes, then send the pending events on if they are due; the id of the
        last flow run started, if any."""
        events = self.store.pending()
        waiting = bool(events) and now >= self._retry_at
        if self.tracker is not None and (waiting or now >= self._collect_at):
            # events waiting: look at every tick, so they go the moment the batch ahead reports
            self._collect_at = now + COLLECT_INTERVAL
            self.collect()
            events = self.store.pending()  # with those a crashed run sent back
        if not events or now < self._retry_at:
            return None
        overdue = now - events[0].received_at >= 10 * self.debounce  # a steady stream goes out
        if self._in_flight(events, now) and not overdue:
            return None
        valid: list[tuple[int, str, str]] = []
        retried: list[tuple[int, str, str]] = []
        refused: dict[int, tuple[str, str | None]] = {}
        for event in events:
            try:
                path = str(resolve_under(to_path(event.uri), self.roots))
            except (OutsideRoots, ValueError) as exc:
                refused[event.id] = ("quarantined", str(exc))
                continue
            (retried if event.attempts else valid).append((event.id, event.type, path))
        if refused:
            self.store.finish(refused)
            log.warning("%d event(s) quarantined, e.g. %s", len(refused),
                        next(iter(refused.values()))[1])
        # events whose earlier run ended without an outcome go alone: one cannot sink others
        groups = batches(coalesce(valid), self.max_batch_bytes)
        groups += [{path: (kind, [i])} for i, kind, path in retried]
        started = None
        for group in groups:
            run_id = self._send(group, now)
            if run_id is None:  # an outage: the rest waits for the retry too
                break
            started = run_id or started
        if started is not None:
            self.store.prune(now - self.keep)
        return started

    def _in_flight(self, events: Sequence[Pending], now: float) -> bool:
        """Whether `events` coalesce behind a batch sent before: with a tracker, while a run
        has not reported; without one, while they keep coming within a debounce window of each
        other, the first within a window of the last send."""
        if self.tracker is not None:
            return self.store.in_flight()
        leading = events[0].received_at - self._sent_at >= self.debounce
        quiet = now - events[-1].received_at >= self.debounce
        return not (leading or quiet)

    def _send(self, group: dict[str, tuple[str, list[int]]], now: float) -> str | None:
        """The run started for the group; "" when the orchestrator refused it, None when it
        could not be reached (the events stay pending)."""
        changed = [p for p, (kind, _) in group.items() if kind != "deleted"]
        deleted = [p for p, (kind, _) in group.items() if kind == "deleted"]
        ids = [i for _, event_ids in group.values() for i in event_ids]
        try:
            run_id = self.trigger(changed, deleted)
        except Exception as exc:  # noqa: BLE001 - any failure: keep the events, try again later
            error = f"{type(exc).__name__}: {exc}"
            if _refused(exc):  # the orchestrator refused these parameters: isolate, not retry
                if len(ids) == 1:
                    self.store.finish({ids[0]: ("quarantined", f"run refused: {error}")})
                else:
                    self.store.retry(ids, f"run refused, sent alone next: {error}")
                log.warning("a run of %d event(s) was refused: %s", len(ids), error)
                return ""
            self.failures += 1
            self.last_error = error
            self._retry_at = now + min(60.0, self.debounce * 2 ** self.failures)
            log.warning("triggering the incremental run failed (%d event(s) kept): %s",
                        len(ids), error)
            return None
        self.failures, self.last_error, self._retry_at, self._sent_at = 0, None, 0.0, now
        paths = {i: path for path, (_, event_ids) in group.items() for i in event_ids}
        self.store.mark_dispatched(paths, run_id)
        if self.tracker is None:  # nobody to report outcomes: started is as far as we know
            self.store.finish({i: ("done", None) for i in ids})
        log.info("started flow run %s: %d changed, %d deleted", run_id, len(changed),
                 len(deleted))
        return run_id

    def collect(self) -> None:
        """Finish the dispatched events whose run has reported (or ended without a report)."""
        by_run: dict[str, list[tuple[int, str]]] = {}
        for event_id, path, run_id in self.store.dispatched():
            by_run.setdefault(run_id, []).append((event_id, path))
        for run_id, events in by_run.items():
            try:
                outcome = self.tracker(run_id) if self.tracker else None
            except Exception as exc:  # noqa: BLE001 - ask again next time; others go on
                log.warning("outcome of run %s unknown for now: %s: %s", run_id,
                            type(exc).__name__, exc)
                continue
            if outcome is None:
                continue
            if outcome.finished:
                self.store.finish({
                    i: ("failed", outcome.failures[p]) if p in outcome.failures else ("done", None)
                    for i, p in events})
                continue
            why = f"run {run_id} ended without recording an outcome: {outcome.note}"
            attempts = self.store.attempts([i for i, _ in events])
            spent = [i for i, _ in events if attempts.get(i, 0) + 1 >= MAX_ATTEMPTS]
            self.store.finish({i: ("quarantined", f"{why} ({MAX_ATTEMPTS} times)")
                               for i in spent})
            self.store.retry([i for i, _ in events if i not in spent], why)

    def run(self, stop: threading.Event, poll: float) -> None:
        while not stop.wait(poll):
            try:
                self.tick(time.time())
            except Exception:  # e.g. the outbox briefly locked: log it, the loop goes on
                log.exception("dispatcher tick failed")


def _refused(exc: Exception) -> bool:
    """A client error from the orchestrator (bad parameters), not an outage worth waiting out."""
    if isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
        return 400 <= status < 500 and status not in (408, 409, 429)
    return isinstance(exc, ValueError | TypeError)
