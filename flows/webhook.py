"""`kbflow serve`: a webhook receiver that turns document change events into incremental runs.

    POST /events   {"type": "created"|"updated"|"deleted", "uri": "...", "id": "optional"}
                   X-Kbflow-Timestamp: <unix seconds>
                   X-Kbflow-Signature: sha256=<hex HMAC-SHA256 of f"{timestamp}.{body}">
    GET  /health   liveness; signed the same way (over an empty body): counts, refused events

A uri is a file:// URI or a path relative to a document root (KBFLOW_DOCUMENT_ROOTS). One that
names a folder (`updated`, for a sender that reports "something changed here", or a scheduled
re-scan) has the run re-scan it as `kbflow ingest FOLDER` does: new and edited files in, removed
ones tombstoned, unchanged ones skipped by their hash, in the warm worker without a new process.
Other schemes, control characters, bodies over KBFLOW_WEBHOOK_MAX_BODY_BYTES (413, refused
before they are read) and JSON nested deeper than an event needs are refused at the door; every
malformed body is a 422, never a 500.

An accepted event is written to an SQLite outbox under the data directory before the 202 reply,
so an event the sender saw accepted is never lost. A background thread sends it at once when no
batch is in flight (every run sent has recorded its outcome), so an edit waits no debounce; the
events arriving while a batch runs coalesce behind it and go together the moment it reports, or
once the oldest has waited 10 debounce windows (a run that hangs holds nothing up for good).
Without a tracker nothing says when a run ends: a batch counts as in flight until events stop
arriving for a debounce window, unless the first came a window after the last send. It
resolves each event's path (symlinks and `..` included) and
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

import hashlib
import hmac
import json
import logging
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple
from urllib.parse import unquote, urlparse

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError, field_validator

from flows.serving import NO_DOCS, read_capped
from ingest.config import Settings
from ingest.parse.roots import OutsideRoots, has_control_chars, resolve_under

TIMESTAMP_HEADER = "X-Kbflow-Timestamp"
SIGNATURE_HEADER = "X-Kbflow-Signature"
MAX_URI_CHARS = 4096  # PATH_MAX on Linux
MAX_ID_CHARS = 200
MAX_JSON_DEPTH = 4  # an event is one flat object
PARAMETER_LIMIT_BYTES = 512 * 1024  # Prefect refuses flow-run parameters larger than this
MAX_BATCH_BYTES = PARAMETER_LIMIT_BYTES // 2  # headroom for other parameters and encodings
MAX_ATTEMPTS = 3  # runs an event may end without an outcome before it is quarantined
COLLECT_INTERVAL = 1.0  # seconds between looks at the dispatched runs' outcomes
STATUSES = ("pending", "dispatched", "done", "failed", "quarantined")

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


class ChangeEvent(BaseModel):
    type: Literal["created", "updated", "deleted"]
    uri: str = Field(min_length=1, max_length=MAX_URI_CHARS)
    id: str | None = Field(None, min_length=1, max_length=MAX_ID_CHARS,
                           description="sender's event id; a repeated one is a replay")

    @field_validator("uri")
    @classmethod
    def _a_local_path(cls, value: str) -> str:
        to_path(value)
        return value

    @field_validator("id")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and has_control_chars(value):
            raise ValueError("must not contain control characters")
        return value


class Pending(NamedTuple):
    id: int
    type: str
    uri: str
    received_at: float
    attempts: int


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header value a sender puts on `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def verify(secret: str, timestamp: str | None, signature: str | None, body: bytes,
           max_age: float, now: float) -> str | None:
    """Why the request is not authentic, or None when it is."""
    if not timestamp or not signature:
        return "missing signature headers"
    try:
        sent = int(timestamp)  # whole seconds: no "nan" or "inf" slipping past the window check
    except ValueError:
        return "bad timestamp"
    if abs(now - sent) > max_age:
        return "timestamp outside the replay window"
    # bytes: compare_digest raises on a str header with non-ASCII characters
    if not hmac.compare_digest(sign(secret, timestamp, body).encode(), signature.encode()):
        return "bad signature"
    return None


def to_path(uri: str) -> str:
    """The local path a uri names: a file:// URI's path, or the uri itself when it has no scheme
    (a path, relative to a document root or absolute). ValueError for anything else: the
    pipeline reads local files only, and a URL is no file of ours."""
    if has_control_chars(uri):
        raise ValueError("uri contains control characters")
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise ValueError(f"file URI on another host ({parsed.netloc}) is refused")
        path = unquote(parsed.path)
        if not path or has_control_chars(path):
            raise ValueError("file URI with an empty path or encoded control characters")
        return path
    if parsed.scheme:
        raise ValueError(f"only file:// URIs and paths are accepted, not {parsed.scheme}:")
    return uri


def json_depth(body: bytes, limit: int) -> int:
    """How deep arrays and objects nest in `body` (strings skipped), counted only up to
    limit + 1: a deep body is refused before the JSON parser recurses into it."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                break
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def parse_event(body: bytes) -> ChangeEvent:
    """The event in a request body; ValueError with a readable reason for any malformed one."""
    if json_depth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError too
        raise ValueError(f"not JSON: {exc}") from None
    try:
        return ChangeEvent.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: "
                             f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors())
        raise ValueError(problems) from None


class Replay(Exception):
    """The signature or event id was seen before."""


class EventStore:
    """The outbox: every accepted event, with its status (STATUSES) and the reason of a refusal
    or failure; pending until an incremental run was started for it, done or failed when that
    run recorded its file's outcome."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(
                """CREATE TABLE IF NOT EXISTS events (
                       id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT UNIQUE,
                       signature TEXT NOT NULL UNIQUE, type TEXT NOT NULL, uri TEXT NOT NULL,
                       received_at REAL NOT NULL, flow_run_id TEXT, dispatched_at REAL);"""
            )
            columns = {row[1] for row in db.execute("PRAGMA table_info(events)")}
            if "status" not in columns:  # an outbox from before statuses: dispatched is done
                db.executescript(
                    """ALTER TABLE events ADD COLUMN status TEXT NOT NULL DEFAULT 'pending';
                       ALTER TABLE events ADD COLUMN path TEXT;
                       ALTER TABLE events ADD COLUMN reason TEXT;
                       ALTER TABLE events ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
                       ALTER TABLE events ADD COLUMN finished_at REAL;
                       UPDATE events SET status='done' WHERE dispatched_at IS NOT NULL;"""
                )
            db.execute("DROP INDEX IF EXISTS pending")
            db.execute("CREATE INDEX IF NOT EXISTS by_status ON events (status, id)")

    def _connect(self) -> sqlite3.Connection:
        # A connection per call: the request handlers and the dispatcher run on different threads.
        return sqlite3.connect(self.path, isolation_level=None, timeout=30)

    def _many(self, sql: str, rows: list[tuple]) -> None:
        """One transaction for a batch (autocommit would sync to disk once per row)."""
        with closing(self._connect()) as db:
            db.execute("BEGIN")
            db.executemany(sql, rows)
            db.execute("COMMIT")

    def add(self, event: ChangeEvent, signature: str, received_at: float) -> int:
        """Commit the event (the caller replies only after this returns)."""
        try:
            with closing(self._connect()) as db:
                cursor = db.execute(
                    "INSERT INTO events (event_id, signature, type, uri, received_at) "
                    "VALUES (?,?,?,?,?)",
                    (event.id, signature, event.type, event.uri, received_at))
                return int(cursor.lastrowid or 0)
        except sqlite3.IntegrityError as exc:
            raise Replay(str(exc)) from exc

    def pending(self) -> list[Pending]:
        """Events waiting to go out, oldest first."""
        with closing(self._connect()) as db:
            rows = db.execute("SELECT id, type, uri, received_at, attempts FROM events "
                              "WHERE status='pending' ORDER BY id").fetchall()
        return [Pending(*row) for row in rows]

    def in_flight(self) -> bool:
        """Whether an event went out with a run that has not reported yet."""
        with closing(self._connect()) as db:
            return db.execute("SELECT 1 FROM events WHERE status='dispatched' LIMIT 1"
                              ).fetchone() is not None

    def dispatched(self) -> list[tuple[int, str, str]]:
        """(id, path, flow run id) of events whose run has not reported yet."""
        with closing(self._connect()) as db:
            return db.execute("SELECT id, path, flow_run_id FROM events "
                              "WHERE status='dispatched' ORDER BY id").fetchall()

    def mark_dispatched(self, paths: dict[int, str], flow_run_id: str) -> None:
        """The events (id → the resolved path sent) went out with that run."""
        self._many("UPDATE events SET status='dispatched', path=?, flow_run_id=?, "
                   "dispatched_at=? WHERE id=?",
                   [(path, flow_run_id, time.time(), i) for i, path in paths.items()])

    def finish(self, outcomes: dict[int, tuple[str, str | None]]) -> None:
        """id → (status, reason): done, failed or quarantined, for good."""
        self._many("UPDATE events SET status=?, reason=?, finished_at=? WHERE id=?",
                   [(status, reason, time.time(), i) for i, (status, reason) in outcomes.items()])

    def retry(self, ids: Sequence[int], reason: str) -> None:
        """Back to pending, one attempt more (the dispatcher then sends each alone)."""
        self._many("UPDATE events SET status='pending', attempts=attempts + 1, "
                   "reason=?, flow_run_id=NULL, dispatched_at=NULL WHERE id=?",
                   [(reason, i) for i in ids])

    def attempts(self, ids: Sequence[int]) -> dict[int, int]:
        """id → runs the event went out with that ended without an outcome."""
        found: dict[int, int] = {}
        with closing(self._connect()) as db:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                found |= dict(db.execute("SELECT id, attempts FROM events WHERE id IN "
                                         f"({','.join('?' * len(part))})", part))
        return found

    def prune(self, received_before: float) -> int:
        """Delete finished events received before then; pending and dispatched ones stay."""
        with closing(self._connect()) as db:
            return db.execute("DELETE FROM events WHERE status NOT IN ('pending', 'dispatched') "
                              "AND received_at < ?", (received_before,)).rowcount

    def counts(self) -> dict[str, int]:
        with closing(self._connect()) as db:
            rows = dict(db.execute("SELECT status, count(*) FROM events GROUP BY status"))
        return {status: rows.get(status, 0) for status in STATUSES}

    def listing(self, statuses: Sequence[str] = STATUSES, limit: int = 1000) -> list[dict]:
        """The newest events in those statuses, newest first, as `kbflow events` shows them."""
        marks = ",".join("?" * len(statuses))
        with closing(self._connect()) as db:
            db.row_factory = sqlite3.Row
            rows = db.execute(
                "SELECT id, event_id, type, uri, status, reason, path, attempts, flow_run_id, "
                f"received_at, finished_at FROM events WHERE status IN ({marks}) "
                "ORDER BY id DESC LIMIT ?", [*statuses, limit]).fetchall()
        return [dict(row) for row in rows]


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


def create_app(settings: Settings, trigger: Trigger | None = None,
               poll: float | None = None, tracker: Tracker | None = None) -> FastAPI:
    """The receiver; `trigger` defaults to starting settings.webhook_deployment, with outcomes
    tracked in the manifest (a given trigger is tracked by `tracker`, if any)."""
    if not settings.webhook_secret:
        raise ValueError("set KBFLOW_WEBHOOK_SECRET: unsigned webhooks are refused")
    store = EventStore(settings.data_dir / "webhook_events.db")
    # An event's signature must stay on record while its timestamp could still be replayed.
    keep = max(settings.webhook_keep_days * 86400, settings.webhook_max_age_seconds)
    if trigger is None:
        trigger = deployment_trigger(settings.webhook_deployment)
        tracker = tracker or manifest_tracker(settings)
    dispatcher = Dispatcher(store, trigger, settings.webhook_debounce_seconds, keep,
                            settings.document_roots, tracker)
    if not settings.document_roots:
        log.warning("KBFLOW_DOCUMENT_ROOTS is not set: every event will be quarantined")

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()
        interval = poll if poll is not None else min(1.0, settings.webhook_debounce_seconds / 4)
        thread = threading.Thread(target=dispatcher.run, args=(stop, interval),
                                  name="kbflow-dispatcher", daemon=True)
        thread.start()
        yield
        stop.set()
        thread.join(timeout=30)

    app = FastAPI(title="kbflow webhook", lifespan=lifespan, **NO_DOCS)
    app.state.store, app.state.dispatcher = store, dispatcher

    @app.post("/events", status_code=202)
    async def events(request: Request) -> JSONResponse:
        body = await read_capped(request, settings.webhook_max_body_bytes)
        if body is None:
            return JSONResponse({"detail": f"body over {settings.webhook_max_body_bytes} bytes"},
                                status_code=413)
        signature = request.headers.get(SIGNATURE_HEADER)
        problem = verify(settings.webhook_secret, request.headers.get(TIMESTAMP_HEADER),
                         signature, body, settings.webhook_max_age_seconds, time.time())
        if problem:
            return JSONResponse({"detail": problem}, status_code=401)
        try:
            event = parse_event(body)
        except ValueError as exc:
            return JSONResponse({"detail": f"malformed event: {exc}"[:1000]}, status_code=422)
        try:
            row = store.add(event, str(signature), time.time())
        except Replay:
            return JSONResponse({"detail": "replayed event"}, status_code=401)
        return JSONResponse({"id": row, "status": "pending"}, status_code=202)

    @app.get("/health")
    async def health(request: Request) -> dict:
        """Liveness for anyone; the counts, the last error and the refused or failed events
        (paths, reasons) only for a caller who signs the request like an event, over an empty
        body: a stranger learns nothing about the documents or the pipeline."""
        if verify(settings.webhook_secret, request.headers.get(TIMESTAMP_HEADER),
                  request.headers.get(SIGNATURE_HEADER), b"",
                  settings.webhook_max_age_seconds, time.time()) is not None:
            return {"status": "ok"}
        return {"status": "ok", **store.counts(), "last_error": dispatcher.last_error,
                "problems": store.listing(("quarantined", "failed"), limit=100)}

    return app
