"""A PDF page whose text layer is not what the page shows (a font without a usable ToUnicode
map) is read by OCR of the page; real text that is merely unusual is left alone."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from ingest.parse import ParseLimits, parse_document, read_meta
from ingest.parse.pdf_textlayer import text_layer

ROOT = Path(__file__).parents[1]
CORPUS = ROOT / "bench/format_corpus"


def test_slide_whose_font_maps_letters_to_control_codes_is_read_by_ocr() -> None:
    """pdf.js's font_ascent_descent.pdf: a PowerPoint title page printed to PDF; its text layer
    holds control codes for most letters (Tika reads the title through another route)."""
    path = CORPUS / "pdfjs-fonts/font_ascent_descent.pdf"
    with pymupdf.open(path) as doc:
        assert text_layer(doc[0].get_text()).garbled
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    parsed = parse_document(meta, data, ParseLimits())
    text = " ".join(block.text for block in parsed.blocks)
    assert "Odfjell Drilling Ltd" in text
    assert "limited liquidity headroom" in text
    assert parsed.report.ocr_pages == 1
    assert any(w.startswith("page 1: its text layer is not language") and "OCR" in w
               for w in parsed.report.warnings)


def test_article_with_control_codes_for_letters_is_garbled_page_by_page() -> None:
    """pdf.js's TAMReview.pdf: a review paper whose body font has no ToUnicode map; its cover
    page (another font) reads, its body pages do not."""
    with pymupdf.open(CORPUS / "pdfjs-fonts/TAMReview.pdf") as doc:
        assert not text_layer(doc[0].get_text()).garbled
        assert "control codes" in text_layer(doc[1].get_text()).reason


@pytest.mark.parametrize("text", [
    "本制度适用于使用Python和SQL开发的系统，α射线检测按GB 18871执行。",  # Chinese, Latin run in
    "ポイ捨て禁止！東京都千代田区のルールでは、ゴミはカラスネットの下に出してください。",
    "Η ταχύτητα v = 3 μm/s και Москва — столица России; β-catenin и p53.",
    "Staff list NameالاسمAddress Sultanاسمي Davidדוד כהן רחוב הרצל",  # table cells run together
    "Le premier liure de Moyſe, eﬅé ſa cheute, ﬁnal ﬂow — æsthetic Œuvre.",  # long s, ligatures
    "IPA: [ˈfəʊnətɪk] [ʃ] [ŋ] [ɣ] ɐ ɑ ɒ ʔ ʕ ˌ ː ɾ ɹ ʁ ʀ.",
    "∑ ∫ ∂ ∇ ≤ ≥ ≠ ∞ ℝ ℕ 𝑥 𝑦 𝛼 ⊕ ⊗ → ⇒ ∀ ∃ • ● ◆ ★ ☎ ✓",  # a table of symbols
    "한국어 문서와 漢字 혼용, 그리고 English words.",
])
def test_real_text_that_is_unusual_is_language(text: str) -> None:
    assert not text_layer(text * 3).garbled


def test_letters_of_another_script_inside_words_are_not_language() -> None:
    """A map that swaps single glyphs for code points of other scripts (Georgian ო for o,
    Armenian ե for e), made here from an ordinary English sentence."""
    swapped = ("Thե usեr accեpts thե systեm whեn it is usեful and ეasy tო usე; thე mოdეl "
               "was tested on students of a course in 1985 and again in 2003.")
    layer = text_layer(swapped)
    assert layer.mixed >= 6 and layer.garbled


def test_every_pdf_of_the_tests_and_samples_is_language() -> None:
    """The check fires on no page of the project's own PDFs (Chinese, Arabic and Hebrew,
    tables, forms)."""
    paths = [*(ROOT / "tests/fixtures").rglob("*.pdf"), *(ROOT / "sample_docs").rglob("*.pdf")]
    assert paths
    for path in paths:
        with pymupdf.open(path) as doc:
            for page in doc:
                assert not text_layer(page.get_text()).garbled, (path.name, page.number + 1)
