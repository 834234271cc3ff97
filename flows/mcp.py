"""`kbflow mcp`: kbflow as a Model Context Protocol server (the official `mcp` SDK, kbflow[mcp]).

Tools: `search` (the evidence package: results with their citations, the verdict, the
conflicts), `graph` (an entity's relation paths, as `kbflow graph`), `document` (the chunks of
one version, as `kbflow chunks`). Resources: `kbflow://documents` lists the versions the reader
may open, `kbflow://documents/{document_key}/{version_id}` is one version's text.

Who reads: over stdio, the local user's configured tenant and groups (--tenant/--group,
default KBFLOW_DEFAULT_TENANT / KBFLOW_DEFAULT_ACL). Over streamable HTTP, the API key of each
request (`Authorization: Bearer <key>`, the keys file of `kbflow serve`): a request without a
valid key gets 401 before MCP sees it, and every tool reads the key's tenant and groups again,
so a key removed from the file stops working at once. No argument names a tenant or a group.

Searches go through flows.api.SearchService (one warm Searcher, one search at a time, 503 when
the queue is full); graph and document reads use ingest's own functions.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from functools import partial
from typing import Annotated, Any

import anyio
from fastapi import HTTPException
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from flows.api import DAY, MAX_QUERY_CHARS, KeyRing, SearchService
from ingest.config import Settings
from kbflow_integrations.evidence import citation, conflict_sides, title

MAX_TOOL_K = 20  # an agent's context, not a benchmark's Recall@100
Reader = tuple[str, list[str]]  # tenant, groups
Who = Callable[[Context], Reader]
Day = Annotated[str | None, Field(description="business date YYYY-MM-DD: the versions in force "
                                  "then (default today)")]


class _Stays:
    """The caller of a tool call: SearchService's queue asks whether it left; MCP cancels a
    call itself."""

    async def is_disconnected(self) -> bool:
        return False


def local_reader(tenant: str, groups: list[str]) -> Who:
    """stdio: one configured reader for every call."""
    return lambda _: (tenant, list(groups))


def key_reader(keys: KeyRing) -> Who:
    """HTTP: the reader of the request's API key."""

    def who(ctx: Context) -> Reader:
        try:
            grant = keys.grant((ctx.headers or {}).get("authorization"))
        except HTTPException as exc:
            raise ToolError(str(exc.detail)) from None
        return grant.tenant, list(grant.groups)

    return who


def _day(value: str | None) -> date:
    if value is None:
        return date.today()
    if DAY.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise ToolError("as_of must be a date written YYYY-MM-DD")


def evidence(response: dict[str, Any]) -> dict[str, Any]:
    """A search response as an agent needs it: the verdict first, each result with its
    citation (document, version, clause, pages, source, dates), the conflicts' two sides."""
    sides = conflict_sides(response)
    return {
        "query": response["query"], "tenant_id": response["tenant_id"],
        "as_of": response["as_of"], "verdict": response["verdict"],
        "reason": response["reason"], "conflicts": response["conflicts"],
        "graph_route": response["graph_route"],
        "results": [{"title": title(r), "text": r["text"],
                     "citation": citation(r, response, sides)} for r in response["results"]],
    }


def readable(settings: Settings, reader: Reader, key: str | None = None) -> list[Any]:
    """The published versions (all, or one document's) the reader's tenant and groups open."""
    from ingest.manifest import ManifestStore
    from ingest.scopes import TenantTree

    tenant, groups = reader
    tenants = {tenant, *TenantTree.load(settings).ancestors(tenant)}
    with ManifestStore(settings.manifest) as manifest:
        published = set(manifest.published_keys())
        records = manifest.documents(doc_ids=[key] if key is not None else None)
    return sorted((r for r in records if r.version_key in published
                   and (r.tenant_id or settings.default_tenant) in tenants
                   and set(r.acl) & set(groups)),
                  key=lambda r: (r.doc_id, r.effective_from or date.min, r.version_id))


def version_chunks(settings: Settings, reader: Reader, key: str,
                   version: str | None) -> dict[str, Any]:
    """One readable version's chunks (the newest in force when no version is named)."""
    from ingest.manifest import ManifestStore

    versions = [r for r in readable(settings, reader, key)
                if version is None or r.version_id == version]
    if not versions:  # unknown and unreadable alike: the answer tells nothing of others' data
        raise ToolError(f"no readable version of {key!r}"
                        + (f" named {version!r}" if version else ""))
    record = versions[-1]
    with ManifestStore(settings.manifest) as manifest:
        chunks = manifest.version_chunks(record.doc_id, record.version_id)
    return {
        "document_key": record.doc_id, "version_id": record.version_id, "title": record.title,
        "tenant_id": record.tenant_id, "effective_from": _iso(record.effective_from),
        "effective_to": _iso(record.effective_to), "source_uri": record.source_uri,
        "chunks": [{"chunk_id": c.chunk_id, "kind": c.kind, "clause_no": c.clause_no,
                    "title_path": c.title_path, "page_start": c.page_start,
                    "page_end": c.page_end, "text": c.text} for c in chunks],
    }


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None


def build_server(settings: Settings, service: SearchService, who: Who) -> MCPServer:
    server = MCPServer("kbflow", instructions="Search a company's versioned documents. Cite "
                       "each answer by doc_id, version_id, clause_no and pages from the "
                       "results' citations; a verdict of no_answer means the documents do "
                       "not answer, and conflict means both sides must be shown.")

    @server.tool(description="Hybrid search of the documents the caller may read: results "
                 "with citations, the verdict (sufficient / conflict / no_answer) and the "
                 "conflicting values with both sides.")
    async def search(query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)],
                     ctx: Context,
                     k: Annotated[int, Field(ge=1, le=MAX_TOOL_K)] = 5,
                     as_of: Day = None) -> dict[str, Any]:
        import json

        tenant, groups = who(ctx)
        try:
            found = await service.search(_Stays(), query, tenant, groups,  # type: ignore[arg-type]
                                         _day(as_of), k)
        except HTTPException as exc:  # 503: too many searches waiting
            raise ToolError(str(exc.detail)) from None
        if found is None:  # SearchService's caller left; _Stays never does
            raise ToolError("the search was abandoned")
        return evidence(json.loads(found))

    @server.tool(description="An entity's relations in the knowledge graph (a document "
                 "title, a clause such as 《差旅费管理办法》第十条, a role), with the clauses "
                 "and versions they were extracted from.")
    async def graph(entity: Annotated[str, Field(min_length=1, max_length=200)], ctx: Context,
                    hops: Annotated[int, Field(ge=1, le=4)] = 2,
                    as_of: Day = None) -> dict[str, Any]:
        from ingest.search.graph_channel import entity_relations

        tenant, groups = who(ctx)
        found = await anyio.to_thread.run_sync(partial(
            entity_relations, settings, entity, tenant_id=tenant, groups=groups,
            as_of=_day(as_of), hops=hops))
        return found.model_dump(mode="json")

    @server.tool(description="The chunks of one version of a document the caller may read: "
                 "document_key as a search citation gives it, version_id optional (default: "
                 "the newest).")
    async def document(document_key: Annotated[str, Field(min_length=1, max_length=512)],
                       ctx: Context,
                       version_id: Annotated[str | None, Field(max_length=128)] = None,
                       ) -> dict[str, Any]:
        reader = who(ctx)
        return await anyio.to_thread.run_sync(
            version_chunks, settings, reader, document_key, version_id)

    @server.resource("kbflow://documents{?as_of}", mime_type="application/json",
                     description="The document versions the caller may read (in force on "
                     "as_of, YYYY-MM-DD, when given).")
    async def documents(ctx: Context, as_of: str | None = None) -> list[dict[str, Any]]:
        records = await anyio.to_thread.run_sync(readable, settings, who(ctx))
        if as_of is not None:
            day = _day(as_of)
            records = [r for r in records if (r.effective_from or date.min) <= day
                       and (r.effective_to is None or day <= r.effective_to)]
        return [{"document_key": r.doc_id, "version_id": r.version_id, "title": r.title,
                 "tenant_id": r.tenant_id, "effective_from": _iso(r.effective_from),
                 "effective_to": _iso(r.effective_to),
                 "uri": f"kbflow://documents/{r.doc_id}/{r.version_id}"} for r in records]

    @server.resource("kbflow://documents/{document_key}/{version_id}", mime_type="text/plain",
                     description="One readable version's text, chunk by chunk.")
    async def version_text(document_key: str, version_id: str, ctx: Context) -> str:
        found = await anyio.to_thread.run_sync(
            version_chunks, settings, who(ctx), document_key, version_id)
        return "\n\n".join(c["text"] for c in found["chunks"] if c["kind"] != "parent")

    return server


class BearerGate:
    """ASGI: a request without a valid API key gets 401 (503 while the keys file is broken)
    before the MCP transport reads it."""

    def __init__(self, app: ASGIApp, keys: KeyRing) -> None:
        self._app, self._keys = app, keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                self._keys.grant(Headers(scope=scope).get("authorization"))
            except HTTPException as exc:
                refusal = JSONResponse({"detail": exc.detail}, status_code=exc.status_code,
                                       headers=exc.headers)
                await refusal(scope, receive, send)
                return
        await self._app(scope, receive, send)


def run_stdio(settings: Settings, tenant: str, groups: list[str]) -> None:
    service = SearchService(settings)
    try:
        build_server(settings, service, local_reader(tenant, groups)).run("stdio")
    finally:
        service.close()


def run_http(settings: Settings, host: str, port: int) -> None:
    """Streamable HTTP at /mcp, stateless (each request carries its key), JSON answers."""
    import uvicorn

    if settings.api_keys_file is None:
        raise ValueError("set KBFLOW_API_KEYS_FILE: the MCP HTTP transport takes the API keys")
    keys = KeyRing(settings.api_keys_file)
    service = SearchService(settings)
    server = build_server(settings, service, key_reader(keys))
    app = server.streamable_http_app(stateless_http=True, json_response=True, host=host)
    try:
        uvicorn.run(BearerGate(app, keys), host=host, port=port, log_level="warning")
    finally:
        service.close()
