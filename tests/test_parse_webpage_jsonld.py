"""A news page that shows a teaser and states its article in JSON-LD: the headline and
standfirst it shows are kept, and the article is read from `articleBody`; the JSON is the
page's, so hostile."""

from __future__ import annotations

import json
from pathlib import Path

from ingest.models import ParsedDocument
from ingest.parse import parse_document, read_meta
from ingest.parse.jsonld import MAX_SCRIPT, article_body
from ingest.parse.result import ParseLimits
from ingest.parse.webpage import parse_html

CORPUS = Path(__file__).parents[1] / "bench" / "format_corpus"
# trafilatura's evaluation page (bench/format_corpus/PROVENANCE.md; not held out)
SCMP = CORPUS / "trafilatura" / "scmp.com.playbook.html"
TEASER = ("<h1>Budget passed</h1><p>The council passed the budget on Monday after a long "
          "debate.</p><a href='/full'>READ FULL ARTICLE</a>")


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def page(body: str, *scripts: str) -> bytes:
    tags = "".join(f'<script type="application/ld+json">{s}</script>' for s in scripts)
    return f"<html><head>{tags}</head><body>{body}</body></html>".encode()


def article(text: str, kind: str | list[str] = "NewsArticle") -> str:
    stated = {"@context": "https://schema.org", "@type": kind, "articleBody": text}
    return json.dumps(stated).replace("</", "<\\/")  # as pages write it inside a <script>


STORY = " ".join(f"Paragraph {i} of the story says what the council decided and why it matters "
                 "to the city's residents." for i in range(12))


def test_a_teaser_page_keeps_its_headline_and_reads_the_article_its_json_ld_states() -> None:
    """SCMP's saved page shows the headline, standfirst, byline and a photo caption twice
    (1,036 characters); the 4,312-character opinion piece is only in its JSON-LD. kbflow
    indexed the caption alone: trafilatura picked it, and shown twice it passed for an article."""
    doc = parse(SCMP)
    texts = [b.text for b in doc.blocks]
    text = "\n".join(texts)
    assert ("Taiwanese President Tsai Ing-wen’s political playbook should be essential reading "
            "for Hong Kong leader Carrie Lam") in texts
    assert "the Taiwanese leader shrewdly capitalised on the crisis in Hong Kong" in text
    # the article (trafilatura's annotators' phrases), once
    for phrase in ("Tsai’s incredible comeback after hitting political rock bottom",
                   "does not reveal so much courage as that she has an extraordinarily thick"):
        assert text.count(phrase) == 1
    assert any("JSON-LD" in w for w in doc.report.warnings)
    assert doc.report.chars_indexed <= doc.report.chars_seen


def test_a_page_that_shows_its_article_does_not_read_it_again_from_json_ld() -> None:
    """The JSON-LD states the body the page shows: nothing is added."""
    data = page(f"<article><h1>Budget</h1><p>{STORY}</p></article>", article(STORY))
    result = parse_html(data, ParseLimits())
    assert sum(b.text.count("Paragraph 3 of the story") for b in result.blocks) == 1
    assert not result.warnings


def test_json_ld_kinds_lists_and_graphs_are_read_and_other_types_are_not() -> None:
    graph = json.dumps({"@graph": [{"@type": "WebPage"},
                                   {"@type": ["BlogPosting"], "articleBody": STORY}]})
    assert article_body(page(TEASER, graph), None) == STORY
    assert article_body(page(TEASER, article(STORY, "OpinionNewsArticle")), None) == STORY
    assert article_body(page(TEASER, article(STORY, "Product")), None) == ""
    assert "Paragraph 11" in "\n".join(
        b.text for b in parse_html(page(TEASER, graph), ParseLimits()).blocks)


def test_hostile_json_ld_gives_no_body_and_never_fails_the_page() -> None:
    """Broken JSON, nesting past json's recursion limit, a script over the size cap, two
    different bodies (a list of posts: which one the page is about is unknown), a body that
    is not a string, and markup inside the body (read as text, its script left out)."""
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000
    huge = article("x" * (MAX_SCRIPT + 1))
    cases = ['{"@type": "NewsArticle", "articleBody": "unfinished', deep, huge,
             article(STORY) + "</script><script type='application/ld+json'>"
             + article(STORY + " Another post."),
             json.dumps({"@type": "NewsArticle", "articleBody": {"text": STORY}})]
    for script in cases:
        data = page(TEASER, script)
        assert article_body(data, None) == ""
        assert "Budget passed" in [b.text for b in parse_html(data, ParseLimits()).blocks]
    marked = article(f"<p>{STORY}</p><script>alert('x')</script><p>Last words.</p>")
    body = article_body(page(TEASER, marked), None)
    assert "Paragraph 11" in body and "Last words." in body and "alert" not in body
