"""`kbflow serve`: a webhook receiver that turns document change events into incremental runs.

    POST /events   {"type": "created"|"updated"|"deleted", "uri": "...", "id": "optional"}
                   X-Kbflow-Timestamp: <unix seconds>
                   X-Kbflow-Signature: sha256=<hex HMAC-SHA256 of f"{timestamp}.{body}">
    GET  /health

An accepted event is written to an SQLite outbox under the data directory before the 202 reply,
so an event the sender saw accepted is never lost. A background thread waits until events stop
arriving for a debounce window, keeps the last event per URI, and starts the incremental
deployment with the changed and deleted paths. If Prefect cannot be reached the events stay
pending and go out on a later attempt (also after a restart): delivery is at least once, which
the pipeline tolerates because ingesting an unchanged file is a no-op.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError

from ingest.config import Settings

TIMESTAMP_HEADER = "X-Kbflow-Timestamp"
SIGNATURE_HEADER = "X-Kbflow-Signature"

log = logging.getLogger(__name__)

# Called with (changed, deleted) paths; returns the id of the flow run it started.
Trigger = Callable[[list[str], list[str]], str]


class ChangeEvent(BaseModel):
    type: Literal["created", "updated", "deleted"]
    uri: str = Field(min_length=1)
    id: str | None = Field(None, description="sender's event id; a repeated one is a replay")


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
    if not hmac.compare_digest(sign(secret, timestamp, body), signature):
        return "bad signature"
    return None


def to_path(uri: str) -> str:
    """file:// URIs become local paths (the pipeline reads files); anything else is kept."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


class Replay(Exception):
    """The signature or event id was seen before."""


class EventStore:
    """The outbox: every accepted event, pending until an incremental run was started for it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(
                """CREATE TABLE IF NOT EXISTS events (
                       id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT UNIQUE,
                       signature TEXT NOT NULL UNIQUE, type TEXT NOT NULL, uri TEXT NOT NULL,
                       received_at REAL NOT NULL, flow_run_id TEXT, dispatched_at REAL);
                   CREATE INDEX IF NOT EXISTS pending ON events (dispatched_at, id);"""
            )

    def _connect(self) -> sqlite3.Connection:
        # A connection per call: the request handlers and the dispatcher run on different threads.
        return sqlite3.connect(self.path, isolation_level=None, timeout=30)

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

    def pending(self) -> list[tuple[int, str, str, float]]:
        """(id, type, uri, received_at) of undispatched events, oldest first."""
        with closing(self._connect()) as db:
            return db.execute("SELECT id, type, uri, received_at FROM events "
                              "WHERE dispatched_at IS NULL ORDER BY id").fetchall()

    def mark_dispatched(self, ids: list[int], flow_run_id: str) -> None:
        with closing(self._connect()) as db:
            db.executemany("UPDATE events SET flow_run_id=?, dispatched_at=? WHERE id=?",
                           [(flow_run_id, time.time(), i) for i in ids])

    def prune(self, received_before: float) -> int:
        """Delete dispatched events received before then; pending ones always stay."""
        with closing(self._connect()) as db:
            return db.execute("DELETE FROM events WHERE dispatched_at IS NOT NULL "
                              "AND received_at < ?", (received_before,)).rowcount

    def counts(self) -> dict[str, int]:
        with closing(self._connect()) as db:
            row = db.execute("SELECT count(*) - count(dispatched_at), count(dispatched_at) "
                             "FROM events").fetchone()
        return {"pending": row[0], "dispatched": row[1]}


def coalesce(events: list[tuple[int, str, str, float]]) -> tuple[list[str], list[str]]:
    """The last event per URI wins: created/updated → changed, deleted → deleted."""
    last: dict[str, str] = {}
    for _, kind, uri, _ in events:
        last.pop(uri, None)  # re-insert, so the order is that of the deciding events
        last[uri] = kind
    changed = [to_path(u) for u, kind in last.items() if kind != "deleted"]
    deleted = [to_path(u) for u, kind in last.items() if kind == "deleted"]
    return changed, deleted


class Dispatcher:
    """Debounces pending events into one trigger call and retries with backoff on failure;
    prunes dispatched events older than `keep` seconds."""

    def __init__(self, store: EventStore, trigger: Trigger, debounce: float,
                 keep: float) -> None:
        self.store = store
        self.trigger = trigger
        self.debounce = debounce
        self.keep = keep
        self.failures = 0
        self.last_error: str | None = None
        self._retry_at = 0.0

    def tick(self, now: float) -> str | None:
        """Send the pending events on if they are due; the started flow run id, if any."""
        events = self.store.pending()
        if not events or now < self._retry_at:
            return None
        quiet = now - events[-1][3] >= self.debounce
        overdue = now - events[0][3] >= 10 * self.debounce  # a steady stream still goes out
        if not (quiet or overdue):
            return None
        changed, deleted = coalesce(events)
        try:
            run_id = self.trigger(changed, deleted)
        except Exception as exc:  # noqa: BLE001 - any failure: keep the events, try again later
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            self._retry_at = now + min(60.0, self.debounce * 2 ** self.failures)
            log.warning("triggering the incremental run failed (%d event(s) kept): %s",
                        len(events), self.last_error)
            return None
        self.failures, self.last_error, self._retry_at = 0, None, 0.0
        self.store.mark_dispatched([e[0] for e in events], run_id)
        self.store.prune(now - self.keep)
        log.info("started flow run %s: %d changed, %d deleted", run_id, len(changed),
                 len(deleted))
        return run_id

    def run(self, stop: threading.Event, poll: float) -> None:
        while not stop.wait(poll):
            try:
                self.tick(time.time())
            except Exception:  # e.g. the outbox briefly locked: log it, the loop goes on
                log.exception("dispatcher tick failed")


def deployment_trigger(name: str) -> Trigger:
    """Start a run of the deployment `name` and return at once (timeout=0)."""

    def trigger(changed: list[str], deleted: list[str]) -> str:
        from prefect.deployments import run_deployment

        run = run_deployment(name=name, parameters={"changed": changed, "deleted": deleted},
                             timeout=0)
        return str(run.id)

    return trigger


def create_app(settings: Settings, trigger: Trigger | None = None,
               poll: float | None = None) -> FastAPI:
    """The receiver; `trigger` defaults to starting settings.webhook_deployment."""
    if not settings.webhook_secret:
        raise ValueError("set KBFLOW_WEBHOOK_SECRET: unsigned webhooks are refused")
    store = EventStore(settings.data_dir / "webhook_events.db")
    # An event's signature must stay on record while its timestamp could still be replayed.
    keep = max(settings.webhook_keep_days * 86400, settings.webhook_max_age_seconds)
    dispatcher = Dispatcher(store, trigger or deployment_trigger(settings.webhook_deployment),
                            settings.webhook_debounce_seconds, keep)

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

    app = FastAPI(title="kbflow webhook", lifespan=lifespan)
    app.state.store, app.state.dispatcher = store, dispatcher

    @app.post("/events", status_code=202)
    async def events(request: Request) -> JSONResponse:
        body = await request.body()
        signature = request.headers.get(SIGNATURE_HEADER)
        problem = verify(settings.webhook_secret, request.headers.get(TIMESTAMP_HEADER),
                         signature, body, settings.webhook_max_age_seconds, time.time())
        if problem:
            return JSONResponse({"detail": problem}, status_code=401)
        try:
            event = ChangeEvent.model_validate(json.loads(body))
        except (ValueError, ValidationError) as exc:
            return JSONResponse({"detail": f"malformed event: {exc}"}, status_code=422)
        try:
            row = store.add(event, str(signature), time.time())
        except Replay:
            return JSONResponse({"detail": "replayed event"}, status_code=401)
        return JSONResponse({"id": row, "status": "pending"}, status_code=202)

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", **store.counts(), "last_error": dispatcher.last_error}

    return app


def serve(settings: Settings, host: str | None = None, port: int | None = None) -> None:
    import uvicorn

    uvicorn.run(create_app(settings), host=host or settings.webhook_host,
                port=port or settings.webhook_port, log_level="warning")
