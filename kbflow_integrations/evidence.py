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


def scored(response: dict[str, Any]) -> list[tuple[dict[str, Any], float]]:
    """Each result with a score in 0..1: its calibrated probability of answering
    (`confidence`), capped by the scores above it. Dify and LlamaIndex may sort by score, and
    kbflow's order (exact identifiers first, authority, fusion) is the one its evaluation
    measures: a score never exceeds its own confidence nor reorders. A result below the
    signal depth has no confidence and scores 0, so no threshold passes it unproven."""
    out, score = [], 1.0
    for result in response.get("results", []):
        score = min(score, result["confidence"] or 0.0)
        out.append((result, score))
    return out


def title(result: dict[str, Any]) -> str:
    """The result's heading: its prefix (《title》version / headings / clause) or its doc id."""
    return str(result["prefix"] or result["doc_id"])
