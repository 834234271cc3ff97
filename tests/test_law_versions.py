"""Real laws in all their versions, without sidecars (issue #24, item 4): four LawRefBook laws,
two versions each (tests/fixtures/law_versions, see its README), ingested through the Prefect flow.
Each law must become one document whose versions are dated by the amendment lines that open it,
each closed the day before the next one starts, and `as_of` must answer with the version in
force: 会计法's penalty article was rewritten (and renumbered) in 2024."""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from ingest.manifest import ManifestStore

FIXTURE = Path(__file__).parent / "fixtures" / "law_versions"
LAWS = {  # doc id → version dates, oldest first
    "中华人民共和国会计法": [date(2017, 11, 4), date(2024, 6, 28)],
    "中华人民共和国国务院组织法": [date(1982, 12, 10), date(2024, 3, 11)],
    "废旧金属收购业治安管理办法": [date(1994, 1, 25), date(2023, 7, 20)],
    # a judicial interpretation: its opening names the day it took effect (…施行)
    "最高人民法院关于设立国际商事法庭若干问题的规定": [date(2018, 7, 1), date(2024, 1, 1)],
}


@pytest.fixture(scope="module")
def laws_ingested(prefect_api, tmp_path_factory: pytest.TempPathFactory):
    from flows.ingest import ingest_flow
    from ingest.config import Settings

    root = tmp_path_factory.mktemp("laws")
    docs = root / "laws"
    shutil.copytree(FIXTURE, docs, ignore=shutil.ignore_patterns("README.md"))
    settings = Settings(data_dir=root / "data")
    summary = ingest_flow(str(docs), str(settings.data_dir))
    return summary, settings


def test_each_law_is_one_document_dated_by_its_amendments(laws_ingested) -> None:
    summary, settings = laws_ingested
    assert summary.failures == []
    manifest = ManifestStore(settings.manifest)
    records = manifest.documents()
    manifest.close()
    by_doc: dict[str, list] = {}
    for r in records:
        by_doc.setdefault(r.doc_id, []).append(r)
    assert set(by_doc) == set(LAWS)
    for doc_id, dates in LAWS.items():
        versions = sorted(by_doc[doc_id], key=lambda r: r.effective_from)
        assert [r.effective_from for r in versions] == dates, doc_id
        assert [r.version_id for r in versions] == [d.isoformat() for d in dates]
        assert [r.effective_to for r in versions] == [dates[1] - timedelta(days=1), None]
        newer = versions[1].identity
        assert newer.inferred and newer.links[0].rule == "same_title"
        assert newer.links[0].other == f"{doc_id}@{dates[0].isoformat()}"
        # the date's evidence is the amendment (or 施行) line, not 本法自…起施行 of 2000
        assert newer.effective_basis.startswith(f"{dates[1].year}年")


@pytest.mark.parametrize(("as_of", "version", "present", "absent"), [
    (date(2020, 1, 1), "2017-11-04", "三千元以上五万元以下", "二十万元以下"),
    (date(2025, 1, 1), "2024-06-28", "二十万元以下", "三千元以上五万元以下"),
])
def test_as_of_answers_with_the_article_in_force(laws_ingested, as_of: date, version: str,
                                                 present: str, absent: str) -> None:
    from ingest.search import search_index

    _, settings = laws_ingested
    query = "违反会计法规定，财政部门责令限期改正，可以对单位并处多少罚款"
    results = search_index(settings, query, tenant_id="default", groups=["all-staff"],
                           as_of=as_of, k=10).results
    accounting = [r for r in results if r.doc_id == "中华人民共和国会计法"]
    assert accounting and all(r.version_id == version for r in accounting), [
        (r.doc_id, r.version_id, r.clause_no) for r in results]
    text = "".join(r.text for r in accounting)
    assert present in text and absent not in text


def test_status_shows_each_links_evidence(laws_ingested, capsys) -> None:
    from flows.cli import main

    _, settings = laws_ingested
    assert main(["--data-dir", str(settings.data_dir), "status"]) == 0
    shown = capsys.readouterr().out.replace("\n", "")
    assert "same_title: older version 中华人民共和国会计法@2017-11-04" in shown
    assert "第三次修正" in shown  # the amendment line that dates the newer version
