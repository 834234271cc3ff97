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
    # the dateline and source above the headline (trafilatura's annotators count the source,
    # "半月谈", as boilerplate: their convention reads it as metadata, kbflow's as content)
    assert "2020-02-19 20:29:58来源:半月谈" in [b.text for b in doc.blocks]
    for related in ("王毅会见越南副总理兼外长范平明", "新华社简介"):  # related news, site links
        assert related not in text
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


def test_a_page_inside_an_unclosed_header_is_read_not_dropped_as_furniture() -> None:
    """libxml2 knows no HTML5 nesting: this handball news page came out inside its <header>,
    which was dropped as the site's banner, and the page failed with "no text found"."""
    doc = parse("liquimoly-hbl.de-cheftrainer.html")
    text = "\n".join(b.text for b in doc.blocks)
    # trafilatura's annotators' article phrases, and their boilerplate ones
    for phrase in ("mit einer bestens motivierten Mannschaft den",
                   "Haases breitem Netzwerk. Auch heimische", "aber ich habe ein gutes Gefühl"):
        assert text.count(phrase) == 1
    for phrase in ("Verwandte Themen", "Coburg", "#diewiesel"):
        assert phrase not in text
    report = doc.report
    assert report.skipped.get("outside_main", 0) >= 1
    assert report.chars_indexed < 0.5 * report.chars_seen


def test_a_page_whose_picked_article_is_almost_nothing_is_read_whole() -> None:
    """trafilatura finds no article in this page (its text is empty): the page is read whole
    rather than kept as a few characters, its furniture still left out."""
    doc = parse("careelite.de-flaechenverbrauch.html")
    text = "\n".join(b.text for b in doc.blocks)
    for phrase in ("Du willst mehr über den Flächenverbrauch für Fleisch,",
                   "dessen Entwicklung vermitteln:",
                   "Eine bemerkenswerte Statistik macht besonders"):
        assert phrase in text
    report = doc.report
    assert "outside_main" not in report.skipped  # nothing was picked: the whole page is read
    assert report.skipped.get("sidebar", 0) >= 1
    assert report.chars_indexed > 0.5 * report.chars_seen


def test_a_paragraph_with_a_soft_hyphen_stays_in_the_article() -> None:
    """trafilatura drops a soft hyphen (U+00AD) from its text; compared as the page has it,
    this Washington Post paragraph (the one that holds one) was left out of the article."""
    doc = parse("readability-wapo-2.html")
    text = "\n".join(b.text for b in doc.blocks)
    assert "President Obama told the U.N. General Assembly 18 months ago" in text
    assert "Benjamin Netanyahu’s triumph in Tuesday’s parliamentary elections" in text
    for menu in ("PostTV", "Classifieds", "Real Estate"):  # the site's header and navigation
        assert menu not in text


def test_an_article_whose_wrapper_is_named_a_sidebar_is_found_again() -> None:
    """This radio page's post wrapper has the class "cb-sidebar-right" (a layout with a right
    sidebar): dropped as a sidebar, it left 184 characters of cookie notice indexed out of
    5,222. Too little of the page: it is read again without the furniture guesses."""
    doc = parse("litradio.net.bossong.html")
    text = "\n".join(b.text for b in doc.blocks)
    # trafilatura's annotators' article phrases, and their boilerplate ones
    for phrase in ("Nora Bossong erzählt von der Arbeit", "ihre eigene Rolle als UN-Beauftragte",
                   "Positionierung und Hoffnung in der Desillusion."):
        assert phrase in text
    for phrase in ("LANGE NACHT JUNGER LITERATUR UND MUSIK", "Sharen mit:", "Ähnliche Beiträge"):
        assert phrase not in text
    assert doc.report.chars_indexed < 0.5 * doc.report.chars_seen


def test_a_box_named_for_the_sidebar_it_holds_is_not_a_sidebar() -> None:
    """newspaper-self.com1.html: the post sits in a layout box "row-fluid
    float-sidebar-container" beside its sidebar; read as a sidebar, the article was lost and
    the page came out as the site's menus."""
    text = "\n".join(b.text for b in parse("newspaper-self.com1.html").blocks)
    for phrase in ("Blair Waldorf who? The headband has come a long way",  # newspaper's text
                   "Make It the Focal Point: With a piece of bling like Taylor"):
        assert phrase in text
    assert "Best Stretches For Flexibility" not in text  # the sidebar itself stays out


def test_a_story_cut_into_boxes_between_ads_is_read_on_to_its_end() -> None:
    """zyte-wired-neo-banks.html: the magazine cuts its story into "article chunks" of one
    class between ad rails; trafilatura finds only the first, and half the story was lost.
    Its "More Great WIRED Stories" list in the last chunk stays out."""
    text = "\n".join(b.text for b in parse("zyte-wired-neo-banks.html").blocks)
    for phrase in ("In fact, we can use the evolution of the gig economy as a case study",
                   "But there are two problems with this potential disruption.",
                   "A second problem is more serious."):  # the annotated article body
        assert phrase in text
    for related in ("YouTubers must unionize", "More Great WIRED Stories"):
        assert related not in text


def test_a_rubys_reading_does_not_split_the_words_it_annotates() -> None:
    """nhk.or.jp.k100.html: NHK's easy Japanese news writes each kanji's reading above it
    (<ruby>子<rt>こ</rt></ruby>ども); read inline it made "子こども", and not one of the
    annotators' article phrases matched."""
    text = "\n".join(b.text for b in parse("nhk.or.jp.k100.html").blocks)
    for phrase in ("子どもへの虐待をなくすための法律ができて、親が子どもを教育するために、",
                   "法律では虐待をした親に専門家が子どもの育て方を"):  # trafilatura's annotators'
        assert phrase in text
    assert "子こども" not in text
