"""Wrapped lines joined with a space between words of every script written with spaces, and
without one next to Chinese, Japanese or Thai (ingest.text.join_lines)."""

from __future__ import annotations

from pathlib import Path

from ingest.parse import parse_document, read_meta
from ingest.text import join_lines

# a Wikipedia article printed by Chrome (olmOCR's test PDFs, bench/format_corpus/PROVENANCE.md)
EDGAR = Path(__file__).parents[1] / "bench" / "format_corpus" / "olmocr" / "edgar.pdf"


def test_names_listed_under_one_another_in_an_infobox_stay_apart() -> None:
    """The infobox's "Spouses" cell lists Æthelflæd, Wulfthryth and Ælfthryth on three lines;
    a line starting with a letter outside ASCII was glued to the one before it."""
    meta, data = read_meta(EDGAR, EDGAR.parent, "test", ["all"])
    texts = [block.text for block in parse_document(meta, data).blocks]
    assert any("Wulfthryth Ælfthryth" in text for text in texts)
    assert not any("WulfthrythÆlfthryth" in text for text in texts)


def test_scripts_written_with_and_without_spaces() -> None:
    assert join_lines("Привет,", "мир") == "Привет, мир"
    assert join_lines("Καλημέρα", "κόσμε") == "Καλημέρα κόσμε"
    assert join_lines("déjà", "vu") == "déjà vu"
    assert join_lines("he said", "“yes”") == "he said “yes”"
    assert join_lines("信守15年，", "感人至深") == "信守15年，感人至深"
    assert join_lines("使用", "Python") == "使用Python"
    assert join_lines("Python", "「入門」") == "Python「入門」"
    assert join_lines("子どもへの", "虐待") == "子どもへの虐待"
    assert join_lines("สวัสดี", "ชาวโลก") == "สวัสดีชาวโลก"
