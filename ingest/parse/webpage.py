"""HTML (lxml): the page's main content, its headings, paragraphs, list items and tables in
document order (read by ingest.parse.html_text). A portal page wraps a short notice in menus,
breadcrumbs, sidebars ("热门服务"), banners and footers; indexed, they would make every page of
the site match every query about the site's services and drown the notice.

The parser never resolves entities nor loads anything: libxml2's HTML parser reads no DTD, and
the network is off besides.
"""

from __future__ import annotations

import re

from lxml import etree, html

from ingest.models import Block, BlockKind
from ingest.parse.article_parts import is_caption
from ingest.parse.coverage import visible_chars
from ingest.parse.encoding import html_encoding
from ingest.parse.html_text import alt_text, html_blocks, one_line, read_html
from ingest.parse.jsonld import article_body
from ingest.parse.main_content import MIN_KEPT, MIN_SHARE, main_content, one_caption
from ingest.parse.result import ParseLimits, ParseResult
from ingest.text import normalize

TEASER = 0.5  # of the JSON-LD body's characters: a page showing less shows a teaser
_SECTIONING = {"article", "section", "main"}  # a header or footer inside one belongs to it
# Class, id or aria-label words naming page furniture, and the kind counted in `skipped`.
_NAMED = ((re.compile(r"breadcrumb|面包屑", re.I), "navigation"),
          (re.compile(r"side-?bar", re.I), "sidebar"),
          (re.compile(r"cookie|consent|footer", re.I), "boilerplate"))
# A layout box holding a sidebar beside the story, not the sidebar ("float-sidebar-container")
_HOLDER = re.compile(r"(?:with|has)-side-?bar$|[\w-]*side-?bar-(?:container|layout)$", re.I)
# Before a site's name in a <title>: " - ", " | ", " — " (spaced), or "|", "｜", "_" anywhere.
_TITLE_SEPARATOR = re.compile(r"\s+[-–—|·]\s+|\s*[|｜_]\s*")

Counts = dict[html.HtmlElement, int]


def parse_html(data: bytes, limits: ParseLimits) -> ParseResult:
    """The main content's blocks, every text of it once. Navigation, sidebars, the
    page's header and footer, cookie banners, forms and hidden elements are left out and
    counted in `skipped` (with what lies outside the main content); `chars_seen` is all the
    text of the page's body. A page of which too little is kept is read again, dropping only
    its small hidden parts (see _remove_furniture)."""
    encoding, confidence = html_encoding(data)
    for fallback in (False, True):
        tree = read_html(data, encoding)
        found = tree.find("body")
        body = tree if found is None else found
        text, _ = _text_counts(body)
        seen = text[body]
        result = ParseResult([], 1, chars_seen=seen, encoding=encoding,
                             encoding_confidence=confidence)
        _remove_furniture(body, text, result, limits.include_hidden, fallback)
        text, links = _text_counts(body)
        roots = main_content(body, text, links)
        kept = sum(text[root] for root in roots)
        if kept >= MIN_KEPT or kept >= MIN_SHARE * seen:
            break
    stated = _stated_body(article_body(data, encoding), kept)
    if stated and one_caption(roots, text):  # a teaser's photo caption (SCMP, shown twice):
        roots = [body]  # the headline and standfirst the page shows are read too
    outside = _parts_outside(body, roots, text)
    if outside:
        result.skipped["outside_main"] = len(outside)
        result.chars_skipped += sum(text[part] for part in outside)
    for root in roots:
        result.blocks += html_blocks(root, result.blocks)
    if stated:
        result.blocks += [Block(kind=BlockKind.PARAGRAPH, text=p) for p in stated]
        chars = sum(visible_chars(p) for p in stated)
        result.chars_seen = (result.chars_seen or 0) + chars
        result.warnings.append(f"the page shows {kept} characters of its article; the "
                               f"{chars} of the body its JSON-LD states were read")
    h1 = next((b.text for b in result.blocks if b.kind == BlockKind.HEADING and b.level == 1),
              "")
    page_title = _site_name_removed(_text(tree.find("head/title")))
    if h1:
        result.title, result.title_source = h1, "h1"
    elif page_title:
        result.title, result.title_source = page_title, "html title"
    return result


def _stated_body(stated: str, kept: int) -> list[str]:
    """The paragraphs of the article body the page states in its JSON-LD (ingest.parse.jsonld)
    when what the page shows of it is a teaser: less than TEASER of its characters."""
    paragraphs = [one_line(p) for p in normalize(stated).split("\n") if p]
    return paragraphs if kept < TEASER * sum(visible_chars(p) for p in paragraphs) else []


def _text_counts(root: html.HtmlElement) -> tuple[Counts, Counts]:
    """Visible characters under each element (an image's alt text too), and those inside links.
    One pass from the leaves up: no recursion, and linear on a deep or large page."""
    elements = list(root.iter(etree.Element))
    text: Counts = {}
    links: Counts = {}
    for element in reversed(elements):  # every child before its parent
        total = (_own_chars(element)
                 + sum(visible_chars(c.tail or "") + text.get(c, 0) for c in element))
        text[element] = total
        links[element] = total if element.tag == "a" else sum(links.get(c, 0) for c in element)
    return text, links


def _remove_furniture(body: html.HtmlElement, text: Counts, result: ParseResult,
                      include_hidden: bool, fallback: bool) -> None:
    """Drop navigation, sidebars, the page's header and footer, banners, forms and hidden
    elements, counting each by kind. What holds the <main> element is never dropped, nor, when
    found by a class name or a form, what holds half of the page's text (an ASP.NET page is one
    big <form>, a layout may be class="with-sidebar"). What the page hides (the `hidden`
    attribute, an inline display:none or visibility:hidden) is dropped whatever its size, unless
    `include_hidden`: a browser shows none of it, so a search must not serve it.

    The `fallback`, for a page of which that left too little (main_content's measure, against
    all of the page's text), drops only hidden parts holding less than half of the page:
    libxml2 knows no HTML5 nesting, so an unclosed <header> or <aside> can hold the whole page,
    a class name can call an article a sidebar, and a page may hide all of its text until a
    script shows it; main_content then finds the article in the rest."""
    keep = {body}
    for main in body.xpath(".//main | .//*[@role='main']"):
        keep |= {main, *main.iterancestors()}
    dropped: list[html.HtmlElement] = []
    stack = [(body, False)]
    while stack:
        element, in_section = stack.pop()
        large = 2 * text[element] > text[body]
        hidden = element is not body and not include_hidden and _hidden(element)
        if hidden and not (fallback and large):
            kind: str | None = "hidden"
        else:
            kind = None if fallback or element in keep else _furniture(element, in_section, large)
        if kind:
            result.skipped[kind] += 1
            result.chars_skipped += text[element]
            dropped.append(element)
            continue
        inner = in_section or element.tag in _SECTIONING or element.get("role") == "main"
        stack += [(child, inner) for child in element if isinstance(child.tag, str)]
    for element in dropped:
        element.drop_tree()  # its tail is the parent's text and stays


def _furniture(element: html.HtmlElement, in_section: bool, large: bool) -> str | None:
    """The kind of page furniture an element is, or None for content."""
    tag, role = element.tag, (element.get("role") or "").lower()
    if tag == "nav" or role == "navigation":
        return "navigation"
    if (tag == "aside" or role == "complementary") and not is_caption(element):
        return "sidebar"  # a caption or pull quote set beside the story is not
    if (tag in ("header", "footer") and not in_section) or role in ("banner", "contentinfo"):
        return "boilerplate"
    if large:
        return None
    if element.get("aria-hidden") == "true":  # hidden from screen readers (icons, decoration)
        return "hidden"
    if tag == "form":
        return "form"
    names = " ".join(word for a in ("id", "class", "aria-label")
                     for word in (element.get(a) or "").split() if not _HOLDER.match(word))
    return next((kind for pattern, kind in _NAMED if pattern.search(names)), None)


def _hidden(element: html.HtmlElement) -> bool:
    """The page hides the element from every reader: the `hidden` attribute, or an inline style
    of display:none or visibility:hidden (a stylesheet's rules are not evaluated)."""
    if element.get("hidden") is not None:
        return True
    style = (element.get("style") or "").lower().replace(" ", "")
    return "display:none" in style or "visibility:hidden" in style


def _parts_outside(body: html.HtmlElement, roots: list[html.HtmlElement], text: Counts
                   ) -> list[html.HtmlElement]:
    """The largest parts of the page that hold text outside the main content."""
    on_path = {up for root in roots for up in root.iterancestors()}
    parts: list[html.HtmlElement] = []
    stack = [] if body in roots else [body]
    while stack:
        for child in stack.pop():
            if child in on_path:
                stack.append(child)
            elif child not in roots and text.get(child):
                parts.append(child)
    return parts


def _site_name_removed(title: str) -> str:
    """"关于春节放假的通知 - XX集团门户" → "关于春节放假的通知": the site's name after the last
    separator goes, unless nothing would be left."""
    separators = list(_TITLE_SEPARATOR.finditer(title))
    head = title[:separators[-1].start()].strip() if separators else ""
    return head or title


def _text(element: html.HtmlElement | None) -> str:
    return "" if element is None else one_line(normalize(element.text_content()))


def _own_chars(element: html.HtmlElement) -> int:
    return visible_chars(element.text or "") + visible_chars(alt_text(element))
