"""A PDF page shown only by a full-page Stamp annotation (how PDF Expert saves a pasted or
scanned page, Pix2Text's test-doc.pdf) is read: its picture is drawn into the page and OCR'd.
Files without such a page reach the PDF parser byte for byte as they came."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from ingest.parse import ParseLimits, parse_document, read_meta
from ingest.parse.pdf_stamps import with_stamps_drawn
from ingest.text import normalize

LINES = ("第三条 员工每年享有带薪年休假", "年休假应当在当年内安排完毕")


def _picture_of_text() -> bytes:
    with pymupdf.open() as doc:
        page = doc.new_page(width=420, height=160)
        for number, line in enumerate(LINES):
            page.insert_text((20, 60 + 50 * number), line, fontname="china-s", fontsize=22)
        return bytes(page.get_pixmap(dpi=200).tobytes("png"))


def _stamped(path: Path, own_text: str = "") -> Path:
    with pymupdf.open() as doc:
        page = doc.new_page(width=420, height=160)
        page.add_stamp_annot(page.rect, stamp=_picture_of_text())
        if own_text:
            page.insert_text((20, 150), own_text, fontsize=10)
        doc.save(path)
    return path


def test_a_page_shown_only_by_a_stamp_is_ocrd(tmp_path: Path) -> None:
    path = _stamped(tmp_path / "stamped.pdf")
    with pymupdf.open(path) as doc:  # the page's own content holds nothing
        assert not doc[0].get_images() and not doc[0].get_text().strip()
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    doc = parse_document(meta, data, ParseLimits())
    text = normalize("".join(block.text for block in doc.blocks)).replace(" ", "")
    assert doc.report.ocr_pages == 1
    assert "带薪年休假" in text and "当年内安排完毕" in text


def test_files_without_a_stamp_only_page_pass_unchanged(tmp_path: Path) -> None:
    own = _stamped(tmp_path / "own-text.pdf", own_text="Leave policy")  # the page has text
    plain = tmp_path / "plain.pdf"
    with pymupdf.open() as doc:
        doc.new_page().insert_text((72, 72), "no annotation")
        doc.save(plain)
    for path in (own, plain):
        data = path.read_bytes()
        assert with_stamps_drawn(data, 100) is data
    stamped = _stamped(tmp_path / "stamped.pdf").read_bytes()
    assert with_stamps_drawn(stamped, 0) is stamped  # over the page limit: not looked into
    assert with_stamps_drawn(b"%PDF-1.7 broken", 100) == b"%PDF-1.7 broken"
