"""Captions and pull quotes a news site sets in boxes of its own, not in <figcaption>
(ingest/parse/article_parts.py), on real saved pages of newspaper's tests
(tests/fixtures/webpages/README.md): kept where they stand in the story, the site's
furniture still left out."""

from __future__ import annotations

from pathlib import Path

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta

PAGES = Path(__file__).parent / "fixtures" / "webpages"


def parse(name: str) -> ParsedDocument:
    meta, data = read_meta(PAGES / name, PAGES, "default", ["all-staff"])
    return parse_document(meta, data)


def lines(name: str) -> list[str]:
    return [b.text for b in parse(name).blocks]


def test_a_caption_in_an_aside_beside_the_story_is_kept() -> None:
    """technologyreview.com2: the photo's caption is a <p> in <aside class="caption-left">,
    which was dropped with the page's sidebars; newspaper's expected text begins with it."""
    found = lines("newspaper-technologyreview.com2.html")
    caption = "A street vendor in India uses a light powered by refurbished battery cells."
    assert caption in found
    assert found.index(caption) < next(
        i for i, line in enumerate(found) if line.startswith("Many of the estimated 50 million"))
    text = "\n".join(found)
    for furniture in ("Tech Flops 2014", "The Year in Technological Failure", "Contact Us"):
        assert furniture not in text


def test_picture_captions_in_divs_are_kept_once_between_the_paragraphs() -> None:
    """ok.co.uk1: each picture's caption is a <div class="postpicturecaption">; the
    "Related article: …" lines between the paragraphs stay out (the decision on related
    stories)."""
    found = lines("newspaper-ok.co.uk1.html")
    for caption in ("Has Sean Penn popped the question? [Wenn]",
                    "The couple have been dating for the last year [Splash]"):
        assert found.count(caption) == 1
    assert found.index("Has Sean Penn popped the question? [Wenn]") < found.index(
        "Sean Penn has reportedly popped the question to Charlize Theron.")
    assert not any(line.startswith("Related article") for line in found)


def test_a_pull_quote_set_beside_the_story_is_kept() -> None:
    """theatlantic.com2: the pull quote is an <aside class="pullquote">, in newspaper's
    expected text."""
    found = lines("newspaper-theatlantic.com2.html")
    assert ("Caricature notwithstanding, The Interview has a surprisingly nuanced streak in "
            "its celluloid sea of swears and weiner jokes.") in found


def test_a_sections_heading_above_its_picture_is_kept_as_a_heading() -> None:
    """avclub.com1: a year's best scenes, each an <h4> above its picture and then its
    paragraph; the headings whose picture box stands between were lost (a heading is kept
    only right before a kept block)."""
    doc = parse("newspaper-avclub.com1.html")
    headings = [b.text for b in doc.blocks if b.kind == BlockKind.HEADING]
    for heading in ("“Time In A Bottle,” X-Men: Days Of Future Past",
                    "Lip-sync duet, The Skeleton Twins"):
        assert heading in headings
    found = [b.text for b in doc.blocks]
    at = found.index("Lip-sync duet, The Skeleton Twins")
    assert found[at + 1].startswith("Bill Hader and Kristen Wiig prove themselves adept")
