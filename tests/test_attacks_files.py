"""Issue 28, the file and tenant findings: hostile files, links swapped in after the checks,
tenants sharing doc ids, files taking over other documents, dates that overflow. Each test
names the finding it reproduces; the runs use the real pipeline and the embedded stores."""

from __future__ import annotations

import logging
import os
import threading
import time
import zipfile
from datetime import date
from pathlib import Path

import docx
import openpyxl
import pptx
import pytest

from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.parse import ParseError, RefusedFile, parse_document, read_meta, walk
from ingest.pipeline import IngestSummary, InProcess, RunContext, run_pipeline
from ingest.search import Searcher

LOG = logging.getLogger("test")
POLICY = ("# 休假管理制度\n\n第一条 为规范员工休假管理，制定本制度。\n\n"
          "第二条 员工年休假为每年十天，须提前三天提出申请。\n")
SECRET_TEXT = "# 机密\n\n第一条 数据库口令是 ZEBRA-42，不得外传。\n"


@pytest.fixture
def site(tmp_path: Path) -> dict[str, Path]:
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    docs.mkdir()
    outside.mkdir()
    (docs / "leave.md").write_text(POLICY, encoding="utf-8")
    (outside / "secret.md").write_text(SECRET_TEXT, encoding="utf-8")
    return {"docs": docs.resolve(), "outside": outside.resolve(), "data": tmp_path / "data"}


def run(settings: Settings, folder: Path, files: list[Path] | None = None) -> IngestSummary:
    """One run of the real pipeline over `files` (default: what the folder walk finds)."""
    found = walk(folder)[0] if files is None else files
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id=f"r{time.time_ns()}",
                         steps=InProcess(), log=LOG)
        return run_pipeline(ctx, str(folder), [(p, folder) for p in found])


def stored_anywhere(data: Path, needle: str) -> list[str]:
    """Every file of the data directory that holds `needle` (any store, any generation)."""
    raw = needle.encode()
    return [str(p) for p in data.rglob("*") if p.is_file() and raw in p.read_bytes()]


def answer(settings: Settings, query: str, tenant: str = "default",
           groups: tuple[str, ...] = ("all-staff",)) -> list[str]:
    with Searcher(settings) as searcher:
        found = searcher.search(query, tenant_id=tenant, groups=list(groups),
                                as_of=date.today(), k=5)
    return [r.text for r in found.results]


# ---- H1: a file swapped for a link between the check and the read ----------------------------

def test_h1_a_file_swapped_for_a_link_after_the_walk_is_not_read(site: dict[str, Path]) -> None:
    docs, settings = site["docs"], Settings(data_dir=site["data"])
    (docs / "notes.md").write_text("# 备忘\n\n第一条 普通内容。\n", encoding="utf-8")
    (docs / "team").mkdir()
    (docs / "team" / "secret.md").write_text("# 团队\n\n第一条 内容。\n", encoding="utf-8")
    walked = walk(docs)[0]
    (docs / "notes.md").unlink()  # after the walk: the file becomes a link out of the root
    (docs / "notes.md").symlink_to(site["outside"] / "secret.md")
    (docs / "team").rename(docs / "team-old")  # and a folder becomes a link out of the root
    (docs / "team").symlink_to(site["outside"], target_is_directory=True)
    summary = run(settings, docs, walked)
    reasons = {Path(f.path or "").name: f.reason for f in summary.failures}
    assert "symbolic link" in reasons["notes.md"]
    assert "outside" in reasons["secret.md"]
    assert summary.written == 1 and stored_anywhere(site["data"], "ZEBRA") == []


# ---- H2: rebuild and undelete read whatever the recorded path is now -------------------------

def test_h2_rebuild_and_undelete_do_not_follow_a_swapped_in_link(
        prefect_api, site: dict[str, Path]) -> None:
    from flows.cli import main
    from flows.ingest import ingest_flow, undelete_flow
    from flows.lifecycle import rebuild_flow

    docs, data = site["docs"], str(site["data"])
    (docs / "other.md").write_text("# 其他制度\n\n第一条 其他内容。\n", encoding="utf-8")
    assert ingest_flow(str(docs), data).written == 2
    (docs / "leave.md").unlink()
    (docs / "leave.md").symlink_to(site["outside"] / "secret.md")
    rebuilt = rebuild_flow(data)
    assert [("symbolic link" in f.reason, f.doc_id) for f in rebuilt.summary.failures] == [
        (True, "leave")]
    assert main(["--data-dir", data, "delete", "other"]) == 0
    (docs / "other.md").unlink()
    (docs / "other.md").symlink_to(site["outside"] / "secret.md")
    lifted = undelete_flow("other", data)
    assert [("symbolic link" in f.reason, f.doc_id) for f in lifted.failures] == [
        (True, "other")]
    assert stored_anywhere(site["data"], "ZEBRA") == []


# ---- H3: a FIFO or a device in a document folder ----------------------------------------------

def test_h3_a_fifo_is_refused_and_the_run_finishes(site: dict[str, Path]) -> None:
    docs, settings = site["docs"], Settings(data_dir=site["data"])
    os.mkfifo(docs / "pipe.md")
    found, refused = walk(docs)
    assert [(p.name, "not a regular file" in why) for p, why in refused] == [("pipe.md", True)]
    outcome: list[IngestSummary] = []
    worker = threading.Thread(  # named directly, as a webhook event would: read, not walked
        target=lambda: outcome.append(run(settings, docs, [*found, docs / "pipe.md"])),
        daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "the run blocked on the FIFO"
    [failure] = outcome[0].failures
    assert "a FIFO" in failure.reason and outcome[0].written == 1


def test_h3_a_character_device_is_never_opened() -> None:
    with pytest.raises(RefusedFile, match="a character device"):
        read_meta(Path("/dev/zero"), Path("/dev"), "default", ["all-staff"])


# ---- H4: zip bombs, and the parse worker's memory limit ---------------------------------------

def office_file(path: Path) -> Path:
    """A small real file of the format `path` names, made by the format's own library."""
    if path.suffix == ".docx":
        document = docx.Document()
        document.add_paragraph("第一条 正文。")
        document.save(path)
    elif path.suffix == ".pptx":
        deck = pptx.Presentation()
        deck.slides.add_slide(deck.slide_layouts[0]).shapes.title.text = "第一条 正文。"
        deck.save(path)
    else:
        book = openpyxl.Workbook()
        book.active.append(["科目", "金额"])
        book.active.append(["差旅", "100"])
        book.save(path)
    return path


@pytest.mark.parametrize("suffix", [".docx", ".pptx", ".xlsx"])
def test_h4_an_office_zip_bomb_is_refused_before_it_is_unpacked(tmp_path: Path,
                                                                suffix: str) -> None:
    plain = office_file(tmp_path / f"plain{suffix}")
    bomb_path = tmp_path / f"bomb{suffix}"
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(
            bomb_path, "w", zipfile.ZIP_DEFLATED) as bomb:
        for item in source.infolist():
            bomb.writestr(item, source.read(item))
        with bomb.open("docProps/filler.xml", "w", force_zip64=True) as filler:
            for _ in range(400):
                filler.write(b"<t>" + b" " * (1 << 20) + b"</t>")
    assert bomb_path.stat().st_size < 3 * 1024 * 1024
    meta, data = read_meta(bomb_path, tmp_path, "default", ["all-staff"])
    started = time.perf_counter()
    with pytest.raises(ParseError, match="zip bomb"):
        parse_document(meta, data)
    assert time.perf_counter() - started < 5


LAUGHS = '<!DOCTYPE x [<!ENTITY a0 "lol">' + "".join(
    f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10)) + "]>"


@pytest.mark.parametrize(("suffix", "part"), [(".xlsx", "xl/worksheets/sheet1.xml"),
                                              (".pptx", "ppt/slides/slide1.xml"),
                                              (".docx", "word/document.xml")])
def test_an_entity_expansion_in_any_office_part_fails_alone_at_once(
        tmp_path: Path, suffix: str, part: str) -> None:
    """openpyxl's XML parser expands entities: a DTD in any part is refused before a parser
    sees it."""
    plain = office_file(tmp_path / f"plain{suffix}")
    laughs = tmp_path / f"laughs{suffix}"
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(laughs, "w") as target:
        for item in source.infolist():
            content = source.read(item)
            if item.filename == part:  # the DTD after the XML declaration, if there is one
                cut = content.index(b"?>") + 2 if content.startswith(b"<?xml") else 0
                content = (content[:cut] + LAUGHS.encode()
                           + content[cut:].replace(b"</", b"&a9;</", 1))
            target.writestr(item, content)
    meta, data = read_meta(laughs, tmp_path, "default", ["all-staff"])
    started = time.perf_counter()
    with pytest.raises(ParseError, match=f"{part} declares a DTD"):
        parse_document(meta, data)
    assert time.perf_counter() - started < 5


def test_h4_a_parse_worker_that_needs_more_memory_fails_with_a_reason(tmp_path: Path) -> None:
    from ingest.parse import ParseWorker

    path = tmp_path / "lines.txt"
    path.write_text("第一条 内容\n" * 3_000_000, encoding="utf-8")  # millions of blocks
    meta, data = read_meta(path, tmp_path, "default", ["all-staff"])
    with ParseWorker(120, memory_mb=700) as worker, pytest.raises(
            ParseError, match="parse_memory_mb"):
        worker.parse(meta, data)
    small = tmp_path / "small.md"
    small.write_text(POLICY, encoding="utf-8")
    with ParseWorker(120, memory_mb=700) as worker:  # the limit leaves normal documents be
        assert worker.parse(*read_meta(small, tmp_path, "default", ["all-staff"])).blocks


# ---- H6 and M10: doc ids per tenant; who may add a version to a document ----------------------

def test_h6_the_same_doc_id_in_two_tenants_is_two_documents(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    roots = {}
    for tenant, days, start in (("a", "十天", "2025-01-01"), ("b", "二十天", "2026-01-01")):
        root = tmp_path / tenant
        root.mkdir()
        (root / "policy.md").write_text(POLICY.replace("十天", days), encoding="utf-8")
        (root / "_meta.yaml").write_text(f"tenant_id: {tenant}\n", encoding="utf-8")
        (root / "policy.md.meta.yaml").write_text(
            f"acl: [staff]\neffective_from: {start}\n", encoding="utf-8")
        roots[tenant] = root
    assert run(settings, roots["a"]).written == 1
    assert run(settings, roots["b"]).written == 1  # same default doc id, later date
    with ManifestStore(settings.manifest) as manifest:
        assert {(r.doc_id, r.state, r.effective_to) for r in manifest.documents()} == {
            ("a:policy", "READY", None), ("b:policy", "READY", None)}
    a, b = answer(settings, "年休假", "a", ("staff",)), answer(settings, "年休假", "b", ("staff",))
    assert any("十天" in t and "二十天" not in t for t in a)
    assert any("二十天" in t for t in b)


def test_m10_a_file_elsewhere_cannot_take_over_a_document(site: dict[str, Path]) -> None:
    docs, settings = site["docs"], Settings(data_dir=site["data"])
    (docs / "leave.md.meta.yaml").write_text("doc_id: leave-policy\n", encoding="utf-8")
    (docs / "hr").mkdir()
    assert run(settings, docs).written == 1
    fake = docs / "hr" / "fake.md"
    fake.write_text(POLICY.replace("十天", "三十天"), encoding="utf-8")
    (docs / "hr" / "fake.md.meta.yaml").write_text(
        "doc_id: leave-policy\nversion: '9'\neffective_from: 2026-06-01\n", encoding="utf-8")
    notice = docs / "hr" / "notice.md"
    notice.write_text("# 关于调整休假的通知\n\n自2026年6月1日起施行，《休假管理制度》同时废止。\n"
                      "第一条 年休假改为三十天。\n", encoding="utf-8")
    summary = run(settings, docs)
    [refused] = [f for f in summary.failures if f.path and f.path.endswith("fake.md")]
    assert "belongs to the files in" in refused.reason
    with ManifestStore(settings.manifest) as manifest:
        leave = manifest.get("leave-policy", "1")
        assert leave is not None and leave.state == "READY" and leave.effective_to is None
        assert {r.doc_id for r in manifest.documents()} == {"leave-policy", "hr-notice"}


def test_m10_a_file_that_joins_another_document_retires_its_old_one(
        site: dict[str, Path]) -> None:
    docs, settings = site["docs"], Settings(data_dir=site["data"])
    dated = POLICY.replace("# 休假管理制度", "# 休假管理制度\n\n生效日期：2024年1月1日")
    (docs / "leave.md").write_text(dated, encoding="utf-8")
    notice = docs / "notice.md"
    notice.write_text("# 休假调整通知\n\n第一条 年休假改为十五天，旧数字作废。\n", encoding="utf-8")
    assert run(settings, docs).written == 2
    notice.write_text("# 休假调整通知\n\n自2026年1月1日起施行，《休假管理制度》同时废止。\n"
                      "第一条 年休假改为十五天。\n", encoding="utf-8")
    summary = run(settings, docs)
    assert summary.tombstoned == ["notice@1"]
    with ManifestStore(settings.manifest) as manifest:
        states = {r.version_key: r.state for r in manifest.documents()}
    assert states["notice@1"] == "TOMBSTONED"
    assert any(key.startswith("leave@") and key != "leave@1" and s == "READY"
               for key, s in states.items())


# ---- M11, M12: dates that overflow; sizes checked before reading -----------------------------

def test_m11_a_year_one_date_fails_alone(site: dict[str, Path]) -> None:
    from ingest.lifecycle import VersionDates, closing_dates

    docs, settings = site["docs"], Settings(data_dir=site["data"])
    (docs / "old.md").write_text(POLICY, encoding="utf-8")
    (docs / "old.md.meta.yaml").write_text("doc_id: leave\nversion: '0'\n"
                                           "effective_from: 0001-01-01\n", encoding="utf-8")
    summary = run(settings, docs)
    assert summary.written == 1
    assert "outside 1900-01-01" in summary.failures[0].reason
    ends = closing_dates([VersionDates(doc_id="d", version_id="1", effective_from=None,
                                       declared_to=None),
                          VersionDates(doc_id="d", version_id="2", effective_from=date.min,
                                       declared_to=None)])  # recorded before dates were checked
    assert ends[("d", "2")] is None


def test_m12_a_huge_sparse_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as f:
        f.truncate(8 * 1024 ** 3)
    started = time.perf_counter()
    with pytest.raises(RefusedFile, match="over the 100 MB limit"):
        read_meta(huge, tmp_path, "default", ["all-staff"], max_file_mb=100)
    assert time.perf_counter() - started < 2


# ---- the low findings -------------------------------------------------------------------------

def test_low_hard_links_and_hidden_files_named_directly_are_refused(site: dict[str, Path]) -> None:
    docs = site["docs"]
    os.link(site["outside"] / "secret.md", docs / "linked.md")
    with pytest.raises(RefusedFile, match="hard links"):
        read_meta(docs / "linked.md", docs, "default", ["all-staff"])
    (docs / ".git").mkdir()
    (docs / ".git" / "notes.md").write_text(SECRET_TEXT, encoding="utf-8")
    with pytest.raises(RefusedFile, match="hidden"):  # a webhook's folder is the file's own
        read_meta(docs / ".git" / "notes.md", docs / ".git", "default", ["all-staff"],
                  document_roots=[docs])


@pytest.mark.parametrize(("sidecar", "expected"), [
    ("version: 1.10\n", "1.10"), ("version: 010\n", "010"), ("version: 2\n", "2")])
def test_low_versions_keep_their_spelling(tmp_path: Path, sidecar: str, expected: str) -> None:
    (tmp_path / "a.md").write_text(POLICY, encoding="utf-8")
    (tmp_path / "a.md.meta.yaml").write_text(sidecar, encoding="utf-8")
    assert read_meta(tmp_path / "a.md", tmp_path, "default", ["all"])[0].version_id == expected


@pytest.mark.parametrize(("sidecar", "reason"), [
    ('doc_id: "leave\\u202epolicy"\n', "invisible or direction-changing"),
    ('tenant_id: "acme\\u200b"\n', "invisible or direction-changing"),
    ('acl: ["hr\\u200d"]\n', "invisible"),
    ("doc_id: 'a:b'\n", "must not contain ':'"),
    ("effective_to: 9999-12-31\n", "outside 1900-01-01"),
])
def test_low_ids_and_uris_that_deceive_are_refused(tmp_path: Path, sidecar: str,
                                                   reason: str) -> None:
    (tmp_path / "a.md").write_text(POLICY, encoding="utf-8")
    (tmp_path / "a.md.meta.yaml").write_text(sidecar, encoding="utf-8")
    with pytest.raises(ValueError, match=reason):
        read_meta(tmp_path / "a.md", tmp_path, "default", ["all"])


def test_low_a_sidecar_that_is_a_link_is_refused_without_showing_its_target(
        site: dict[str, Path]) -> None:
    docs = site["docs"]
    (docs / "leave.md.meta.yaml").symlink_to(site["outside"] / "secret.md")
    with pytest.raises(RefusedFile) as caught:
        read_meta(docs / "leave.md", docs, "default", ["all"])
    assert "symbolic link" in str(caught.value) and "ZEBRA" not in str(caught.value)
