"""The parse report says how much of a file was indexed, so a part no parser reads is visible."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx

from ingest.parse import parse_document, read_meta
from ingest.parse.coverage import package_chars, visible_chars
from ingest.pipeline.report import ParseRunReport

CLAUSES = ["第一条 为规范采购审批，制定本办法。",
           "第二条 单笔采购金额超过五万元的，须经财务总监审批。",
           "第三条 本办法自2026年1月1日起施行。"]
# A SmartArt diagram's text lives in its own part (word/diagrams/data1.xml), which no parser
# of ours reads: exactly the kind of unread part the report must show.
SMARTART = ("审批流程：申请人提交采购申请，部门经理初审，财务部复核预算，财务总监终审，"
            "采购部执行下单并登记合同台账，仓库验收入库后财务付款。")
DIAGRAM = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram"
 xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dgm:ptLst>
<dgm:pt modelId="1"><dgm:t><a:bodyPr/><a:p><a:r><a:t>{SMARTART}</a:t></a:r></a:p></dgm:t></dgm:pt>
</dgm:ptLst></dgm:dataModel>"""
DIAGRAM_TYPE = "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml"
DIAGRAM_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/diagramData"


def write_docx(path: Path, diagram: bool) -> Path:
    document = docx.Document()
    document.add_heading("采购审批管理办法", level=1)
    for clause in CLAUSES:
        document.add_paragraph(clause)
    document.save(path)
    if diagram:
        _add_part(path, "word/diagrams/data1.xml", DIAGRAM, DIAGRAM_TYPE, DIAGRAM_REL)
    return path


def _add_part(path: Path, name: str, xml: str, content_type: str, rel_type: str) -> None:
    """A part with its content type and a relationship from the document, as Word writes it."""
    with zipfile.ZipFile(path) as old:
        parts = {info.filename: old.read(info) for info in old.infolist()}
    parts[name] = xml.encode()
    override = f'<Override PartName="/{name}" ContentType="{content_type}"/>'
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
        b"</Types>", override.encode() + b"</Types>")
    rel = f'<Relationship Id="rIdDiagram1" Type="{rel_type}" Target="diagrams/data1.xml"/>'
    rels = "word/_rels/document.xml.rels"
    parts[rels] = parts[rels].replace(b"</Relationships>", rel.encode() + b"</Relationships>")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as new:
        for part, data in parts.items():
            new.writestr(part, data)
    path.write_bytes(buffer.getvalue())


def parse(path: Path):
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def test_a_fully_read_document_reports_full_coverage(tmp_path: Path) -> None:
    report = parse(write_docx(tmp_path / "whole.docx", diagram=False)).report
    expected = visible_chars("采购审批管理办法") + sum(visible_chars(c) for c in CLAUSES)
    assert report.chars_seen == report.chars_indexed == expected
    assert report.coverage == 1.0


def test_a_part_no_parser_reads_lowers_coverage_and_is_listed(tmp_path: Path) -> None:
    path = write_docx(tmp_path / "with_smartart.docx", diagram=True)
    report = parse(path).report
    assert report.chars_seen == report.chars_indexed + visible_chars(SMARTART)
    assert report.coverage < 0.9

    whole = parse(write_docx(tmp_path / "whole.docx", diagram=False)).report
    run = ParseRunReport.of({"with_smartart@1": report.model_dump(mode="json"),
                             "whole@1": whole.model_dump(mode="json")}, [], min_coverage=0.9)
    assert list(run.low_coverage) == ["with_smartart@1"]
    assert run.chars_seen == report.chars_seen + whole.chars_seen


def test_template_text_and_a_drawings_second_copy_are_not_counted(tmp_path: Path) -> None:
    """Masters hold "Click to edit" prompts nobody sees; mc:Fallback repeats mc:Choice."""
    buffer = io.BytesIO()
    run = '<a:r xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:t>{}</a:t></a:r>'
    choice = (f'<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/'
              f'markup-compatibility/2006"><mc:Choice Requires="wps">{run.format("文本框内容")}'
              f'</mc:Choice><mc:Fallback>{run.format("文本框内容")}</mc:Fallback>'
              f'</mc:AlternateContent>')
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ppt/slides/slide1.xml", f"<sld>{choice}</sld>")
        archive.writestr("ppt/slideMasters/slideMaster1.xml",
                         f"<sldMaster>{run.format('Click to edit Master title style')}</sldMaster>")
    assert package_chars(buffer.getvalue()) == len("文本框内容")
