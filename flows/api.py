"""The warm search API that `kbflow serve` mounts beside the webhook receiver.

    POST /search   {"query": "…", "k": 5, "as_of": "YYYY-MM-DD", "tenant": …, "groups": […],
                    "rerank": true|false}
    GET  /search?q=…&k=5&as_of=YYYY-MM-DD[&tenant=…][&group=…][&rerank=false]
    Authorization: Bearer <API key>

Both answer the JSON of `kbflow search --json` (ingest.search.SearchResponse). One process keeps
the embedding model and the stores open. Each query reads the published versions from the
manifest, and the index is reopened when a rebuild or rollback switches the serving generation,
so new versions and generations are served without a restart.

Load: searches run one at a time. The API holds settings.search_max_pending of them (running or
waiting), settings.search_max_pending_per_tenant of one tenant's (whatever its number of keys),
settings.search_max_pending_per_key of one key's, and no more than about MAX_QUEUE_SECONDS of
one key's work; beyond that a request gets 503 with Retry-After at once, instead of waiting
behind everyone. Tenants take turns, and a tenant's keys take turns within its own (FairTurns):
a tenant or key with many searches waiting delays another's by at most one of its own. A
request whose client hangs up while it waits leaves the queue (checked every 0.1 s) and is not
computed. Bodies over MAX_BODY_BYTES get 413 before they are read; `as_of` is a calendar date,
YYYY-MM-DD, and nothing else (no Unix times).

Access control: `KBFLOW_API_KEYS_FILE` (JSON or YAML) maps each key to a tenant and its ACL
groups, `{"<key>": {"tenant": "acme", "groups": ["all-staff"]}}`. Tenant and groups come from
the key alone. A request may repeat them or name fewer groups, never others: another tenant or a
group the key lacks gets 403, and no key or an unknown key gets 401. The file is read again when
it changes, so a key removed from the file stops working at once. A file that no longer parses
locks every caller out (503) until it is fixed.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import math
import os
import re
import time
from collections import Counter
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from flows.console import console_router
from flows.dify import dify_router
from flows.serving import NO_DOCS, read_capped, server_config
from flows.tls import share_tls_context
from flows.turns import FairTurns
from flows.warm import task_trigger
from flows.webhook.app import create_app
from flows.webhook.runs import manifest_tracker
from ingest.config import Settings

if TYPE_CHECKING:  # loaded on the first search, not at import
    from ingest.manifest import ManifestStore
    from ingest.search import Searcher

log = logging.getLogger(__name__)
MIN_KEY_LENGTH = 16
MAX_QUERY_CHARS = 1000
MAX_K = 100  # as `kbflow search --k`; benchmarks score Recall@100
MAX_BODY_BYTES = 64 * 1024  # a query of MAX_QUERY_CHARS, \u-escaped, and its groups fit easily
MAX_QUEUE_SECONDS = 1.0  # searches queued beyond this much expected work are refused
DISCONNECT_POLL_SECONDS = 0.1  # how often a waiting search checks that its client is there
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class Grant(BaseModel):
    """What one API key may read."""

    model_config = ConfigDict(extra="forbid")
    tenant: str = Field(min_length=1, max_length=128)
    groups: list[str] = Field(min_length=1)


class KeysFileError(ValueError):
    """The API keys file cannot be used."""


def load_keys(path: Path) -> dict[str, Grant]:
    """Parse the keys file; every problem is a KeysFileError naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise KeysFileError(f"cannot read API keys file {path}: {exc.strerror}") from None
    raw = _parse(path, text)
    if not isinstance(raw, dict) or not raw:
        raise KeysFileError(f"API keys file {path} must map each key to a tenant and groups")
    keys: dict[str, Grant] = {}
    for key, grant in raw.items():
        if not isinstance(key, str) or len(key) < MIN_KEY_LENGTH:
            raise KeysFileError(f"API keys file {path}: every key needs at least "
                                f"{MIN_KEY_LENGTH} characters")
        try:
            keys[key] = Grant.model_validate(grant)
        except ValidationError as exc:
            raise KeysFileError(f"API keys file {path}: key {key[:4]}…: "
                                f"{exc.errors()[0]['msg']}") from None
    return keys


def _parse(path: Path, text: str) -> object:
    """The file's mapping; a key given twice is refused (YAML and JSON keep the last one
    silently, and a forgotten old entry would decide what a key reads)."""
    if path.suffix in (".yaml", ".yml"):
        from ingest.parse.names import parse_yaml

        try:
            return parse_yaml(text.encode("utf-8"), str(path))
        except ValueError as exc:  # the reason, never the key it names
            reason = "a key is given twice" if "given twice" in str(exc) else str(exc)
            raise KeysFileError(f"API keys file {path} does not parse: {reason}") from None
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except ValueError as exc:
        raise KeysFileError(f"API keys file {path} does not parse: {exc}") from None


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"key {key[:4]}… is given twice (only one may hold)")
        found[key] = value
    return found


class KeyRing:
    """The keys file, re-read when its modification time or size changes."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._keys: dict[str, Grant] = load_keys(path)  # a bad file stops the server at start
        self._seen = self._stamp()
        self._broken: str | None = None

    def _stamp(self) -> tuple[int, int] | None:
        try:
            stat = os.stat(self._path)
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def grant(self, authorization: str | None) -> Grant:
        stamp = self._stamp()
        if stamp != self._seen:
            self._seen = stamp
            try:
                self._keys, self._broken = load_keys(self._path), None
            except KeysFileError as exc:
                self._keys, self._broken = {}, str(exc)
                log.error("%s: every search request is refused until it is fixed", exc)
        if self._broken:
            raise HTTPException(503, "the API keys configuration is invalid")
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() == "bearer" and token:
            for key, grant in self._keys.items():  # compare_digest: no timing hint per key
                if hmac.compare_digest(key.encode(), token.strip().encode()):
                    return grant
        raise HTTPException(401, "a valid API key is required (Authorization: Bearer <key>)",
                            headers={"WWW-Authenticate": "Bearer"})


def scope(grant: Grant, tenant: str | None, groups: list[str] | None) -> tuple[str, list[str]]:
    """The tenant and groups a request searches: the key's, or fewer of its groups."""
    if tenant is not None and tenant != grant.tenant:
        raise HTTPException(403, "this API key does not grant that tenant")
    if not groups:
        return grant.tenant, list(grant.groups)
    if not set(groups) <= set(grant.groups):
        raise HTTPException(403, "this API key does not grant those groups")
    return grant.tenant, sorted(set(groups))


def calendar_day(value: object) -> object:
    """Only YYYY-MM-DD reaches the date parser (which reads 1735689600 as Unix time)."""
    if value is None or (isinstance(value, str) and DAY.fullmatch(value)):
        return value
    raise ValueError("as_of must be a date written YYYY-MM-DD")


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    k: int = Field(5, ge=1, le=MAX_K)
    as_of: Annotated[date | None, BeforeValidator(calendar_day)] = None
    tenant: str | None = None
    groups: list[str] | None = None
    rerank: bool | None = Field(None, description="the reader model rescores the fused top N; "
                                "unset: the KBFLOW_RERANK setting")


class SearchService:
    """A warm Searcher on one thread (SQLite connections belong to the thread that opened
    them; the model runs one query at a time anyway), reopened when the serving generation
    changes. Searches take turns; `computed`, `abandoned` and `refused` count the requests."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kbflow-search")
        self._turn = FairTurns()
        self._pending = 0  # holding or waiting for the turn
        self._by_caller: Counter[str] = Counter()  # the same, per caller
        self._by_tenant: Counter[str] = Counter()  # and per tenant
        self._seconds: dict[str, float] = {}  # moving average of one search, per caller
        self.computed = self.abandoned = self.refused = 0
        self._searcher: Searcher | None = None
        self._manifest: ManifestStore | None = None
        self._generation: str | None = None

    def _current(self) -> Searcher:
        from ingest.manifest import ManifestStore
        from ingest.search import Searcher

        if self._manifest is None:
            self._manifest = ManifestStore(self._settings.manifest)
        serving = self._manifest.serving()
        generation = serving.generation if serving else None
        if self._searcher is None or generation != self._generation:
            if self._searcher is not None:
                self._searcher.close()
                self._searcher = None  # a broken parents file fails the next one: no stale one
            self._searcher, self._generation = Searcher(self._settings), generation
        self._searcher.refresh_adapter()  # `kbflow tune` kept a new one, or removed it
        self._searcher.refresh_scopes()  # the tenant parents file changed: TenantTreeError
        return self._searcher

    def _search(self, query: str, tenant: str, groups: list[str], as_of: date, k: int,
                rerank: bool | None = None) -> str:
        from ingest.search import SearchOptions

        response = self._current().search(query, tenant_id=tenant, groups=groups, as_of=as_of,
                                          k=k, options=SearchOptions(rerank=rerank))
        return response.model_dump_json()

    async def warm(self) -> None:
        """Load the model and open the stores before the first request."""
        await asyncio.get_running_loop().run_in_executor(self._thread, self._warm)

    def _warm(self) -> None:
        searcher = self._current()
        searcher.search("warm", tenant_id="", groups=["-"], as_of=date.today(), k=1)
        if self._settings.rerank:  # the reader model's session, opened once and kept
            searcher.ranker.reader()

    async def search(self, request: Request, query: str, tenant: str, groups: list[str],
                     as_of: date, k: int, caller: str = "", rerank: bool | None = None
                     ) -> str | None:
        """The response's JSON; None when the client left before its turn. 503 when full, or
        when `caller` (an API key) or its tenant holds its share, or the key about a second's
        work of its own."""
        mine, settings = self._by_caller[caller], self._settings
        backlog = mine * self._seconds.get(caller, 0.0)  # its own searches' cost, not others'
        if (self._pending >= settings.search_max_pending or backlog > MAX_QUEUE_SECONDS
                or mine >= settings.search_max_pending_per_key
                or self._by_tenant[tenant] >= settings.search_max_pending_per_tenant):
            self.refused += 1
            raise HTTPException(503, "too many searches waiting; retry shortly",
                                headers={"Retry-After": str(max(1, math.ceil(backlog)))})
        self._pending += 1
        self._by_caller[caller] += 1
        self._by_tenant[tenant] += 1
        try:
            if not await self._take_turn(request, caller, tenant):
                self.abandoned += 1
                return None
            try:
                started = time.perf_counter()
                body = await asyncio.get_running_loop().run_in_executor(
                    self._thread, self._search, query, tenant, groups, as_of, k, rerank)
            finally:
                self._turn.release()
            took = time.perf_counter() - started
            last = self._seconds.get(caller)
            self._seconds[caller] = 0.8 * last + 0.2 * took if last else took
            self.computed += 1
            return body
        finally:
            self._pending -= 1
            self._by_caller[caller] -= 1
            self._by_tenant[tenant] -= 1
            for counts, name in ((self._by_caller, caller), (self._by_tenant, tenant)):
                if not counts[name]:
                    del counts[name]

    @property
    def pending(self) -> int:
        """Searches running or waiting their turn."""
        return self._pending

    async def _take_turn(self, request: Request, caller: str, tenant: str) -> bool:
        """Wait for the turn while the client is still there: a client that hangs up leaves
        the queue within DISCONNECT_POLL_SECONDS (so it neither holds a place nor counts in the
        backlog that refuses others). False, holding nothing, when it left."""
        turn = asyncio.ensure_future(self._turn.acquire(caller, tenant))
        while True:
            done, _ = await asyncio.wait({turn}, timeout=DISCONNECT_POLL_SECONDS)
            if done:
                if await request.is_disconnected():
                    self._turn.release()
                    return False
                return True
            if await request.is_disconnected():
                turn.cancel()  # a cancelled waiter takes no turn
                try:
                    await turn
                except asyncio.CancelledError:
                    return False
                self._turn.release()  # the turn came as it was cancelled
                return False

    def close(self) -> None:
        def shut() -> None:
            if self._searcher is not None:
                self._searcher.close()
            if self._manifest is not None:
                self._manifest.close()

        self._thread.submit(shut).result()
        self._thread.shutdown()


def search_router(settings: Settings, service: SearchService) -> APIRouter:
    """/search, authorised by the keys in settings.api_keys_file."""
    if settings.api_keys_file is None:
        raise KeysFileError("set KBFLOW_API_KEYS_FILE to serve the search API")
    keys = KeyRing(settings.api_keys_file)

    @asynccontextmanager
    async def lifespan(_: object) -> AsyncIterator[None]:
        await service.warm()
        yield
        service.close()

    router = APIRouter(lifespan=lifespan)

    async def answer(http: Request, request: SearchRequest, grant: Grant) -> Response:
        from ingest.scopes import TenantTreeError

        tenant, groups = scope(grant, request.tenant, request.groups)
        token = http.headers.get("authorization", "").partition(" ")[2].strip()
        caller = hashlib.sha256(token.encode()).hexdigest()  # the key, as KeyRing matched it
        try:
            body = await service.search(http, request.query, tenant, groups,
                                        request.as_of or date.today(), request.k, caller,
                                        request.rerank)
        except TenantTreeError as exc:  # searched with no tree rather than a stale one
            log.error("%s: every search is refused until it is fixed", exc)
            raise HTTPException(503, "the tenant parents configuration is invalid") from None
        if body is None:  # nobody is listening
            return Response(status_code=499)
        return JSONResponse(json.loads(body))

    @router.post("/search")
    async def search_post(request: Request) -> Response:
        grant = keys.grant(request.headers.get("authorization"))  # 401 before reading the body
        raw = await read_capped(request, MAX_BODY_BYTES)
        if raw is None:
            return JSONResponse({"detail": f"body over {MAX_BODY_BYTES} bytes"}, status_code=413)
        try:
            body = SearchRequest.model_validate_json(raw)
        except ValidationError as exc:
            return JSONResponse({"detail": _problems(exc)}, status_code=422)
        return await answer(request, body, grant)

    @router.get("/search")
    async def search_get(request: Request) -> Response:
        grant = keys.grant(request.headers.get("authorization"))
        params = request.query_params
        try:
            wanted = SearchRequest.model_validate({
                "query": params.get("q", ""), "k": params.get("k", 5),
                "as_of": params.get("as_of"), "tenant": params.get("tenant"),
                "groups": params.getlist("group") or None, "rerank": params.get("rerank"),
            })
        except ValidationError as exc:
            return JSONResponse({"detail": _problems(exc)}, status_code=422)
        return await answer(request, wanted, grant)

    return router


def _problems(exc: ValidationError) -> list[dict]:
    return [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]


def build_app(settings: Settings) -> FastAPI:
    """What `kbflow serve` runs: the webhook receiver if KBFLOW_WEBHOOK_SECRET is set (its events
    applied by the incremental deployment, or by `kbflow worker` with KBFLOW_WEBHOOK_RUNNER=
    worker), the search API if KBFLOW_API_KEYS_FILE is set, or both in one app."""
    if not settings.webhook_secret and settings.api_keys_file is None:
        raise ValueError("set KBFLOW_WEBHOOK_SECRET (webhook receiver) and/or "
                         "KBFLOW_API_KEYS_FILE (search API): nothing to serve")
    if settings.webhook_secret and settings.webhook_runner == "worker":
        app = create_app(settings, task_trigger(), tracker=manifest_tracker(settings, True))
    elif settings.webhook_secret:
        app = create_app(settings)
    else:
        app = FastAPI(title="kbflow search", **NO_DOCS)

        @app.get("/health")
        async def health() -> dict:
            return {"status": "ok"}  # nothing about the index to unauthenticated callers

    if settings.api_keys_file is not None:
        app.state.search = SearchService(settings)
        app.include_router(search_router(settings, app.state.search))
        app.include_router(dify_router(KeyRing(settings.api_keys_file), app.state.search))
        # The operator console (flows/console/), for the same keys.
        app.include_router(console_router(settings, KeyRing(settings.api_keys_file),
                                          app.state.search))
    return app


def serve(settings: Settings, host: str | None = None, port: int | None = None) -> None:
    """`kbflow serve`: build_app in uvicorn, guarded as flows/serving.py describes."""
    import uvicorn

    share_tls_context()  # the receiver starts a Prefect run per batch
    config = server_config(build_app(settings), host or settings.webhook_host,
                           port or settings.webhook_port)
    uvicorn.Server(config).run()
