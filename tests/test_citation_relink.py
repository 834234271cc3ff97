"""A citation of a document ingested later becomes an edge to it and its clause without the
citing document being ingested again, and dangles again when that document is deleted; on the
embedded graph (LadybugDB) and on Neo4j (the servers profile)."""

from __future__ import annotations

import uuid
from datetime import date
from pathlib import Path

import pytest
from tests_support import drop_generation

from flows.ingest import ingest_flow
from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.models import SearchFilter, Triple
from ingest.stores import open_graph

CITING = """# 合同管理办法

第一条 为规范合同管理，制定本办法。

第二条 合同付款依照《资金管理办法》第二条办理，付款前须核对合同金额。
"""
CITED = """# 资金管理办法

第一条 为规范公司资金管理，制定本办法。

第二条 单笔五十万元以上的付款须经总经理审批，并由财务部复核。
"""
READER = SearchFilter(tenant_id="default", groups=["all-staff"], as_of=date(2026, 6, 1),
                      hidden_keys=[])


def _citations(settings: Settings, generation: str, key: str) -> list[Triple]:
    graph = open_graph(settings, generation)
    try:
        return [t for t in graph.triples(key) if t.predicate in ("引用", "引用条款")]
    finally:
        graph.close()


def _clause_chunks(settings: Settings, generation: str) -> list[str]:
    graph = open_graph(settings, generation)
    try:
        return graph.clause_chunks([("资金管理办法", "第二条")], READER).get(
            ("资金管理办法", "第二条"), [])
    finally:
        graph.close()


@pytest.fixture(params=["embedded", "servers"])
def settings(request: pytest.FixtureRequest, prefect_api, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch):
    if request.param == "servers":
        monkeypatch.setenv("KBFLOW_PROFILE", "servers")
        monkeypatch.setenv("KBFLOW_MANIFEST_URL", request.getfixturevalue("postgres_database"))
        monkeypatch.setenv("KBFLOW_NAMESPACE", f"t{uuid.uuid4().hex[:10]}")
    monkeypatch.setenv("KBFLOW_CROSSLINGUAL", "false")  # not what this test is about
    settings = Settings(data_dir=tmp_path / "data")
    yield settings
    if request.param == "servers":
        drop_generation(settings)


def test_a_later_document_resolves_the_citations_of_it_and_its_deletion_unresolves_them(
        settings: Settings, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "合同管理办法.md").write_text(CITING, encoding="utf-8")
    first = ingest_flow(str(docs), str(settings.data_dir))
    with ManifestStore(settings.manifest) as manifest:
        (citing,) = manifest.published_keys()
    before = _citations(settings, first.generation, citing)
    assert {(t.object, t.rule) for t in before} == {
        ("资金管理办法", "dangling:not_in_corpus"),
        ("《资金管理办法》第二条", "dangling:not_in_corpus")}
    assert _clause_chunks(settings, first.generation) == []

    (docs / "资金管理办法.md").write_text(CITED, encoding="utf-8")
    second = ingest_flow(str(docs), str(settings.data_dir))
    assert second.failures == [] and second.written == 1  # the citing one is not ingested again
    assert second.relinked == [citing]
    after = _citations(settings, second.generation, citing)
    assert {(t.object, t.rule, t.surface) for t in after} == {
        ("资金管理办法", "exact", "《资金管理办法》"),
        ("《资金管理办法》第二条", "exact", "《资金管理办法》第二条")}
    assert {t.source_chunk_id for t in after} == {t.source_chunk_id for t in before}
    (clause,) = _clause_chunks(settings, second.generation)
    with ManifestStore(settings.manifest) as manifest:
        cited = [k for k in manifest.published_keys() if k != citing]
        (chunk,) = [c for c in manifest.version_chunks(*cited[0].split("@"))
                    if c.chunk_id == clause]
    assert "五十万元" in chunk.text

    (docs / "资金管理办法.md").unlink()
    third = ingest_flow(str(docs), str(settings.data_dir))
    assert third.tombstoned == cited and third.relinked == [citing]
    again = _citations(settings, third.generation, citing)
    assert {(t.object, t.rule) for t in again} == {
        ("资金管理办法", "dangling:not_in_corpus"),
        ("《资金管理办法》第二条", "dangling:not_in_corpus")}

    fourth = ingest_flow(str(docs), str(settings.data_dir))  # nothing changed: nothing relinked
    assert fourth.relinked == [] and fourth.written == 0
