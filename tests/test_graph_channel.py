"""Routing and scoring of the graph channel, over a real LadybugDB store."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from test_store_contract import flt, make_chunk

from ingest.graph import extract_triples
from ingest.graph.link import Link
from ingest.search.graph_channel import GraphChannel, describe, route
from ingest.stores.ladybug_graph import LadybugGraphStore

DOC = Link("审批权限表", "Document", "审批权限表", 0.9)
ROLE = Link("部门负责人", "Role", "部门负责人", 0.9)


@pytest.mark.parametrize("query,intent", [
    ("哪些制度引用了《审批权限表》", "cited_by"),
    ("《审批权限表》被哪些文件引用", "cited_by"),
    ("《差旅费管理办法》引用了哪些制度", "cites"),
    ("差旅费管理办法的上位制度是什么", "cites"),
    ("第十六条提到的那条规定是什么", "clause_ref"),
    ("差旅费报销要谁审批", "approves"),
    ("和审批权限表相关的制度", "related"),
])
def test_relation_intents_route_to_the_graph(query: str, intent: str) -> None:
    chosen = route(query, [DOC])
    assert chosen is not None and chosen.intent == intent


def test_queries_without_intent_or_entities_skip_the_graph() -> None:
    assert route("哪些制度引用了员工手册", []) is None
    assert route("审批权限表", [DOC]) is None
    assert route("部门负责人出差住宿标准", [ROLE]) is None
    loose = Link("《差旅费管理办法》第七条", "Clause", "第七条", 0.6)
    assert route("第七条", [loose]) is None
    assert route("第七条提到的规定", [loose]).intent == "clause_ref"
    assert route("那条规定是什么", [], seeded=True).intent == "clause_ref"
    assert route("哪些制度引用了它", [], seeded=True) is None


@pytest.fixture
def graph(tmp_path: Path):
    """Three documents: travel (t1, staff) and procurement (t2) cite 审批权限表; travel v2
    (from 2026) states who approves what."""
    store = LadybugGraphStore(tmp_path / "graph")
    travel = make_chunk(5, doc="travel", text="第五条 报销审批权限见《审批权限表》。")
    travel_new = make_chunk(6, doc="travel", version="2", eff_from=date(2026, 1, 1),
                            text="第六条 住宿费 超标部分由部门负责人审批，详见《审批权限表》。")
    other = make_chunk(7, doc="procurement", tenant="t2",
                       text="第七条 采购审批按《审批权限表》执行。")
    unrelated = make_chunk(8, doc="travel", text="第八条 交通工具按级别乘坐。")
    rule = make_chunk(9, doc="travel", text="第9条 违反本办法第5条的，不予报销。")
    store.upsert([travel, travel_new, unrelated, rule],
                 extract_triples([travel, unrelated, travel_new, rule], "差旅费管理办法"),
                 {"travel@1": "差旅费管理办法", "travel@2": "差旅费管理办法"})
    store.upsert([other], extract_triples([other], "采购管理办法"))
    yield store, {"travel": travel, "travel_new": travel_new, "other": other, "rule": rule}
    store.close()


def test_citing_clauses_come_back_with_their_path(graph) -> None:
    store, chunks = graph
    channel = GraphChannel(store)
    both = flt(hidden_keys=[], as_of=date(2026, 3, 1))
    intent, hits = channel.search("哪些制度引用了《审批权限表》", both)
    assert intent.intent == "cited_by"
    assert {h.chunk_id for h in hits} == {chunks["travel"].chunk_id, chunks["travel_new"].chunk_id}
    first = hits[0].path
    assert [n.name for n in first.nodes] == ["审批权限表", "差旅费管理办法"]
    assert first.relations[0].source_chunk_id == hits[0].chunk_id
    assert "←引用― 差旅费管理办法" in describe(first)
    # Another tenant sees its own citing clause only; an earlier date hides the 2026 version.
    _, theirs = channel.search("哪些制度引用了《审批权限表》", both.model_copy(
        update={"tenant_id": "t2"}))
    assert [h.chunk_id for h in theirs] == [chunks["other"].chunk_id]
    _, before = channel.search("哪些制度引用了《审批权限表》", both.model_copy(
        update={"as_of": date(2025, 6, 1)}))
    assert [h.chunk_id for h in before] == [chunks["travel"].chunk_id]


def test_paths_score_by_hops_and_routing_weight(graph) -> None:
    store, chunks = graph
    channel = GraphChannel(store)
    standards = make_chunk(3, doc="standards", text="第三条 差旅标准见《差旅费管理办法》。")
    store.upsert([standards], extract_triples([standards], "费用报销标准表"))
    visible = flt(hidden_keys=["travel@2", "procurement@1"], as_of=date(2025, 6, 1))
    intent, hits = channel.search("哪些制度引用了《审批权限表》", visible)
    # One hop: 差旅费管理办法 cites it; two hops: 费用报销标准表 cites 差旅费管理办法.
    assert [(h.chunk_id, len(h.path.relations)) for h in hits] == [
        (chunks["travel"].chunk_id, 1), (standards.chunk_id, 2)]
    assert hits[1].score == pytest.approx(hits[0].score * 0.5 * 0.9)  # halved, × confidence
    assert hits[0].score == pytest.approx(intent.weight * 0.9)
    _, approvers = channel.search("住宿费超标要谁审批", flt(hidden_keys=["travel@1", "standards@1"],
                                                          as_of=date(2026, 3, 1)))
    assert [h.chunk_id for h in approvers] == [chunks["travel_new"].chunk_id]
    assert approvers[0].path.relations[0].predicate == "审批"
    assert channel.search("今天天气怎么样", visible) == (None, [])


def test_a_referenced_clause_is_answered_by_its_own_text(graph) -> None:
    store, chunks = graph
    _, hits = GraphChannel(store).search("差旅费管理办法第9条提到的那条规定是什么",
                                         flt(hidden_keys=["travel@2", "procurement@1"]))
    # The citing clause first, then the clause it points to (reached through the path).
    assert [h.chunk_id for h in hits] == [chunks["rule"].chunk_id, chunks["travel"].chunk_id]
    assert [n.name for n in hits[1].path.nodes] == ["《差旅费管理办法》第9条",
                                                    "《差旅费管理办法》第5条"]
    assert hits[1].score < hits[0].score


def test_a_clause_question_without_entities_starts_from_the_text_hits(graph) -> None:
    store, chunks = graph
    channel = GraphChannel(store)
    visible = flt(hidden_keys=["travel@2", "procurement@1"])
    question = "超标不报销那条规定原文是什么"
    assert channel.search(question, visible) == (None, [])

    def seeds() -> list[tuple[str, str]]:
        return [(chunks["rule"].chunk_id, "《差旅费管理办法》第9条")]

    intent, hits = channel.search(question, visible, seeds=seeds)
    assert intent.intent == "clause_ref"
    assert [h.chunk_id for h in hits] == [chunks["rule"].chunk_id, chunks["travel"].chunk_id]
    # Only the relations the seed chunk itself states: another chunk of the same clause is not.
    _, none = channel.search(question, visible,
                             seeds=lambda: [(chunks["travel"].chunk_id, "《差旅费管理办法》第9条")])
    assert none == []


def test_questions_without_relation_words_never_touch_the_store(tmp_path: Path) -> None:
    store = LadybugGraphStore(tmp_path / "closed")
    store.close()  # any query would fail now
    assert GraphChannel(store).search("婚假有几天", flt()) == (None, [])
