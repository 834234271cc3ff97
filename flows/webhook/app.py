"""The HTTP receiving side: the FastAPI app `kbflow serve` mounts, which checks each request
(size, signature, replay window, body) before a single byte of it reaches the outbox, and runs
the dispatcher's thread for the app's lifetime."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from flows.serving import NO_DOCS, read_capped
from flows.webhook.dispatch import Dispatcher, Tracker, Trigger
from flows.webhook.events import SIGNATURE_HEADER, TIMESTAMP_HEADER, parse_event, verify
from flows.webhook.outbox import EventStore, Replay
from flows.webhook.runs import deployment_trigger, manifest_tracker
from ingest.config import Settings

log = logging.getLogger(__name__)


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
