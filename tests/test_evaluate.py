"""Retrieval metrics on hand-made rankings, case loading, and the sample gold set against the
sample corpus."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from tests_support import REPO, SAMPLE_DOCS

from ingest.chunk import chunk_document
from ingest.evaluate import EvalCase, Expectation, evaluate, load_cases, score_case
from ingest.models import ChunkKind
from ingest.parse import discover, parse_document, read_meta
from ingest.parse.metadata import unscoped_doc_id


@dataclass
class Hit:
    chunk_id: str
    doc_id: str = "travel-expense"
    version_id: str = "2026"
    clause_no: str | None = None
    text: str = ""
    score: float = 0.5


def _case(**fields) -> EvalCase:
    return EvalCase.model_validate({"id": "c", "question": "q", **fields})


def test_ranking_metrics_by_hand() -> None:
    case = _case(expected=[
        {"doc_id": "travel-expense", "version": "2026", "clause": "第十条"},
        {"text": "每人每天80元"},
    ])
    ranking = [
        Hit("a", clause_no="第九条", text="伙食补助"),
        Hit("b", clause_no="第十条", text="一线城市每人每天限额150元"),  # expectation 1 at rank 2
        Hit("c", version_id="2025", clause_no="第十条", text="限额100元"),  # wrong version
        Hit("d", clause_no="第九条", text="境内每人每天８０元"),  # expectation 2 (NFKC) at rank 4
        Hit("e", clause_no="第十条", text="第十条#2"),  # expectation 1 again: no new credit
    ]
    result = score_case(case, ranking, k=5)
    ideal = 1 + 1 / math.log2(3)
    assert result.recall == 1.0 and result.hit == 1.0 and result.reciprocal_rank == 0.5
    assert result.ndcg == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    assert result.passed and result.ranked[1] == "travel-expense@2026 第十条"

    top3 = score_case(case, ranking, k=3)  # the second expectation is cut off
    assert top3.recall == 0.5 and top3.reciprocal_rank == 0.5
    assert top3.ndcg == pytest.approx((1 / math.log2(3)) / ideal)

    miss = score_case(case, ranking[2:3], k=5)
    assert (miss.recall, miss.hit, miss.reciprocal_rank, miss.ndcg, miss.passed) == (
        0.0, 0.0, 0.0, 0.0, False)


def test_chunk_ids_and_forbidden_results() -> None:
    case = _case(expected=["b"], forbidden=[{"doc_id": "travel-expense", "version": "2025"}])
    result = score_case(case, [Hit("b"), Hit("c", version_id="2025"), Hit("x")], k=5)
    assert result.reciprocal_rank == 1.0 and result.ndcg == 1.0
    assert result.forbidden_hits == 1 and not result.passed  # found, but beside an outdated rule
    assert score_case(case, [Hit("x"), Hit("y"), Hit("b")], k=5).reciprocal_rank == pytest.approx(
        1 / 3)


def test_no_answer_cases_are_scored_apart() -> None:
    hidden = _case(no_answer=True, forbidden=[{"doc_id": "approval-authority"}])
    assert score_case(hidden, [Hit("a")], k=5).passed
    assert not score_case(hidden, [Hit("a"), Hit("z", doc_id="approval-authority")], k=5).passed
    nothing = _case(no_answer=True)
    assert score_case(nothing, [], k=5).passed
    assert not score_case(nothing, [Hit("a")], k=5).passed  # without a threshold: must be empty
    assert score_case(nothing, [Hit("a", score=0.01)], k=5, no_answer_threshold=0.02).passed
    assert not score_case(nothing, [Hit("a", score=0.03)], k=5, no_answer_threshold=0.02).passed


def test_evaluate_aggregates_overall_and_per_tag() -> None:
    cases = [
        _case(id="one", expected=["a"], tags=["x"], as_of="2025-06-01", tenant="t",
              groups=["g"]),
        _case(id="two", expected=["b"], tags=["x", "y"]),
        _case(id="three", no_answer=True, forbidden=["a"], tags=["y"]),
    ]
    calls = []
    rankings = {"q1": [Hit("a")], "q2": [Hit("z"), Hit("b")], "q3": [Hit("a")]}
    cases[1] = cases[1].model_copy(update={"question": "q2"})
    cases[0] = cases[0].model_copy(update={"question": "q1"})
    cases[2] = cases[2].model_copy(update={"question": "q3"})

    def search(question, as_of, tenant, groups, k):
        calls.append((question, as_of, tenant, groups, k))
        return rankings[question] * 10  # more than k: evaluate keeps the top k

    report = evaluate(cases, search, k=3)
    assert calls[0] == ("q1", date(2025, 6, 1), "t", ["g"], 3)
    assert report.overall.cases == 2 and report.overall.mrr == pytest.approx(0.75)
    assert report.overall.recall == 1.0 and report.overall.hit == 1.0
    assert report.overall.forbidden_rate == pytest.approx(round(1 / 3, 4))
    assert (report.overall.no_answer_cases, report.overall.no_answer_passed) == (1, 0)
    assert report.per_tag["x"].mrr == pytest.approx(0.75)
    assert report.per_tag["y"].cases == 1 and report.per_tag["y"].mrr == 0.5
    assert report.per_tag["y"].no_answer_cases == 1
    assert [len(c.ranked) for c in report.cases] == [3, 3, 3]


def test_load_cases_reports_the_bad_line(tmp_path: Path) -> None:
    good = {"id": "a", "question": "q", "expected": ["abc", {"text": "x"}], "tags": ["t"]}
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({"id": "b", "question": "q"}) + "\n")
    with pytest.raises(ValueError, match=r"cases.jsonl:3"):
        load_cases(path)
    path.write_text(json.dumps(good) + "\n")
    (case,) = load_cases(path)
    assert case.expected == [Expectation(chunk_id="abc"), Expectation(text="x")]
    with pytest.raises(ValueError, match="needs the doc_id"):
        Expectation.model_validate({"clause": "第十条"})


def test_the_sample_gold_set_points_at_real_clauses() -> None:
    cases = load_cases(REPO / "eval" / "sample_cases.jsonl")
    assert len(cases) >= 110
    tags = Counter(tag for case in cases for tag in case.tags)
    minimum = {  # each kind of question users ask is measured on enough cases to be judged
        "paraphrase": 10, "colloquial": 8, "typo": 8, "cross-lingual": 6, "zh-en": 3, "en-zh": 3,
        "as-of": 8, "table": 6, "scanned": 4, "cross-page": 3, "exact-id": 10, "relation": 8,
        "multi-hop": 6, "synonym": 5, "no-answer": 8, "clause-lookup": 1, "english": 1, "acl": 1,
        "tenant": 1,
    }
    assert {tag: tags[tag] for tag in minimum if tags[tag] < minimum[tag]} == {}
    assert sum(case.no_answer for case in cases) >= 8
    assert all(case.tags for case in cases)
    assert all(case.forbidden for case in cases if "as-of" in case.tags)  # a version trap
    by_id = {case.id: case for case in cases}
    assert by_id["te-taxi-2026"].as_of.year == 2026 and by_id["te-taxi-2025"].as_of.year == 2025

    wanted = {e.doc_id for case in cases for e in case.expected + case.forbidden}
    chunks = []
    for path in discover(SAMPLE_DOCS):
        meta, data = read_meta(path, SAMPLE_DOCS, "default", ["all-staff"])
        if unscoped_doc_id(meta.doc_id) in wanted:  # the others need no parse (one OCRs)
            chunks += chunk_document(parse_document(meta, data))
    children = [c for c in chunks if c.kind != ChunkKind.PARENT]
    for case in cases:
        for expectation in case.expected + case.forbidden:
            assert any(expectation.matches(c) for c in children), (case.id, expectation)
    taxi_2026 = [c for c in children if by_id["te-taxi-2026"].expected[0].matches(c)]
    assert len(taxi_2026) == 1 and "150元" in taxi_2026[0].text
