"""HTML main content on a real saved news page (tests/fixtures/webpages/README.md): the
article whole, the site's furniture and related-links lists left out."""

from __future__ import annotations

import time
from pathlib import Path

from ingest.models import ParsedDocument
from ingest.parse import parse_document, read_meta

PAGES = Path(__file__).parent / "fixtures" / "webpages"


def parse(name: str) -> ParsedDocument:
    meta, data = read_meta(PAGES / name, PAGES, "default", ["all-staff"])
    return parse_document(meta, data)


def test_a_real_news_page_keeps_its_article_and_leaves_the_site_out() -> None:
    doc = parse("xinhuanet_c_1125597921.html")
    text = "\n".join(b.text for b in doc.blocks)
    # trafilatura's annotators' article phrases, and the opening and closing paragraphs
    for phrase in ("2月17日", "能过关。", "萧海川", "“妈妈,为什么还不能出去?”",
                   "正是有了英勇的你们,才有这座英雄的城!"):
        assert phrase in text
    assert "半月谈" not in text  # the related-links list of the site (annotated boilerplate)
    report = doc.report
    assert report.skipped.get("outside_main", 0) >= 1
    assert report.chars_indexed < 0.7 * report.chars_seen  # menus and lists not indexed
    assert report.chars_seen == report.chars_indexed + report.chars_skipped


def test_a_page_of_nested_layout_tables_reads_each_text_once() -> None:
    """Layout tables nested nine deep with colspans: read as grids, the outer cells' text (the
    inner tables' included) was copied into every position they spanned, 111 million
    characters out of a page of 12 thousand."""
    start = time.perf_counter()
    doc = parse("singapur-reiseinfo.de.abc.html")
    assert time.perf_counter() - start < 30
    assert sum(len(b.text) for b in doc.blocks) <= 3 * doc.report.chars_seen
    text = "\n".join(b.text for b in doc.blocks)
    # trafilatura's annotators' article phrases, each once
    for phrase in ("Reiseinformationen durch das", "Einfuhrverbot: Waffen. Munition",
                   "SARS kann bei Wiederauftreten"):
        assert text.count(phrase) == 1
    assert doc.report.chars_indexed <= doc.report.chars_seen
