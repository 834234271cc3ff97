"""Tables in scans and photos come out row by row (ingest/parse/ocr_rows.py): OCR reads a box per
cell, and sorted top to bottom the cells of a row mixed with the next row's; a row led by a
number ("8.37 4.50 ASE Tst") became a numbered heading, and a heading followed by another was in
no chunk. Prose in two columns is still read column by column.

Real pictures: a table LibreOffice rendered and turned as a photo is (tests/fixtures/formats/
travel_table.jpg), and kreuzberg's photographed newspaper stock table (bench/format_corpus)."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from ingest.chunk import chunk_document
from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta

ROOT = Path(__file__).parents[1]
TRAVEL = ["人员级别 出差城市 住宿标准(元/晚) 伙食补助(元/天)", "普通员工 北京 500 100",
          "部门经理 上海 650 120", "高级经理 广州 800 150", "副总经理 深圳 1000 180"]


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def chunk_texts(doc: ParsedDocument) -> str:
    return "\n".join(f"{' '.join(c.title_path)} {c.text}" for c in chunk_document(doc))


@pytest.fixture(scope="module")
def travel() -> ParsedDocument:
    return parse(ROOT / "tests/fixtures/formats/travel_table.jpg")


def test_photographed_table_rows_come_out_as_rows(travel: ParsedDocument) -> None:
    rows = [b for b in travel.blocks if b.kind == BlockKind.TABLE_ROW]
    assert [b.text for b in rows] == TRAVEL
    assert all(b.ocr and b.ocr_confidence and b.ocr_confidence > 0.8 for b in rows)
    table = next(b for b in travel.blocks if b.kind == BlockKind.TABLE)
    assert all(row in table.text for row in TRAVEL)
    assert travel.report.tables == 1 and travel.report.table_rows == len(TRAVEL)


def test_lines_around_a_table_stay_text_in_place(travel: ParsedDocument) -> None:
    kinds = [(b.kind, b.text) for b in travel.blocks]
    closing = next(i for i, (kind, text) in enumerate(kinds) if text.startswith("超出标准"))
    assert kinds[closing][0] == BlockKind.PARAGRAPH
    assert kinds[closing - 1] == (BlockKind.TABLE_ROW, TRAVEL[-1])
    assert "按下表执行" in kinds[0][1] and kinds[0][0] != BlockKind.TABLE_ROW


def test_every_row_reaches_a_chunk_of_its_own(travel: ParsedDocument) -> None:
    chunks = [c.text for c in chunk_document(travel)]
    assert all(row in chunks for row in TRAVEL)


def test_newspaper_stock_rows_are_read_across_and_none_is_lost() -> None:
    """Rows led by prices, some bold (taller boxes), cells far apart, the photo skewed."""
    doc = parse(ROOT / "bench/format_corpus/kreuzberg/ocr_image.jpg")
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert len(rows) >= 18 and not any(b.kind == BlockKind.HEADING and b.text[0].isdigit()
                                       for b in doc.blocks)
    indexed = chunk_texts(doc)
    for row in ("32.50 Biomet 36.71", "13.86 BluCoat 41.29", "8.37 4.50 ASE Tst 7.76"):
        assert any(row in text for text in rows), row
        assert row in indexed, row
    assert doc.meta.title == "Nasdaq & AMEX"  # PP-OCRv4 read "Nasdag &AMEX" (branch ocr-reading)


def two_column_scan(path: Path) -> Path:
    """A page of two columns of Chinese prose set in 11 points, as a 150 dpi gray scan: each line
    of a column a clause number and its text, which OCR may read as two boxes."""
    left = [f"第{n}条  员工因公出差应当事先提出书面申请" for n in "一二三四五"]
    right = [f"附则{n}  本办法由行政部负责解释并自发布之日起" for n in range(1, 6)]
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=420)
    for n, (a, b) in enumerate(zip(left, right, strict=True)):
        page.insert_text((40, 60 + 20 * n), a, fontname="china-s", fontsize=11)
        page.insert_text((315, 60 + 20 * n), b, fontname="china-s", fontsize=11)
    pix = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    Image.frombytes("L", (pix.width, pix.height), pix.samples).save(path)
    return path


def test_two_columns_of_prose_are_read_column_by_column_not_as_a_table(tmp_path: Path) -> None:
    doc = parse(two_column_scan(tmp_path / "columns.png"))
    assert not any(b.kind in {BlockKind.TABLE, BlockKind.TABLE_ROW} for b in doc.blocks)
    text = "".join(b.text for b in doc.blocks)
    assert text.index("第五条") < text.index("附则1") and "第五条" in text and "附则5" in text


def test_a_headings_number_set_apart_is_read_with_its_heading(tmp_path: Path) -> None:
    """A numbered heading set with a wide gap after its number (about 3.5 line heights here)
    is one line, as a person reads it; the same gap after a word (a column gutter, a form's
    label and value) still parts them."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=420)
    lines = [(60, "china-s", "第一章", "总则"), (130, "helv", "3", "MovieShots Dataset"),
             (200, "helv", "Dataset", "MovieShots")]
    for y, font, first, second in lines:
        page.insert_text((40, y), first, fontname=font, fontsize=11)
        start = 40 + pymupdf.get_text_length(first, fontname=font, fontsize=11) + 39
        page.insert_text((start, y), second, fontname=font, fontsize=11)
    pix = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    path = tmp_path / "headings.png"
    Image.frombytes("L", (pix.width, pix.height), pix.samples).save(path)
    texts = [b.text for b in parse(path).blocks]
    assert "第一章 总则" in texts and "3 MovieShots Dataset" in texts
    assert "Dataset" in texts and "MovieShots" in texts
