"""Versions of one document recognised from their text, without sidecars: the rules one by one,
then a folder of two yearly versions through the Prefect flow into the stores and search."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import pymupdf
import pytest

from ingest.lifecycle import VersionDates, closing_dates
from ingest.manifest import ManifestStore
from ingest.models import Block, BlockKind, DocumentMeta, ParsedDocument
from ingest.parse.identity import Candidate, body_text, decide, identify
from ingest.parse.identity_text import effective_date, facts, repeal_statements, split_title

OLD_TITLE = "费用报销管理办法（2024版）"
NEW_TITLE = "费用报销管理办法（2025版）"
OLD_BODY = """生效日期：2024年1月1日
第一章 总则
第一条 为规范公司费用报销管理，控制经营成本，制定本办法。
第二章 报销标准
第五条 员工因公乘坐出租车的费用，单次报销上限为一百元。
第六条 报销单据须在费用发生后三十日内提交财务部。
第三章 附则
第十条 本办法自2024年1月1日起施行。"""
NEW_BODY = """生效日期：2025年1月1日
第一章 总则
第一条 为规范公司费用报销管理，控制经营成本，制定本办法。
第二章 报销标准
第五条 员工因公乘坐出租车的费用，单次报销上限为一百五十元，超出部分由个人承担。
第六条 报销单据须在费用发生后六十日内提交财务部。上一级审批人不得代替下一级审批人审批。
第三章 附则
第十条 本办法自2025年1月1日起施行，《费用报销管理办法（2024版）》同时
废止。"""


def candidate(ref: str, title: str, body: str, *, published: bool = False,
              doc_id: str | None = None, version: str = "1") -> Candidate:
    return Candidate(ref=ref, doc_id=doc_id or ref, version_id=version, tenant_id="default",
                     facts=facts(title, body), text=body, file_hash=ref, published=published)


def never_taken(doc_id: str, version_id: str, refs: set[str]) -> bool:
    return False


# ---- rules -------------------------------------------------------------------------------------

def test_version_markers_strip_to_one_title() -> None:
    for title, marker in ((OLD_TITLE, "2024"), ("《费用报销管理办法》2025年修订", "2025"),
                          ("费用报销管理办法 V2.0", "v2.0"), ("费用报销管理办法(修订版)", "修订版"),
                          ("费用报销管理办法（试行）", "试行"), ("费用报销管理办法", None)):
        assert split_title(title) == ("费用报销管理办法", marker), title
    # an annual document is no version of the previous year's
    assert split_title("2025年度工作计划")[0] != split_title("2024年度工作计划")[0]


def test_repeal_statement_links_the_newer_to_the_older_and_closes_it() -> None:
    old = candidate("old.md", OLD_TITLE, OLD_BODY)
    new = candidate("new.pdf", "费用报销实施办法", NEW_BODY)  # renamed: only the repeal links them
    decisions = decide([new, old], never_taken)
    assert decisions["old.md"].doc_id == decisions["new.pdf"].doc_id == "费用报销实施办法"
    assert decisions["old.md"].version_id == "2024"  # its marker
    assert decisions["new.pdf"].version_id == "2025-01-01"  # no marker: its effective date
    link = decisions["new.pdf"].identity.links[0]
    assert link.rule == "repeal" and link.other == "费用报销实施办法@2024"
    assert "《费用报销管理办法(2024版)》同时废止" in link.detail  # joined across the line break
    assert decisions["new.pdf"].identity.inferred
    ends = closing_dates([VersionDates(doc_id=d.doc_id, version_id=d.version_id,
                                       effective_from=d.identity.effective_from, declared_to=None)
                          for d in decisions.values()])
    assert ends == {("费用报销实施办法", "2024"): date(2024, 12, 31),
                    ("费用报销实施办法", "2025-01-01"): None}


def test_same_title_without_repeal_links_by_markers() -> None:
    a = candidate("a.md", "考勤管理规定（2023版）", "第一条 上班时间九点。")
    b = candidate("b.md", "考勤管理规定 2025年修订", "生效日期：2025年3月1日\n第一条 上班九点半。")
    decisions = decide([a, b], never_taken)
    assert decisions["a.md"].doc_id == decisions["b.md"].doc_id == "考勤管理规定"
    assert [link.rule for link in decisions["b.md"].identity.links] == ["same_title"]
    assert (decisions["a.md"].version_id, decisions["b.md"].version_id) == ("2023", "2025")
    # undated versions sort first: an undated 2026版 next to the dated 2025 one would be closed
    # by its predecessor, so markers contradicting that order keep them apart
    late = candidate("c.md", "考勤管理规定（2026版）", "第一条 上班八点。")
    assert not decide([late, b], never_taken)["c.md"].identity.links


def test_same_title_with_nothing_telling_versions_apart_is_two_documents() -> None:
    a = candidate("dept-a.md", "考勤管理规定", "第一条 上班时间九点。")
    b = candidate("dept-b.md", "考勤管理规定", "第一条 实行弹性工作制。")
    decisions = decide([a, b], never_taken)
    assert decisions["dept-a.md"].doc_id == "dept-a.md"
    assert not decisions["dept-a.md"].identity.links


def test_generic_title_with_different_content_is_not_merged() -> None:
    a = candidate("n1.md", "通知（2024年3月1日）", "关于五一劳动节放假安排：五月一日至五日放假。")
    b = candidate("n2.md", "通知（2024年9月1日）", "关于开展年度消防演练：九月十日全员参加。")
    decisions = decide([a, b], never_taken)
    assert (decisions["n1.md"].doc_id, decisions["n2.md"].doc_id) == ("n1.md", "n2.md")
    assert not decisions["n1.md"].identity.inferred
    # the same generic title with nearly the same body is a revision and links, with the score
    body = "关于五一劳动节放假安排：五月一日至五日放假，四月二十八日周日上班，请各部门做好值班。"
    c = candidate("n3.md", "通知（2024年4月2日）", body.replace("做好", "安排好"))
    decisions = decide([replace(a, text=body), c], never_taken)
    link = decisions["n3.md"].identity.links[0]
    assert decisions["n1.md"].doc_id == decisions["n3.md"].doc_id and link.similarity >= 0.4


def test_a_repeal_naming_its_own_title_is_not_a_self_link() -> None:
    text = "8.2 本规范自2025年7月1日起施行，《信息安全管理规范》（V2.0）同时废止。"
    own = candidate("infosec.pdf", "信息安全管理规范（V3.0）", text)
    decisions = decide([own], never_taken)
    assert not decisions["infosec.pdf"].identity.links
    assert own.facts.repeals[0].title == "信息安全管理规范(V2.0)"
    # its title without a marker, naming V2.0: still not itself
    unmarked = candidate("infosec.pdf", "信息安全管理规范", text)
    assert not decide([unmarked], never_taken)["infosec.pdf"].identity.inferred


def test_daitai_as_a_verb_and_references_are_no_repeals() -> None:
    assert repeal_statements("上一级审批人不得代替下一级审批人审批。") == []
    assert repeal_statements("根据《中华人民共和国会计法》，制定本办法。") == []
    assert repeal_statements("依据《档案管理办法》有关规定予以废止的文件，移交档案室。") == []
    found = repeal_statements("本办法代替原《差旅费管理办法》。《A规定》和《B规定》同时废止。")
    assert [s.title for s in found] == ["差旅费管理办法", "A规定", "B规定"]


def test_effective_dates_in_other_forms() -> None:
    assert effective_date("第二十条 本办法自2025年1月1日起施行。")[0] == date(2025, 1, 1)
    found, basis = effective_date("发布日期：2024年3月5日\n第九条 本办法自发布之日起执行。")
    assert found == date(2024, 3, 5) and "自发布之日起执行" in basis and "发布日期" in basis
    assert effective_date("《旧办法》自2020年1月1日起施行。") == (None, None)  # another document


def test_the_repealed_version_must_not_start_later() -> None:
    old = candidate("x.md", "费用报销管理办法（2024版）", "生效日期：2026年1月1日")
    new = candidate("y.md", "报销新规", NEW_BODY)
    assert not decide([old, new], never_taken)["y.md"].identity.links


def test_a_published_version_keeps_its_id_and_the_new_one_joins_it() -> None:
    old = candidate("old.md", OLD_TITLE, OLD_BODY, published=True, doc_id="old", version="1")
    new = candidate("new.pdf", NEW_TITLE, NEW_BODY)
    decision = decide([old, new], never_taken)
    assert set(decision) == {"new.pdf"}
    assert (decision["new.pdf"].doc_id, decision["new.pdf"].version_id) == ("old", "2025")
    assert decision["new.pdf"].identity.links[0].other == "old@1"


def _parsed(path: Path, title: str, body: str) -> ParsedDocument:
    meta = DocumentMeta(doc_id=path.stem, version_id="1", title=title, tenant_id="default",
                        acl=["all-staff"], source_uri=path.as_uri(), source_path=str(path),
                        file_hash=path.name)
    blocks = [Block(kind=BlockKind.PARAGRAPH, text=line) for line in body.splitlines()]
    return ParsedDocument(meta=meta, blocks=blocks, parser_version="t")


def test_a_sidecar_overrides_inference(tmp_path: Path) -> None:
    old, new = tmp_path / "old.md", tmp_path / "new.md"
    (tmp_path / "new.md.meta.yaml").write_text("doc_id: expenses\nversion: '7'\n")
    manifest = ManifestStore(tmp_path / "manifest.db")
    try:
        docs = [_parsed(old, OLD_TITLE, OLD_BODY),
                _parsed(new, NEW_TITLE, NEW_BODY).model_copy(deep=True)]
        docs[1].meta.doc_id, docs[1].meta.version_id = "expenses", "7"
        out = identify(docs, manifest)
        assert (out[1].meta.doc_id, out[1].meta.version_id, out[1].meta.identity) == (
            "expenses", "7", None)
        assert (out[0].meta.doc_id, out[0].meta.version_id) == ("old", "1")
        (tmp_path / "new.md.meta.yaml").unlink()  # without the sidecar they are one document
        out = identify([_parsed(old, OLD_TITLE, OLD_BODY), _parsed(new, NEW_TITLE, NEW_BODY)],
                       manifest)
        assert [(d.meta.doc_id, d.meta.version_id) for d in out] == [
            ("费用报销管理办法", "2024"), ("费用报销管理办法", "2025")]
    finally:
        manifest.close()


def test_the_sample_security_policy_repealing_its_own_v2_stays_alone() -> None:
    from tests_support import SAMPLE_DOCS

    from ingest.parse import parse_document, read_meta

    path = SAMPLE_DOCS / "information_security.pdf"
    meta, data = read_meta(path, SAMPLE_DOCS, "default", ["all-staff"])
    doc = parse_document(meta, data)
    own = Candidate(ref=str(path), doc_id="infosec", version_id="1", tenant_id="default",
                    facts=facts(doc.meta.title, body_text(doc)), text=body_text(doc))
    assert [s.title for s in own.facts.repeals] == ["信息安全管理规范(V2.0)"]  # 8.2, over 2 lines
    assert own.facts.base_title == "信息安全管理规范"
    assert not decide([own], never_taken)[str(path)].identity.links


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_identity_round_trips_through_the_manifest(backend: str, request, tmp_path: Path) -> None:
    location = (str(tmp_path / "manifest.db") if backend == "sqlite"
                else request.getfixturevalue("postgres_database"))
    manifest = ManifestStore(location)
    try:
        manifest.generation = manifest.create_generation("m", 8, "c@1", serving=True).generation
        doc = identify([_parsed(tmp_path / "old.md", OLD_TITLE, OLD_BODY),
                        _parsed(tmp_path / "new.md", NEW_TITLE, NEW_BODY)], manifest)[1]
        manifest.begin(doc.meta, "run1", "c@1", "m")
        record = manifest.get("费用报销管理办法", "2025")
        assert record.identity == doc.meta.identity and record.identity.links[0].rule == "repeal"
        assert record.meta().identity == doc.meta.identity  # kept when a closing rewrites it
        known = manifest.inferred_version(str(tmp_path / "new.md"), doc.meta.file_hash)
        assert (known.doc_id, known.version_id) == ("费用报销管理办法", "2025")
        assert manifest.inferred_version(str(tmp_path / "new.md"), "changed") is None
    finally:
        manifest.close()


# ---- end to end --------------------------------------------------------------------------------

def _write_pdf(path: Path, title: str, body: str) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), title, fontname="china-s", fontsize=18)
    y = 120
    for line in body.splitlines():
        size = 13 if line.startswith("第") and "章" in line[:4] else 11
        for start in range(0, len(line), 38):
            page.insert_text((72, y), line[start:start + 38], fontname="china-s", fontsize=size)
            y += 20
    doc.save(path)
    doc.close()


def _write_versions(docs: Path, *, newer: bool = True) -> None:
    docs.mkdir(exist_ok=True)
    (docs / f"《{OLD_TITLE}》.md").write_text(
        f"# {OLD_TITLE}\n\n" + OLD_BODY.replace("\n", "\n\n"), encoding="utf-8")
    if newer:
        _write_pdf(docs / f"《{NEW_TITLE}》.pdf", NEW_TITLE, NEW_BODY)


@pytest.fixture(scope="module")
def versions_ingested(prefect_api, tmp_path_factory: pytest.TempPathFactory):
    from flows.ingest import ingest_flow
    from ingest.config import Settings

    root = tmp_path_factory.mktemp("versions")
    docs = root / "docs"
    _write_versions(docs)
    for name, text in (("通知-a", "关于五一劳动节放假安排：五月一日至五日放假。"),
                       ("通知-b", "关于开展年度消防演练：九月十日全员参加，地点一号楼。")):
        (docs / f"{name}.md").write_text(f"# 通知（2024年）\n\n{text}\n", encoding="utf-8")
    settings = Settings(data_dir=root / "data")
    summary = ingest_flow(str(docs), str(settings.data_dir))
    return summary, settings


def test_two_yearly_versions_become_one_document(versions_ingested) -> None:
    summary, settings = versions_ingested
    assert summary.failures == []
    manifest = ManifestStore(settings.manifest)
    records = {r.version_key: r for r in manifest.documents()}
    manifest.close()
    assert set(records) == {"费用报销管理办法@2024", "费用报销管理办法@2025",
                            "通知-a@1", "通知-b@1"}
    old, new = records["费用报销管理办法@2024"], records["费用报销管理办法@2025"]
    assert (old.effective_from, old.effective_to) == (date(2024, 1, 1), date(2024, 12, 31))
    assert (new.effective_from, new.effective_to) == (date(2025, 1, 1), None)
    link = new.identity.links[0]
    assert (link.rule, link.other) == ("repeal", "费用报销管理办法@2024")
    assert "同时废止" in link.detail and link.other_path.endswith(".md")
    assert new.identity.effective_basis.startswith("生效日期")
    assert old.identity.links[0].other == "费用报销管理办法@2025"
    assert not records["通知-a@1"].identity.inferred  # a generic title alone links nothing


def test_rerun_recognises_grouped_files_without_parsing_them(versions_ingested) -> None:
    from flows.ingest import ingest_flow

    summary, settings = versions_ingested
    again = ingest_flow(summary.source, str(settings.data_dir))
    assert again.skipped_unchanged == summary.files == 4
    assert again.embedded == 0 and again.written == 0
    assert again.documents == summary.documents


def test_a_newer_version_added_later_joins_the_published_one(prefect_api, tmp_path: Path,
                                                            monkeypatch) -> None:
    from flows.ingest import ingest_flow
    from ingest.config import Settings

    docs, settings = tmp_path / "docs", Settings(data_dir=tmp_path / "data")
    _write_versions(docs, newer=False)
    first = ingest_flow(str(docs), str(settings.data_dir))
    _write_versions(docs)
    second = ingest_flow(str(docs), str(settings.data_dir))
    assert first.failures == second.failures == []
    manifest = ManifestStore(settings.manifest)
    records = {r.version_key: r for r in manifest.documents()}
    manifest.close()
    old_id = "费用报销管理办法-2024版"  # the path id it was first published under, kept
    assert set(records) == {f"{old_id}@1", f"{old_id}@2025"}
    assert records[f"{old_id}@1"].effective_to == date(2024, 12, 31)
    assert records[f"{old_id}@2025"].identity.links[0].rule == "repeal"
    # another chunker parses both files again: both keep the ids the stores hold
    monkeypatch.setenv("KBFLOW_CHUNK_MIN_TOKENS", "7")
    third = ingest_flow(str(docs), str(settings.data_dir))
    assert third.failures == [] and third.skipped_unchanged == 0 and third.written == 2
    manifest = ManifestStore(settings.manifest)
    assert {r.version_key for r in manifest.documents()} == set(records)
    manifest.close()


def test_versions_recorded_by_an_earlier_run_keep_their_ids() -> None:
    old = candidate("old.md", OLD_TITLE, OLD_BODY, doc_id="first-id", version="1")
    new = candidate("new.pdf", NEW_TITLE, NEW_BODY, doc_id="first-id", version="2025")
    old.recorded = new.recorded = True
    decisions = decide([old, new], never_taken)
    assert [(d.doc_id, d.version_id) for d in decisions.values()] == [
        ("first-id", "1"), ("first-id", "2025")]
    assert decisions["new.pdf"].identity.links[0].other == "first-id@1"


def test_as_of_returns_each_periods_clause_first(versions_ingested) -> None:
    from ingest.search import search_index

    _, settings = versions_ingested
    query = "出租车费用单次报销上限是多少"
    for as_of, wanted, amount in ((date(2024, 6, 1), "2024", "上限为一百元"),
                                  (date(2025, 6, 1), "2025", "上限为一百五十元")):
        results = search_index(settings, query, tenant_id="default", groups=["all-staff"],
                               as_of=as_of, k=5).results
        first = results[0]
        assert (first.doc_id, first.version_id, first.clause_no) == (
            "费用报销管理办法", wanted, "第五条"), [(r.version_id, r.clause_no) for r in results]
        assert amount in first.text
        assert all(r.version_id == wanted for r in results if r.doc_id == "费用报销管理办法")


def test_status_and_trace_show_the_evidence(versions_ingested, capsys) -> None:
    from flows.cli import main

    _, settings = versions_ingested
    data = ["--data-dir", str(settings.data_dir)]
    assert main([*data, "status"]) == 0
    shown = capsys.readouterr().out.replace("\n", "")
    assert "repeal" in shown and "同时废止" in shown and "费用报销管理办法@2024" in shown
    assert main([*data, "status", "--json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    new = next(d for d in exported["documents"] if d["version_id"] == "2025")
    assert new["identity"]["links"][0]["rule"] == "repeal"
    manifest = ManifestStore(settings.manifest)
    chunk = next(c for c in manifest.version_chunks("费用报销管理办法", "2025")
                 if c.clause_no == "第五条")
    manifest.close()
    assert main([*data, "trace", chunk.chunk_id]) == 0
    traced = capsys.readouterr().out.replace("\n", "")
    assert "repeal" in traced and "费用报销管理办法@2024" in traced


def test_an_undated_correction_added_later_takes_the_notice_out_of_force(
        prefect_api, tmp_path: Path) -> None:
    """Neither notice states a date: the correction's 原通知同时作废 alone must take the notice
    (published by an earlier run) out of force, or both answer and the wrong amount can rank
    first."""
    from flows.ingest import ingest_flow
    from ingest.config import Settings
    from ingest.search import search_index

    title = "关于发放2026年夏季高温津贴的通知"
    docs, settings = tmp_path / "docs", Settings(data_dir=tmp_path / "data")
    docs.mkdir()
    (docs / "heat.md").write_text(f"# {title}\n\n高温作业岗位津贴标准为每人每月300元。\n",
                                  encoding="utf-8")
    assert ingest_flow(str(docs), str(settings.data_dir)).failures == []
    (docs / "heat-fix.md").write_text(
        f"# {title}（更正）\n\n我部于2026年5月20日发布的《{title}》中，津贴标准有误。"
        "经核对，现重新发布如下，原通知同时作废。\n\n高温作业岗位津贴标准为每人每月360元。\n",
        encoding="utf-8")
    assert ingest_flow(str(docs), str(settings.data_dir)).failures == []
    manifest = ManifestStore(settings.manifest)
    records = {r.version_id: r for r in manifest.documents()}
    manifest.close()
    assert set(records) == {"1", "2026更正"}  # the notice keeps the id it was published under
    assert records["1"].effective_to == date.min  # superseded, in force on no day
    assert records["2026更正"].effective_to is None
    results = search_index(settings, "高温津贴每月多少钱", tenant_id="default",
                           groups=["all-staff"], as_of=date(2026, 7, 1), k=5).results
    assert results and all(r.version_id == "2026更正" for r in results)
    assert "每人每月360元" in results[0].text
