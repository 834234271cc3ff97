"""One result of the search API's JSON (ingest.search.SearchResponse) as a citation: where the
text is (document, version, clause, pages, source), which version was in force, and what the
search concluded (verdict, the other side of a conflict). Every integration returns these same
fields, so an answer keeps its evidence whichever tool carried it."""

from __future__ import annotations

from typing import Any


def conflict_sides(response: dict[str, Any]) -> dict[str, list[str]]:
    """Chunk id → the chunk ids that state another value for the same thing."""
    sides: dict[str, list[str]] = {}
    for conflict in response.get("conflicts", []):
        a, b = conflict["a"]["chunk_id"], conflict["b"]["chunk_id"]
        sides.setdefault(a, []).append(b)
        sides.setdefault(b, []).append(a)
    return sides


def citation(result: dict[str, Any], response: dict[str, Any],
             sides: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The metadata of one result: flat, JSON-serialisable, never None as a whole."""
    sides = conflict_sides(response) if sides is None else sides
    return {
        "doc_id": result["doc_id"], "document_key": result["document_key"],
        "version_id": result["version_id"], "chunk_id": result["chunk_id"],
        "clause_no": result["clause_no"], "title_path": result["title_path"],
        "page_start": result["page_start"], "page_end": result["page_end"],
        "source_uri": result["source_uri"], "tenant_id": result["tenant_id"],
        "authority": result["authority"], "effective_from": result.get("effective_from"),
        "effective_to": result.get("effective_to"), "rank": result["rank"],
        "confidence": result["confidence"], "verdict": response["verdict"],
        "verdict_reason": response["reason"], "as_of": response["as_of"],
        "conflicts_with": sides.get(result["chunk_id"], []),
    }


def title(result: dict[str, Any]) -> str:
    """The result's heading: its prefix (《title》version / headings / clause) or its doc id."""
    return str(result["prefix"] or result["doc_id"])
