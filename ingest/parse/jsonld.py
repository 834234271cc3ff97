"""An article's text as the page states it in its schema.org JSON-LD (`articleBody` of an
Article, NewsArticle, OpinionNewsArticle, BlogPosting, Report …). A news site may render only a
teaser server-side (headline, standfirst, photo caption, "READ FULL ARTICLE") and leave the
story to a script that reads this data: a browser shows the story, the saved page's body has
none of it (trafilatura's SCMP page: 1,036 characters shown, 4,312 in `articleBody`).

The data is the page's, so hostile: read with `json` from at most MAX_SCRIPTS scripts of at
most MAX_SCRIPT bytes each, walked without recursion to MAX_ITEMS items; only a string is
taken, at most MAX_BODY characters, markup in it read as text (a paragraph a line). A page
stating two different bodies (a list of posts) gives none: which one it is about is not known.
"""

from __future__ import annotations

import json
import re

from lxml import html

from ingest.parse.errors import ParseError
from ingest.parse.html_text import fragment_blocks

MAX_SCRIPTS = 50
MAX_SCRIPT = 2_000_000  # bytes of one script's JSON
MAX_ITEMS = 10_000  # objects and lists walked in one script
MAX_BODY = 1_000_000  # characters of an article's body
# schema.org's Article and its subtypes (NewsArticle, OpinionNewsArticle, ScholarlyArticle,
# TechArticle …), SocialMediaPosting's (BlogPosting, LiveBlogPosting …) and Report.
_ARTICLE = re.compile(r"(?:^|[/:])(?:\w*Article|\w*Posting|Report)$")
_MARKUP = re.compile(r"<[a-zA-Z/!]")


def article_body(data: bytes, encoding: str | None) -> str:
    """The one article body the page's JSON-LD states, or ""."""
    if b"articleBody" not in data:  # most pages: no second parse
        return ""
    parser = html.HTMLParser(encoding=encoding, no_network=True, remove_comments=True,
                             remove_pis=True)
    tree = html.document_fromstring(data, parser=parser)
    scripts = tree.xpath("//script[translate(@type, 'JSONLD', 'jsonld')='application/ld+json']")
    bodies: dict[str, None] = {}
    for script in scripts[:MAX_SCRIPTS]:
        source = script.text or ""
        if len(source.encode("utf-8", "replace")) > MAX_SCRIPT:
            continue
        try:
            found = json.loads(source)
        except (ValueError, RecursionError):  # broken JSON, or nested past json's own limit
            continue
        bodies |= dict.fromkeys(_bodies(found))
    if len(bodies) != 1:
        return ""
    body = next(iter(bodies))[:MAX_BODY]
    if _MARKUP.search(body):  # some sites put the story's HTML there
        try:
            return "\n".join(b.text for b in fragment_blocks(body))
        except ParseError:  # nested past libxml2's depth limit
            return ""
    return body


def _bodies(found: object) -> list[str]:
    """The articleBody strings of the Article items in a JSON-LD value (@graph and lists
    included), walked with a stack and at most MAX_ITEMS items."""
    bodies: list[str] = []
    stack, walked = [found], 0
    while stack and walked < MAX_ITEMS:
        item = stack.pop()
        walked += 1
        if isinstance(item, list):
            stack += reversed(item)
        elif isinstance(item, dict):
            kinds = item.get("@type")
            kinds = kinds if isinstance(kinds, list) else [kinds]
            body = item.get("articleBody")
            if isinstance(body, str) and body.strip() and any(
                    isinstance(kind, str) and _ARTICLE.search(kind) for kind in kinds):
                bodies.append(body)
            stack += [v for v in reversed(item.values()) if isinstance(v, (list, dict))]
    return bodies
