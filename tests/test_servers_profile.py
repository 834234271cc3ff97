"""The servers profile: the same flow fills Milvus (gRPC), Elasticsearch and Neo4j, with the
manifest in PostgreSQL, and search over them ranks like the embedded profile on the sample eval
cases."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from tests_support import REPO, SAMPLE_DOCS

from flows.ingest import ingest_flow
from ingest.config import Settings
from ingest.evaluate import evaluate, hits_of, hybrid_search_fn, load_cases
from ingest.lifecycle import open_generation
from ingest.manifest import ManifestStore


@pytest.fixture
def servers(prefect_api, ingested, postgres_database: str, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch):
    """sample_docs/ ingested with KBFLOW_PROFILE=servers under a fresh namespace, the manifest
    in a fresh PostgreSQL database."""
    _, embedded = ingested
    monkeypatch.setenv("KBFLOW_PROFILE", "servers")
    monkeypatch.setenv("KBFLOW_MANIFEST_URL", postgres_database)
    monkeypatch.setenv("KBFLOW_NAMESPACE", f"t{uuid.uuid4().hex[:10]}")
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(embedded.vector_cache_path, data / "vector_cache.db")  # no re-embedding
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    summary = ingest_flow(str(docs), str(data))
    settings = Settings(data_dir=data)
    yield summary, settings
    stores = open_generation(settings, summary.generation)
    stores.drop()
    stores.close()


def test_servers_hold_the_same_published_rows(servers, ingested) -> None:
    summary, settings = servers
    reference, embedded = ingested
    assert settings.profile == "servers"
    assert summary.failures == [] and summary.documents == reference.documents
    assert summary.embedded == 0
    assert not (settings.data_dir / "manifest.db").exists()
    on_postgres, local_manifest = ManifestStore(settings.manifest), ManifestStore(embedded.manifest)
    assert settings.manifest.startswith("postgresql://")
    assert on_postgres.published_keys() == local_manifest.published_keys() != []
    on_postgres.close()
    local_manifest.close()
    on_servers = open_generation(settings, summary.generation)
    local = open_generation(embedded, reference.generation)
    try:
        assert on_servers.vectors.count() == local.vectors.count() > 0
        assert on_servers.lexical.count() == local.lexical.count()
        assert on_servers.graph.count() == local.graph.count() > 0
        assert on_servers.crosslingual is not None and local.crosslingual is not None
        assert on_servers.crosslingual.count() == local.crosslingual.count() == (
            local.vectors.count())
        key = "travel-expense@2026"
        assert on_servers.lexical.chunk_ids(key) == local.lexical.chunk_ids(key)
        assert on_servers.graph.chunk_ids(key) == local.graph.chunk_ids(key)
    finally:
        on_servers.close()
        local.close()


def test_search_ranks_like_the_embedded_profile(servers, ingested,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """With the jieba field, Elasticsearch scores the embedded store's terms: the rankings agree.
    The default cjk field ranks differently, and finds at least as much."""
    _, settings = servers
    _, embedded = ingested
    cases = load_cases(REPO / "eval" / "sample_cases.jsonl")
    with hybrid_search_fn(settings) as search:
        cjk_report = evaluate(cases, search, 3)
    monkeypatch.setenv("KBFLOW_ES_ANALYZER", "jieba")
    settings = Settings(data_dir=settings.data_dir)
    with hybrid_search_fn(settings) as search:
        remote = {c.id: hits_of(search(c.question, c.as_of, c.tenant, c.groups, 3))
                  for c in cases}
        remote_report = evaluate(cases, search, 3)
    with hybrid_search_fn(embedded) as search:
        local = {c.id: hits_of(search(c.question, c.as_of, c.tenant, c.groups, 3))
                 for c in cases}
        local_report = evaluate(cases, search, 3)
    same_top3 = [cid for cid in local if [h.chunk_id for h in remote[cid]] ==
                 [h.chunk_id for h in local[cid]]]
    same_top1 = [cid for cid in local if [h.chunk_id for h in remote[cid][:1]] ==
                 [h.chunk_id for h in local[cid][:1]]]
    differing = sorted(set(local) - set(same_top3))
    print(f"top-3 identical for {len(same_top3)}/{len(cases)} cases; top-1 for "
          f"{len(same_top1)}/{len(cases)}; differing: {differing}")
    print(f"Recall@3 servers {remote_report.overall.recall} (cjk {cjk_report.overall.recall}) "
          f"vs embedded {local_report.overall.recall}")
    assert len(same_top1) >= 0.9 * len(cases)
    assert remote_report.overall.recall >= local_report.overall.recall - 0.05
    assert remote_report.overall.forbidden_rate == 0
    assert cjk_report.overall.recall >= local_report.overall.recall
    assert cjk_report.overall.forbidden_rate == 0
