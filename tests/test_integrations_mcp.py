"""`kbflow mcp` driven by the official MCP SDK's client: over stdio (the local tenant, set by
flag) and over streamable HTTP (the API key of each request)."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import httpx2
from integrations_support import (
    AS_OF,
    KEY_LOGISTICS,
    LODGING,
    Served,
    free_port,
    start,
    stop,
)
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from ingest.config import Settings
from ingest.manifest import ManifestStore


def stdio(served: Served, tenant: str) -> Client:
    return Client(StdioServerParameters(
        command=sys.executable, args=["-m", "flows.cli", "mcp", "--tenant", tenant],
        env=served.env()))


def run(client: Client, session: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        async with client:
            await session(client)

    anyio.run(main)


def payload(result: Any) -> dict:
    assert not result.is_error, result.content
    return result.structured_content or json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


def keys_of(served: Served, tenant: str) -> list[str]:
    with ManifestStore(Settings(data_dir=served.data).manifest) as manifest:
        return sorted({r.doc_id for r in manifest.documents() if r.tenant_id == tenant})


def test_stdio_lists_the_tools_and_answers_with_evidence(evidence_served: Served) -> None:
    sibling = keys_of(evidence_served, "hc-logistics")
    assert sibling

    async def session(client: Client) -> None:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"search", "graph", "document"} <= tools
        found = payload(await client.call_tool("search", {"query": LODGING, "k": 10,
                                                          "as_of": AS_OF}))
        assert found["tenant_id"] == "hc-precision" and found["verdict"] == "conflict"
        assert found["conflicts"] and "450元" in found["results"][0]["text"]
        assert not any("520元" in r["text"] for r in found["results"])  # the sibling's
        cited = found["results"][0]["citation"]
        assert cited["version_id"] and cited["page_start"] >= 1 and cited["source_uri"]
        # its document, chunk by chunk; the sibling's does not exist for this reader
        own = payload(await client.call_tool("document", {"document_key": cited["document_key"]}))
        assert cited["chunk_id"] in {c["chunk_id"] for c in own["chunks"]}
        for key in sibling:
            refused = await client.call_tool("document", {"document_key": key})
            assert "no readable version" in error_text(refused)
        listed = await client.read_resource("kbflow://documents")
        readable = json.loads(listed.contents[0].text)
        assert readable and not {d["document_key"] for d in readable} & set(sibling)
        assert {d["tenant_id"] for d in readable} <= {"hc-precision", "default"}
        uri = next(d["uri"] for d in readable if d["document_key"] == cited["document_key"])
        assert "450元" in (await client.read_resource(uri)).contents[0].text

    run(stdio(evidence_served, "hc-precision"), session)


HOSTILE = [
    ("search", {"query": LODGING, "k": 1000}, "k\n  Input should be less than or equal to 20"),
    ("search", {"query": ""}, "query\n  String should have at least 1 character"),
    ("search", {"query": LODGING, "as_of": "1735689600"}, "YYYY-MM-DD"),
    ("graph", {"entity": "x" * 500}, "entity\n  String should have at most 200 characters"),
    ("graph", {"entity": "差旅费管理办法", "hops": 99}, "hops\n  Input should be less than or "
                                                     "equal to 4"),
    ("document", {"document_key": "../../etc/passwd"}, "no readable version"),
]


def test_a_hostile_tool_argument_gets_a_clear_error(evidence_served: Served) -> None:
    async def session(client: Client) -> None:
        for tool, arguments, says in HOSTILE:
            text = error_text(await client.call_tool(tool, arguments))
            assert says in text, (tool, arguments, text)
        # No argument names a reader: one the schema lacks is dropped, never obeyed.
        widened = payload(await client.call_tool("search", {"query": LODGING,
                                                            "tenant": "hc-logistics"}))
        assert widened["tenant_id"] == "hc-precision"
        assert not any("520元" in r["text"] for r in widened["results"])

    run(stdio(evidence_served, "hc-precision"), session)


def test_http_takes_the_api_keys(evidence_served: Served) -> None:
    precision = keys_of(evidence_served, "hc-precision")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = start(["mcp", "--http", "--port", str(port)], evidence_served.env(), url)
    try:
        assert httpx.post(url, json={}).status_code == 401
        assert httpx.post(url, json={}, headers={"Authorization": "Bearer wrong-key-0123456789"}
                          ).status_code == 401

        async def session(client: Client) -> None:
            assert {"search", "graph", "document"} <= {
                t.name for t in (await client.list_tools()).tools}
            found = payload(await client.call_tool("search", {"query": LODGING, "k": 10,
                                                              "as_of": AS_OF}))
            assert found["tenant_id"] == "hc-logistics" and found["results"]
            assert {r["citation"]["tenant_id"] for r in found["results"]} <= {
                "hc-logistics", "default"}
            assert not any("450元" in r["text"] for r in found["results"])  # precision's
            relations = payload(await client.call_tool(
                "graph", {"entity": "关于调整夜间加班餐费标准的通知", "as_of": AS_OF}))
            assert relations["paths"] and relations["sources"], relations  # the correction
            assert not {s["doc_id"] for s in relations["sources"].values()} & set(precision)

        keyed = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY_LOGISTICS}"},
                                   timeout=120)
        run(Client(streamable_http_client(url, http_client=keyed)), session)
    finally:
        stop(server)
