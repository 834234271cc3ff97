"""A run goes through its files a window at a time (the file_window setting): each
window is parsed, embedded and written before the next is read, and what is run-wide still comes
out as from one pass: a citation of a document in a later window resolves (in 《》 with an
article, and named without either) in its own window through the later title read ahead, or at
the end when no title was read ahead or one was read in vain; a later version dates the earlier
one, a copy in a later window is a copy of the version an earlier one kept, and the summary
adds the windows up."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from ingest.config import Settings
from ingest.embed import Embedding
from ingest.lifecycle import delete_documents
from ingest.manifest import ManifestStore
from ingest.models import ParsedDocument, StoreRole
from ingest.parse import ParsePool
from ingest.pipeline import IngestSummary, InProcess, Planned, Prepared, RunContext, run_pipeline
from ingest.pipeline.failures import Failure
from ingest.stores import Stores, open_graph

LOG = logging.getLogger("test_pipeline_windows")
CITING = """# 合同管理办法

第一条 为规范公司合同的订立、审批、履行和归档，明确各部门职责，防范合同风险，制定本办法。

第二条 合同付款依照《资金管理办法》第二条办理，付款前须由经办部门核对合同金额、收款单位和开户银行。

第三条 合同款项的结算，依照资金管理办法执行。
"""
CITED = """# 资金管理办法

第一条 为规范公司资金管理，制定本办法。

第二条 单笔五十万元以上的付款须经总经理审批，并由财务部复核。
"""
LEAVE = """# 请假管理制度

第一条 员工请假须提前提交申请。

第二条 年假天数为{days}天，由部门负责人审批。
"""
SIDECAR = "doc_id: leave\nversion: '{v}'\neffective_from: {d}\n"


class Order(InProcess):
    """InProcess, noting the files parsed and the versions written, in the order they came."""

    def __init__(self) -> None:
        self.events: list[tuple[str, list[str]]] = []

    def parse(self, parser: ParsePool, window: Sequence[Prepared]
              ) -> list[ParsedDocument | Failure]:
        if window:
            self.events.append(("parse", [item.path.name for item in window]))
        return super().parse(parser, window)

    def write(self, role: StoreRole, stores: Stores, group: Sequence[Planned],
              vectors: Mapping[str, Embedding]) -> None:
        if role == "vectors":
            self.events.append(("write", [p.version_key for p in group]))
        super().write(role, stores, group, vectors)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Five files in order: a citation of the fourth in the first, two versions of one
    document in the second and third, and a copy of the first last."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "1_合同管理办法.md").write_text(CITING, encoding="utf-8")
    (docs / "2_请假2025.md").write_text(LEAVE.format(days=5), encoding="utf-8")
    (docs / "2_请假2025.md.meta.yaml").write_text(SIDECAR.format(v="2025", d="2025-01-01"))
    (docs / "3_请假2026.md").write_text(LEAVE.format(days=7), encoding="utf-8")
    (docs / "3_请假2026.md.meta.yaml").write_text(SIDECAR.format(v="2026", d="2026-01-01"))
    (docs / "4_资金管理办法.md").write_text(CITED, encoding="utf-8")
    (docs / "5_合同管理办法副本.md").write_text(CITING, encoding="utf-8")
    return docs


def ingest(settings: Settings, folder: Path, run_id: str = "r1"
           ) -> tuple[IngestSummary, Order, dict[str, Any]]:
    """A run over the folder's documents; its summary, the order of its steps, and what it
    left: each published version's end date, chunks and graph relations."""
    files = [(p, folder) for p in sorted(folder.iterdir()) if p.suffix in (".md", ".html")]
    steps = Order()
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id=run_id, steps=steps,
                         log=LOG)
        summary = run_pipeline(ctx, str(folder), files)
        records = {r.version_key: r for r in manifest.documents()}
        chunks = {(c.doc_id, c.version_id, c.chunk_id, c.content_hash, c.effective_to)
                  for c in manifest.published_chunks()}
    graph = open_graph(settings, summary.generation)
    try:
        relations = {key: {(t.subject, t.predicate, t.object, t.rule)
                           for t in graph.triples(key)} for key in records}
    finally:
        graph.close()
    left = {"ends": {k: (r.state, r.effective_to) for k, r in records.items()},
            "chunks": chunks, "relations": relations}
    return summary, steps, left


def test_a_run_in_windows_of_two_files_leaves_what_one_pass_leaves(
        tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBFLOW_CROSSLINGUAL", "false")  # not what this test is about
    whole, whole_steps, one_pass = ingest(Settings(data_dir=tmp_path / "whole"), folder)
    windowed, steps, left = ingest(Settings(data_dir=tmp_path / "windows", file_window=2),
                                   folder)

    assert whole.failures == [] and windowed.failures == []
    assert [kind for kind, _ in whole_steps.events] == ["parse", "write"]
    # each window's files are written before the next window's are read
    assert [kind for kind, _ in steps.events] == ["parse", "write"] * 2  # the copy: not parsed
    assert all(len(names) <= 2 for kind, names in steps.events if kind == "parse")
    assert left == one_pass
    citing = next(k for k in left["ends"] if k.startswith("1_"))
    assert {("合同管理办法", "引用", "资金管理办法", "exact"),
            ("合同管理办法", "引用", "资金管理办法", "unquoted")} <= left["relations"][citing]
    assert left["ends"]["leave@2025"][1] == date(2025, 12, 31)
    # resolved in the first window through the title read ahead: nothing left to relink
    assert windowed.relinked == whole.relinked == []
    assert windowed.duplicates == whole.duplicates == {
        f"{citing}": [str((folder / "5_合同管理办法副本.md").resolve())]}
    for field in ("written", "triples", "graph", "parse", "documents", "embedded"):
        assert getattr(windowed, field) == getattr(whole, field), field
    assert windowed.chunks.added == whole.chunks.added
    # leave@2025 was written in the first window, then dated again when 2026 came
    assert windowed.chunks.updated == whole.chunks.updated + len(
        [c for c in left["chunks"] if c[:2] == ("leave", "2025")])


CITED_PAGE = """<html><head><title>资金管理办法</title></head><body><h1>资金管理办法</h1>
<p>第一条 为规范公司资金管理，制定本办法。</p>
<p>第二条 单笔五十万元以上的付款须经总经理审批，并由财务部复核。</p></body></html>"""


def test_a_later_title_not_read_ahead_is_resolved_at_the_end(
        tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A web page's title is its parse's (its <h1>): no title is read ahead for it, so the
    citation of it from the first window is resolved by the relink at the end."""
    monkeypatch.setenv("KBFLOW_CROSSLINGUAL", "false")
    (folder / "4_资金管理办法.md").unlink()
    (folder / "4_资金管理办法.html").write_text(CITED_PAGE, encoding="utf-8")
    whole, _, one_pass = ingest(Settings(data_dir=tmp_path / "whole"), folder)
    windowed, _, left = ingest(Settings(data_dir=tmp_path / "windows", file_window=2), folder)

    assert whole.failures == [] and windowed.failures == []
    citing = next(k for k in left["ends"] if k.startswith("1_"))
    assert ("合同管理办法", "引用", "资金管理办法", "exact") in left["relations"][citing]
    assert left == one_pass
    assert windowed.relinked == [citing] and whole.relinked == []
    assert windowed.graph == whole.graph


def test_a_title_read_ahead_in_vain_is_resolved_again(
        tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cited file was deleted with `kbflow delete` and has not changed, so it stays
    deleted: its title, read ahead, names no document at the end, and the citation that the
    first window resolved through it dangles again, as in one pass."""
    monkeypatch.setenv("KBFLOW_CROSSLINGUAL", "false")
    cited = folder / "4_资金管理办法.md"
    runs = {}
    for name, window in (("whole", 64), ("windows", 2)):
        settings = Settings(data_dir=tmp_path / name, file_window=window)
        with ManifestStore(settings.manifest) as manifest:
            ctx = RunContext(settings=settings, manifest=manifest, run_id="r0", steps=Order(),
                             log=LOG)
            run_pipeline(ctx, str(folder), [(cited, folder)])
            doc_id = next(r.doc_id for r in manifest.documents())
        delete_documents(settings, [doc_id], "withdrawn", "d0")
        runs[name] = ingest(settings, folder)
    (whole, _, one_pass), (windowed, _, left) = runs["whole"], runs["windows"]

    citing = next(k for k in left["ends"] if k.startswith("1_"))
    assert ("合同管理办法", "引用", "资金管理办法", "dangling:not_in_corpus") in (
        left["relations"][citing])
    assert left == one_pass
    assert windowed.relinked == [citing] and whole.relinked == []
