"""A table in a picture inside an Office file is read row by row, as a scanned page's is
(ingest/parse/pictures.py through ingest/parse/ocr_rows.py): joined top to bottom, the cells of
one row came interleaved with the next row's in one paragraph, and no row had a chunk of its own.
A picture of prose still reads as one paragraph, in its place in the document.

Real files: Word and PowerPoint files python-docx and python-pptx write, holding the photographed
table LibreOffice rendered (tests/fixtures/formats/travel_table.jpg) and a scan of prose."""

from __future__ import annotations

from pathlib import Path

import docx
import pymupdf
import pytest
from docx.shared import Cm
from PIL import Image
from pptx import Presentation
from pptx.util import Cm as SlideCm

from ingest.chunk import chunk_document
from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta

ROOT = Path(__file__).parents[1]
TABLE_PICTURE = ROOT / "tests/fixtures/formats/travel_table.jpg"
TRAVEL = ["人员级别 出差城市 住宿标准(元/晚) 伙食补助(元/天)", "普通员工 北京 500 100",
          "部门经理 上海 650 120", "高级经理 广州 800 150", "副总经理 深圳 1000 180"]
PROSE = ["员工出差应当事先填写出差申请单", "经部门负责人批准后方可出行",
         "出差结束后十日内办理报销手续"]


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def prose_scan(path: Path) -> Path:
    """Three lines of Chinese prose set in 12 points, as a 150 dpi gray scan."""
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=120)
    for n, line in enumerate(PROSE):
        page.insert_text((20, 35 + 28 * n), line, fontname="china-s", fontsize=12)
    pix = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    Image.frombytes("L", (pix.width, pix.height), pix.samples).save(path)
    return path


@pytest.fixture(scope="module")
def word(tmp_path_factory: pytest.TempPathFactory) -> ParsedDocument:
    folder = tmp_path_factory.mktemp("word")
    document = docx.Document()
    document.add_paragraph("第一条 出差住宿和伙食补助标准如下。")
    document.add_picture(str(TABLE_PICTURE), width=Cm(15))
    document.add_paragraph("第二条 出差申请和报销程序如下。")
    document.add_picture(str(prose_scan(folder / "prose.png")), width=Cm(12))
    document.add_paragraph("第三条 本办法自发布之日起施行。")
    document.save(folder / "出差管理办法.docx")
    return parse(folder / "出差管理办法.docx")


def test_a_pictured_table_comes_out_row_by_row(word: ParsedDocument) -> None:
    rows = [b for b in word.blocks if b.kind == BlockKind.TABLE_ROW]
    assert [b.text for b in rows] == TRAVEL
    assert all(b.ocr and b.ocr_confidence and b.ocr_confidence > 0.8 for b in rows)
    assert all(b.bbox is None for b in word.blocks)  # a picture's points are not the page's
    table = next(b for b in word.blocks if b.kind == BlockKind.TABLE)
    assert all(row in table.text for row in TRAVEL)
    assert word.report.tables == 1 and word.report.table_rows == len(TRAVEL)


def test_every_pictured_row_reaches_a_chunk_of_its_own(word: ParsedDocument) -> None:
    chunks = [c.text for c in chunk_document(word)]
    assert all(row in chunks for row in TRAVEL)


def test_the_pictures_text_keeps_its_place_in_the_document(word: ParsedDocument) -> None:
    texts = [b.text for b in word.blocks]
    at = {key: next(i for i, text in enumerate(texts) if key in text)
          for key in ("第一条", "按下表执行", TRAVEL[0], TRAVEL[-1], "超出标准", "第二条",
                      PROSE[0], "第三条")}
    assert list(at.values()) == sorted(at.values())
    assert texts[at["按下表执行"]].startswith("图片文字: ")  # the lines above the table
    assert texts[at["超出标准"]].startswith("图片文字: ")  # and below it
    assert word.report.coverage > 0.95


def test_a_picture_of_prose_reads_as_one_paragraph_as_before(word: ParsedDocument) -> None:
    read = [b for b in word.blocks if PROSE[0] in b.text]
    assert len(read) == 1 and read[0].kind == BlockKind.PARAGRAPH and read[0].ocr
    assert read[0].text == "图片文字: " + "".join(PROSE)  # CJK lines joined without a space


def test_a_pictured_table_on_a_slide_comes_out_row_by_row(tmp_path: Path) -> None:
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "出差标准"
    slide.shapes.add_picture(str(TABLE_PICTURE), SlideCm(2), SlideCm(4), width=SlideCm(20))
    deck.save(tmp_path / "标准.pptx")
    doc = parse(tmp_path / "标准.pptx")
    assert [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW] == TRAVEL
    assert all(row in [c.text for c in chunk_document(doc)] for row in TRAVEL)
