"""Links inside a story on real saved news pages (bench/format_corpus/PROVENANCE.md, their
expected text in bench/format_corpus/_expected/): a sentence most of whose words are a link
and a roundup's linked item heads are kept with the story, while the related-story links
set between its paragraphs stay out."""

from __future__ import annotations

from pathlib import Path

from ingest.parse import parse_document, read_meta

PAGES = Path(__file__).parents[1] / "bench" / "format_corpus" / "article-extraction"


def test_a_sentence_that_is_mostly_a_link_is_kept_a_related_link_is_not() -> None:
    meta, data = read_meta(PAGES / "bbc.com-c7e39ac4.html", PAGES, "default", ["all-staff"])
    text = "\n".join(b.text for b in parse_document(meta, data).blocks)
    for linked in ("Australian-born Assange faces a charge of conspiracy to commit computer "
                   "intrusion in the US.",
                   "The Swedish investigation had been shelved in 2017 but was re-opened "
                   "earlier this year following his eviction from the embassy."):
        assert linked in text
    assert "He is accused of participating in one of the largest ever leaks" in text
    for related in ("Profile: Julian Assange", "Timeline of saga",
                    "How likely is an Assange conviction in US?"):
        assert related not in text


def test_a_roundups_linked_item_heads_are_kept_a_related_list_is_not() -> None:
    """cx-extractor/163-33.html, a NetEase (163.com) news roundup in GBK: each item's head is
    a paragraph of one link before the paragraph telling it; the heads are kept, the page's
    "相关新闻" list of other stories is not."""
    folder = PAGES.parent / "cx-extractor"
    meta, data = read_meta(folder / "163-33.html", folder, "default", ["all-staff"])
    lines = [b.text for b in parse_document(meta, data).blocks]
    for head in ("证监会:继续推进长期资金入市", "证监会部署“证监法网”第五批案件"):
        assert head in lines
    # a head its paragraph tells in other words, kept as one of the roundup's heads
    at = lines.index("证监会已查明6起编造虚假信息案")
    assert lines[at + 1].startswith("证监会新闻发言人张晓军3日介绍,已经查明6起案件")
    assert "证监会一直在支持养老基金等各类长期资金入市" in "\n".join(lines)
    assert not any(line.endswith("2015/07/03") for line in lines)  # the related news' dates
