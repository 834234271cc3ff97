"""Parts of an article kept by their kind (ingest/parse/article_parts.py), on real saved pages
of mozilla/readability's test set (bench/format_corpus/PROVENANCE.md): the dateline and the
editor line of a Chinese news page, a wiki article's infobox and table of contents, the
captions inside a news story; the site's navigation, share bars and related-story links
still left out."""

from __future__ import annotations

from pathlib import Path

from ingest.chunk import chunk_document
from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta

PAGES = Path(__file__).parents[1] / "bench" / "format_corpus" / "readability"


def parse(name: str) -> ParsedDocument:
    meta, data = read_meta(PAGES / name, PAGES, "default", ["all-staff"])
    return parse_document(meta, data)


def texts(doc: ParsedDocument) -> list[str]:
    return [b.text for b in doc.blocks]


def test_a_news_pages_dateline_and_editor_line_are_kept_its_share_bar_is_not() -> None:
    """qq.html: the source and date above the story and the editor below it sit in the
    story's own box, outside what trafilatura calls the article; the date's line also holds
    a share bar, which stays out."""
    lines = texts(parse("qq.html"))
    assert "TNW中文站2016年10月14日07:17" in lines  # the line alone, not with the share bar
    assert "[责任编辑:alonliu]" in lines
    text = "\n".join(lines)
    for furniture in ("我要分享", "QQ好友", "领英分享", "我要评论", "相关度高吗"):
        assert furniture not in text
    assert "DeepMind希望DNC可以推动计算行业实现更多突破" in text  # the story itself


def test_a_wiki_articles_infobox_and_contents_are_kept_its_navigation_is_not() -> None:
    doc = parse("wikipedia.html")
    text = "\n".join(texts(doc))
    # the infobox beside the article: its facts, each with its label
    for fact in ("Founded", "February 28, 1998", "Netscape Communications Corporation",
                 "mozilla.org/,%20https://www.mozilla.org/tr/"):
        assert fact in text
    # the contents, as one paragraph naming the sections
    contents = [b for b in doc.blocks if b.text.startswith("Contents: 1 History")]
    assert len(contents) == 1 and contents[0].kind == BlockKind.PARAGRAPH
    assert "3.1 Firefox · 3.2 Firefox Mobile" in contents[0].text
    # the site's navigation and tools stay out
    for furniture in ("Random article", "What links here", "Personal tools", "Log in"):
        assert furniture not in text


def test_a_contents_paragraph_does_not_become_the_chunks_outline() -> None:
    """Read as separate lines, "3.1 Firefox" … "8 External links" looked like numbered
    headings to the chunker, which filed every chunk of the article under the last one."""
    chunks = chunk_document(parse("wikipedia.html"))
    assert not any("8 External links" in " ".join(c.title_path) for c in chunks)
    assert any(c.title_path[-1:] == ["History[edit]"] for c in chunks)


def test_captions_inside_a_story_are_kept_its_related_story_links_are_not() -> None:
    """bbc-1.html: the pictures' captions between the story's paragraphs are kept; the
    related-story links set in the story as paragraphs of a single link are not."""
    text = "\n".join(texts(parse("bbc-1.html")))
    assert "The president said he would continue fighting for greater gun control laws" in text
    assert "Kenya is getting ready to welcome the US president" in text
    for related in ("Five things we learned from Obama interview",
                    "The presidential body swerve"):
        assert related not in text
