"""Images (PNG, JPEG, TIFF, BMP) read by OCR like scanned PDF pages, pages scanned sideways or
upside down read upright, oversized images refused from their header, and PDF titles from
metadata or the largest text.

The page images are real: Chinese lines drawn with PyMuPDF's built-in CJK font (as the PDF tests
do, so no system font is needed), rasterised and saved with Pillow. OCR is slow, so the images
are small and few."""

from __future__ import annotations

import io
import struct
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from PIL import Image

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import ParseError, ParseLimits, parse_document, read_meta

CN_FONT = "china-s"
TITLE = "关于调整办公区门禁时间的通知"
KEY = "其他时间进入办公区须提前向行政部申请。"
NOTICE = [TITLE, "各部门:", "自2025年3月1日起,办公区门禁时间调整为每日7:00至22:00。", KEY,
          "行政部 2025年2月20日"]
EXIF_ORIENTATION = 0x0112


def parse(path: Path, **options: float) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, ParseLimits(**options))  # type: ignore[arg-type]


def page_image(lines: list[str], width_px: int = 1200) -> Image.Image:
    """The lines as a gray page image `width_px` wide, the first line larger (a heading). The page
    keeps a paper-like shape: the OCR detector scales a page's short side up to 736 pixels, so a
    one-line strip would cost as much as a large page."""
    doc = pymupdf.open()
    page = doc.new_page(width=432, height=300)
    for n, text in enumerate(lines):
        page.insert_text((36, 40 + 34 * n), text, fontname=CN_FONT, fontsize=16 if n == 0 else 11)
    zoom = width_px / page.rect.width
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY)
    return Image.frombytes("L", (pix.width, pix.height), pix.samples)


def saved(image: Image.Image, path: Path, **options: object) -> Path:
    image.save(path, **options)
    return path


def texts(doc: ParsedDocument) -> list[str]:
    return [block.text for block in doc.blocks]


def assert_notice(doc: ParsedDocument) -> None:
    """The notice came out whole, in reading order, by OCR, its heading the title."""
    found = texts(doc)
    assert found[0] == TITLE and doc.blocks[0].kind == BlockKind.HEADING
    assert (doc.meta.title, doc.report.title_source) == (TITLE, "heading")
    assert found.index(KEY) < len(found) - 1 and "行政部" in found[-1]
    assert all(block.ocr and block.page == 1 for block in doc.blocks)
    assert (doc.report.pages, doc.report.ocr_pages) == (1, 1)
    assert doc.report.ocr_mean_confidence is not None and doc.report.ocr_mean_confidence > 0.9


# ---- formats and pages scanned turned ---------------------------------------------------------


def test_jpeg_photo_stored_sideways_is_turned_by_its_exif_orientation(tmp_path: Path) -> None:
    stored = page_image(NOTICE).convert("RGB").rotate(90, expand=True)  # as a phone stores it
    exif = Image.Exif()
    exif[EXIF_ORIENTATION] = 6  # "turn 90° clockwise to display"
    doc = parse(saved(stored, tmp_path / "photo.jpg", quality=90, exif=exif.tobytes()))
    assert_notice(doc)
    assert doc.report.turned_pages == []  # upright from its EXIF, not from OCR passes


def test_multi_page_tiff_gives_one_page_per_frame(tmp_path: Path) -> None:
    frames = [page_image([f"第{n}条 本条适用于第{n}分公司。"], width_px=800) for n in "一二三"]
    path = saved(frames[0], tmp_path / "scan.tif", save_all=True, append_images=frames[1:],
                 compression="tiff_lzw")
    doc = parse(path)
    assert [(b.page, b.text.replace(" ", "")) for b in doc.blocks] == [  # OCR may drop the space
        (1, "第一条本条适用于第一分公司。"), (2, "第二条本条适用于第二分公司。"),
        (3, "第三条本条适用于第三分公司。")]
    assert (doc.report.pages, doc.report.ocr_pages, doc.report.turned_pages) == (3, 3, [])


def sixteen_bit(image: Image.Image) -> Image.Image:
    """16-bit gray (0…65535), as some scanners save: read scaled down, not clipped to white."""
    return Image.fromarray(np.asarray(image, dtype=np.uint16) * 257)


def bilevel(image: Image.Image) -> Image.Image:
    """Black and white, as a fax or a 1-bit scan."""
    return image.point(lambda v: 255 if v > 160 else 0).convert("1")


@pytest.mark.parametrize(("degrees", "name", "pixels"), [
    (90, "turned.png", sixteen_bit), (270, "turned.bmp", bilevel),
    (180, "upside_down.png", sixteen_bit)])  # upright, its lines all score under the threshold
def test_page_scanned_sideways_is_read_upright(
        tmp_path: Path, degrees: int, name: str,
        pixels: Callable[[Image.Image], Image.Image]) -> None:
    turned = pixels(page_image(NOTICE).rotate(-degrees, expand=True))  # turned clockwise
    assert turned.mode in {"I;16", "1"}
    doc = parse(saved(turned, tmp_path / name))
    assert_notice(doc)
    assert doc.report.turned_pages == [1]


def test_pdf_page_scanned_sideways_is_read_upright(tmp_path: Path) -> None:
    """A scanner's PDF: the page image turned a quarter, no text layer."""
    turned = page_image(NOTICE).rotate(-90, expand=True)
    png = io.BytesIO()
    turned.save(png, format="PNG")
    pdf = pymupdf.open()
    page = pdf.new_page(width=turned.width * 72 / 200, height=turned.height * 72 / 200)
    page.insert_image(page.rect, stream=png.getvalue())
    (tmp_path / "scan.pdf").write_bytes(pdf.tobytes())
    doc = parse(tmp_path / "scan.pdf")
    assert_notice(doc)
    assert doc.report.turned_pages == [1]


@pytest.mark.parametrize("ink", [255, 0])
def test_text_on_a_transparent_ground_is_read_light_or_dark(tmp_path: Path, ink: int) -> None:
    """A logo or label saved with a transparent ground: dark text is read on white as before;
    white text (made for a dark page, RapidOCR's white_font_color_transparent.png), which on
    white would be a blank page, is read on black."""
    coverage = Image.eval(page_image(NOTICE), lambda v: 255 - v)  # the glyphs, anti-aliased
    picture = Image.new("RGBA", coverage.size, (ink, ink, ink, 0))
    picture.putalpha(coverage)
    doc = parse(saved(picture, tmp_path / "label.png"))
    assert_notice(doc)


# ---- limits: refused from the header, before decoding -----------------------------------------


def bomb_png(width: int, height: int) -> bytes:
    """A valid 1-bit white PNG: about 100 KB on disk for 30,000 × 30,000 pixels (900 MB of RGB
    once decoded)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body))

    row = b"\0" + b"\xff" * ((width + 7) // 8)
    packer = zlib.compressobj(9)
    idat = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat)
            + chunk(b"IEND", b""))


def test_decompression_bomb_png_fails_fast_naming_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(bomb_png(30_000, 30_000))
    assert path.stat().st_size < 500_000
    started = time.perf_counter()
    with pytest.raises(ParseError, match=(
            r"image is 30000 × 30000 pixels \(900 megapixels\), over the 150 megapixel limit "
            r"\(the parse_max_image_megapixels setting\)")):
        parse(path)
    assert time.perf_counter() - started < 5


def test_pixel_limit_follows_the_setting(tmp_path: Path) -> None:
    path = saved(page_image(NOTICE), tmp_path / "notice.png")  # 1200 × 833: 1.0 megapixels
    with pytest.raises(ParseError, match=r"over the 0.5 megapixel limit"):
        parse(path, max_image_megapixels=0.5)


def many_page_tiff(pages: int) -> bytes:
    """A TIFF of `pages` frames of one gray pixel, all sharing one strip: a few hundred KB
    (Pillow's save_all takes seconds for this many frames)."""
    entries = [(256, 1), (257, 1), (258, 8), (259, 1), (262, 1), (273, 8), (277, 1), (278, 1),
               (279, 1)]  # width, length, bits, no compression, black is zero, strip at 8, …
    ifd_size = 2 + 12 * len(entries) + 4
    out = [b"II*\x00", struct.pack("<I", 10), b"\xff", b"\x00"]  # header, the strip, padding
    for n in range(pages):
        offset = 10 + n * ifd_size
        following = offset + ifd_size if n + 1 < pages else 0
        out.append(struct.pack("<H", len(entries)) + b"".join(
            struct.pack("<HHII", tag, 3, 1, value) for tag, value in entries)
            + struct.pack("<I", following))
    return b"".join(out)


def test_tiff_with_too_many_pages_fails_fast_naming_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "pages.tiff"
    path.write_bytes(many_page_tiff(2000))
    with Image.open(path) as image:
        assert image.n_frames == 2000 and image.size == (1, 1)
    started = time.perf_counter()
    with pytest.raises(ParseError, match=r"more than 1000 pages \(TIFF frames\), over the page "
                                         r"limit \(the parse_max_pages setting\)"):
        parse(path)
    assert time.perf_counter() - started < 5


def test_bytes_that_are_no_image_fail_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "scan.png"
    path.write_bytes(b"%PDF-1.7\n" + bytes(200))
    with pytest.raises(ParseError, match="not a readable image: the content starts with bytes"):
        parse(path)


# ---- PDF titles -------------------------------------------------------------------------------


def text_pdf(pages: list[list[tuple[float, str, float]]], title: str = "") -> bytes:
    """A PDF of (y, text, font size) lines and the given metadata title."""
    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page(width=595, height=842)
        for y, text, size in lines:
            page.insert_text((72, y), text, fontname=CN_FONT, fontsize=size)
    doc.set_metadata({"title": title})
    data: bytes = doc.tobytes()
    return data


BODY = [(200, "第一条 为规范费用报销,制定本办法。", 11.0),
        (230, "第二条 本办法适用于全体员工。", 11.0)]


def test_pdf_title_comes_from_its_metadata(tmp_path: Path) -> None:
    path = tmp_path / "policy.pdf"
    path.write_bytes(text_pdf([[(150, "内部资料", 16), *BODY]], title="费用报销管理办法"))
    doc = parse(path)
    assert (doc.meta.title, doc.report.title_source) == ("费用报销管理办法", "metadata")


@pytest.mark.parametrize("stated", ["", "Microsoft Word - 报销办法v3.docx", "Untitled-1",
                                    "Revision C", "版本 V1.2"])
def test_pdf_title_is_the_largest_text_not_a_revision_or_running_header(
        tmp_path: Path, stated: str) -> None:
    header = (50, "华东制造有限公司内部文件", 18.0)  # in the top margin of every page
    first = [header, (110, "Revision C", 24.0), (150, "费用报销管理办法", 16.0), *BODY]
    path = tmp_path / "policy.pdf"
    path.write_bytes(text_pdf([first, [header, (200, "第三条 附则。", 11.0)]], title=stated))
    doc = parse(path)
    assert (doc.meta.title, doc.report.title_source) == ("费用报销管理办法", "largest text")
    assert doc.report.headers_footers_removed == 2


def test_latin_page_lying_on_its_side_that_reads_as_nothing_is_turned() -> None:
    """kreuzberg's test scan (bench/format_corpus): an English page turned a quarter, where the
    engine reads no line at all as it lies, so nothing says it is sideways."""
    path = Path(__file__).parents[1] / "bench/format_corpus/kreuzberg/ocr_test_rotated_90.pdf"
    doc = parse(path)
    assert "Docling bundles PDF document conversion to" in " ".join(texts(doc))
    assert doc.report.turned_pages == [1]
