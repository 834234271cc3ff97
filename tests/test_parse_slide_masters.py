"""Pictures on slide masters and layouts (issue 40, "slide master/layout text once per deck"):
a logo with the company's name or a "机密" stamp placed on the master is shown on every slide
built on it, and read once per deck, by the slide pictures' rules, only from the masters and
layouts the slides show. The pictures are drawn by Pillow with a Chinese font; python-pptx
places them on the template as PowerPoint's slide-master view would (a picture drawn on a slide
is moved to the master, with its image related from the master's part)."""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import zipfile
import zlib
from pathlib import Path

import pptx
import pytest
from debian_packages import cjk_font
from PIL import Image, ImageDraw, ImageFont
from pptx.parts.slide import BaseSlidePart
from pptx.presentation import Presentation as PresentationFile
from pptx.slide import SlideLayout, SlideMaster
from pptx.util import Inches

from ingest.models import ParsedDocument
from ingest.parse import ParseLimits, parse_document, read_meta

STAMP, DEPARTMENT = "华东集团 机密文件", "人力资源部 内部培训"


def picture(text: str) -> bytes:
    image = Image.new("RGB", (900, 160), "white")
    font = ImageFont.truetype(cjk_font(), 56)
    ImageDraw.Draw(image).text((30, 40), text, font=font, fill="black")
    data = io.BytesIO()
    image.save(data, "PNG")
    return data.getvalue()


def place(deck: PresentationFile, template: SlideMaster | SlideLayout, blob: bytes) -> None:
    """The picture on the template, near its foot."""
    slide = deck.slides[0]
    shape = slide.shapes.add_picture(io.BytesIO(blob), Inches(0.5), Inches(6.2), Inches(4))
    blip = shape._element.blipFill.blip
    assert isinstance(template.part, BaseSlidePart)
    on_slide, blip.rEmbed = blip.rEmbed, template.part.get_or_add_image_part(io.BytesIO(blob))[1]
    template.shapes._spTree.append(shape._element)
    if not slide.element.xpath(f'.//a:blip[@r:embed="{on_slide}"]'):  # the slide's own picture
        slide.part.drop_rel(on_slide)


def training_deck(path: Path) -> Path:
    """Slides 1 and 2 on layout 1, slide 3 on layout 5 with "Hide background graphics"; the
    master, layouts 1, 5 and 6 (which no slide uses) each hold a picture of text."""
    deck = pptx.Presentation()
    for title, layout in (("休假制度", 1), ("加班规定", 1), ("附则", 5)):
        slide = deck.slides.add_slide(deck.slide_layouts[layout])
        assert slide.shapes.title is not None
        slide.shapes.title.text = title
    deck.slides[2].element.set("showMasterSp", "0")
    place(deck, deck.slide_master, picture(STAMP))
    place(deck, deck.slide_layouts[1], picture(DEPARTMENT))
    place(deck, deck.slide_layouts[5], picture("隐藏的版式图片"))
    place(deck, deck.slide_layouts[6], picture("未使用的版式图片"))
    deck.save(str(path))
    return path


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, ParseLimits())


def text_of(doc: ParsedDocument) -> str:
    return "\n".join(b.text for b in doc.blocks)


def test_master_and_layout_pictures_once_per_deck_from_what_slides_show(tmp_path: Path) -> None:
    doc = parse(training_deck(tmp_path / "training.pptx"))
    *_, heading, margins = doc.blocks
    assert (heading.text, heading.page) == ("页眉页脚", 3)
    assert margins.text == f"图片文字: {STAMP} | 图片文字: {DEPARTMENT}"
    assert text_of(doc).count("机密文件") == 1
    assert "隐藏的版式图片" not in text_of(doc) and "未使用" not in text_of(doc)
    assert doc.report.ocr_mean_confidence and doc.report.ocr_mean_confidence > 0.8
    assert not doc.report.skipped


def test_a_logo_on_a_slide_and_on_its_master_is_read_once(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    slide.shapes.add_picture(io.BytesIO(picture(STAMP)), Inches(1), Inches(1), Inches(4))
    deck.slides.add_slide(deck.slide_layouts[6])
    place(deck, deck.slide_master, picture(STAMP))
    deck.save(str(tmp_path / "logo.pptx"))
    doc = parse(tmp_path / "logo.pptx")
    assert [(b.page, b.text) for b in doc.blocks if "机密文件" in b.text] == [
        (1, f"图片文字: {STAMP}")]


def pixel_bomb() -> bytes:
    """A PNG whose header says 40,000 × 40,000 pixels (4.8 GB decoded) over a few bytes."""
    data = bytearray(picture("x"))
    data[16:24] = struct.pack(">II", 40_000, 40_000)  # IHDR's width and height
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


def test_a_hostile_master_picture_is_skipped_with_its_reason(tmp_path: Path) -> None:
    """A pixel bomb on the master (its image part's bytes replaced in the saved file) is never
    decoded, and a layout's picture whose part the file does not hold (its relationship kept,
    the media file removed) is counted: the deck's slide and its other master picture are
    read all the same."""
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    assert slide.shapes.title is not None
    slide.shapes.title.text = "报销制度"
    slide.placeholders[1].text_frame.text = "差旅费须在返回后十日内报销。"
    place(deck, deck.slide_master, picture("待替换"))
    place(deck, deck.slide_master, picture(STAMP))
    place(deck, deck.slide_layouts[1], picture(DEPARTMENT))
    deck.save(str(tmp_path / "saved.pptx"))
    bomb, department = media(deck.slide_master), media(deck.slide_layouts[1])
    path = tmp_path / "hostile.pptx"
    with zipfile.ZipFile(tmp_path / "saved.pptx") as source, zipfile.ZipFile(path, "w") as out:
        for info in source.infolist():
            if info.filename != department:
                out.writestr(info, pixel_bomb() if info.filename == bomb else source.read(info))
    doc = parse(path)
    assert "差旅费须在返回后十日内报销。" in text_of(doc)
    assert doc.blocks[-1].text == f"图片文字: {STAMP}"
    assert DEPARTMENT not in text_of(doc) and "待替换" not in text_of(doc)
    assert doc.report.skipped == {"pictures_unreadable": 1, "pictures_missing": 1}


def media(template: SlideMaster | SlideLayout) -> str:
    """The zip member of the template's first picture."""
    rel_id = template.element.xpath(".//a:blip/@r:embed")[0]
    return str(template.part.related_part(rel_id).partname).lstrip("/")


SOFFICE = shutil.which("soffice")


@pytest.mark.skipif(SOFFICE is None, reason="needs LibreOffice (soffice)")
def test_an_odp_masters_picture_is_read_once(tmp_path: Path) -> None:
    """The deck as LibreOffice Impress saves it as .odp (its master page holds the stamp and
    the layout's picture): the .odp goes through LibreOffice to .pptx and each is read once."""
    assert SOFFICE is not None
    source = training_deck(tmp_path / "培训.pptx")
    subprocess.run([SOFFICE, "--headless", f"-env:UserInstallation=file://{tmp_path}/lo",
                    "--convert-to", "odp", "--outdir", str(tmp_path / "odp"), str(source)],
                   check=True, capture_output=True, timeout=300)
    doc = parse(tmp_path / "odp" / "培训.odp")
    assert text_of(doc).count(STAMP) == 1 and text_of(doc).count(DEPARTMENT) == 1
    assert "休假制度" in text_of(doc)
