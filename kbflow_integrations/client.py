"""The search API as the retrievers call it: POST /search with the reader's API key."""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx

from kbflow_integrations.evidence import citation, conflict_sides, scored, title


class KbflowError(RuntimeError):
    """The search API refused or failed: the status and kbflow's reason."""


def search(base_url: str, api_key: str, query: str, *, k: int, as_of: date | None,
           groups: list[str] | None, timeout: float) -> dict[str, Any]:
    """The response of `POST <base_url>/search` (ingest.search.SearchResponse as JSON)."""
    body: dict[str, Any] = {"query": query, "k": k}
    if as_of is not None:
        body["as_of"] = as_of.isoformat()
    if groups:
        body["groups"] = groups
    try:
        reply = httpx.post(f"{base_url.rstrip('/')}/search", json=body, timeout=timeout,
                           headers={"Authorization": f"Bearer {api_key}"})
    except httpx.HTTPError as exc:
        raise KbflowError(f"kbflow search at {base_url} failed: {exc}") from exc
    if reply.status_code != 200:
        try:
            detail = reply.json().get("detail", reply.text)
        except ValueError:
            detail = reply.text
        raise KbflowError(f"kbflow search answered {reply.status_code}: {detail}")
    answer: dict[str, Any] = reply.json()
    return answer


def passages(response: dict[str, Any], abstain: bool) -> list[tuple[str, float, dict[str, Any]]]:
    """(text, score, metadata) per result; none when the verdict is no_answer and `abstain`."""
    if abstain and response["verdict"] == "no_answer":
        return []
    sides = conflict_sides(response)
    return [(r["text"], score, {"title": title(r), **citation(r, response, sides)})
            for r, score in scored(response)]
