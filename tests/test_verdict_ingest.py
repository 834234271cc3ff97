"""The search verdict over real documents (issue 25): eval/evidence_docs (a group, two
subsidiaries, an FAQ, a notice and its corrected re-issue, written by scripts/
make_evidence_docs.py in Word, PDF, HTML and Excel) ingested on the embedded profile and on the
servers profile (Milvus, Elasticsearch, Neo4j, manifest in PostgreSQL)."""

from __future__ import annotations

import logging
import shutil
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from ingest.config import Settings
from ingest.lifecycle import open_generation
from ingest.manifest import ManifestStore
from ingest.parse import discover
from ingest.pipeline import InProcess, RunContext, run_pipeline
from ingest.search import Searcher, SearchResponse

EVAL = Path(__file__).resolve().parents[1] / "eval"
AS_OF = date(2026, 4, 1)


@pytest.fixture(params=["embedded", "servers"])
def evidence(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    """The evidence documents ingested once into the parametrized profile."""
    docs = shutil.copytree(EVAL / "evidence_docs", tmp_path / "docs")
    options: dict[str, object] = {"data_dir": tmp_path / "data",
                                  "tenant_parents": EVAL / "evidence_tenants.yaml"}
    if request.param == "servers":
        options |= {"profile": "servers", "manifest_url": request.getfixturevalue(
            "postgres_database"), "namespace": f"t{uuid.uuid4().hex[:10]}"}
    settings = Settings(**options)  # type: ignore[arg-type]
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id=uuid.uuid4().hex,
                         steps=InProcess(), log=logging.getLogger(__name__))
        summary = run_pipeline(ctx, str(docs), [(path, docs) for path in discover(docs)])
    assert summary.failures == [] and summary.written == 6
    yield settings
    if request.param == "servers":
        with ManifestStore(settings.manifest) as manifest:
            generation = manifest.generation
        stores = open_generation(settings, generation or "")
        stores.drop()
        stores.close()


def ask(searcher: Searcher, question: str, tenant: str = "default") -> SearchResponse:
    return searcher.search(question, tenant_id=tenant, groups=["all-staff"], as_of=AS_OF)


def test_the_verdict_names_conflicts_their_kind_and_who_goes_first(evidence: Settings) -> None:
    with Searcher(evidence) as searcher:
        # A subsidiary's lower limit and the group's: its own rule first, by the declared rule.
        lodging = ask(searcher, "去深圳出差住酒店一晚最多报多少钱？", "hc-precision")
        assert lodging.verdict == "conflict" and not lodging.abstained
        hierarchy = lodging.conflicts[0]
        assert (hierarchy.kind, hierarchy.a.value, hierarchy.b.value) == (
            "hierarchy", "450元", "600元")
        assert "narrower" in hierarchy.rule
        assert lodging.results[0].tenant_id == "hc-precision"
        assert not any("520元" in r.text for r in lodging.results)  # the sibling's, never
        # The group's own reader sees no subsidiary rule, so no conflict over lodging.
        group = ask(searcher, "去深圳出差住酒店一晚最多报多少钱？")
        assert group.verdict == "sufficient" and "600元" in group.results[0].text
        # The FAQ says 80, the policy 100: both shown, the policy first.
        meal = ask(searcher, "出差吃饭每天补贴是多少")
        definition = meal.conflicts[0]
        assert (meal.verdict, definition.kind) == ("conflict", "definition")
        assert (definition.a.value, definition.b.value) == ("100元", "80元")
        shown = {r.chunk_id: r for r in meal.results}
        assert {definition.a.chunk_id, definition.b.chunk_id} <= set(shown)
        assert shown[definition.a.chunk_id].authority == "policy"


def test_a_corrected_reissue_replaces_its_notice_and_the_verdict_can_say_nothing(
        evidence: Settings) -> None:
    with Searcher(evidence) as searcher:
        meal = ask(searcher, "晚上加班到十点以后餐费补贴多少钱")
        assert meal.verdict == "sufficient" and "每人每次35元" in meal.results[0].text
        assert not any("每人每次30元" in r.text for r in meal.results)
        earlier = searcher.search("晚上加班到十点以后餐费补贴多少钱", tenant_id="default",
                                  groups=["all-staff"], as_of=date(2026, 2, 28))
        assert not any("35元" in r.text for r in earlier.results)
        settling = ask(searcher, "外派到海外的员工安家费怎么发")
        assert settling.verdict == "no_answer" and settling.abstained
        assert settling.conflicts == [] and "cosine" in settling.reason
