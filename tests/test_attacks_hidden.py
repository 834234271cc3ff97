"""Issue 39, item 9: what a file hides from its reader stays hidden. A hidden Excel column, Word
hidden text, a hidden slide and an HTML element with display:none are left out of the index by
default and counted in the parse report; the include_hidden setting reads them. Review comments
(issue 40) are counted likewise and read with include_comments. Files are
written by python-docx, python-pptx and openpyxl, as the applications write these flags."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import docx
import openpyxl
import pptx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from openpyxl.comments import Comment
from pptx.util import Inches

from ingest.config import Settings
from ingest.models import ParsedDocument
from ingest.parse import ParseLimits, parse_document, read_meta

SECRET = "身份证号110101199001011234"
INCLUDE = ParseLimits(include_hidden=True)


def parse(path: Path, limits: ParseLimits | None = None) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, limits or ParseLimits())


def text_of(doc: ParsedDocument) -> str:
    return "\n".join(block.text for block in doc.blocks)


def test_hidden_excel_column_is_not_served(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["姓名", "部门", "身份证号", "电话"])
    sheet.append(["张三", "财务部", SECRET, "6001"])
    sheet.append(["李四", "人事部", "身份证号220101198505051234", "6002"])
    sheet.merge_cells("A4:D4")  # a note merged across the hidden column too
    sheet["A4"] = "注：电话为内线分机号码"
    sheet.column_dimensions["C"].hidden = True
    path = tmp_path / "staff.xlsx"
    workbook.save(path)

    doc = parse(path)
    text = text_of(doc)
    assert SECRET not in text and "身份证号" not in text
    assert "姓名: 张三; 部门: 财务部; 电话: 6001" in text  # the columns right of it keep names
    assert "电话为内线分机号码" in text
    assert doc.report.skipped["hidden_columns"] == 1
    assert doc.report.chars_skipped == len("身份证号" + SECRET + "身份证号220101198505051234")
    assert doc.report.coverage == 1.0

    shown = parse(path, INCLUDE)
    assert "身份证号: " + SECRET in text_of(shown)
    assert "hidden_columns" not in shown.report.skipped


def test_hidden_sheets_are_read_with_the_setting(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    first = workbook.active
    assert first is not None
    first.append(["科目", "编码"])
    first.append(["差旅费", "660101"])
    draft = workbook.create_sheet("草稿")
    draft.append(["科目", "编码"])
    draft.append(["招待费", "660299"])
    draft.sheet_state = "hidden"
    path = tmp_path / "codes.xlsx"
    workbook.save(path)
    assert "660299" not in text_of(parse(path))
    assert "660299" in text_of(parse(path, INCLUDE))


def test_word_hidden_text_is_not_indexed(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("第一条 员工出差住宿标准为每晚五百元。")
    secret = paragraph.add_run("内部备注：总经理出差不设上限。")
    secret.font.hidden = True
    style = document.styles.add_style("暗注", WD_STYLE_TYPE.CHARACTER)
    style.font.hidden = True
    other = document.add_paragraph("第二条 报销须在一个月内提交。")
    other.add_run("（审批人可私下放宽）", style="暗注")
    shown_again = document.add_paragraph("第三条 本办法自发布之日起施行。")
    shown_again.runs[0].font.hidden = False  # w:vanish w:val="0": shown
    header = document.sections[0].header.paragraphs[0]
    header.add_run("华东集团差旅管理办法 ")
    header.add_run("草稿：待董事会否决").font.hidden = True
    path = tmp_path / "travel.docx"
    document.save(path)

    doc = parse(path)
    text = text_of(doc)
    assert "住宿标准为每晚五百元" in text and "自发布之日起施行" in text
    assert "总经理出差不设上限" not in text and "私下放宽" not in text
    assert "华东集团差旅管理办法" in text and "待董事会否决" not in text
    assert doc.report.skipped["hidden_text"] == 3  # two paragraphs, one header
    # (the report caps chars_skipped at chars_seen - chars_indexed; the 页眉页脚 label counts)
    assert doc.report.chars_skipped >= len("内部备注：总经理出差不设上限。（审批人可私下放宽）")
    assert doc.report.coverage == 1.0

    included = text_of(parse(path, INCLUDE))
    assert "总经理出差不设上限" in included and "私下放宽" in included
    assert "待董事会否决" in included


def test_hidden_slide_is_not_indexed(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    for title, body in (("培训安排", "新员工培训为期三天。"), ("内部草稿", "裁员名单：市场部二人"),
                        ("考核方式", "培训结束后进行笔试。")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        assert slide.shapes.title is not None
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = body
    hidden = deck.slides[1]
    hidden.notes_slide.notes_text_frame.text = "此页不要放映"  # type: ignore[union-attr]
    hidden.element.set("show", "0")
    box = hidden.shapes.add_textbox(Inches(1), Inches(6), Inches(4), Inches(1))
    box.text_frame.text = "预算削减百分之二十"
    path = tmp_path / "training.pptx"
    deck.save(path)

    doc = parse(path)
    text = text_of(doc)
    assert "新员工培训为期三天" in text and "培训结束后进行笔试" in text
    for secret in ("裁员名单", "此页不要放映", "预算削减", "内部草稿"):
        assert secret not in text
    assert doc.report.skipped["hidden_slides"] == 1
    assert [b.page for b in doc.blocks if "笔试" in b.text] == [3]  # pages stay slide numbers
    assert doc.report.coverage == 1.0
    assert "裁员名单" in text_of(parse(path, INCLUDE))


PAGE = """<html><head><meta charset="utf-8"><title>通知</title></head><body>
<article><h1>关于调整报销流程的通知</h1>
<p>自下月起，差旅报销一律通过线上系统提交，纸质单据不再受理。</p>
<div style="display: none">{hidden}</div>
<p hidden>内部提示：领导的报销无需审批。</p>
<span style="visibility:hidden">测试账号 admin 密码 Abc12345</span>
<p>如有疑问请联系财务部。</p></article></body></html>"""


def test_html_display_none_and_hidden_elements_are_not_indexed(tmp_path: Path) -> None:
    # the hidden block holds most of the page's text: it is dropped all the same
    hidden = "隐藏关键词堆砌：" + "最低价 免费 报销秘诀 " * 40
    path = tmp_path / "notice.html"
    path.write_text(PAGE.format(hidden=hidden), encoding="utf-8")

    doc = parse(path)
    text = text_of(doc)
    assert "差旅报销一律通过线上系统提交" in text and "如有疑问请联系财务部" in text
    for secret in ("报销秘诀", "领导的报销无需审批", "Abc12345"):
        assert secret not in text
    assert doc.report.skipped["hidden"] == 3
    included = text_of(parse(path, INCLUDE))
    assert "报销秘诀" in included and "Abc12345" in included


def test_settings_turn_hidden_and_comments_on(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not ParseLimits.of(Settings()).include_hidden
    monkeypatch.setenv("KBFLOW_PARSE_INCLUDE_HIDDEN", "true")
    monkeypatch.setenv("KBFLOW_PARSE_INCLUDE_COMMENTS", "true")
    limits = ParseLimits.of(Settings())
    assert limits.include_hidden and limits.include_comments


def test_word_comments_are_counted_and_read_with_the_setting(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("第一条 采购金额超过五万元须招标。")
    document.add_comment(paragraph.runs, text="法务意见：门槛应降为三万元", author="法务部")
    path = tmp_path / "purchase.docx"
    document.save(path)
    doc = parse(path)
    assert "门槛应降为三万元" not in text_of(doc)
    assert doc.report.skipped["comments"] == 1
    read = parse(path, ParseLimits(include_comments=True))
    assert "批注：法务意见：门槛应降为三万元" in text_of(read).replace(":", "：")
    assert "comments" not in read.report.skipped


def test_excel_notes_are_counted_and_read_with_the_setting(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["项目", "金额"])
    sheet.append(["招待费", 5000])
    sheet["B2"].comment = Comment("财务：超标部分由个人承担", "财务部")
    path = tmp_path / "costs.xlsx"
    workbook.save(path)
    doc = parse(path)
    assert "超标部分由个人承担" not in text_of(doc)
    assert doc.report.skipped["comments"] == 1
    assert doc.report.chars_skipped == len("财务：超标部分由个人承担")
    read = parse(path, ParseLimits(include_comments=True))
    assert "批注: 财务:超标部分由个人承担" in text_of(read)


def test_excel_notes_shown_on_the_sheet_are_read_hidden_ones_counted() -> None:
    """hogandiff's public Test5.xls (Japanese Excel, read through LibreOffice): four of its five
    notes are set to show on the sheet ("Show Comment"), boxes of text a reader sees, so they
    are read without include_comments; the fifth ("非表示", hidden) is counted, not read."""
    path = Path(__file__).parents[1] / "bench" / "format_corpus" / "hogandiff" / "Test5.xls"
    doc = parse(path)
    text = text_of(doc)
    for shown in ("Author: Comment Comment", "Authorなし", "書式設定", "批注: コメント"):
        assert shown in text, shown
    assert "非表示" not in text
    assert doc.report.skipped["comments"] == 1


FODP = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
 xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:officeooo="http://openoffice.org/2009/office"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.presentation">
<office:body><office:presentation><draw:page draw:name="p1">
<draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="3cm"><draw:text-box>
<text:p>培训安排：新员工培训为期三天</text:p></draw:text-box></draw:frame>
<officeooo:annotation svg:x="1cm" svg:y="1cm"><dc:creator>法务部</dc:creator>
<dc:date>2024-05-01T10:00:00</dc:date><text:p>法务意见：培训协议须双方签字</text:p>
</officeooo:annotation></draw:page></office:presentation></office:body></office:document>"""


@pytest.mark.skipif(shutil.which("soffice") is None, reason="needs LibreOffice (soffice)")
def test_slide_comments_are_counted_and_read_with_the_setting(tmp_path: Path) -> None:
    source = tmp_path / "training.fodp"
    source.write_text(FODP, encoding="utf-8")
    subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{tmp_path}/lo",
                    "--convert-to", "pptx", "--outdir", str(tmp_path), str(source)],
                   check=True, capture_output=True, timeout=180)
    doc = parse(tmp_path / "training.pptx")  # as Impress saves it
    assert "培训协议须双方签字" not in text_of(doc)
    assert "新员工培训为期三天" in text_of(doc)
    assert doc.report.skipped["comments"] == 1
    assert "footer" not in text_of(doc).lower()  # Impress's master footer prompts
    read = parse(tmp_path / "training.pptx", ParseLimits(include_comments=True))
    assert "批注: 法务意见:培训协议须双方签字" in text_of(read)
