"""Pictures inside Word, PowerPoint and Excel files are read by OCR (issue 40, "every visible
part"), within limits: decorations are left alone, a picture used again is read once, and a
document reads at most `max_pictures` of them. The pictures are drawn by Pillow with a Chinese
font and inserted by python-docx, python-pptx and openpyxl as a user inserting them would."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import openpyxl
import pptx
from debian_packages import cjk_font
from docx.shared import Cm
from openpyxl.drawing.image import Image as SheetImage
from PIL import Image, ImageDraw, ImageFont
from pptx.dml.color import RGBColor
from pptx.util import Inches

from ingest.models import ParsedDocument
from ingest.parse import ParseLimits, parse_document, read_meta

NOTICE = "报销截止日期为每月二十五日"


def picture(text: str, size: tuple[int, int] = (900, 160), fmt: str = "PNG") -> io.BytesIO:
    image = Image.new("RGB", size, "white")
    font = ImageFont.truetype(cjk_font(), 56)
    ImageDraw.Draw(image).text((30, 40), text, font=font, fill="black")
    data = io.BytesIO()
    image.save(data, fmt)
    data.seek(0)
    return data


def parse(path: Path, limits: ParseLimits | None = None) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, limits or ParseLimits())


def ocr_texts(doc: ParsedDocument) -> list[tuple[int, str]]:
    return [(b.page, b.text) for b in doc.blocks if b.ocr]


def test_docx_picture_is_read_after_its_paragraph(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("第一条 通知如下图。")
    document.add_picture(picture(NOTICE, fmt="JPEG"), width=Cm(12))
    document.add_picture(picture("", (40, 40)))  # a bullet-sized decoration: not read
    document.add_paragraph("第二条 逾期不予受理。")
    path = tmp_path / "notice.docx"
    document.save(path)
    doc = parse(path)
    texts = [b.text for b in doc.blocks]
    assert texts[0] == "第一条 通知如下图。" and texts[-1] == "第二条 逾期不予受理。"
    [(_, read)] = ocr_texts(doc)
    assert read.startswith("图片文字: ") and NOTICE in read
    assert doc.report.ocr_mean_confidence and doc.report.ocr_mean_confidence > 0.8
    assert doc.report.coverage == 1.0


def test_pptx_white_label_on_a_transparent_ground_is_read(tmp_path: Path) -> None:
    """A label made for a dark slide, white text on nothing (RapidOCR's
    white_font_color_transparent.png is one): laid on white it is a blank picture, on black it
    reads as the slide shows it."""
    label = Image.new("RGBA", (900, 160), (255, 255, 255, 0))
    ImageDraw.Draw(label).text((30, 40), NOTICE, font=ImageFont.truetype(cjk_font(), 56),
                               fill=(255, 255, 255, 255))
    data = io.BytesIO()
    label.save(data, "PNG")
    data.seek(0)
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    slide.background.fill.solid()
    slide.background.fill.fore_color.rgb = RGBColor(0x10, 0x20, 0x40)
    slide.shapes.add_picture(data, Inches(1), Inches(2), width=Inches(6))
    path = tmp_path / "dark.pptx"
    deck.save(path)
    [(_, read)] = ocr_texts(parse(path))
    assert NOTICE in read


def test_pptx_logo_on_every_slide_is_read_once(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    logo = picture("华东集团内部培训").getvalue()
    for number in range(1, 4):
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        slide.shapes.add_picture(io.BytesIO(logo), Inches(1), Inches(1), Inches(4))
        if number == 2:
            slide.shapes.add_picture(picture(NOTICE), Inches(1), Inches(3), Inches(6))
    path = tmp_path / "training.pptx"
    deck.save(path)
    read = ocr_texts(parse(path))
    assert [page for page, _ in read] == [1, 2]
    assert "华东集团内部培训" in read[0][1] and NOTICE in read[1][1]


def test_xlsx_picture_over_a_sheet_and_the_picture_cap(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["项目", "金额"])
    sheet.append(["差旅", 300])
    sheet.add_image(SheetImage(picture(NOTICE)), "D2")
    for n in range(4):  # distinct pictures: each counts towards the cap
        sheet.add_image(SheetImage(picture(f"附件{n + 1}")), f"D{10 + 10 * n}")
    path = tmp_path / "claims.xlsx"
    workbook.save(path)
    doc = parse(path, ParseLimits(max_pictures=2))
    read = ocr_texts(doc)
    assert NOTICE in read[0][1] and "附件1" in read[1][1]
    assert len(read) == 2
    assert doc.report.skipped == {"pictures_over_limit": 3}


def test_docx_banner_one_line_high_is_read_and_specks_are_not() -> None:
    """Apache POI's drawing.docx (bench/format_corpus): a 234 × 60 GIF banner, a line of text
    high, in a table cell, is read as Tika's Tesseract reads it (no text part of the file has
    these words); its 1 × 1 and 7 × 9 pictures are left alone and its 68 × 37 WMF logo's
    text is read from its records (ingest.parse.metafile), as Tika reads it."""
    path = Path(__file__).parents[1] / "bench/format_corpus/poi/drawing.docx"
    doc = parse(path)
    text = " ".join(b.text for b in doc.blocks).replace(" ", "")
    assert "图片文字:RUSSIANFINANCIALCONTROLMONITOR" in text
    assert "图片文字:CorelDRAW.csl" in text
    assert "pictures_unreadable" not in doc.report.skipped
