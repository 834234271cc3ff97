"""bench/realworld.py's scoring on hand-made rankings: no engines, no model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ingest.evaluate import EvalCase, Expectation

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package
from bench.realworld import Article, macro, score_question, split_articles


def hit(text: str) -> Article:
    return Article(chunk_id=text[:8], doc_id="law.md", version_id="1", clause_no=None, text=text)


def case(*phrases: str) -> EvalCase:
    return EvalCase(id="q", question="?", expected=[Expectation(text=p) for p in phrases])


def test_a_phrase_matches_across_width_and_whitespace() -> None:
    """The dataset's phrases use ASCII commas; the laws full-width ones and line breaks."""
    law = "第五十六条 个体工商户的债务，个人经营的，\n以个人 财产承担"
    scores = score_question(case("个体工商户的债务,个人经营的,以个人财产"), [hit("无关"), hit(law)])
    assert scores["recall@5"] == 1.0 and scores["mrr"] == 0.5
    assert score_question(case("以个人财产承担责任"), [hit("以个人财产承担")])["recall@100"] == 0.0


def test_recall_is_per_gold_article_and_macro_over_questions() -> None:
    ranking = [hit(f"第{i}条 无关的条文") for i in range(1, 7)] + [hit("甲条文"), hit("乙条文")]
    two_golds = score_question(case("甲条文", "乙条文"), ranking[:5] + ranking[6:7] + ranking[7:])
    assert two_golds["recall@5"] == 0.0 and two_golds["recall@10"] == 1.0
    half = score_question(case("甲条文", "丙条文"), ranking)
    assert half["recall@10"] == 0.5 and half["hit@5"] == 0.0
    assert half["mrr"] == pytest.approx(1 / 7)
    first = score_question(case("甲条文"), [hit("甲条文")])
    recall = macro([two_golds, half, first])["recall@10"]
    assert recall == pytest.approx((1 + 0.5 + 1) / 3, abs=1e-4)
    assert macro([half, first])["mrr"] == pytest.approx((1 / 7 + 1) / 2, abs=1e-4)


def test_articles_run_from_their_number_to_the_next_article_or_heading() -> None:
    markdown = ("# 某法\n\n<!-- INFO END -->\n\n## 第一章 总则\n\n第一条 为了规范。\n\n"
                "第二条 本法适用于：\n（一）甲；\n\n## 第二章 附则\n\n第二条之一 补充。\n")
    articles = split_articles("某法.md", markdown)
    assert [(a.chunk_id, a.clause_no, a.text) for a in articles] == [
        ("某法.md#0", "第一条", "第一条 为了规范。"),
        ("某法.md#1", "第二条", "第二条 本法适用于：\n（一）甲；"),
        ("某法.md#2", "第二条之一", "第二条之一 补充。"),
    ]
