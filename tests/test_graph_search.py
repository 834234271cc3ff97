"""The graph channel end to end on sample_docs: "哪些制度引用了《差旅费管理办法》" returns the
citing clauses on top with their path, and nothing of them for another tenant or a date before
the citing version took effect; on the embedded profile and on the servers profile (Neo4j)."""

from __future__ import annotations

import json
from datetime import date

import pytest
from test_cli import kbflow
from test_servers_profile import servers  # noqa: F401 - the servers-profile fixture

from ingest.config import Settings
from ingest.graph import EXTRACTOR
from ingest.search import SearchResponse, search_index

QUESTION = "哪些制度引用了《差旅费管理办法》"
# The clauses that cite it and that an all-staff reader of the default tenant may see
# (approval-authority cites it too, but only finance and managers read that table).
CITING = {("expense-standards", "第一条"), ("remote_work_policy", "8.3")}
CITING_FROM = {"expense-standards": date(2026, 1, 1), "remote_work_policy": date(2025, 3, 1)}


def ask(settings: Settings, tenant: str = "default", as_of: date = date(2026, 6, 1),
        question: str = QUESTION) -> SearchResponse:
    return search_index(settings, question, tenant_id=tenant, groups=["all-staff"], as_of=as_of,
                        k=5)


def check_citing_clauses(settings: Settings) -> None:
    response = ask(settings)
    assert response.graph_route == "cited_by"
    top = {(r.doc_id, r.clause_no) for r in response.results[:2]}
    assert top == CITING
    for result in response.results[:2]:
        assert result.graph_rank == 1
        path = result.graph_path
        assert path.nodes[0].name == "差旅费管理办法"
        assert path.relations[0].source_chunk_id == result.chunk_id
        assert (path.relations[0].doc_id, path.relations[0].predicate) == (result.doc_id, "引用")
    other_tenant = ask(settings, tenant="subsidiary-b")
    assert not {(r.doc_id, r.clause_no) for r in other_tenant.results} & CITING
    assert all(r.graph_rank is None for r in other_tenant.results)
    before = ask(settings, as_of=date(2025, 12, 31))
    assert ("expense-standards", "第一条") not in {(r.doc_id, r.clause_no)
                                                  for r in before.results}
    assert ("remote_work_policy", "8.3") in {(r.doc_id, r.clause_no) for r in before.results
                                             if r.graph_rank}
    earliest = ask(settings, as_of=date(2025, 2, 1))  # before either citing version
    assert all(r.graph_rank is None for r in earliest.results)


def test_citing_clauses_come_first_with_their_path_embedded(ingested) -> None:
    _, settings = ingested
    check_citing_clauses(settings)


def test_citing_clauses_come_first_with_their_path_on_neo4j(servers) -> None:  # noqa: F811
    _, settings = servers
    check_citing_clauses(settings)


def test_ordinary_questions_skip_the_graph(ingested) -> None:
    _, settings = ingested
    assert ask(settings, question="婚假有几天").graph_route is None


def test_graph_command_lists_relations_with_source_clauses(ingested) -> None:
    _, settings = ingested
    listed = kbflow("graph", "《差旅费管理办法》", "--hops", "1", "--as-of", "2026-06-01",
                    "--json", data=settings.data_dir)
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert found["start"] == ["差旅费管理办法"]
    assert all(len(p["relations"]) == 1 for p in found["paths"])
    cited_by = {(found["sources"][r["source_chunk_id"]]["doc_id"],
                 found["sources"][r["source_chunk_id"]]["clause_no"])
                for p in found["paths"] for r in p["relations"] if r["object"] == "差旅费管理办法"}
    assert cited_by == CITING
    text = kbflow("graph", "差旅费管理办法", "--hops", "1", "--as-of", "2026-06-01",
                  data=settings.data_dir)
    assert "←引用― 费用报销标准表" in text.stdout and "expense-standards@2026 第一条" in text.stdout
    nothing = kbflow("graph", "没有这个实体", data=settings.data_dir)
    assert nothing.returncode == 1 and "no visible relations" in nothing.stdout
    refused = kbflow("graph", "差旅费管理办法", "--hops", "9", data=settings.data_dir)
    assert refused.returncode == 1 and "hops must be between 1 and 4" in refused.stdout


@pytest.mark.parametrize("title", ["中华人民共和国劳动法", "薪酬管理制度"])
def test_run_summary_reports_graph_quality(ingested, title: str) -> None:
    summary, _ = ingested
    graph = summary.graph
    assert graph.triples_per_extractor == {EXTRACTOR: summary.triples}
    assert 0 < graph.multi_document_entities < graph.entities
    assert title in graph.dangling_references
    assert "审批权限表" not in graph.dangling_references  # cited and ingested
