"""The recognisers that read OCR'd lines (ingest/parse/ocr.py): PP-OCRv4 inside rapidocr-onnxruntime
reads every line, PP-OCRv6 small from the `rapidocr` wheel every line again: its reading replaces
one without a CJK character, and one with a CJK character only when it holds more letters.

Real pages: Tesseract's own test scan (bench/ocr_corpus/phototest.tif) halved as a 150 dpi scan
of it would be, where PP-OCRv4 ran the small words of its lines together (none of its words
read as a word: bench/RESULTS.md); a Chinese notice PyMuPDF set and rasterised, whose lines
PP-OCRv4 reads best; EasyOCR's photo of a Japanese litter sign and TableStructureRec's picture
of an account form (bench/format_corpus), where PP-OCRv4 drops characters without a trace.
A machine without the newer model reads with PP-OCRv4, no error."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from test_parse_images import NOTICE, page_image

from ingest.parse import ocr, parse_document, read_meta

CORPUS = Path(__file__).parents[1] / "bench/ocr_corpus"
BENCH = Path(__file__).parents[1] / "bench/format_corpus"


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def test_small_words_of_a_150_dpi_scan_are_read_as_words(tmp_path: Path) -> None:
    with Image.open(CORPUS / "phototest.tif") as image:
        gray = image.convert("L")
    half = gray.resize((gray.width // 2, gray.height // 2), Image.Resampling.BOX)
    half.save(tmp_path / "phototest_150dpi.png")
    meta, data = read_meta(tmp_path / "phototest_150dpi.png", tmp_path, "default", ["all-staff"])
    read = words(" ".join(block.text for block in parse_document(meta, data).blocks))
    truth = words((CORPUS / "phototest.txt").read_text("utf-8"))
    found = sum(min(read.count(word), truth.count(word)) for word in set(truth))
    assert found >= 0.9 * len(truth), read
    assert "the quick brown dog jumped over the" in " ".join(read)


def test_chinese_lines_keep_pp_ocrv4s_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """PP-OCRv6 reads "行政部  2025年2月20日" (a wide gap) as "行政部202 5年2 月20日": a line with a
    Chinese character keeps PP-OCRv4's reading when PP-OCRv6's holds no more letters, the same
    as where PP-OCRv6 is not installed."""
    image = np.asarray(page_image(NOTICE, width_px=900).convert("RGB"))[:, :, ::-1].copy()
    both = [unicodedata.normalize("NFKC", text) for _, text, _ in ocr._rapid()(image)[0]]
    assert ocr._recognizer(), "the rapidocr wheel with PP-OCRv6 is a dependency"
    monkeypatch.setattr(ocr, "REC_MODEL", "no-such-model.onnx")  # as where it is not installed
    assert ocr._recognizer() == {}
    older = [unicodedata.normalize("NFKC", text) for _, text, _ in ocr._rapid()(image)[0]]
    assert both == older
    assert both[:4] == NOTICE[:4] and "行政部2025年2月20日" in both[4].replace(" ", "")
    assert "202 5" not in both[4]


def read_lines(path: Path) -> list[str]:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return [unicodedata.normalize("NFKC", block.text).replace(" ", "")
            for block in parse_document(meta, data).blocks]


@pytest.mark.parametrize(("name", "whole", "cut"), [
    ("easyocr/japanese.jpg", "ポイ捨て禁止!", "禁止!"),  # kana, which PP-OCRv4 does not know
    ("easyocr/japanese.jpg", "清潔できれいな港区を", "清潔港区"),
    ("table-rec/tsr_test.jpg", "其他流动负债", "其他流动负"),  # a character it knows
])
def test_characters_pp_ocrv4_drops_are_read_by_the_newer_model(
        monkeypatch: pytest.MonkeyPatch, name: str, whole: str, cut: str) -> None:
    path = BENCH / name
    assert any(whole in line for line in read_lines(path))
    monkeypatch.setattr(ocr, "REC_MODEL", "no-such-model.onnx")  # PP-OCRv4 alone
    ocr.engine.cache_clear()
    try:
        alone = read_lines(path)
    finally:
        ocr.engine.cache_clear()
    assert any(cut in line for line in alone) and not any(whole in line for line in alone)


def test_a_line_upside_down_on_an_upright_page_is_read() -> None:
    """chineseocr_lite's test picture: two upright lines and, under them, a line set upside
    down, which the engine scores under its threshold and dropped without a trace (the page
    read clean, so it was never turned). It is read turned half a turn, in its place after the
    two; the page itself is not turned."""
    path = BENCH / "chineseocr-lite/chineseocr_lite_mostAngle.jpg"
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    doc = parse_document(meta, data)
    text = "\n".join(unicodedata.normalize("NFKC", block.text).replace(" ", "")
                     for block in doc.blocks)
    upright = text.find("这是第一行")
    turned = text.find("开了mostAngle这行就会出错哦")
    assert 0 <= upright < turned, text
    assert doc.report.turned_pages == []
