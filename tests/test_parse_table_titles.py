"""A table's first row of one cell across every column is its title, not its header
(ingest/parse/tables.py): as the header, its text named every value of every row
("Mozilla | Industry: Founded", "差旅标准表: 普通员工; 差旅标准表: 北京"). The title becomes the
caption and the row under it the header; a table of labels and values (an infobox) has no header
row; a one-column table keeps its header.

Real files: bench/format_corpus's wikipedia.html; Word and PowerPoint tables with a merged title
row written by python-docx and python-pptx, as a user merging the cells does."""

from __future__ import annotations

from pathlib import Path

import docx
from pptx import Presentation
from pptx.util import Cm

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta

ROOT = Path(__file__).parents[1]
TITLE = "2025年度差旅住宿标准表"
GRID = [["人员级别", "出差城市", "住宿标准(元/晚)"], ["普通员工", "北京", "500"],
        ["部门经理", "上海", "650"]]
ROWS = [f"{TITLE} | 人员级别: 普通员工; 出差城市: 北京; 住宿标准(元/晚): 500",
        f"{TITLE} | 人员级别: 部门经理; 出差城市: 上海; 住宿标准(元/晚): 650"]


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def rows(doc: ParsedDocument) -> list[str]:
    return [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]


def html_doc(tmp_path: Path, table: str) -> ParsedDocument:
    path = tmp_path / "page.html"
    path.write_text(f"<html><body><h1>差旅管理</h1><p>标准如下。</p>{table}</body></html>", "utf-8")
    return parse(path)


def test_wikipedia_infobox_reads_label_and_value() -> None:
    doc = parse(ROOT / "bench/format_corpus/readability/wikipedia.html")
    read = rows(doc)
    assert "Mozilla | Industry: Open-source software" in read
    assert "Mozilla | Founder: Netscape Communications Corporation" in read
    assert not any("Industry: Founded" in text or "Industry: Founder" in text for text in read)


def test_a_merged_title_row_in_word_is_the_caption(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("第一条 住宿标准如下。")
    table = document.add_table(rows=1 + len(GRID), cols=3)
    table.cell(0, 0).merge(table.cell(0, 2)).text = TITLE
    for r, row in enumerate(GRID, start=1):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    document.save(tmp_path / "标准.docx")
    doc = parse(tmp_path / "标准.docx")
    assert rows(doc) == ROWS
    assert next(b.text for b in doc.blocks if b.kind == BlockKind.TABLE).startswith(TITLE)


def test_a_merged_title_row_on_a_slide_is_the_caption(tmp_path: Path) -> None:
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "出差标准"
    table = slide.shapes.add_table(1 + len(GRID), 3, Cm(2), Cm(5), Cm(20), Cm(6)).table
    table.cell(0, 0).merge(table.cell(0, 2))
    table.cell(0, 0).text = TITLE
    for r, row in enumerate(GRID, start=1):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    deck.save(tmp_path / "标准.pptx")
    assert rows(parse(tmp_path / "标准.pptx")) == ROWS


def test_an_html_title_row_and_a_caption_both_name_the_table(tmp_path: Path) -> None:
    cells = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in GRID)
    doc = html_doc(tmp_path, f'<table><caption>附表1</caption><tr><th colspan="3">{TITLE}</th>'
                             f"</tr>{cells}</table>")
    assert rows(doc) == [text.replace(TITLE, f"附表1 {TITLE}") for text in ROWS]


def test_a_one_column_table_keeps_its_header(tmp_path: Path) -> None:
    doc = html_doc(tmp_path, "<table><tr><th>适用部门</th></tr><tr><td>行政部</td></tr>"
                             "<tr><td>财务部</td></tr></table>")
    assert rows(doc) == ["适用部门: 行政部", "适用部门: 财务部"]


def test_a_spanning_first_row_over_numbers_stays_the_header(tmp_path: Path) -> None:
    """Under "住宿标准(元/晚)" across two columns, a row of figures is no header."""
    doc = html_doc(tmp_path, '<table><tr><th colspan="2">住宿标准(元/晚)</th></tr>'
                             "<tr><td>500</td><td>650</td></tr>"
                             "<tr><td>800</td><td>1000</td></tr></table>")
    assert rows(doc) == ["住宿标准(元/晚): 500; 住宿标准(元/晚): 650",
                         "住宿标准(元/晚): 800; 住宿标准(元/晚): 1000"]
