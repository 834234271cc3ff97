"""Dify's External Knowledge API (flows/dify.py) against a running `kbflow serve`, called the way
Dify calls it: api/services/external_knowledge_service.py builds the headers and body below
(fetch_external_knowledge_retrieval) and posts `json.dumps(params)` to <endpoint>/retrieval;
check_endpoint_and_api_key posts no body when the API is registered."""

from __future__ import annotations

import json

import httpx
import pytest
from integrations_support import (
    AS_OF,
    KEY_GROUP,
    KEY_LOGISTICS,
    KEY_PRECISION,
    LODGING,
    Served,
)


def dify_post(served: Served, api_key: str, knowledge_id: str, query: str, top_k: int = 5,
              threshold: float | None = None,
              metadata_condition: dict | None = None) -> httpx.Response:
    """ExternalDatasetService.fetch_external_knowledge_retrieval, HTTP part: the same headers,
    the same body (score_threshold 0.0 unless enabled), serialised with json.dumps."""
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"}
    params = {
        "retrieval_setting": {"top_k": top_k, "score_threshold": threshold or 0.0},
        "query": query,
        "knowledge_id": knowledge_id,
        "metadata_condition": metadata_condition,
    }
    return httpx.post(f"{served.url}/retrieval", headers=headers, content=json.dumps(params),
                      follow_redirects=True, timeout=120)


def as_of(day: str = AS_OF) -> dict:
    """A MetadataCondition.model_dump() as Dify sends it."""
    return {"logical_operator": "and",
            "conditions": [{"name": "as_of", "comparison_operator": "is", "value": day}]}


def test_registration_accepts_a_good_key_and_names_a_bad_one(evidence_served: Served) -> None:
    """check_endpoint_and_api_key: 403 means a bad key, 404/502 a bad endpoint."""
    good = httpx.post(f"{evidence_served.url}/retrieval",
                      headers={"Authorization": f"Bearer {KEY_GROUP}"})
    assert good.status_code not in (403, 404, 502)
    assert good.json()["error_code"] == 3001  # no body: a clear refusal, not a crash
    bad = httpx.post(f"{evidence_served.url}/retrieval",
                     headers={"Authorization": "Bearer not-a-key-of-this-server"})
    assert (bad.status_code, bad.json()["error_code"]) == (403, 1002)
    malformed = httpx.post(f"{evidence_served.url}/retrieval", headers={"Authorization": KEY_GROUP})
    assert (malformed.status_code, malformed.json()["error_code"]) == (403, 1001)
    assert set(malformed.json()) == {"error_code", "error_msg"}


def test_records_carry_text_score_and_citation(evidence_served: Served) -> None:
    reply = dify_post(evidence_served, KEY_PRECISION, "hc-precision", LODGING,
                      metadata_condition=as_of())
    assert reply.status_code == 200, reply.text
    records = reply.json()["records"]
    assert records and all(0 <= r["score"] <= 1 for r in records)
    # kbflow's order kept (Dify may sort by score), no score above its own confidence
    assert [r["metadata"]["rank"] for r in records] == sorted(r["metadata"]["rank"]
                                                              for r in records)
    assert [r["score"] for r in records] == sorted((r["score"] for r in records), reverse=True)
    assert all(r["score"] <= r["metadata"]["confidence"] for r in records)
    top = records[0]
    assert "450元" in top["content"] and top["title"]
    meta = top["metadata"]
    assert meta["tenant_id"] == "hc-precision" and meta["verdict"] == "conflict"
    assert meta["version_id"] and meta["page_start"] >= 1 and meta["source_uri"]
    assert meta["conflicts_with"]  # the group's 600元 is the other side
    assert {"effective_from", "effective_to", "clause_no", "doc_id"} <= set(meta)
    # the group policy's chunks carry the date it took effect ("2026年1月1日起施行")
    assert {r["metadata"]["effective_from"] for r in records
            if r["metadata"]["doc_id"] == "travel_policy"} == {"2026-01-01"}
    assert meta["as_of"] == AS_OF


def test_a_key_never_gets_another_tenants_record(evidence_served: Served) -> None:
    """The sibling's 520元 never reaches precision, nor its 450元 logistics; the body cannot
    name another tenant's knowledge (2001, whether it exists or not)."""
    for key, tenant, forbidden in ((KEY_PRECISION, "hc-precision", "520元"),
                                   (KEY_LOGISTICS, "hc-logistics", "450元"),
                                   (KEY_GROUP, "default", "450元")):
        reply = dify_post(evidence_served, key, tenant, LODGING, top_k=20)
        assert reply.status_code == 200, reply.text
        records = reply.json()["records"]
        assert records, tenant
        assert all(r["metadata"]["tenant_id"] in (tenant, "default") for r in records)
        assert not any(forbidden in r["content"] for r in records), tenant
    for other in ("hc-logistics", "default", "no-such-tenant"):
        refused = dify_post(evidence_served, KEY_PRECISION, other, LODGING)
        assert (refused.status_code, refused.json()["error_code"]) == (404, 2001)


def test_filters_threshold_and_no_answer(evidence_served: Served) -> None:
    # doc_id filters the results; tenant_id cannot widen the key, only narrow it.
    own = dify_post(evidence_served, KEY_PRECISION, "hc-precision", LODGING, top_k=10,
                    metadata_condition={"logical_operator": "and", "conditions": [
                        {"name": "tenant_id", "comparison_operator": "is",
                         "value": "hc-precision"}]}).json()["records"]
    assert own and {r["metadata"]["tenant_id"] for r in own} == {"hc-precision"}
    sibling = dify_post(evidence_served, KEY_PRECISION, "hc-precision", LODGING,
                        metadata_condition={"conditions": [
                            {"name": "tenant_id", "comparison_operator": "is",
                             "value": "hc-logistics"}]}).json()["records"]
    assert sibling == []
    everything = dify_post(evidence_served, KEY_GROUP, "default", LODGING, top_k=10)
    scores = [r["score"] for r in everything.json()["records"]]
    cut = sorted(scores)[len(scores) // 2]
    above = dify_post(evidence_served, KEY_GROUP, "default", LODGING, top_k=10,
                      threshold=cut).json()["records"]
    assert above and all(r["score"] >= cut for r in above)
    assert len(above) == sum(s >= cut for s in scores)
    nothing = dify_post(evidence_served, KEY_GROUP, "default", "火星基地的氧气配额是多少")
    assert nothing.status_code == 200 and nothing.json() == {"records": []}


@pytest.mark.parametrize("condition, says", [
    ({"conditions": [{"name": "password", "comparison_operator": "is", "value": "x"}]},
     "unknown metadata field"),
    ({"conditions": [{"name": "doc_id", "comparison_operator": "regex", "value": ".*"}]},
     "unsupported comparison_operator"),
    ({"conditions": [{"name": "as_of", "comparison_operator": "is", "value": "1735689600"}]},
     "YYYY-MM-DD"),
    ({"conditions": [{"name": "group", "comparison_operator": "in", "value": ["hr", "board"]}]},
     "does not grant"),
    ({"logical_operator": "or", "conditions": [
        {"name": "as_of", "comparison_operator": "is", "value": AS_OF},
        {"name": "doc_id", "comparison_operator": "is", "value": "x"}]}, "'and' only"),
    ({"logical_operator": "xor", "conditions": []}, "logical_operator"),
    ({"conditions": [{"name": "doc_id", "comparison_operator": "in", "value": [1, 2]}]},
     "metadata_condition"),
])
def test_a_hostile_metadata_condition_gets_a_clear_error(evidence_served: Served,
                                                         condition: dict, says: str) -> None:
    reply = dify_post(evidence_served, KEY_GROUP, "default", LODGING,
                      metadata_condition=condition)
    assert reply.status_code == 400, reply.text
    body = reply.json()
    assert body["error_code"] == 3001 and says in body["error_msg"], body
