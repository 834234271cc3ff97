"""End to end: sample_docs/ through the Prefect flow into the three embedded stores."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
from tests_support import SAMPLE_DOCS

from flows.ingest import ingest_flow
from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.models import State
from ingest.parse import discover
from ingest.search import SearchResponse, search_index
from ingest.stores import open_stores


def search(settings: Settings, query: str, *, as_of: date, tenant: str = "default",
           groups: tuple[str, ...] = ("all-staff",), k: int = 5) -> SearchResponse:
    return search_index(settings, query, tenant_id=tenant, groups=list(groups), as_of=as_of, k=k)


def test_every_sample_document_is_ready_in_all_three_stores(ingested) -> None:
    summary, settings = ingested
    documents = len(discover(SAMPLE_DOCS))
    assert summary.failures == []
    assert summary.documents == {"READY": documents}
    manifest = ManifestStore(settings.manifest)
    records = manifest.documents()
    chunks = [c for r in records for c in manifest.version_chunks(r.doc_id, r.version_id)]
    manifest.close()
    indexed = [c for c in chunks if c.kind != "parent"]
    assert summary.chunks.added == len(chunks)
    stores = open_stores(settings, settings.embedding_model, 512, summary.generation)
    try:
        assert stores.vectors.count() == len(indexed)
        assert stores.lexical.count() == len(chunks)
        assert stores.graph.count() > 0
        assert stores.graph.count() <= summary.triples
    finally:
        stores.close()
    assert summary.embedded > 0


def test_run_reports_parse_quality(ingested) -> None:
    summary, settings = ingested
    parse = summary.parse
    assert parse.documents == summary.files and parse.parse_errors == 0
    assert parse.ocr_pages >= 1 and parse.tables >= 2 and parse.table_rows > 20
    assert parse.missing_title_rate == 0
    manifest = ManifestStore(settings.manifest)
    scanned = next(r for r in manifest.documents() if r.source_path.endswith("_scanned.pdf"))
    manifest.close()
    assert scanned.parse_report["ocr_pages"] == scanned.parse_report["pages"] > 0


def test_tables_are_parents_of_their_rows(ingested) -> None:
    _, settings = ingested
    manifest = ManifestStore(settings.manifest)
    chunks = manifest.version_chunks("approval-authority", "2026")
    manifest.close()
    tables = [c for c in chunks if c.structural_path.endswith("/table")]
    rows = [c for c in chunks if c.kind == "table_row"]
    assert len(tables) == 1 and tables[0].kind == "parent" and "| 事项 |" in tables[0].text
    assert rows and all(r.parent_chunk_id == tables[0].chunk_id for r in rows)


def test_chunks_carry_citation_fields(ingested) -> None:
    _, settings = ingested
    manifest = ManifestStore(settings.manifest)
    chunks = manifest.version_chunks("travel-expense", "2025")
    manifest.close()
    clause = next(c for c in chunks if c.clause_no == "第十条" and c.kind == "clause")
    assert clause.prefix == "《差旅费管理办法》v2025 / 第三章 差旅费开支标准 / 第十条"
    assert clause.page_start == 2 and clause.source_uri.endswith("travel-expense-2025.pdf")
    assert clause.effective_from == date(2025, 1, 1) and clause.effective_to == date(2025, 12, 31)
    assert clause.parent_chunk_id in {c.chunk_id for c in chunks if c.kind == "parent"}
    assert clause.prev_chunk_id and clause.next_chunk_id
    # the running header is in no clause: once, in the page margins' own section at the end
    margins = [c for c in chunks if "星河科技有限公司 内部制度文件" in c.text]
    assert [(c.title_path, c.kind) for c in margins if c.kind != "parent"] == [
        (["页眉页脚"], "paragraph")]


def test_rerun_changes_nothing_and_embeds_nothing(ingested) -> None:
    summary, settings = ingested
    again = ingest_flow(summary.source, str(settings.data_dir))
    assert again.chunks.added == again.chunks.changed == again.chunks.removed == 0
    assert again.embedded == 0
    assert again.skipped_unchanged == summary.files
    assert again.documents == summary.documents


def test_as_of_selects_the_version_in_force(ingested) -> None:
    _, settings = ingested
    query = "出差打车超标了还能报吗"
    for as_of, wanted, other in ((date(2026, 5, 1), "2026", "2025"),
                                 (date(2025, 6, 1), "2025", "2026")):
        results = search(settings, query, as_of=as_of).results
        top3 = [(r.doc_id, r.version_id, r.clause_no) for r in results[:3]]
        assert ("travel-expense", wanted, "第十条") in top3, top3
        position = top3.index(("travel-expense", wanted, "第十条"))
        assert all(r.version_id != other for r in results[: position + 1])


def test_scanned_clauses_are_found_through_ocr(ingested) -> None:
    _, settings = ingested
    results = search(settings, "印章携带外出要谁批准", as_of=date(2026, 5, 1), k=3).results
    assert (results[0].doc_id, results[0].clause_no) == ("seal-policy", "第六条")
    assert results[0].page_start == 2


def test_a_code_no_document_states_has_no_answer(ingested) -> None:
    """SEC-3001 is in the remote-work policy (written SEC3001 here); SEC-3999 is nowhere,
    however alike its neighbours' rows read."""
    _, settings = ingested
    known = search(settings, "VPN 报 SEC3001 怎么办", as_of=date(2026, 6, 1))
    assert known.verdict != "no_answer"
    unknown = search(settings, "VPN 报 SEC-3999 怎么办", as_of=date(2026, 6, 1))
    assert unknown.verdict == "no_answer" and unknown.results
    assert unknown.reason == "no candidate carries sec-3999, the code asked about"


def test_acl_and_tenant_filters_hide_what_the_reader_may_not_see(ingested) -> None:
    _, settings = ingested
    today = date(2026, 5, 1)
    staff = search(settings, "合同签订 审批人", as_of=today, k=10).results
    assert all(r.doc_id != "approval-authority" for r in staff)
    finance = search(settings, "合同签订 审批人", as_of=today, groups=("finance",)).results
    assert finance and finance[0].doc_id == "approval-authority"
    procurement = search(settings, "采购", as_of=today, k=10).results
    assert all(r.doc_id != "procurement" for r in procurement)
    subsidiary = search(settings, "采购", as_of=today, tenant="subsidiary-b").results
    assert subsidiary and {r.doc_id for r in subsidiary} == {"procurement"}
    assert {r.document_key for r in subsidiary} == {"subsidiary-b:procurement"}


def test_dense_path_joins_chinese_and_english_queries(ingested) -> None:
    """The default model reads both languages, so hybrid search is hybrid for both (an
    English-only model's gate is tested in test_embed)."""
    _, settings = ingested
    chinese = search(settings, "报销打车费有上限吗", as_of=date(2026, 5, 1))
    english = search(settings, "home internet reimbursement", as_of=date(2026, 5, 1))
    assert chinese.dense_used and chinese.query_coverage == 1.0
    assert any(r.dense_rank is not None and r.doc_id in {"travel-expense", "expense-standards"}
               for r in chinese.results)
    assert english.dense_used
    assert english.results[0].doc_id == "remote_work_policy"
    assert english.results[0].dense_rank is not None


def test_a_corrupt_file_fails_alone(prefect_api, ingested, tmp_path: Path) -> None:
    _, reference = ingested
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 20)
    (docs / "empty.md").write_bytes(b"")
    (docs / "zz-copies").mkdir()  # identical files: the first path in order is the one ingested
    shutil.copy(docs / "leave_policy.md", docs / "zz-copies" / "leave_policy.md")
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(reference.vector_cache_path, data / "vector_cache.db")  # no re-embedding
    summary = ingest_flow(str(docs), str(data))
    failed = {f.doc_id: f.reason for f in summary.failures}
    assert set(failed) == {"broken", "empty"}
    assert "PDF" in failed["broken"] and "empty" in failed["empty"]
    assert summary.documents == {"FAILED": 2, "READY": len(discover(SAMPLE_DOCS))}
    assert summary.embedded == 0
    copy = str((docs / "zz-copies" / "leave_policy.md").resolve())
    assert summary.duplicates == {"leave_policy@1": [copy]}  # identical: ingested once
    assert summary.parse.parse_errors == 2 and summary.parse.documents == summary.files - 1
    manifest = ManifestStore(data / "manifest.db")
    assert manifest.get("broken", "1").state == State.FAILED
    assert manifest.get("broken", "1").reason == failed["broken"]
    assert manifest.get("leave_policy", "1").duplicate_paths == [copy]
    manifest.close()


def test_a_new_model_is_refused_until_a_rebuild(prefect_api, tmp_path, monkeypatch) -> None:
    """An index built with one model never receives another model's vectors: after a model
    change (an upgrade of the default included) ingest refuses before any work and names
    `kbflow rebuild`."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notice.md").write_text("# 通知\n\n第一条 本通知自发布之日起执行。\n", encoding="utf-8")
    data = tmp_path / "data"
    monkeypatch.setenv("KBFLOW_EMBEDDING_MODEL", "all-MiniLM-L6-v2")
    first = ingest_flow(str(docs), str(data))
    assert first.documents == {"READY": 1}
    monkeypatch.delenv("KBFLOW_EMBEDDING_MODEL")
    with pytest.raises(ValueError, match=r"all-MiniLM-L6-v2 vectors .*kbflow rebuild"):
        ingest_flow(str(docs), str(data))
    manifest = ManifestStore(str(data / "manifest.db"))
    assert [r.state for r in manifest.documents()] == [State.READY]
    manifest.close()


def test_candidates_best_sentences_join_the_fusion_as_a_third_list(ingested) -> None:
    """Final search ranks the two paths' candidates by their best single sentence and fuses
    that list with the two paths' (weighted RRF); switched off, only the paths count."""
    from ingest.embed import Embedder
    from ingest.search import Searcher, SearchOptions

    _, settings = ingested
    ask = {"tenant_id": settings.default_tenant, "groups": settings.default_acl,
           "as_of": date(2026, 5, 1), "k": 10}
    plain = SearchOptions(graph=False, authority=False, exact_first=False, crosslingual=False)
    with Searcher(settings) as searcher:
        fused = searcher.search("出差打车超标了还能报吗", options=plain, **ask)
        without = searcher.search("出差打车超标了还能报吗",
                                  options=plain.model_copy(update={"sentences": False}), **ask)

    def rrf(*ranks: int | None) -> float:
        return sum(1 / (settings.rrf_k + r) for r in ranks if r is not None)

    assert all(r.sentence_rank is not None for r in fused.results)
    for r in fused.results:
        assert r.score == pytest.approx(rrf(r.bm25_rank, r.dense_rank, r.sentence_rank))
    by_sentence = sorted(fused.results, key=lambda r: r.sentence_rank or 0)
    assert [r.signals.sentence for r in by_sentence] == sorted(
        (r.signals.sentence for r in fused.results), reverse=True)
    assert all(r.sentence_rank is None for r in without.results)
    for r in without.results:
        assert r.score == pytest.approx(rrf(r.bm25_rank, r.dense_rank))
    # The graph keeps its share against three text lists: the clause the graph reaches
    # (SEC-2003's handling cites clause 3.2) stays in the top 5, as with two lists.
    graph = SearchOptions(authority=False, exact_first=False, crosslingual=False)
    with Searcher(settings) as searcher:
        cited = searcher.search("SEC-2003 处理方式引用的条款要求谁审批?", options=graph,
                                **ask | {"as_of": date(2026, 6, 1), "k": 5})
        alone = searcher.search("哪些制度引用了《信息安全管理规范》", mode="graph",
                                **ask | {"as_of": date(2026, 6, 1)})
    assert cited.graph_route == "clause_ref" and alone.graph_route == "cited_by"
    assert alone.results and all(  # the graph alone has no text lists to keep a share of
        r.score == pytest.approx(2.0 / (settings.rrf_k + r.graph_rank)) for r in alone.results)
    [reached] = [r for r in cited.results if (r.doc_id, r.clause_no) == ("information-security",
                                                                          "3.2")]
    assert reached.graph_rank is not None and reached.rank <= 5
    for r in cited.results:
        share = 2.0 * 3 / 2 / (settings.rrf_k + r.graph_rank) if r.graph_rank else 0.0
        assert r.score == pytest.approx(rrf(r.bm25_rank, r.dense_rank, r.sentence_rank) + share)
    # The sentence vectors came from the ingest: a search reads them without encoding.
    reader = Embedder(settings.embedding_model, settings.vector_cache_path)
    manifest = ManifestStore(settings.manifest)
    chunks = manifest.chunks(r.chunk_id for r in fused.results)
    kept = reader.sentence_vectors({c.content_hash: c.text for c in chunks.values()})
    assert reader._encoder is None and len(kept) == len(chunks)
    reader.close()
    manifest.close()
