"""DOCX parsing reads every text part a reader sees: footnotes and endnotes with the paragraph
that cites them, text boxes, content controls, nested tables, tracked changes as accepted,
alt text; comments and headers/footers are counted, not indexed.

The files are real .docx files: python-docx builds them, and what it cannot write (notes, text
boxes, content controls, tracked changes) is added as the OOXML Word itself writes.
"""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import docx
import pytest
from docx.document import Document as DocxDocument
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import parse_xml
from PIL import Image

from ingest.chunk import chunk_document
from ingest.models import BlockKind, ParsedDocument
from ingest.parse import ParseError, parse_document, read_meta
from ingest.parse.result import DEFAULT_LIMITS
from ingest.parse.word import parse_docx

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NAMESPACES = (
    f'xmlns:w="{W_NS}" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:v="urn:schemas-microsoft-com:vml"')
RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NOTES_PARTS = {
    "footnotes": "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml",
    "endnotes": "application/vnd.openxmlformats-officedocument.wordprocessingml.endnotes+xml",
}


def body_xml(document: DocxDocument, fragment: str) -> None:
    """Append WordprocessingML to the body (before its section properties, as Word keeps it)."""
    element = parse_xml(f"<w:body {NAMESPACES}>{fragment}</w:body>")
    for child in list(element):
        document.element.body.sectPr.addprevious(child)


def notes_part(kind: str, notes: dict[int, str]) -> str:
    """footnotes.xml / endnotes.xml as Word writes it: separator and continuation separator
    first, then one note per id whose first run is the note's own mark."""
    tag = kind[:-1]
    separators = (f'<w:{tag} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p>'
                  f'</w:{tag}><w:{tag} w:type="continuationSeparator" w:id="0"><w:p><w:r>'
                  f"<w:continuationSeparator/></w:r></w:p></w:{tag}>")
    bodies = "".join(
        f'<w:{tag} w:id="{note_id}"><w:p><w:r><w:{tag}Ref/></w:r><w:r><w:t xml:space="preserve">'
        f" {text}</w:t></w:r></w:p></w:{tag}>" for note_id, text in notes.items())
    return f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' \
           f"<w:{kind} {NAMESPACES}>{separators}{bodies}</w:{kind}>"


def add_part(data: bytes, name: str, content_type: str, xml: str) -> bytes:
    """Add word/<name>.xml with its relationship from the document and its content type."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            content = source.read(item.filename)
            if item.filename == "[Content_Types].xml":
                override = f'<Override PartName="/word/{name}.xml" ContentType="{content_type}"/>'
                content = content.replace(b"</Types>", override.encode() + b"</Types>")
            elif item.filename == "word/_rels/document.xml.rels":
                rel = (f'<Relationship Id="rIdNotes{name}" Type="{RELATIONSHIPS}/{name}" '
                       f'Target="{name}.xml"/>')
                content = content.replace(b"</Relationships>", rel.encode() + b"</Relationships>")
            target.writestr(item, content)
        target.writestr(f"word/{name}.xml", xml.encode("utf-8"))
    return out.getvalue()


def save(document: DocxDocument, path: Path,
         edit: Callable[[bytes], bytes] = lambda data: data) -> Path:
    buffer = io.BytesIO()
    document.save(buffer)
    path.write_bytes(edit(buffer.getvalue()))
    return path


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def texts(doc: ParsedDocument) -> list[str]:
    return [block.text for block in doc.blocks]


def chars_seen(path: Path) -> int:
    """What the parser says the file holds, before the report takes the larger of it and the
    text indexed."""
    return parse_docx(path.read_bytes(), DEFAULT_LIMITS).chars_seen or 0


def run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def contract(with_notes: bool = True) -> DocxDocument:
    document = docx.Document()
    document.add_heading("合同管理办法", 0)
    document.add_paragraph("第四条 合同由承办部门起草。")
    reference = ('<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr>'
                 '<w:footnoteReference w:id="1"/></w:r>' if with_notes else "")
    endnote = '<w:r><w:endnoteReference w:id="1"/></w:r>' if with_notes else ""
    body_xml(document, f"<w:p>{run('第五条 对外签订的采购合同应按标准范本')}{reference}"
                       f"{run('签订，不得擅自修改通用条款。')}</w:p>"
                       f"<w:p>{run('第六条 合同签订后5个工作日内交法务部备案。')}{endnote}</w:p>")
    return document


def with_notes(data: bytes) -> bytes:
    data = add_part(data, "footnotes", NOTES_PARTS["footnotes"],
                    notes_part("footnotes", {1: "本合同标准范本编号为 HT-2024-07。"}))
    return add_part(data, "endnotes", NOTES_PARTS["endnotes"],
                    notes_part("endnotes", {1: "备案系统见内网法务专栏。"}))


# ---- footnotes and endnotes --------------------------------------------------------------------


def test_a_footnote_lands_in_the_chunk_of_the_clause_that_cites_it(tmp_path: Path) -> None:
    doc = parse(save(contract(), tmp_path / "contract.docx", with_notes))
    assert texts(doc)[1:] == [
        "第四条 合同由承办部门起草。",
        "第五条 对外签订的采购合同应按标准范本[注1]签订,不得擅自修改通用条款。"
        "(注1:本合同标准范本编号为 HT-2024-07。)",
        "第六条 合同签订后5个工作日内交法务部备案。[尾注1](尾注1:备案系统见内网法务专栏。)",
    ]
    chunks = chunk_document(doc)
    (clause,) = [c for c in chunks if "HT-2024-07" in c.text]
    assert clause.clause_no == "第五条" and "按标准范本[注1]签订" in clause.text
    # the separator notes draw a line, they hold no text; the notes count as text seen
    plain = save(contract(with_notes=False), tmp_path / "plain.docx")
    assert chars_seen(tmp_path / "contract.docx") - chars_seen(plain) == len(
        "本合同标准范本编号为HT-2024-07。备案系统见内网法务专栏。")


def test_footnote_cited_in_a_heading_follows_it_and_numbers_run_in_citing_order(
        tmp_path: Path) -> None:
    document = docx.Document()
    body_xml(document, '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr>'
                       f'{run("第一章 总则")}<w:r><w:footnoteReference w:id="7"/></w:r></w:p>'
                       f'<w:p>{run("第一条 为规范差旅管理")}<w:r><w:footnoteReference w:id="3"/>'
                       f'</w:r>{run("，制定本办法。")}</w:p>')
    notes = notes_part("footnotes", {3: "依据集团财务制度。", 7: "本章自2025年起施行。"})
    doc = parse(save(document, tmp_path / "h.docx", lambda data: add_part(
        data, "footnotes", NOTES_PARTS["footnotes"], notes)))
    assert [(b.kind, b.text) for b in doc.blocks] == [
        (BlockKind.HEADING, "第一章 总则[注1]"),
        (BlockKind.PARAGRAPH, "(注1:本章自2025年起施行。)"),
        (BlockKind.PARAGRAPH, "第一条 为规范差旅管理[注2],制定本办法。(注2:依据集团财务制度。)"),
    ]


# ---- text boxes, content controls, alt text ---------------------------------------------------


def text_box(text: str) -> str:
    """A floating text box the way Word 2010+ writes it: a DrawingML shape (mc:Choice) and the
    same text again as VML for older readers (mc:Fallback)."""
    content = f"<w:txbxContent><w:p>{run(text)}</w:p></w:txbxContent>"
    return ('<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>'
            '<wp:anchor distT="0" distB="0" distL="0" distR="0" simplePos="0" relativeHeight="1" '
            'behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1"><wp:simplePos x="0" y="0"/>'
            '<wp:positionH relativeFrom="column"><wp:posOffset>0</wp:posOffset></wp:positionH>'
            '<wp:positionV relativeFrom="paragraph"><wp:posOffset>0</wp:posOffset></wp:positionV>'
            '<wp:extent cx="1828800" cy="457200"/><wp:wrapSquare wrapText="bothSides"/>'
            '<wp:docPr id="1" name="文本框 1"/><a:graphic><a:graphicData uri="http://schemas.'
            'microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp><wps:cNvSpPr txBox="1"/>'
            '<wps:spPr/><wps:txbx>' + content + '</wps:txbx><wps:bodyPr/></wps:wsp>'
            '</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback>'
            '<w:pict><v:shape style="width:144pt;height:36pt"><v:textbox>' + content +
            '</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>')


def test_text_boxes_are_read_once_right_after_their_anchor(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("第三条 报销流程")
    anchor = run("报销单据按下列要求粘贴。") + text_box("提示：发票须在30日内提交")
    vml_only = (f"<w:r><w:pict><v:shape><v:textbox><w:txbxContent><w:p>"
                f"{run('旧版文本框：原件交财务部')}</w:p></w:txbxContent></v:textbox></v:shape>"
                f"</w:pict></w:r>")
    body_xml(document, f"<w:p>{anchor}</w:p><w:p>{vml_only}</w:p>")
    document.add_paragraph("第四条 审批")
    doc = parse(save(document, tmp_path / "boxes.docx"))
    assert texts(doc) == ["第三条 报销流程", "报销单据按下列要求粘贴。", "提示:发票须在30日内提交",
                          "旧版文本框:原件交财务部", "第四条 审批"]
    assert chars_seen(tmp_path / "boxes.docx") == len(
        "第三条报销流程报销单据按下列要求粘贴。提示：发票须在30日内提交旧版文本框：原件交财务部第四条审批")


def test_content_controls_are_read_like_the_body_placeholders_and_toc_are_not(
        tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("采购合同", 0)
    toc = ('<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val="Table of Contents"/>'
           '<w:docPartUnique/></w:docPartObj></w:sdtPr><w:sdtContent>'
           f'<w:p><w:pPr><w:pStyle w:val="TOCHeading"/></w:pPr>{run("目录")}</w:p>'
           f'<w:p>{run("第一条 合同标的 ........ 1")}</w:p></w:sdtContent></w:sdt>')
    party = (f'<w:p>{run("甲方：")}<w:sdt><w:sdtPr><w:alias w:val="甲方名称"/></w:sdtPr>'
             f'<w:sdtContent>{run("北京某某科技有限公司")}</w:sdtContent></w:sdt></w:p>')
    placeholder = (f'<w:p>{run("乙方：")}<w:sdt><w:sdtPr><w:showingPlcHdr/></w:sdtPr>'
                   f'<w:sdtContent>{run("单击或点击此处输入文字。")}</w:sdtContent></w:sdt></w:p>')
    block_control = (f'<w:sdt><w:sdtPr><w:tag w:val="terms"/></w:sdtPr><w:sdtContent>'
                     f'<w:p>{run("第一条 合同标的为办公设备一批。")}</w:p>'
                     f'<w:tbl><w:tr><w:tc><w:p>{run("设备")}</w:p></w:tc><w:tc><w:p>{run("数量")}'
                     f'</w:p></w:tc></w:tr><w:tr><w:tc><w:p>{run("笔记本电脑")}</w:p></w:tc><w:tc>'
                     f'<w:p>{run("20台")}</w:p></w:tc></w:tr></w:tbl></w:sdtContent></w:sdt>')
    body_xml(document, toc + party + placeholder + block_control)
    doc = parse(save(document, tmp_path / "sdt.docx"))
    assert [t for t in texts(doc) if not t.startswith("|")] == [
        "采购合同", "甲方:北京某某科技有限公司", "乙方:", "第一条 合同标的为办公设备一批。",
        "设备: 笔记本电脑; 数量: 20台"]
    assert doc.report.skipped == {"table_of_contents": 2, "placeholder_text": 1}
    # a table of contents would repeat 第一条 as a clause of its own
    assert [c.clause_no for c in chunk_document(doc)].count("第一条") == 1


def test_a_table_of_contents_outside_a_content_control_is_not_indexed(tmp_path: Path) -> None:
    """A TOC field typed into the body (no content control) is told by its paragraph styles."""
    document = docx.Document()
    document.add_heading("采购合同", 0)
    document.styles.add_style("toc 1", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("第一条 合同标的\t1", style="toc 1")
    document.add_paragraph("第二条 价款\t2", style="toc 1")
    document.add_paragraph("第一条 合同标的为办公设备一批。")
    doc = parse(save(document, tmp_path / "toc.docx"))
    assert texts(doc) == ["采购合同", "第一条 合同标的为办公设备一批。"]
    assert doc.report.skipped == {"table_of_contents": 2}


def tiny_png(path: Path) -> Path:
    Image.new("RGB", (8, 8), "white").save(path)
    return path


def test_alt_text_is_indexed_when_it_describes(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("第二条 公司组织结构如下图。")
    document.add_picture(str(tiny_png(tmp_path / "org.png")))
    document.add_picture(str(tiny_png(tmp_path / "logo.png")))
    described, generated = document.element.body.iter(
        "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}docPr")
    described.set("descr", "组织结构图：总经理下设财务部、人事部和市场部")
    generated.set("descr", "图片包含 文本\n\n描述已自动生成")
    doc = parse(save(document, tmp_path / "pictures.docx"))
    assert texts(doc) == ["第二条 公司组织结构如下图。",
                          "(图片:组织结构图:总经理下设财务部、人事部和市场部)"]
    assert doc.report.skipped == {"alt_text": 1}
    result = parse_docx((tmp_path / "pictures.docx").read_bytes(), DEFAULT_LIMITS)
    assert result.chars_skipped == len("图片包含文本描述已自动生成")
    assert result.chars_seen == len("第二条公司组织结构如下图。"
                                    "组织结构图:总经理下设财务部、人事部和市场部"
                                    "图片包含文本描述已自动生成")


# ---- tables -----------------------------------------------------------------------------------


def test_a_nested_table_keeps_its_rows_as_a_table_of_its_own(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("表1 差旅标准")
    outer = document.add_table(rows=3, cols=2)
    outer_rows = [("项目", "标准"), ("住宿费", ""), ("伙食补助", "100元/天")]
    for r, (item, standard) in enumerate(outer_rows):
        outer.cell(r, 0).text, outer.cell(r, 1).text = item, standard
    inner = outer.cell(1, 1).add_table(rows=3, cols=2)
    inner_rows = [("城市", "金额"), ("一线城市", "600元"), ("其他城市", "400元")]
    for r, (city, amount) in enumerate(inner_rows):
        inner.cell(r, 0).text, inner.cell(r, 1).text = city, amount
    doc = parse(save(document, tmp_path / "nested.docx"))
    assert [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW] == [
        "表1 差旅标准 | 项目: 住宿费",
        "表1 差旅标准 | 项目: 伙食补助; 标准: 100元/天",
        "表1 差旅标准 / 住宿费 / 标准 | 城市: 一线城市; 金额: 600元",
        "表1 差旅标准 / 住宿费 / 标准 | 城市: 其他城市; 金额: 400元",
    ]
    assert doc.report.tables == 2
    assert sum("600元" in text for text in texts(doc)) == 2  # the nested Markdown and its row


# ---- tracked changes --------------------------------------------------------------------------


def test_tracked_changes_are_read_as_accepted(tmp_path: Path) -> None:
    document = docx.Document()
    revision = 'w:author="审核人" w:date="2025-03-01T10:00:00Z"'
    body_xml(document, (
        f'<w:p>{run("第七条 报销期限为")}<w:del w:id="1" {revision}><w:r><w:delText>15</w:delText>'
        f'</w:r><w:r><w:br w:type="page"/></w:r></w:del><w:ins w:id="2" {revision}>{run("30")}'
        f'</w:ins>{run("日。")}</w:p>'
        f'<w:p><w:moveFrom w:id="3" {revision}>{run("逾期不予报销。")}</w:moveFrom></w:p>'
        f'<w:p>{run("第八条 发票须真实。")}<w:moveTo w:id="4" {revision}>{run("逾期不予报销。")}'
        f'</w:moveTo></w:p>'
        f'<w:tbl><w:tr><w:tc><w:p>{run("类别")}</w:p></w:tc></w:tr>'
        f'<w:tr><w:trPr><w:del w:id="5" {revision}/></w:trPr><w:tc><w:p><w:del w:id="6" '
        f'{revision}><w:r><w:delText>招待费</w:delText></w:r></w:del></w:p></w:tc></w:tr>'
        f'<w:tr><w:trPr><w:ins w:id="7" {revision}/></w:trPr><w:tc><w:p><w:ins w:id="8" '
        f'{revision}>{run("交通费")}</w:ins></w:p></w:tc></w:tr></w:tbl>'))
    doc = parse(save(document, tmp_path / "revised.docx"))
    assert [t for t in texts(doc) if not t.startswith("|")] == [
        "第七条 报销期限为30日。", "第八条 发票须真实。逾期不予报销。", "类别: 交通费"]
    assert doc.pages == 1  # the page break was deleted with its run


# ---- what is counted but not indexed ----------------------------------------------------------


def test_comments_are_counted_not_indexed(tmp_path: Path) -> None:
    plain = save(contract(with_notes=False), tmp_path / "plain.docx")
    document = contract(with_notes=False)
    document.add_comment(document.paragraphs[1].runs, text="请法务确认该条款", author="张三")
    document.add_comment(document.paragraphs[2].runs, text="期限是否太短？", author="李四")
    doc = parse(save(document, tmp_path / "reviewed.docx"))
    assert texts(doc) == texts(parse(plain))
    assert doc.report.skipped == {"comments": 2}
    result = parse_docx((tmp_path / "reviewed.docx").read_bytes(), DEFAULT_LIMITS)
    assert result.chars_skipped == len("请法务确认该条款期限是否太短？")
    assert (result.chars_seen or 0) - chars_seen(plain) == result.chars_skipped


def test_header_and_footer_text_is_indexed_once_a_page_number_is_not(tmp_path: Path) -> None:
    """A document number printed only in the footer is what a reader asks for: the headers'
    and footers' text comes once, labelled, after the body; a footer that is only a page
    number is counted, not indexed."""
    plain = save(contract(with_notes=False), tmp_path / "plain.docx")
    document = contract(with_notes=False)
    document.sections[0].header.paragraphs[0].text = "某某集团内部资料 严禁外传"
    document.sections[0].footer.paragraphs[0].text = "文件编号:MM-FW-007 版本:A/1"
    document.add_section().footer.is_linked_to_previous = True  # the same footer again
    doc = parse(save(document, tmp_path / "numbered.docx"))
    assert texts(doc) == [*texts(parse(plain)), "页眉页脚",
                          "某某集团内部资料 严禁外传 | 文件编号:MM-FW-007 版本:A/1"]
    assert [b.kind for b in doc.blocks[-2:]] == [BlockKind.HEADING, BlockKind.PARAGRAPH]
    assert doc.meta.title == parse(plain).meta.title  # the margins' heading names no document
    assert doc.report.skipped == {}

    paged = contract(with_notes=False)
    paged.sections[0].footer.paragraphs[0].text = "第 1 页"
    doc = parse(save(paged, tmp_path / "paged.docx"))
    assert texts(doc) == texts(parse(plain))
    assert doc.report.skipped == {"headers_footers": 1}
    result = parse_docx((tmp_path / "paged.docx").read_bytes(), DEFAULT_LIMITS)
    assert result.chars_skipped == len("第1页")
    assert (result.chars_seen or 0) - chars_seen(plain) == result.chars_skipped



def test_a_tab_or_break_in_a_header_separates_its_words(tmp_path: Path) -> None:
    """Word's header layout "left<tab>centre<tab>right" is three words, not one: the tab and
    the line break are drawn as space, so each is found by itself."""
    document = contract(with_notes=False)
    header = document.sections[0].header.paragraphs[0]
    header.add_run("内部资料").add_tab()
    header.add_run("MM-FW-007").add_break()
    header.add_run("Header1").add_tab()
    header.add_run("Test")
    doc = parse(save(document, tmp_path / "tabbed.docx"))
    assert texts(doc)[-1] == "内部资料 MM-FW-007 Header1 Test"


# ---- title ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("core_title", "title", "source"), [
    ("费用报销管理办法（2025年修订）", "费用报销管理办法(2025年修订)", "metadata"),
    ("文档标题", "合同管理办法", "heading"),
    ("Document1", "合同管理办法", "heading"),
    ("公司红头文件模板", "合同管理办法", "heading"),
    ("新建 Microsoft Word 文档", "合同管理办法", "heading"),
    ("新建项目管理办法", "新建项目管理办法", "metadata"),
    ("", "合同管理办法", "heading"),
])
def test_title_from_core_properties_unless_a_placeholder(
        tmp_path: Path, core_title: str, title: str, source: str) -> None:
    document = contract(with_notes=False)
    document.core_properties.title = core_title
    doc = parse(save(document, tmp_path / "titled.docx"))
    assert (doc.meta.title, doc.report.title_source) == (title, source)


# ---- hostile XML ------------------------------------------------------------------------------

LAUGHS = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))


def billion_laughs(xml: str, root: str) -> str:
    """The part with a DTD whose entity would expand to 10⁹ "lol"s, cited in a run's text."""
    dtd = f'<!DOCTYPE {root} [<!ENTITY lol0 "lol">{LAUGHS}]>'
    return xml.replace(f"<{root} ", f"{dtd}<{root} ", 1)


# Recent libxml2 stops the expansion itself; an older one leaves the references unexpanded and
# the DTD is refused: either way the file fails alone, at once, with a reason.
@pytest.mark.parametrize(("part", "reason"), [
    ("footnotes", r"word/footnotes.xml (is not well-formed XML: Maximum entity amplification"
                  r"|declares a DTD)"),
    ("document", r"(XMLSyntaxError: Maximum entity amplification|declares a DTD)"),
])
def test_entity_expansion_fails_the_file_fast(tmp_path: Path, part: str, reason: str) -> None:
    def inject(data: bytes) -> bytes:
        if part == "footnotes":
            notes = notes_part("footnotes", {1: "&lol9;"})
            return add_part(data, "footnotes", NOTES_PARTS["footnotes"],
                            billion_laughs(notes, "w:footnotes"))
        document = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode()
        document = document.replace("</w:body>", f"<w:p>{run('&lol9;')}</w:p></w:body>")
        return replace_member(data, "word/document.xml", billion_laughs(document, "w:document"))

    path = save(contract(), tmp_path / "laughs.docx", inject)
    started = time.perf_counter()
    with pytest.raises(ParseError, match=reason):
        parse(path)
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("part", ["footnotes", "document"])
def test_a_part_declaring_a_dtd_fails_even_without_expansion(tmp_path: Path, part: str) -> None:
    """ECMA-376 Part 2 forbids DTDs in a package: a small, harmless one is refused too, in the
    parts python-docx parses as in those parsed here."""
    dtd = '<!DOCTYPE {root} [<!ENTITY note "展开的实体">]>'

    def inject(data: bytes) -> bytes:
        if part == "footnotes":
            notes = notes_part("footnotes", {1: "&note;"})
            notes = notes.replace("<w:footnotes ", dtd.format(root="w:footnotes") + "<w:footnotes ")
            return add_part(data, "footnotes", NOTES_PARTS["footnotes"], notes)
        document = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode()
        document = document.replace("<w:document ", dtd.format(root="w:document") + "<w:document ")
        return replace_member(data, "word/document.xml", document)

    with pytest.raises(ParseError, match=f"word/{part}.xml declares a DTD"):
        parse(save(contract(), tmp_path / "dtd.docx", inject))


def replace_member(data: bytes, name: str, text: str) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            content = text.encode() if item.filename == name else source.read(item.filename)
            target.writestr(item, content)
    return out.getvalue()
