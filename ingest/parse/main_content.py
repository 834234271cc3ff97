"""A web page's main content: the page's own elements that hold what trafilatura finds the
article to be, or the whole page when that is too little.

Measured with bench/html_main.py on trafilatura's own evaluation set (206 pages of blogs, news
and shops in many languages, 6 of them Chinese or Japanese), as article phrases found / boiler-
plate phrases kept (Chinese and Japanese pages: article phrases found): the hand-written picker
this replaced (<main>, <article>, else Readability's densest block) 0.925 / 0.35 (0.79);
readability-lxml 0.87 / 0.13 (0.79); trafilatura's own text 0.95 / 0.12 (0.95); this module
0.955 / 0.19 (0.84). Honouring <main> and <article> first cost 0.19 more boilerplate there
(pages whose <article> or <main> holds comments, related links and sidebars), so they get no
say of their own. On 121 of mozilla/readability's test pages (bench/html_readability.py) no
other trafilatura setting, nor readability-lxml, nor both together, did better on both sets.

trafilatura reads a copy of the tree kbflow parsed (no entity, DTD or network access of its
own), already cleared of navigation, hidden parts and forms. Its text says which of the page's
paragraphs are content; those elements are taken from the page itself, with the heading before
each and widened to the containers that are mostly content, so headings, lists, tables and
preformatted text read as on any page. A block mostly of link text is left out as a menu,
unless it is a story's sentence that starts in its own words ("He faces <a>a charge of …</a>.";
measured on newspaper's and Zyte's saved news pages, bench/html_sets). A page where less than
MIN_KEPT characters and less than MIN_SHARE of its text are kept (a news page once came out as
8 characters) is read whole. A story a magazine cuts into boxes of
one kind between its ads, of which trafilatura finds only the first, is read on in the boxes that
follow.
Parts of the article trafilatura leaves out but a reader asks about (captions, datelines,
infoboxes, contents) are added by their kind (ingest.parse.article_parts).
"""

from __future__ import annotations

import logging

import trafilatura
from lxml import etree, html

from ingest.parse.article_parts import MAX_CAPTION, article_parts, pictured, text_before
from ingest.parse.html_text import is_block

Counts = dict[html.HtmlElement, int]
MIN_PAGE_CHARS = 100  # a shorter page is read whole: no room for an article and boilerplate
# keeping less than both, the page is read whole (trafilatura's own minimum is 250 characters)
MIN_KEPT = 250
MIN_SHARE = 0.1  # of the page's visible characters
MIN_PIECE = 5  # characters a piece of text needs to say it is content (not "首页", "|")
CONTINUED_UP = 2  # boxes above a kept root whose siblings may carry the story on
STORY_PARAGRAPH = 80  # characters of a paragraph that carries a story on
MOSTLY = 0.9  # a container whose text is this much content is taken whole
MAX_LINKS = 0.5  # a block mostly of link text ("相关阅读: …") is a menu, whatever trafilatura says
MAX_SENTENCE_LINKS = 2  # links in a story's sentence kept though mostly link text
MIN_LEAD_WORDS = 3  # words before a linked sentence's link ("Australian-born Assange faces")
MIN_LEAD_CJK = 6  # or characters of a Chinese or Japanese lead
_SENTENCE_END = (".", "!", "?", "。", "！", "？", ".\"", ".”", "。」")
_WHOLE = ("table", "ul", "ol", "dl", "pre")  # never cut apart
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_PICTURES = ("img", "picture", "video", "svg", "iframe")  # what a heading may stand above

logging.getLogger("trafilatura").setLevel(logging.CRITICAL)  # per-page notes, not errors


def main_content(body: html.HtmlElement, text: Counts, links: Counts
                 ) -> list[html.HtmlElement]:
    """The elements whose blocks are indexed, in document order (`text`: the visible
    characters under each element of `body`; `links`: those inside links)."""
    if text[body] < MIN_PAGE_CHARS:
        return [body]
    content = _key(article_text(body))
    units: dict[html.HtmlElement, None] = {}
    for element in body.iter(etree.Element):
        pieces = (_key(piece or "") for piece in [element.text, *(child.tail for child in element)])
        if any(len(piece) >= MIN_PIECE and piece in content for piece in pieces):
            unit = _unit(element, body)
            if links.get(unit, 0) <= MAX_LINKS * text.get(unit, 0) or _linked_sentence(unit):
                units[unit] = None
    roots = _outermost(_widened(_with_headings(_outermost(units), body, text), body, text,
                                links))
    more = {*roots, *_continued(roots, text, links)}
    roots = _outermost([e for e in body.iter(etree.Element) if e in more])
    kept = sum(text.get(root, 0) for root in roots)
    if kept < MIN_KEPT and kept < MIN_SHARE * text[body]:
        return [body]
    chosen = {*roots, *article_parts(body, roots, text, links)}
    return _outermost([e for e in body.iter(etree.Element) if e in chosen])


def one_caption(roots: list[html.HtmlElement], text: Counts) -> bool:
    """What was kept is one picture's caption (shown once or more), not an article."""
    said = {_key(root.text_content()) for root in roots}
    return len(said) == 1 and all(
        text.get(root, 0) <= MAX_CAPTION and pictured(root) for root in roots)


def _continued(roots: list[html.HtmlElement], text: Counts, links: Counts
               ) -> list[html.HtmlElement]:
    """The paragraphs of the boxes that carry the story on: the siblings of a box mostly of
    kept text with its tag and class (a magazine cuts a story into "article chunks" between
    its ads) holding at least two paragraphs of a story's length. Only paragraphs not of
    links, in a box of the kind that holds the kept ones: a list of headlines, a share bar, a
    comment or a donation form beside the story has none."""
    kept: Counts = {}
    for root in roots:
        for holder in [root, *root.iterancestors()]:
            kept[holder] = kept.get(holder, 0) + text.get(root, 0)
    found = []
    holders = {_kind(p.getparent()) for root in roots for p in root.iter("p")}
    for root in roots:
        for box in [root, *list(root.iterancestors())[:CONTINUED_UP]]:
            parent, name = box.getparent(), box.get("class")
            if parent is None or not name or 2 * kept.get(box, 0) < text.get(box, 0):
                continue
            for other in parent:
                if other is box or other.tag != box.tag or other.get("class") != name or (
                        other in kept):
                    continue
                paragraphs = [p for p in other.iter("p", "blockquote")
                              if text.get(p, 0) >= MIN_PIECE and _kind(p.getparent()) in holders
                              and links.get(p, 0) <= MAX_LINKS * text.get(p, 0)]
                if sum(text.get(p, 0) >= STORY_PARAGRAPH for p in paragraphs) >= 2:
                    found += paragraphs
    return found


def _kind(element: html.HtmlElement | None) -> tuple[str, str] | None:
    return None if element is None else (str(element.tag), element.get("class") or "")


def article_text(body: html.HtmlElement) -> str:
    """The article's text as trafilatura finds it in the page."""
    return trafilatura.extract(body, output_format="txt", include_tables=True,
                               include_comments=False, favor_recall=True) or ""


def _linked_sentence(unit: html.HtmlElement) -> bool:
    """A story's paragraph most of whose words are a link or two ("He faces <a>a charge of
    conspiracy to …</a>."): a sentence that starts in its own words, not a menu, a bare link,
    a "Related: …" line nor a name whose pop-up lists headlines."""
    anchors = list(unit.iter("a"))
    if unit.tag != "p" or not anchors or len(anchors) > MAX_SENTENCE_LINKS:
        return False
    lead = "".join(text_before(unit, anchors[0])).strip()
    return (len(lead.split()) >= MIN_LEAD_WORDS or len(lead) >= MIN_LEAD_CJK) and (
        lead[-1].isalnum() or lead[-1] in ",，、") and (  # not "Related:", "À lire aussi »"
        unit.text_content().rstrip().endswith(_SENTENCE_END))


def _key(text: str) -> str:
    """The text as compared with trafilatura's: without spaces, nor what trafilatura drops as
    unprintable (a soft hyphen inside a word once cost a news paragraph its place)."""
    return "".join(c for c in text if c.isprintable() and not c.isspace())


def _with_headings(units: list[html.HtmlElement], body: html.HtmlElement, text: Counts
                   ) -> list[html.HtmlElement]:
    """The units and each heading right before one, across pictures between them (a heading
    is too short to be found in trafilatura's text by itself, and it may have left it out; a
    section's heading often stands above its picture), in document order."""
    chosen = set(units)
    for heading in body.iter(*_HEADINGS):
        after = heading.getnext()
        while (after is not None and not text.get(after, 0) and after not in chosen
               and next(after.iter(*_PICTURES), None) is not None):
            after = after.getnext()
        if after in chosen:
            chosen.add(heading)
    return [e for e in body.iter(etree.Element) if e in chosen]


def _unit(element: html.HtmlElement, body: html.HtmlElement) -> html.HtmlElement:
    """The block an element's text belongs to, or the outermost table or list holding it."""
    unit, parent = element, element.getparent()
    while not is_block(unit) and unit is not body and parent is not None:
        unit, parent = parent, parent.getparent()
    wholes = [up for up in unit.iterancestors() if up.tag in _WHOLE]
    return wholes[-1] if wholes else unit


def _widened(units: list[html.HtmlElement], body: html.HtmlElement, text: Counts,
             links: Counts) -> list[html.HtmlElement]:
    """Each unit widened to the largest container whose text is MOSTLY content and whose
    other text is not mostly links (a heading stays with its paragraphs, a share bar does not
    join them)."""
    kept: Counts = {}
    kept_links: Counts = {}
    for unit in units:
        inside_link = any(up.tag == "a" for up in unit.iterancestors())
        unit_links = text.get(unit, 0) if inside_link else links.get(unit, 0)
        for holder in [unit, *unit.iterancestors()]:
            kept[holder] = kept.get(holder, 0) + text.get(unit, 0)
            kept_links[holder] = kept_links.get(holder, 0) + unit_links
            if holder is body:
                break
    widened = []
    for unit in units:
        root = unit
        while root is not body and (up := root.getparent()) is not None and _mostly_content(
                up, text, links, kept, kept_links):
            root = up
        widened.append(root)
    return widened


def _mostly_content(element: html.HtmlElement, text: Counts, links: Counts, kept: Counts,
                    kept_links: Counts) -> bool:
    other = text.get(element, 0) - kept.get(element, 0)
    other_links = links.get(element, 0) - kept_links.get(element, 0)
    return kept.get(element, 0) >= MOSTLY * text.get(element, 0) and (
        other_links <= MAX_LINKS * other)


def _outermost(elements: dict[html.HtmlElement, None] | list[html.HtmlElement]
               ) -> list[html.HtmlElement]:
    """The elements not inside another of them, in document order."""
    chosen = set(elements)
    return [e for e in dict.fromkeys(elements)
            if not any(up in chosen for up in e.iterancestors())]
