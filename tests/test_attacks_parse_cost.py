"""Issue 39, item 12: files that are cheap to make must be cheap to read. A multi-frame TIFF
(a few hundred kilobytes of blank fax pages) was OCR'd frame by frame, seconds each; a CSV line
of unbalanced quotes made csv.Sniffer's quadratic regular expression run for seconds. Times
are CPU seconds of this process with wide margins (the machine is shared)."""

from __future__ import annotations

import io
import time
from pathlib import Path

from debian_packages import cjk_font
from PIL import Image, ImageDraw, ImageFont

from ingest.models import ParsedDocument
from ingest.parse import ParseLimits, parse_document, read_meta


def parse(path: Path, limits: ParseLimits | None = None) -> tuple[ParsedDocument, float]:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    started = time.process_time()
    doc = parse_document(meta, data, limits or ParseLimits())
    return doc, time.process_time() - started


def fax(path: Path, pages: list[str], side: tuple[int, int]) -> Path:
    """A Group 4 multi-page TIFF as fax software writes it; an empty string is a blank page."""
    font = ImageFont.truetype(cjk_font(), 40)
    frames = []
    for text in pages:
        frame = Image.new("1", side, 1)
        if text:
            ImageDraw.Draw(frame).text((40, 40), text, font=font, fill=0)
        frames.append(frame)
    buffer = io.BytesIO()
    frames[0].save(buffer, "TIFF", save_all=True, append_images=frames[1:],
                   compression="group4")
    path.write_bytes(buffer.getvalue())
    return path


def test_blank_fax_pages_are_not_ocrd_and_frames_past_the_cap_not_read(tmp_path: Path) -> None:
    # 60 A4-size frames at 300 dpi, one with text: 2.7 s of OCR each on main (160 s)
    path = fax(tmp_path / "fax.tif", ["传真：报销须在一个月内提交", *[""] * 59], (2480, 3508))
    assert path.stat().st_size < 100_000
    doc, seconds = parse(path)
    assert seconds < 40, seconds
    assert "报销须在一个月内提交" in " ".join(b.text for b in doc.blocks)
    assert doc.report.ocr_pages == 1
    assert doc.report.pages == 50
    assert doc.report.skipped == {"image_frames": 10}


def test_frames_past_the_setting_are_counted_not_read(tmp_path: Path) -> None:
    pages = [f"第{n}页 差旅费用报销说明" for n in range(1, 201)]
    path = fax(tmp_path / "book.tif", pages, (700, 160))
    doc, seconds = parse(path, ParseLimits(max_image_frames=3))
    assert seconds < 30, seconds
    text = " ".join(b.text for b in doc.blocks)
    assert "第3页" in text and "第4页" not in text
    assert doc.report.ocr_pages == 3
    assert doc.report.skipped == {"image_frames": 197}


def test_csv_sniffing_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text('a,"b' * 15_000 + "\n", encoding="utf-8")  # 60 KB: 8 s to sniff on main
    doc, seconds = parse(path)
    assert seconds < 1.5, seconds
    assert doc.blocks


def test_csv_delimiter_is_still_told_from_whole_lines(tmp_path: Path) -> None:
    rows = ["部门;预算;说明"] + [f"部门{n};{n * 1000};" + "说明" * 30 for n in range(200)]
    path = tmp_path / "budget.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    doc, _ = parse(path)
    assert any(b.text.startswith("部门: 部门7; 预算: 7000") for b in doc.blocks)
