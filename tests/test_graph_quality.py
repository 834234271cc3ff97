"""Graph quality in the run summary: triples per extractor, shared entities, dangling 《…》."""

from __future__ import annotations

from test_store_contract import make_chunk

from ingest.graph import EXTRACTOR, extract_triples
from ingest.graph.quality import graph_quality


def test_quality_counts_extractors_shared_entities_and_dangling_titles() -> None:
    travel = make_chunk(1, doc="travel", text="第一条 审批见《审批权限表》，由部门负责人审批。")
    leave = make_chunk(2, doc="leave",
                       text="第二条 病假工资按《薪酬管理制度》执行，由部门主管审批。")
    triples = (extract_triples([travel], "差旅费管理办法")
               + extract_triples([leave], "休假管理制度"))
    llm = triples[0].model_copy(update={"extractor": "llm:m@kg-1"})
    titles = ["差旅费管理办法", "《审批权限表》", "休假管理制度", None]
    quality = graph_quality([*triples, llm], titles)
    assert quality.triples_per_extractor == {EXTRACTOR: len(triples), "llm:m@kg-1": 1}
    # 部门负责人 (部门主管 is its alias) is the one entity both documents mention.
    assert quality.multi_document_entities == 1
    assert quality.multi_document_share == round(1 / quality.entities, 4)
    # 审批权限表 is ingested (its title given with 《》); 薪酬管理制度 is not.
    assert quality.dangling_references == {"薪酬管理制度": 1}
    assert quality.dangling_count == 1
    assert graph_quality([], []).entities == 0
