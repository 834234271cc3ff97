"""Issue 39, document identity and scope by place: where a file lives decides its tenant, ACL
and doc id, whatever folder a run was given; two files with one stem are two documents; a
sidecar's unusual but harmless fields never fail a document. Each test names the item it
reproduces; the runs use the real pipeline and the embedded stores."""

from __future__ import annotations

import json
import logging
import time
from datetime import date
from pathlib import Path

import pytest

from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.parse import walk
from ingest.pipeline import IngestSummary, InProcess, RunContext, run_pipeline
from ingest.search import Searcher

LOG = logging.getLogger("test")
POLICY = ("# 休假管理制度\n\n第一条 为规范员工休假管理，制定本制度。\n\n"
          "第二条 员工年休假为每年十天，须提前三天提出申请。\n")
BOARD = ("# 董事会薪酬决议\n\n第一条 本决议仅限董事会成员阅读。\n\n"
         "第二条 高管奖金池为人民币八百万元，口令 ZEBRA-42。\n")


def run(settings: Settings, folder: Path) -> IngestSummary:
    """One run of the real pipeline over what the folder walk finds, as `kbflow ingest` does
    (every file with the folder it was given)."""
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id=f"r{time.time_ns()}",
                         steps=InProcess(), log=LOG)
        return run_pipeline(ctx, str(folder), [(p, folder) for p in walk(folder)[0]])


def answer(settings: Settings, query: str, tenant: str = "default",
           groups: tuple[str, ...] = ("all-staff",), as_of: date | None = None) -> list[str]:
    with Searcher(settings) as searcher:
        found = searcher.search(query, tenant_id=tenant, groups=list(groups),
                                as_of=as_of or date.today(), k=5)
    return [r.text for r in found.results]


def records(settings: Settings) -> dict[str, tuple[str, str, list[str]]]:
    """version key → (state, tenant, acl)."""
    with ManifestStore(settings.manifest) as manifest:
        return {r.version_key: (r.state, r.tenant_id, r.acl)
                for r in manifest.documents()}


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A company folder: a group policy, and a subsidiary whose folder metadata restricts it."""
    root = tmp_path / "docs"
    (root / "sub-a" / "east").mkdir(parents=True)
    (root / "leave.md").write_text(POLICY, encoding="utf-8")
    (root / "sub-a" / "_meta.yaml").write_text("tenant_id: sub-a\nacl: [sub-a-board]\n",
                                               encoding="utf-8")
    (root / "sub-a" / "east" / "board.md").write_text(BOARD, encoding="utf-8")
    return root.resolve()


# ---- 1. HIGH: the file's place decides tenant and ACL ---------------------------------------

def test_1_a_subfolder_run_keeps_the_folder_metadata_above_it(tmp_path: Path,
                                                              docs: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")  # no KBFLOW_DOCUMENT_ROOTS
    assert run(settings, docs).written == 2
    scoped = records(settings)
    assert scoped["sub-a:sub-a-east-board@1"] == ("READY", "sub-a", ["sub-a-board"])
    (docs / "sub-a" / "east" / "new.md").write_text(BOARD.replace("八百万", "九百万"),
                                                    encoding="utf-8")
    summary = run(settings, docs / "sub-a" / "east")
    assert summary.tombstoned == [] and not summary.failures
    after = records(settings)
    assert after["sub-a:sub-a-east-board@1"] == scoped["sub-a:sub-a-east-board@1"]
    assert after["sub-a:sub-a-east-new@1"] == ("READY", "sub-a", ["sub-a-board"])
    assert not any(key.startswith(("board@", "new@")) for key in after)
    for tenant, groups in (("default", ("all-staff",)), ("sub-b", ("sub-a-board",))):
        assert not any("ZEBRA" in t for t in answer(settings, "高管奖金池", tenant, groups))
    assert any("ZEBRA" in t for t in answer(settings, "高管奖金池", "sub-a", ("sub-a-board",)))


def test_1_a_first_run_from_a_subfolder_applies_the_folders_above_it(tmp_path: Path,
                                                                       docs: Path) -> None:
    """No history, no document roots: the file's place still decides. The folders above the
    one given apply up to a `root: true` folder, never from a folder everyone may write into."""
    whole, sub = (Settings(data_dir=tmp_path / name) for name in ("whole", "sub"))
    assert run(whole, docs).written == 2
    assert run(sub, docs / "sub-a" / "east").written == 1  # the very first run of `sub`
    scoped = {(tenant, tuple(acl)) for _, tenant, acl in records(whole).values()}
    assert {(tenant, tuple(acl)) for _, tenant, acl in records(sub).values()} == {
        ("sub-a", ("sub-a-board",))} < scoped
    assert not answer(sub, "高管奖金池") and any(
        "ZEBRA" in t for t in answer(sub, "高管奖金池", "sub-a", ("sub-a-board",)))
    # A company tree's top says so: nothing above it applies, as with .editorconfig.
    (tmp_path / "_meta.yaml").write_text("tenant_id: elsewhere\n", encoding="utf-8")
    (docs / "_meta.yaml").write_text("root: true\n", encoding="utf-8")
    top = Settings(data_dir=tmp_path / "top")
    assert run(top, docs / "sub-a" / "east").written == 1
    assert {r[1] for r in records(top).values()} == {"sub-a"}
    # A _meta.yaml in a folder anyone may write into (/tmp, a drop folder) is nobody's.
    drop = tmp_path / "drop"
    (drop / "inbox").mkdir(parents=True)
    drop.chmod(0o777)
    (drop / "_meta.yaml").write_text("acl: [everyone]\n", encoding="utf-8")
    (drop / "inbox" / "leave.md").write_text(POLICY, encoding="utf-8")
    dropped = Settings(data_dir=tmp_path / "dropped")
    assert run(dropped, drop / "inbox").written == 1
    assert records(dropped) == {"leave@1": ("READY", "default", ["all-staff"])}


# ---- 2. ingesting a subfolder never deletes history -------------------------------------------

def test_2_a_subfolder_run_keeps_every_version_and_its_doc_id(tmp_path: Path) -> None:
    docs, settings = tmp_path / "docs", Settings(data_dir=tmp_path / "data")
    (docs / "hr").mkdir(parents=True)
    pay, side = docs / "hr" / "pay.md", docs / "hr" / "pay.md.meta.yaml"
    for year, amount in (("2024", "五千元"), ("2025", "六千元")):
        pay.write_text(f"# 薪酬办法\n\n第一条 试用期月薪为{amount}。\n", encoding="utf-8")
        side.write_text(f"version: '{year}'\neffective_from: {year}-01-01\n", encoding="utf-8")
        assert run(settings, docs).written >= 1
    summary = run(settings, docs / "hr")
    assert summary.tombstoned == [] and not summary.failures
    states = {key: state for key, (state, _, _) in records(settings).items()}
    assert states == {"hr-pay@2024": "READY", "hr-pay@2025": "READY"}
    assert any("五千元" in t for t in answer(settings, "试用期月薪", as_of=date(2024, 6, 1)))
    assert any("六千元" in t for t in answer(settings, "试用期月薪"))


# ---- 3. two files with one stem ---------------------------------------------------------------

def word_file(path: Path, amount: str) -> Path:
    import docx

    document = docx.Document()
    document.add_heading("采购审批制度", level=1)
    document.add_paragraph(f"第一条 单笔采购金额超过{amount}的，须经总经理审批。")
    document.add_paragraph("第二条 采购合同须加盖合同专用章。")
    document.save(str(path))
    return path


def pdf_by_libreoffice(source: Path, target: Path) -> Path:
    """The approved PDF as LibreOffice writes it from its Word original."""
    import subprocess

    profile = source.parent / ".lo-profile"
    subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless",
                    "--convert-to", "pdf", "--outdir", str(source.parent), str(source)],
                   check=True, capture_output=True, timeout=180)
    source.with_suffix(".pdf").rename(target)
    return target


def test_3_a_draft_docx_beside_its_pdf_is_its_own_document_on_every_run(
        tmp_path: Path) -> None:
    docs, work = tmp_path / "docs", tmp_path / "work"
    docs.mkdir()
    work.mkdir()
    settings = Settings(data_dir=tmp_path / "data")
    pdf_by_libreoffice(word_file(work / "approved.docx", "500元"), docs / "policy.pdf")
    (docs / "old.md").write_text(POLICY, encoding="utf-8")
    assert run(settings, docs).written == 2
    assert set(records(settings)) == {"policy@1", "old@1"}  # published before the draft came
    word_file(docs / "policy.docx", "50000元")  # the draft lands beside the approved PDF
    for _ in range(2):
        summary = run(settings, docs)
        assert not summary.failures and summary.tombstoned == []
        states = {key: state for key, (state, _, _) in records(settings).items()}
        assert states == {"policy@1": "READY", "policy-docx@1": "READY", "old@1": "READY"}
        with ManifestStore(settings.manifest) as manifest:
            pdf, draft = manifest.get("policy", "1"), manifest.get("policy-docx", "1")
            assert pdf and draft and Path(pdf.source_path).suffix == ".pdf"
            assert Path(draft.source_path).suffix == ".docx"
            served = {doc: "".join(c.text for c in manifest.version_chunks(doc, "1")).replace(
                " ", "") for doc in ("policy", "policy-docx")}
        assert "超过500元" in served["policy"] and "50000" not in served["policy"]
        assert "50000元" in served["policy-docx"]
    fresh = Settings(data_dir=tmp_path / "fresh")  # both new at once: both keep their suffix
    for _ in range(2):
        run(fresh, docs)
        assert {k for k, (s, _, _) in records(fresh).items() if s == "READY"} == {
            "policy-pdf@1", "policy-docx@1", "old@1"}


# ---- 11. checks refuse the dangerous, not the unusual -----------------------------------------

@pytest.mark.parametrize("uri", ["intranet://policy/leave-7", "notes://hq/policies/7",
                                 "confluence://HR/leave", "dms://4711", "smb://fs01/hr/leave.md"])
def test_11_an_intranet_scheme_is_kept_as_text(tmp_path: Path, uri: str) -> None:
    from ingest.parse import read_meta

    (tmp_path / "leave.md").write_text(POLICY, encoding="utf-8")
    (tmp_path / "leave.md.meta.yaml").write_text(f"source_uri: '{uri}'\n", encoding="utf-8")
    meta, _ = read_meta(tmp_path / "leave.md", tmp_path, "default", ["all-staff"])
    assert meta.source_uri == uri and meta.warnings == []


@pytest.mark.parametrize("uri", ["javascript:alert(1)", "  JavaScript:alert(document.cookie)",
                                 "data:text/html,<script>alert(1)</script>",
                                 "vbscript:msgbox(1)", "no scheme at all"])
def test_11_a_dangerous_uri_fails_that_field_not_the_document(tmp_path: Path, uri: str) -> None:
    docs, settings = tmp_path / "docs", Settings(data_dir=tmp_path / "data")
    docs.mkdir()
    (docs / "leave.md").write_text(POLICY, encoding="utf-8")
    (docs / "leave.md.meta.yaml").write_text(
        f"source_uri: '{uri}'\nacl: [hr]\ntitle: '休假制度'\n", encoding="utf-8")
    summary = run(settings, docs)
    assert summary.written == 1 and not summary.failures
    with ManifestStore(settings.manifest) as manifest:
        [record] = manifest.documents()
        chunks = manifest.version_chunks(record.doc_id, record.version_id)
    assert record.acl == ["hr"] and record.title == "休假制度"
    assert {c.source_uri for c in chunks} == {(docs / "leave.md").resolve().as_uri()}
    [warning] = record.parse_report["warnings"]
    assert warning.startswith("leave.md.meta.yaml: source_uri ignored")


@pytest.mark.parametrize(("sidecar", "reason"), [
    ("source_uri: 'javascript:x'\ntenant_id: ' bad'\n", "tenant_id"),
    ("source_uri: 'javascript:x'\nacl: []\n", "acl"),
    ("source_uri: 'javascript:x'\neffective_from: 0001-01-01\n", "effective_from"),
    ("title: '休假'\nacls: [board]\n", "acls"),  # an unknown key may be a typo'd acl
])
def test_11_a_bad_field_that_governs_access_still_fails_the_document(
        tmp_path: Path, sidecar: str, reason: str) -> None:
    from ingest.parse import read_meta

    (tmp_path / "leave.md").write_text(POLICY, encoding="utf-8")
    (tmp_path / "leave.md.meta.yaml").write_text(sidecar, encoding="utf-8")
    with pytest.raises(ValueError, match=reason):
        read_meta(tmp_path / "leave.md", tmp_path, "default", ["all-staff"])


# ---- 5. metadata changes by webhook -------------------------------------------------------------

def test_5_a_changed_sidecar_or_folder_file_re_ingests_what_it_describes(
        prefect_api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.ingest import incremental_flow

    docs, data = (tmp_path / "docs").resolve(), tmp_path / "data"
    (docs / "hr").mkdir(parents=True)
    monkeypatch.setenv("KBFLOW_DOCUMENT_ROOTS", json.dumps([str(docs)]))
    settings = Settings(data_dir=data)
    (docs / "leave.md").write_text(POLICY, encoding="utf-8")
    side = docs / "leave.md.meta.yaml"
    side.write_text("acl: [all-staff]\n", encoding="utf-8")
    (docs / "hr" / "_meta.yaml").write_text("acl: [hr]\n", encoding="utf-8")
    (docs / "hr" / "board.md").write_text(BOARD, encoding="utf-8")
    assert run(settings, docs).written == 2
    side.write_text("acl: [hr]\n", encoding="utf-8")  # the leave policy is now HR's only
    (docs / "hr" / "_meta.yaml").write_text("acl: [board]\n", encoding="utf-8")
    summary = incremental_flow([str(side), str(docs / "hr" / "_meta.yaml")], [], str(data))
    assert not summary.failures and summary.written == 2
    acl = {key: groups for key, (_, _, groups) in records(settings).items()}
    assert acl == {"leave@1": ["hr"], "hr-board@1": ["board"]}
    assert answer(settings, "年休假") == []
    assert not any("ZEBRA" in t for t in answer(settings, "高管奖金池", groups=("hr",)))
    side.unlink()  # no sidecar: the document falls back to the default ACL
    summary = incremental_flow([], [str(side)], str(data))
    assert not summary.failures and summary.tombstoned == []
    assert records(settings)["leave@1"][2] == ["all-staff"]


# ---- 6. bounded ACLs ---------------------------------------------------------------------------

def test_6_an_acl_over_the_cap_fails_its_files_with_the_reason(tmp_path: Path) -> None:
    docs, settings = tmp_path / "docs", Settings(data_dir=tmp_path / "data")
    (docs / "wide").mkdir(parents=True)
    groups = ", ".join(f"team-{n:05d}" for n in range(2000))
    (docs / "wide" / "_meta.yaml").write_text(f"acl: [{groups}]\n", encoding="utf-8")
    for n in range(5):
        (docs / "wide" / f"p{n}.md").write_text(POLICY.replace("十天", f"{n + 10}天"),
                                               encoding="utf-8")
    (docs / "ok.md").write_text(POLICY, encoding="utf-8")
    most = ", ".join(f"team-{n:05d}" for n in range(256))  # the cap itself is fine
    (docs / "ok.md.meta.yaml").write_text(f"acl: [{most}]\n", encoding="utf-8")
    summary = run(settings, docs)
    assert summary.written == 1
    reasons = {Path(f.path or "").name: f.reason for f in summary.failures}
    assert set(reasons) == {f"p{n}.md" for n in range(5)}
    assert all("lists 2000 groups, over the 256" in r for r in reasons.values())
    assert len(records(settings)["ok@1"][2]) == 256


def test_6_a_folder_file_is_read_once_per_run_for_all_the_files_below_it(
        tmp_path: Path) -> None:
    from ingest.parse.folder_meta import _checked

    docs, settings = tmp_path / "docs", Settings(data_dir=tmp_path / "data")
    (docs / "hr" / "pay").mkdir(parents=True)
    (docs / "hr" / "_meta.yaml").write_text("acl: [hr]\n", encoding="utf-8")
    for n in range(12):
        (docs / "hr" / "pay" / f"p{n}.md").write_text(POLICY.replace("十天", f"{n + 10}天"),
                                                     encoding="utf-8")
    before = _checked.cache_info()
    assert run(settings, docs).written == 12
    after = _checked.cache_info()
    assert after.misses - before.misses == 1 and after.hits - before.hits >= 11


# ---- 10. a folder declaring no tenant is the default tenant's ---------------------------------

def test_10_a_sidecar_cannot_move_its_file_into_a_tenant_its_folder_did_not_declare(
        tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub-b").mkdir(parents=True)
    (docs / "board.md").write_text(BOARD, encoding="utf-8")
    (docs / "board.md.meta.yaml").write_text("tenant_id: sub-b\n", encoding="utf-8")
    (docs / "sub-b" / "_meta.yaml").write_text("tenant_id: sub-b\n", encoding="utf-8")
    (docs / "sub-b" / "leave.md").write_text(POLICY, encoding="utf-8")
    settings = Settings(data_dir=tmp_path / "data")
    summary = run(settings, docs)
    (failure,) = summary.failures
    assert Path(failure.path or "").name == "board.md"
    assert ("tenant_id 'sub-b' is not the default tenant 'default' (no folder above it "
            "declares one) nor a child of it") in failure.reason
    assert {key: r[1] for key, r in records(settings).items() if r[0] == "READY"} == {
        "sub-b:sub-b-leave@1": "sub-b"}  # the folder that names its tenant publishes there
    # A child of the default tenant, declared in the parents file, may be named by a sidecar.
    parents = tmp_path / "parents.yaml"
    parents.write_text("sub-b: default\n", encoding="utf-8")
    child = Settings(data_dir=tmp_path / "child", tenant_parents=parents)
    assert run(child, docs).failures == []
    assert records(child)["sub-b:board@1"][:2] == ("READY", "sub-b")


# ---- 10. duplicate keys are refused, never last-wins ------------------------------------------

def test_10_a_key_given_twice_is_refused_in_every_configuration_file(tmp_path: Path) -> None:
    from flows.api import KeysFileError, load_keys
    from ingest.parse import read_meta
    from ingest.scopes import TenantTree, TenantTreeError

    (tmp_path / "leave.md").write_text(POLICY, encoding="utf-8")
    (tmp_path / "leave.md.meta.yaml").write_text("acl: [board]\ntitle: 休假\nacl: [all-staff]\n",
                                                 encoding="utf-8")
    with pytest.raises(ValueError, match="'acl' is given twice"):
        read_meta(tmp_path / "leave.md", tmp_path, "default", ["all-staff"])
    (tmp_path / "leave.md.meta.yaml").unlink()
    (tmp_path / "_meta.yaml").write_text("tenant_id: sub-a\ntenant_id: default\n",
                                         encoding="utf-8")
    with pytest.raises(ValueError, match="'tenant_id' is given twice"):
        read_meta(tmp_path / "leave.md", tmp_path, "default", ["all-staff"])
    parents = tmp_path / "parents.yaml"
    parents.write_text("sub-a: default\nsub-b: default\nsub-a: sub-b\n", encoding="utf-8")
    with pytest.raises(TenantTreeError, match="'sub-a' is given twice"):
        TenantTree.load(Settings(data_dir=tmp_path / "data", tenant_parents=parents))
    key = "k" * 20
    for name, text in (("keys.yaml", f"{key}: {{tenant: a, groups: [x]}}\n"
                                     f"{key}: {{tenant: default, groups: [board]}}\n"),
                       ("keys.json", f'{{"{key}": {{"tenant": "a", "groups": ["x"]}}, '
                                     f'"{key}": {{"tenant": "default", "groups": ["x"]}}}}')):
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(KeysFileError, match="given twice"):
            load_keys(tmp_path / name)
