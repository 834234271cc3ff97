"""A story's sentence most of whose words are a link, on a real saved news page of Zyte's
article-extraction-benchmark (bench/format_corpus/PROVENANCE.md, a person's annotation of
its article body in bench/format_corpus/_expected/): kept with the story, while the related-
story links set between its paragraphs stay out."""

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
