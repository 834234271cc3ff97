"""Links the article's own text introduces (ingest/parse/article_parts.py), on real saved
pages: Le Monde's "Lire : …" lines between a story's paragraphs and a Wikipedia article's
"See also" list are kept where they stand; related-story links no text introduces, a wiki's
categories and the site's menus stay out."""

from __future__ import annotations

from pathlib import Path

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta

TESTS = Path(__file__).parent


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def test_a_read_line_between_a_storys_paragraphs_is_kept() -> None:
    """lemonde-1 (bench/format_corpus/readability, mozilla/readability's test page; its
    expected text keeps both lines): "Lire aussi : <a>…</a>" and "<strong>Lire : <a>…</a>
    </strong>" were dropped as menus (a paragraph mostly of link text)."""
    doc = parse(TESTS.parent / "bench" / "format_corpus" / "readability" / "lemonde-1.html")
    lines = [b.text for b in doc.blocks]
    read = ("Lire : Que sont les IMSI-catchers, ces valises qui espionnent les téléphones "
            "portables ?")
    assert read in lines
    assert lines[lines.index(read) - 1].startswith("Les services pourront également procéder")
    assert "Lire aussi : Les critiques de la CNIL contre le projet de loi sur le renseignement" \
        in lines
    text = "\n".join(lines)
    for furniture in ("Newsletters", "Mentions légales", "Qui sommes-nous"):
        assert furniture not in text


def test_a_wiki_articles_see_also_list_is_kept_its_categories_are_not() -> None:
    """wikipedia-4: the list under the kept "See also" heading was left out (a list of links
    reads as a menu); the references after it were kept. The article's categories and the
    site's footer stay out."""
    doc = parse(TESTS / "fixtures" / "webpages" / "readability-wikipedia-4.html")
    lines = [b.text for b in doc.blocks]
    at = lines.index("See also[edit]")
    assert doc.blocks[at].kind == BlockKind.HEADING
    assert lines[at + 1:at + 4] == ["List of time travel works of fiction",
                                    "Time travel in fiction",
                                    "Day Break, 2006 television series"]
    assert lines[at + 4] == "References[edit]"
    text = "\n".join(lines)
    for furniture in ("Categories", "Privacy policy", "Disclaimers"):
        assert furniture not in text
