"""The warm search API that `kbflow serve` mounts beside the webhook receiver.

    POST /search   {"query": "…", "k": 5, "as_of": "YYYY-MM-DD", "tenant": …, "groups": […]}
    GET  /search?q=…&k=5&as_of=YYYY-MM-DD[&tenant=…][&group=…]
    Authorization: Bearer <API key>

Both answer the JSON of `kbflow search --json` (ingest.search.SearchResponse). One process keeps
the embedding model and the stores open. Each query reads the published versions from the
manifest, and the index is reopened when a rebuild or rollback switches the serving generation,
so new versions and generations are served without a restart.

Access control: `KBFLOW_API_KEYS_FILE` (JSON or YAML) maps each key to a tenant and its ACL
groups, `{"<key>": {"tenant": "acme", "groups": ["all-staff"]}}`. Tenant and groups come from
the key alone. A request may repeat them or name fewer groups, never others: another tenant or a
group the key lacks gets 403, and no key or an unknown key gets 401. The file is read again when
it changes, so a key removed from the file stops working at once. A file that no longer parses
locks every caller out (503) until it is fixed.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ingest.config import Settings

if TYPE_CHECKING:  # loaded on the first search, not at import
    from ingest.manifest import ManifestStore
    from ingest.search import Searcher

log = logging.getLogger(__name__)
MIN_KEY_LENGTH = 16
MAX_QUERY_CHARS = 1000
MAX_K = 50


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
    if path.suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise KeysFileError(f"API keys file {path} does not parse: {exc}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise KeysFileError(f"API keys file {path} does not parse: {exc}") from None


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


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    k: int = Field(5, ge=1, le=MAX_K)
    as_of: date | None = None
    tenant: str | None = None
    groups: list[str] | None = None


class SearchService:
    """A warm Searcher on one thread (SQLite connections belong to the thread that opened
    them; the model runs one query at a time anyway), reopened when the serving generation
    changes."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kbflow-search")
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
            self._searcher, self._generation = Searcher(self._settings), generation
        return self._searcher

    def _search(self, query: str, tenant: str, groups: list[str], as_of: date, k: int) -> str:
        response = self._current().search(query, tenant_id=tenant, groups=groups, as_of=as_of,
                                          k=k)
        return response.model_dump_json()

    async def warm(self) -> None:
        """Load the model and open the stores before the first request."""
        await asyncio.get_running_loop().run_in_executor(self._thread, self._warm)

    def _warm(self) -> None:
        searcher = self._current()
        searcher.search("warm", tenant_id="", groups=["-"], as_of=date.today(), k=1)

    async def search(self, query: str, tenant: str, groups: list[str], as_of: date,
                     k: int) -> str:
        return await asyncio.get_running_loop().run_in_executor(
            self._thread, self._search, query, tenant, groups, as_of, k)

    def close(self) -> None:
        def shut() -> None:
            if self._searcher is not None:
                self._searcher.close()
            if self._manifest is not None:
                self._manifest.close()

        self._thread.submit(shut).result()
        self._thread.shutdown()


def search_router(settings: Settings) -> APIRouter:
    """/search, authorised by the keys in settings.api_keys_file."""
    if settings.api_keys_file is None:
        raise KeysFileError("set KBFLOW_API_KEYS_FILE to serve the search API")
    keys = KeyRing(settings.api_keys_file)
    service = SearchService(settings)

    @asynccontextmanager
    async def lifespan(_: object) -> AsyncIterator[None]:
        await service.warm()
        yield
        service.close()

    router = APIRouter(lifespan=lifespan)

    async def answer(request: SearchRequest, grant: Grant) -> JSONResponse:
        tenant, groups = scope(grant, request.tenant, request.groups)
        body = await service.search(request.query, tenant, groups,
                                    request.as_of or date.today(), request.k)
        return JSONResponse(json.loads(body))

    @router.post("/search")
    async def search_post(request: Request) -> JSONResponse:
        grant = keys.grant(request.headers.get("authorization"))  # 401 before reading the body
        try:
            body = SearchRequest.model_validate_json(await request.body())
        except ValidationError as exc:
            return JSONResponse({"detail": _problems(exc)}, status_code=422)
        return await answer(body, grant)

    @router.get("/search")
    async def search_get(request: Request) -> JSONResponse:
        grant = keys.grant(request.headers.get("authorization"))
        params = request.query_params
        try:
            wanted = SearchRequest.model_validate({
                "query": params.get("q", ""), "k": params.get("k", 5),
                "as_of": params.get("as_of"), "tenant": params.get("tenant"),
                "groups": params.getlist("group") or None,
            })
        except ValidationError as exc:
            return JSONResponse({"detail": _problems(exc)}, status_code=422)
        return await answer(wanted, grant)

    return router


def _problems(exc: ValidationError) -> list[dict]:
    return [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]


def build_app(settings: Settings) -> FastAPI:
    """What `kbflow serve` runs: the webhook receiver if KBFLOW_WEBHOOK_SECRET is set, the search
    API if KBFLOW_API_KEYS_FILE is set, or both in one app."""
    if not settings.webhook_secret and settings.api_keys_file is None:
        raise ValueError("set KBFLOW_WEBHOOK_SECRET (webhook receiver) and/or "
                         "KBFLOW_API_KEYS_FILE (search API): nothing to serve")
    if settings.webhook_secret:
        from flows.webhook import create_app

        app = create_app(settings)
    else:
        app = FastAPI(title="kbflow search")

        @app.get("/health")
        async def health() -> dict:
            return {"status": "ok"}  # nothing about the index to unauthenticated callers

    if settings.api_keys_file is not None:
        app.include_router(search_router(settings))
    return app
