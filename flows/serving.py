"""How `kbflow serve` runs its app (the webhook receiver and/or the search API) in uvicorn.

uvicorn's defaults keep a connection that never sends a request open for ever (its keep-alive
timer starts only after a reply, and any byte stops it), so idle or trickling connections piled
up until file descriptors ran out and /health stopped answering. Here every connection has
IDLE_TIMEOUT seconds to send a whole request head, from the moment it opens and again after each
reply; connections beyond MAX_CONNECTIONS are closed at once, and requests beyond it get
uvicorn's 503. Request heads are capped by h11 (16 KiB); bodies by `read_capped`. This module
imports nothing of flows/: the apps (flows/api.py, flows/webhook/app.py) import it.
"""

from __future__ import annotations

import asyncio
import resource
from typing import TYPE_CHECKING

from fastapi import Request
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

# No /docs, /redoc or /openapi.json: they would describe the service to anyone, unauthenticated.
NO_DOCS: dict = {"docs_url": None, "redoc_url": None, "openapi_url": None}
IDLE_TIMEOUT = 5  # seconds a connection may take to send a request head (new or kept alive)
BACKLOG = 256  # connections the kernel queues before we accept them
# Leave at least half the descriptors to the stores, the model and the outbox.
MAX_CONNECTIONS = min(1000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 2)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head and a connection cap."""

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MAX_CONNECTIONS:
            transport.close()
            return
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(self.timeout_keep_alive, self._expire)

    def _expire(self) -> None:
        """Close the connection unless a request came in whole and is being answered."""
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting and not self.transport.is_closing():
            self.transport.close()


def server_config(app: FastAPI, host: str, port: int,
                  idle_timeout: int = IDLE_TIMEOUT) -> uvicorn.Config:
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level="warning",
                          http=GuardedH11Protocol, timeout_keep_alive=idle_timeout,
                          limit_concurrency=MAX_CONNECTIONS, backlog=BACKLOG)


async def read_capped(request: Request, limit: int) -> bytes | None:
    """The body, or None as soon as it is known to exceed `limit` bytes: a declared
    Content-Length is checked before anything is read, a streamed body as it arrives."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > limit:
            return None
    return bytes(body)
