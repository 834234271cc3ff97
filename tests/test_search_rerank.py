"""The reader model as a step of search (ingest/search/ranker.py): the switch (setting and per
request, CLI and API), exact identifiers kept first, the fallback to the fused order when the
model is missing or damaged, and the verdict read from its probabilities."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests_support import SAMPLE_DOCS

from ingest.config import Settings
from ingest.rerank import CARD, MODEL_DIR
from ingest.search import Searcher, SearchOptions, SearchResponse

KEY = "key-for-the-reader-tests-0123456789"
ASK = {"tenant_id": "default", "groups": ["all-staff"], "as_of": date(2026, 6, 1)}
QUESTION = "婚假有几天"


@pytest.fixture(scope="module")
def indexed(prefect_api, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    from flows.ingest import ingest_flow

    root = tmp_path_factory.mktemp("rerank")
    docs = root / "docs"
    docs.mkdir()
    for name in ("leave_policy.md", "remote_work_policy.md"):
        shutil.copy(SAMPLE_DOCS / name, docs)
    keys = root / "keys.json"
    keys.write_text(json.dumps({KEY: {"tenant": "default", "groups": ["all-staff"]}}))
    settings = Settings(data_dir=root / "data", api_keys_file=keys)
    summary = ingest_flow(str(docs), str(settings.data_dir))
    assert summary.documents == {"READY": 2}
    return settings


def search(settings: Settings, query: str = QUESTION, rerank: bool | None = None,
           k: int = 5, **ask: object) -> SearchResponse:
    with Searcher(settings) as searcher:
        return searcher.search(query, k=k, options=SearchOptions(rerank=rerank),
                               **(ask or ASK))  # type: ignore[arg-type]


def damaged_copy(folder: Path) -> Path:
    shutil.copytree(MODEL_DIR, folder)
    model = folder / json.loads((folder / CARD).read_text())["model"]
    model.write_bytes(model.read_bytes()[: model.stat().st_size // 3])
    return folder


def test_the_request_switches_the_reader_model_either_way(indexed: Settings) -> None:
    off = search(indexed)  # KBFLOW_RERANK is off by default
    on = search(indexed, rerank=True)
    assert all(r.answer_probability is None and r.fused_rank is None for r in off.results)
    assert all(r.answer_probability is not None and 0.0 <= r.answer_probability <= 1.0
               and r.confidence == r.answer_probability and r.fused_rank is not None
               for r in on.results)
    # The reader model reorders the fused order, nothing else: a result's fused rank is its
    # rank with the reader model off (k=12: the same 50 candidates per path as k=5).
    ranked_off = {r.chunk_id: r.rank for r in search(indexed, k=12).results}
    assert all(ranked_off[r.chunk_id] == r.fused_rank for r in on.results
               if r.fused_rank is not None and r.fused_rank <= 12)
    setting_on = indexed.model_copy(update={"rerank": True})
    assert search(setting_on).results[0].answer_probability is not None
    assert [r.chunk_id for r in search(setting_on, rerank=False).results] == [
        r.chunk_id for r in off.results]


def test_a_clause_named_by_number_stays_first(indexed: Settings) -> None:
    response = search(indexed, "休假管理制度第十条是怎么规定的", rerank=True)
    assert response.results[0].clause_no == "第十条" and response.results[0].exact_match


@pytest.mark.parametrize("broken", ["truncated", "missing"])
def test_a_damaged_or_missing_model_keeps_the_fused_order(indexed: Settings, tmp_path: Path,
                                                          broken: str) -> None:
    folder = damaged_copy(tmp_path / "reader") if broken == "truncated" else tmp_path / "none"
    settings = indexed.model_copy(update={"rerank": True, "reader_dir": folder})
    fallen = search(settings)
    assert [r.chunk_id for r in fallen.results] == [r.chunk_id for r in search(indexed).results]
    assert "reader model unavailable, fused order kept" in fallen.reason
    assert ("sha256" if broken == "truncated" else "unreadable") in fallen.reason
    assert all(r.answer_probability is None for r in fallen.results)
    assert fallen.verdict == search(indexed).verdict


def test_the_api_and_the_cli_take_the_switch_per_request(
        indexed: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    from flows.api import build_app
    from flows.cli import main

    with TestClient(build_app(indexed)) as api:
        auth = {"Authorization": f"Bearer {KEY}"}
        on = api.post("/search", json={"query": QUESTION, "rerank": True}, headers=auth).json()
        off = api.get("/search", params={"q": QUESTION, "rerank": "false"}, headers=auth).json()
        bad = api.post("/search", json={"query": QUESTION, "rerank": "maybe"}, headers=auth)
    assert on["results"][0]["answer_probability"] is not None
    assert off["results"][0]["answer_probability"] is None
    assert bad.status_code == 422
    capsys.readouterr()
    for switch, reranked in (("--rerank", True), ("--no-rerank", False)):
        assert main(["--data-dir", str(indexed.data_dir), "search", QUESTION, switch,
                     "--json"]) == 0
        first = json.loads(capsys.readouterr().out)["results"][0]
        assert (first["answer_probability"] is not None) is reranked


def test_the_reader_model_lifts_the_answer_from_fourth_to_first(ingested) -> None:
    """sample_docs, as `kbflow eval` asks its case asof-einvoice-2026: the fused order puts the
    2026 travel rule's clause on e-invoices fourth (behind clauses naming 报销 and 差旅费); the
    reader model reads that it answers and, ordering alone, puts it first. (Fused with the fused
    rank, the default blend, the shipped model leaves it second; the new one puts it first.)"""
    _, settings = ingested
    ask = {"tenant_id": "default", "groups": ["all-staff"], "as_of": date(2026, 3, 1)}

    def answers(r: object) -> bool:
        return (getattr(r, "doc_id", None) == "travel-expense"
                and getattr(r, "version_id", None) == "2026"
                and getattr(r, "clause_no", None) == "第十五条")

    fused = search(settings, "数电票可以用来报销差旅费吗?", rerank=False, **ask)
    assert [r.rank for r in fused.results if answers(r)] == [4]
    on = search(settings.model_copy(update={"rerank_blend": "reader"}),
                "数电票可以用来报销差旅费吗?", rerank=True, **ask)
    assert answers(on.results[0]) and on.results[0].fused_rank == 4
    assert on.results[0].answer_probability == max(
        r.answer_probability or 0.0 for r in on.results)


def test_the_reader_models_floor_decides_no_answer(indexed: Settings) -> None:
    """No passage at or above the floor: no_answer, with the probability in the reason."""
    best = max(r.answer_probability or 0.0 for r in search(indexed, rerank=True).results)
    above = search(indexed.model_copy(update={"rerank_floor": min(1.0, best + 1e-3)}),
                   rerank=True)
    assert above.verdict == "no_answer" and "best reader model probability" in above.reason
    below = search(indexed.model_copy(update={"rerank_floor": max(0.0, best - 1e-3)}),
                   rerank=True)  # results show the probability rounded to 4 places
    assert below.verdict != "no_answer"
