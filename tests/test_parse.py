"""Parsing of the non-PDF formats (DOCX, HTML, Markdown, TXT, PPTX), table rules shared by all
formats, normalization, near-duplicate flags, the parse report, and parsing under a time limit."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
from pptx import Presentation
from pptx.util import Inches

from ingest.chunk import chunk_document
from ingest.models import BlockKind, ChunkKind, ParsedDocument
from ingest.parse import ParseError, ParseLimits, ParseWorker, parse_document, read_meta
from ingest.text import normalize, tidy_numbering

SAMPLE_DOCS = Path(__file__).resolve().parents[1] / "sample_docs"


def parse(path: Path, **options) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, ParseLimits(**options))


def rows_of(doc: ParsedDocument) -> list[tuple[int, str]]:
    return [(b.page, b.text) for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]


# ---- tables in office formats -----------------------------------------------------------------


def test_docx_table_fills_merged_cells_and_takes_its_caption(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("审批权限表", 0)
    document.add_paragraph("表2 审批权限")
    table = document.add_table(rows=4, cols=3)
    for c, text in enumerate(["事项", "金额范围", "审批人"]):
        table.cell(0, c).text = text
    table.cell(1, 0).merge(table.cell(2, 0)).text = "采购"  # vMerge over two rows
    table.cell(1, 1).text, table.cell(1, 2).text = "5万元以下", "部门负责人"
    table.cell(2, 1).text, table.cell(2, 2).text = "5万元(含)以上", "总经理"
    table.cell(3, 0).text = "招聘"
    table.cell(3, 1).merge(table.cell(3, 2)).text = "按年度编制计划"  # gridSpan over two columns
    document.save(tmp_path / "authority.docx")
    doc = parse(tmp_path / "authority.docx")
    assert rows_of(doc) == [
        (1, "表2 审批权限 | 事项: 采购; 金额范围: 5万元以下; 审批人: 部门负责人"),
        (1, "表2 审批权限 | 事项: 采购; 金额范围: 5万元(含)以上; 审批人: 总经理"),
        (1, "表2 审批权限 | 事项: 招聘; 金额范围: 按年度编制计划; 审批人: 按年度编制计划"),
    ]
    (whole,) = [b for b in doc.blocks if b.kind == BlockKind.TABLE]
    assert whole.text.split("\n")[:3] == ["表2 审批权限", "| 事项 | 金额范围 | 审批人 |",
                                          "| --- | --- | --- |"]
    assert (doc.report.tables, doc.report.table_rows) == (1, 3)


def test_html_rowspan_colspan_and_caption(tmp_path: Path) -> None:
    (tmp_path / "t.html").write_text(
        "<html><body><h1>住宿标准</h1><table><caption>表3 住宿标准</caption>"
        "<tr><th>城市</th><th>职级</th><th>标准</th></tr>"
        "<tr><td rowspan='2'>一线城市</td><td>部门负责人</td><td>600元</td></tr>"
        "<tr><td>其他员工</td><td>450元</td></tr>"
        "<tr><td>其他城市</td><td colspan='2'>不分职级 280元</td></tr>"
        "</table></body></html>", encoding="utf-8")
    assert rows_of(parse(tmp_path / "t.html")) == [
        (1, "表3 住宿标准 | 城市: 一线城市; 职级: 部门负责人; 标准: 600元"),
        (1, "表3 住宿标准 | 城市: 一线城市; 职级: 其他员工; 标准: 450元"),
        (1, "表3 住宿标准 | 城市: 其他城市; 职级: 不分职级 280元; 标准: 不分职级 280元"),
    ]


def test_sample_html_table_rows_and_report() -> None:
    doc = parse(SAMPLE_DOCS / "approval_authority.html")
    rows = rows_of(doc)
    assert len(rows) == 14
    assert rows[0][1] == ("事项: 差旅费报销; 金额范围: 单次5000元以下; 审批人: 部门负责人; "
                          "备注: 开支标准按《差旅费管理办法》执行")
    assert doc.report.model_dump(include={"tables", "table_rows", "missing_title", "pages"}) == {
        "tables": 1, "table_rows": 14, "missing_title": False, "pages": 1}


def test_markdown_table_becomes_a_table_block_and_rows(tmp_path: Path) -> None:
    (tmp_path / "t.md").write_text(
        "# 报销时限\n\n表4 报销时限\n\n| 情形 | 时限 |\n|---|---|\n| 境内出差 | 30天 |\n"
        "| 境外出差 | 60天 |\n", encoding="utf-8")
    doc = parse(tmp_path / "t.md")
    assert [b.kind for b in doc.blocks] == [BlockKind.HEADING, BlockKind.PARAGRAPH,
                                            BlockKind.TABLE, BlockKind.TABLE_ROW,
                                            BlockKind.TABLE_ROW]
    assert doc.blocks[3].text == "表4 报销时限 | 情形: 境内出差; 时限: 30天"


def test_markdown_heading_with_nothing_under_it_reaches_a_chunk() -> None:
    """kreuzberg's comprehensive.md (bench/format_corpus, PROVENANCE.md): a heading followed by
    one of its level (or by deeper ones that are themselves empty) was in no chunk: the next
    heading replaced it before any text came. It is now its own paragraph too; a heading with
    text or subsections under it is not repeated."""
    path = Path(__file__).parents[1] / "bench/format_corpus/kreuzberg/comprehensive.md"
    doc = parse(path)
    chunks = [c for c in chunk_document(doc) if c.kind != ChunkKind.PARENT]
    explicit = 'Explicit header attributes {#foobar .baz key="val"}'
    (own,) = [c for c in chunks if c.text == explicit]
    assert own.title_path == [explicit]
    (leaf,) = [c for c in chunks if c.text == "my header"]
    assert leaf.title_path == ["Raw HTML before header", "my header"]  # the parent in its path
    paragraphs = {b.text for b in doc.blocks if b.kind == BlockKind.PARAGRAPH}
    assert "Raw HTML before header" not in paragraphs
    assert "Implicit header references" not in paragraphs and "Line blocks" not in paragraphs


def test_pptx_slides_titles_text_and_merged_table(tmp_path: Path) -> None:
    deck = Presentation()
    cover = deck.slides.add_slide(deck.slide_layouts[0])
    cover.shapes.title.text = "差旅费管理办法培训"
    cover.placeholders[1].text = "财务部　２０２６年１月"
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "住宿标准"
    box = slide.shapes.add_textbox(Inches(1), Inches(1.6), Inches(8), Inches(0.8))
    box.text_frame.text = "第八条 员工出差住宿费在以下标准内凭发票据实报销。"
    table = slide.shapes.add_table(3, 3, Inches(1), Inches(3), Inches(8), Inches(1.5)).table
    for c, text in enumerate(["城市", "职级", "标准"]):
        table.cell(0, c).text = text
    table.cell(1, 0).merge(table.cell(2, 0))
    table.cell(1, 0).text = "一线城市"
    table.cell(1, 1).text, table.cell(1, 2).text = "部门负责人", "600元/天"
    table.cell(2, 1).text, table.cell(2, 2).text = "其他员工", "450元/天"
    deck.save(tmp_path / "training.pptx")
    doc = parse(tmp_path / "training.pptx")
    assert doc.meta.title == "差旅费管理办法培训" and doc.pages == 2
    assert [(b.kind, b.page, b.level, b.text) for b in doc.blocks[:4]] == [
        (BlockKind.HEADING, 1, 1, "差旅费管理办法培训"),
        (BlockKind.PARAGRAPH, 1, None, "财务部 2026年1月"),
        (BlockKind.HEADING, 2, 2, "住宿标准"),
        (BlockKind.PARAGRAPH, 2, None, "第八条 员工出差住宿费在以下标准内凭发票据实报销。"),
    ]
    assert rows_of(doc) == [(2, "城市: 一线城市; 职级: 部门负责人; 标准: 600元/天"),
                            (2, "城市: 一线城市; 职级: 其他员工; 标准: 450元/天")]


# ---- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "data", "reason"), [
    ("empty.docx", b"", "file is empty (0 bytes)"),
    ("photo.docx", b"\x89PNG\r\n\x1a\n" + bytes(64), "not a DOCX file: the content is a PNG image"),
    ("slides.pptx", b"\xd0\xcf\x11\xe0" + bytes(64), "not a PPTX file: the content is a legacy"),
    ("broken.docx", b"PK\x03\x04" + bytes(64), "not a readable DOCX file: BadZipFile"),
    # binary under a text name: no encoding reads it as text (UTF-16 does read: test_encodings)
    ("photo.txt", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4,
     "text file is in an unknown encoding: "),
    ("data.xyz", b"abc", "unsupported file type .xyz"),
])
def test_bad_input_fails_with_a_readable_reason(tmp_path: Path, name: str, data: bytes,
                                                reason: str) -> None:
    (tmp_path / name).write_bytes(data)
    with pytest.raises(ParseError) as caught:
        parse(tmp_path / name)
    assert str(caught.value).startswith(reason)


def test_file_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("正文" * 400_000, encoding="utf-8")  # 2.4 MB
    with pytest.raises(ParseError, match=r"file is 2.3 MB, over the 2 MB limit"):
        parse(tmp_path / "big.txt", max_file_mb=2)
    assert parse(tmp_path / "big.txt", max_file_mb=3).blocks


# ---- text, duplicates, report ----------------------------------------------------------------


def test_ocr_style_numbering_is_normalized() -> None:
    assert tidy_numbering(normalize("第４．２条　报销时限")) == "第4.2条 报销时限"
    assert tidy_numbering(normalize("第 十二 条 本办法")) == "第十二条 本办法"
    assert tidy_numbering(normalize("4 . 2 外部存储设备")) == "4.2 外部存储设备"
    assert tidy_numbering(normalize("按第 5 条执行，共 3 页")) == "按第5条执行,共 3 页"


def test_near_duplicates_are_flagged_not_dropped(tmp_path: Path) -> None:
    clause = "员工出差应事先在OA系统提交出差申请，写明事由、目的地和起止日期，经审批后方可出行。"
    (tmp_path / "d.md").write_text(
        f"# 出差审批\n\n{clause}\n\n报销须在出差结束后30天内办理。\n\n"
        f"{clause.replace('OA', 'ＯＡ')}\n\n{clause.replace('方可', '才能')}\n", encoding="utf-8")
    doc = parse(tmp_path / "d.md")
    assert len(doc.blocks) == 5
    assert [b.near_duplicate_of for b in doc.blocks] == [None, None, None, 1, None]
    assert doc.report.near_duplicate_blocks == 1


def test_missing_title_is_reported(tmp_path: Path) -> None:
    (tmp_path / "memo.txt").write_text(
        "各部门：根据公司安排，现将二〇二六年第一季度费用报销的注意事项通知如下，请遵照执行。\n",
        encoding="utf-8")
    doc = parse(tmp_path / "memo.txt")
    assert doc.meta.title == "" and doc.report.missing_title
    assert parse(SAMPLE_DOCS / "leave_policy.md").report.missing_title is False


# ---- time limit -------------------------------------------------------------------------------


def test_worker_parses_stops_at_the_time_limit_and_recovers() -> None:
    text_meta, text_data = read_meta(SAMPLE_DOCS / "travel_expense_2026.docx", SAMPLE_DOCS,
                                     "default", ["all-staff"])
    scan_meta, scan_data = read_meta(SAMPLE_DOCS / "seal_policy_scanned.pdf", SAMPLE_DOCS,
                                     "default", ["all-staff"])
    with ParseWorker(timeout_s=120) as worker:
        doc = worker.parse(text_meta, text_data)
        # 52 blocks of body, then its page header's section (heading and text)
        assert doc.meta.title == "差旅费管理办法" and len(doc.blocks) == 54
        with pytest.raises(ParseError, match="file is empty"):
            worker.parse(text_meta, b"")
        worker.timeout_s = 1.0  # OCR of the scanned sample takes several seconds
        with pytest.raises(ParseError, match=r"longer than 1 s \(the parse_timeout_s setting\)"):
            worker.parse(scan_meta, scan_data)
        worker.timeout_s = 120
        assert worker.parse(text_meta, text_data).blocks == doc.blocks  # a fresh child
