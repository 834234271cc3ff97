"""Rule-based triples: document references, clause references and approvers, each sourced."""

from __future__ import annotations

from test_store_contract import make_chunk

from ingest.graph import EXTRACTOR, extract_triples
from ingest.models import ChunkKind


def test_references_and_approvers_are_extracted_with_their_source() -> None:
    clause = make_chunk(10, text="第十条 市内交通费 超标部分须经部门负责人审批后报销，"
                                 "具体权限见《审批权限表》；违反本办法第七条的，不予报销。")
    triples = extract_triples([clause], "差旅费管理办法")
    found = {(t.subject, t.predicate, t.object) for t in triples}
    assert ("差旅费管理办法", "引用", "审批权限表") in found
    assert ("部门负责人", "审批", "市内交通费") in found
    assert ("《差旅费管理办法》第10条", "引用条款", "《差旅费管理办法》第七条") in found
    assert all(t.source_chunk_id == clause.chunk_id and t.extractor == EXTRACTOR for t in triples)


def test_table_rows_name_their_approvers() -> None:
    row = make_chunk(1, kind=ChunkKind.TABLE_ROW,
                     text="事项: 合同签订; 金额范围: 50万元以上; 审批人: 总经理、董事长")
    found = {(t.subject, t.object) for t in extract_triples([row], "审批权限表")}
    assert found == {("总经理", "合同签订"), ("董事长", "合同签订")}


def test_parents_and_self_references_yield_nothing() -> None:
    parent = make_chunk(1, kind=ChunkKind.PARENT, text="由总经理审批")
    own = make_chunk(2, text="本办法即《差旅费管理办法》")
    assert extract_triples([parent, own], "差旅费管理办法") == []
