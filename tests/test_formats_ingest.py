"""`kbflow ingest` of a folder holding every format a knowledge base is made of: each document is
READY, its chunks hold what a reader of the file sees (spreadsheet rows, footnotes beside their
clause, speaker notes beside their slide, the OCR text of an image) and nothing repeated on every
slide; a part no parser reads is flagged in the run summary and in `kbflow status`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_cli import kbflow
from test_parse_coverage import write_docx
from tests_support import REPO

from ingest.config import Settings
from ingest.manifest import ManifestStore
from ingest.models import Chunk, ChunkKind

FORMAT_DOCS = REPO / "eval" / "format_docs"


def test_every_format_is_read_whole_and_an_unread_part_is_flagged(tmp_path: Path) -> None:
    docs, data = tmp_path / "docs", tmp_path / "data"
    shutil.copytree(FORMAT_DOCS, docs)
    write_docx(docs / "purchase_rules.docx", diagram=True)  # a SmartArt part nobody reads

    ingest = kbflow("ingest", str(docs), "--json", data=data)
    assert ingest.returncode == 0, ingest.stderr
    summary = json.loads(ingest.stdout)
    assert summary["failures"] == [] and summary["documents"] == {"READY": 7}
    assert list(summary["parse"]["low_coverage"]) == ["purchase_rules@1"]
    assert summary["parse"]["skipped"]["hidden_sheets"] == 1
    assert summary["parse"]["skipped"]["boilerplate"] >= 10  # footer and number on each slide

    status = kbflow("status", "--json", data=data)
    export = json.loads(status.stdout)
    assert list(export["low_coverage"]) == ["purchase_rules@1"]
    titles = {d["doc_id"]: d["title"] for d in export["documents"]}
    assert titles["it_portal_vpn"] == "VPN 账号申请指南"  # not the sidebar's 热门服务
    assert titles["onboarding_training"] == "新员工入职培训"
    table = kbflow("status", data=data)
    assert "PARTLY READ" in table.stdout and "purchase_rules@1" in table.stdout

    chunks = published_chunks(Settings(data_dir=data))
    every_text = "\n".join(c.text for found in chunks.values() for c in found)
    # the slide footer: kept once, in the deck's own section, not in any slide's chunk
    assert [c.title_path for found in chunks.values() for c in found
            if "请勿外传" in c.text and c.kind != ChunkKind.PARENT] == [["页眉页脚"]]
    assert "热门服务" not in every_text and "Cookie" not in every_text  # portal sidebar, banner
    assert "待定科目" not in every_text  # the hidden draft sheet

    rows = [c.text for c in chunks["account_catalogue"] if c.kind == ChunkKind.TABLE_ROW]
    assert any("科目编码: 660201" in row and "审批层级: 部门经理" in row for row in rows)
    assert any("资产类别: 电子设备" in row and "折旧年限: 3年" in row for row in rows)
    suppliers = [c.text for c in chunks["supplier_list"] if c.kind == ChunkKind.TABLE_ROW]
    assert any("服务类别: 保洁服务" in row and "2026-09-30" in row for row in suppliers)

    [clause] = [c for c in chunks["lease_contract"] if c.clause_no == "第四条"]
    assert "ZL-2026-03" in clause.text  # the footnote, beside the clause that cites it

    [notes] = [c for c in chunks["onboarding_training"]
               if "十五个工作日" in c.text and c.kind != ChunkKind.PARENT]
    assert notes.page_start == 2 and "试用期与转正" in notes.title_path  # its slide

    notice = " ".join(c.text for c in chunks["water_outage_notice"])
    assert "暂停供水" in notice and "不受影响" in notice  # read from pixels


def published_chunks(settings: Settings) -> dict[str, list[Chunk]]:
    with ManifestStore(settings.manifest) as manifest:
        return {r.doc_id: manifest.version_chunks(r.doc_id, r.version_id)
                for r in manifest.documents()}
