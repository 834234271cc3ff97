"""Parts of an article that trafilatura leaves out of its text but a company's reader asks
about: picture captions and pull quotes inside the story, the dateline, byline or editor line
at its head or tail, an infobox's facts beside it, its own table of contents and a roundup's
linked item heads, and the links the article's own text introduces ("Read more: …", a wiki's
"See also" list). Each is found by its kind, next to the content main_content picked, never as
a guess over the whole page, so that navigation, site-wide link lists, comment threads and
"related stories" stay out.
"""

from __future__ import annotations

import itertools
import re

from lxml import etree, html

from ingest.parse.html_text import is_block

Counts = dict[html.HtmlElement, int]
MAX_LINE = 80  # characters of a dateline, byline or editor line
NEAR = 3  # lines before the article's first and after its last searched for one
UP = 3  # boxes searched for the article's head: its own, and up to two around it
MAX_LINKS = 0.5
HEAD_TOLD = 0.6  # share of a roundup item's linked head that its paragraph says
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_MONTH = (r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?")
_BYLINE = re.compile(
    r"\d{4}\s*年\s*\d{1,2}\s*月"  # 2016年10月14日
    r"|\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b|\b\d{1,2}[-/.]\d{1,2}[-/.]\d{4}\b"  # 2016-10-14
    rf"|\b{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}\b|\b\d{{1,2}}\s+{_MONTH},?\s+\d{{4}}\b"  # Sept. 25, 2018
    r"|作者|编辑|责编|来源|记者|通讯员|发布(?:时间|日期|人|者)|供稿|撰稿|审核|摄影"
    r"|^\s*(?:by|von|par|por|door|di)\s+\w", re.IGNORECASE)
_NUMBERING = re.compile(r"^[\d.\s]+")
# A class word with "caption" names a picture's caption ("image_caption", "postpicturecaption",
# "captionText", "caption-left"), unless it names a figure's state ("has-caption",
# "media-with-caption") or a related story's or a video list's caption; one with "pullquote"
# a pull quote set in the story.
_PULL_QUOTE = re.compile(r"pull-?quote", re.IGNORECASE)
_NOT_CAPTION = re.compile(r"(?:^|[-_])(?:has|no|with)[-_]caption|related|trending|watch", re.I)
_PICTURES = ("img", "picture", "video", "svg")
MAX_CAPTION = 600  # characters: a caption or quote, not a gallery's or a box's whole text
# Words with which an article's own text introduces links a reader follows from it: a line
# ("Lire : <a>…</a>", "Read more: <a>…</a>") or a kept heading above a list ("See also",
# "External links"). "Related", "相关阅读", "More on this story" name other stories and stay out.
_INTRODUCER = (r"(?:see also|read (?:more|also)|further reading|external links|sources"
               r"|(?:à )?lire(?: aussi)?|voir aussi|liens externes|siehe auch|weblinks"
               r"|lesen sie (?:auch|mehr)|véase también|enlaces externos|leer más"
               r"|参见|另见|外部链接|参考资料|関連項目|外部リンク)")
_INTRODUCING_LINE = re.compile(rf"^\W*{_INTRODUCER}\s*[:：]\W*$", re.IGNORECASE)
_INTRODUCING_HEAD = re.compile(rf"^\W*{_INTRODUCER}\W*(?:\[\s*edit\s*\])?\W*$", re.I)
MAX_INTRODUCED = 3000  # characters of a list a heading introduces: a wiki's, not a site map


def article_parts(body: html.HtmlElement, roots: list[html.HtmlElement], text: Counts,
                  links: Counts) -> list[html.HtmlElement]:
    """The elements to index besides `roots`, of the kinds above (not in document order)."""
    if not roots:
        return []
    order = {e: i for i, e in enumerate(body.iter(etree.Element))}
    inside = {e for root in roots for e in root.iter(etree.Element)}
    taken = inside | {up for root in roots for up in root.iterancestors()}  # or holding one
    container = _container(roots, text)
    return [*_captions(body, roots, order, taken, text, links),
            *_introduced(body, roots, order, inside, taken, text, links),  # before the next
            *_bylines(container, inside, text, links),  # and _contents put new <p>s in the tree
            *_infoboxes(container, taken, text, links),
            *_contents(container, roots, taken, text), *_item_heads(inside, taken, text, links)]


def _container(roots: list[html.HtmlElement], text: Counts) -> html.HtmlElement:
    """The element whose children hold the most of the kept text: the article's own box."""
    held: Counts = {}
    for root in roots:
        parent = root.getparent()
        if parent is not None:
            held[parent] = held.get(parent, 0) + text.get(root, 0)
    return max(held, key=held.__getitem__) if held else roots[0]


def _captions(body: html.HtmlElement, roots: list[html.HtmlElement], order: dict[
        html.HtmlElement, int], taken: set[html.HtmlElement], text: Counts, links: Counts
              ) -> list[html.HtmlElement]:
    """Each caption after the start of the first kept part and before the start of the
    last: the story's pictures and pull quotes, not the lead photo above it nor a gallery
    below it. A <figcaption>, or a short box not of links whose class names a caption beside
    a picture (news sites set captions in <div class="image_caption">, <aside
    class="caption-left">; a "caption" class alone may only name small print) or a pull
    quote. A text already kept or found is not taken again (a gallery repeats its captions
    in its viewer)."""
    first, last = order[roots[0]], order[roots[-1]]
    said = {_squeezed(root.text_content()) for root in roots}
    found: list[html.HtmlElement] = []
    for element in body.iter(etree.Element):
        if not first < order[element] < last or element in taken or (
                found and found[-1] in element.iterancestors()):
            continue
        if element.tag != "figcaption" and not (
                (is_pull_quote(element) or (is_caption(element) and pictured(element)))
                and 0 < text.get(element, 0) <= MAX_CAPTION
                and 2 * links.get(element, 0) <= text.get(element, 0)
                and not any(up.tag == "a" for up in element.iterancestors())):
            continue
        words = _squeezed(element.text_content())
        if element.tag == "figcaption" or not any(words in kept for kept in said):
            found.append(element)
            said.add(words)
    return found


def is_caption(element: html.HtmlElement) -> bool:
    """The element's class names a caption or a pull quote (webpage keeps such an <aside>)."""
    return is_pull_quote(element) or any(
        "caption" in word.lower() and not _NOT_CAPTION.search(word)
        for word in (element.get("class") or "").split())


def is_pull_quote(element: html.HtmlElement) -> bool:
    return any(_PULL_QUOTE.search(word) for word in (element.get("class") or "").split())


def pictured(caption: html.HtmlElement) -> bool:
    """A picture lies in the caption's box or the box around it."""
    box = caption.getparent()
    up = box.getparent() if box is not None else None
    return any(next(e.iter(*_PICTURES), None) is not None
               for e in (caption, box, up) if e is not None)


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _lines(container: html.HtmlElement) -> list[html.HtmlElement]:
    """The blocks holding text of their own in the container, in document order."""
    found: dict[html.HtmlElement, None] = {}
    for element in container.iter(etree.Element):
        pieces = [element.text, *(child.tail for child in element)]
        if any((piece or "").strip() for piece in pieces):
            unit, up = element, element.getparent()
            while not is_block(unit) and unit is not container and up is not None:
                unit, up = up, up.getparent()
            found[unit] = None
    return list(found)


def _bylines(container: html.HtmlElement, inside: set[html.HtmlElement], text: Counts,
             links: Counts) -> list[html.HtmlElement]:
    """A short line with a date or an author, editor or source mark among the few lines right
    before the article or right after it, in the article's own box or, when that begins with
    the article, in the box around it."""
    for box in [container, *container.iterancestors()][:UP]:
        lines = [line for line in _lines(box)  # a share bar's or a menu's links are no line
                 if line in inside or links.get(line, 0) < text.get(line, 0)]
        kept = [i for i, line in enumerate(lines) if line in inside]
        if not kept:
            return []
        if kept[0] > 0:  # the article's head lies in this box (often a header beside it)
            break
    near = [line for line in lines[max(kept[0] - NEAR, 0):kept[0]] + lines[kept[-1] + 1:][:NEAR]
            if line not in inside]
    found = []
    for line in near:
        run = _first_run(line)
        words = " ".join((line.text or "").split() + [w for e in run for w in _text(e).split()])
        if 0 < len(words) <= MAX_LINE and _BYLINE.search(words):
            own = line if len(run) == len(line) else _wrapped(line, run)
            text[own] = len(words)
            links[own] = sum(len(a.text_content()) for a in own.iter("a"))
            found.append(own)
    return found


def _item_heads(inside: set[html.HtmlElement], taken: set[html.HtmlElement], text: Counts,
                links: Counts) -> list[html.HtmlElement]:
    """The linked heads of a roundup's items ("<p><a>证监会：继续推进长期资金入市</a></p>" before
    the paragraph telling it): a paragraph that is one short link, right before a kept
    paragraph that says most of its words; once one is found, so is every such paragraph of
    its box (a head may tell its item in other words: "证监会已查明6起编造虚假信息案"). A
    related-story link beside the story says other things, and stays out."""
    heads = []
    found = []
    for paragraph in (e for e in inside if e.tag == "p"):
        head = paragraph.getprevious()
        if (head is None or head.tag != "p" or head in taken or len(head.findall(".//a")) != 1
                or not 0 < text.get(head, 0) <= MAX_LINE
                or links.get(head, 0) < text.get(head, 0)):
            continue
        heads.append(head)
        words = _words(head.text_content())
        told = _words(paragraph.text_content())
        if words and len(words & told) >= HEAD_TOLD * len(words):
            found.append(head)
    boxes = {head.getparent() for head in found}
    return found + [head for head in heads if head not in found and head.getparent() in boxes]


def _words(text: str) -> set[str]:
    """A text's words: pairs of CJK characters, else words of four letters or more."""
    han = [c for c in text if "\u3040" <= c <= "\u9fff"]
    if len(han) * 2 >= len(text.replace(" ", "")):
        return {a + b for a, b in itertools.pairwise(han)}
    return {w.lower() for w in re.findall(r"\w{4,}", text)}


def _first_run(line: html.HtmlElement) -> list[html.HtmlElement]:
    """The inline elements of the line's own first run of text (after its own text), up to
    the first one that holds a block: a dateline's box often holds a share bar too."""
    run: list[html.HtmlElement] = []
    for child in line:
        if is_block(child) or any(is_block(e) for e in child.iterdescendants(etree.Element)):
            break
        run.append(child)
    return run


def _wrapped(line: html.HtmlElement, run: list[html.HtmlElement]) -> html.HtmlElement:
    """A new <p> holding the line's text and its run, put in their place."""
    paragraph = html.Element("p")
    paragraph.text, line.text = line.text, None
    for child in run:
        paragraph.append(child)  # with its tail
    line.insert(0, paragraph)
    return paragraph


def _text(element: html.HtmlElement) -> str:
    """An inline element's words and those after it (its tail is part of the run too)."""
    return f"{element.text_content()} {element.tail or ''}"


def _infoboxes(container: html.HtmlElement, taken: set[html.HtmlElement], text: Counts,
               links: Counts) -> list[html.HtmlElement]:
    """A table of facts in the article's box: most rows a short label, not a link, and its
    value (a navigation box of link lists is made of tables and linked labels)."""
    found = []
    for table in container.iter("table"):
        if table in taken or any(up.tag == "table" for up in table.iterancestors()):
            continue
        rows = [[c for c in tr if c.tag in ("th", "td")] for tr in table.iter("tr")]
        pairs = [r for r in rows if len(r) == 2 and 0 < len(r[0].text_content().strip()) <= 40]
        labels = [r[0] for r in pairs]
        if (len(pairs) >= 3 and len(pairs) >= 0.6 * len(rows) and table.find(".//table") is None
                and sum(links.get(c, 0) for c in labels) <= MAX_LINKS * sum(
                    text.get(c, 0) for c in labels)):
            found.append(table)
    return found


def _contents(container: html.HtmlElement, roots: list[html.HtmlElement],
              taken: set[html.HtmlElement], text: Counts) -> list[html.HtmlElement]:
    """The article's table of contents: a list of links to places in the page, most of them
    named as a kept heading is; with its own title ("Contents") when its box holds little else."""
    headings = {_name(h.text_content()) for root in roots
                for h in root.iter(*_HEADINGS)}
    found = []
    for listing in container.iter("ul", "ol"):
        if listing in taken or any(up.tag in ("ul", "ol") for up in listing.iterancestors()):
            continue
        anchors = listing.xpath(".//a[@href]")
        local = [a for a in anchors if a.get("href", "").startswith("#")]
        named = [a for a in local if _name(a.text_content()) in headings]
        if len(anchors) >= 3 and len(local) >= 0.8 * len(anchors) and 2 * len(named) >= len(
                anchors):
            box = listing
            while ((up := box.getparent()) is not None and up is not container
                   and up not in taken and text.get(up, 0) <= text.get(listing, 0) + 30):
                box = up
            found.append(_one_paragraph(box, text))
    return found


def _one_paragraph(box: html.HtmlElement, text: Counts) -> html.HtmlElement:
    """The contents as one paragraph put in the box's place, its lines joined by " · ": as
    lines, "3.1 Firefox" reads as a numbered heading to the chunker, which then files every
    chunk of the article under the last of them ("8 External links")."""
    lines = [_own_words(e) for e in box.iter(*_HEADINGS, "li")]
    paragraph = html.Element("p")
    heading = next((" ".join(h.text_content().split()) for h in box.iter(*_HEADINGS)), "")
    paragraph.text = " · ".join(line for line in lines if line != heading)
    if heading:
        paragraph.text = f"{heading}: {paragraph.text}"
    paragraph.tail = box.tail
    parent = box.getparent()
    if parent is not None:  # always: the box lies inside the article's container
        parent.replace(box, paragraph)
    text[paragraph] = text.get(box, 0)
    return paragraph


def _own_words(item: html.HtmlElement) -> str:
    """An item's words without those of the lists inside it."""
    words = [item.text or ""] + [("" if c.tag in ("ul", "ol") else c.text_content()) + (
        c.tail or "") for c in item]
    return " ".join("".join(words).split())


def _name(heading: str) -> str:
    """A heading as a contents line names it: no numbering, no "[edit]", no spaces, lowercase."""
    squeezed = "".join(_NUMBERING.sub("", heading).split()).lower()
    return squeezed.removesuffix("[edit]")


def _introduced(body: html.HtmlElement, roots: list[html.HtmlElement], order: dict[
        html.HtmlElement, int], inside: set[html.HtmlElement], taken: set[html.HtmlElement],
                text: Counts, links: Counts) -> list[html.HtmlElement]:
    """Links the article's text introduces, between the start of its first kept part and
    the end of its last: a paragraph "Lire : <a>…</a>" (its words before the first link an
    introducer and a colon, the rest links) and the lists of links under a kept heading "See
    also" or "External links" (up to the next heading; not a table, where a wiki keeps its
    navigation boxes). A list of other stories the text does not introduce stays out."""
    first = order[roots[0]]
    last = max(order[e] for e in roots[-1].iter(etree.Element))
    found: list[html.HtmlElement] = []
    for element in body.iter("p", "li", "dd", *_HEADINGS):
        if not first < order[element] < last:
            continue
        if element.tag in _HEADINGS:
            if element in inside and _INTRODUCING_HEAD.match(element.text_content()):
                found += _listed_under(element, taken, text)
            continue
        anchor = next(element.iter("a"), None)
        if (element in taken or anchor is None or not 0 < text.get(element, 0) <= MAX_CAPTION
                or any(up in found for up in element.iterancestors())):
            continue
        lead = "".join(text_before(element, anchor))
        if _INTRODUCING_LINE.match(lead) and (  # the rest is links, maybe a closing "?" or "»"
                text.get(element, 0) - links.get(element, 0) <= len(_squeezed(lead)) + 3):
            found.append(element)
    return found


def _listed_under(heading: html.HtmlElement, taken: set[html.HtmlElement], text: Counts
                  ) -> list[html.HtmlElement]:
    """The lists following a heading up to the next heading or kept part."""
    found: list[html.HtmlElement] = []
    size = 0
    for sibling in heading.itersiblings():
        if sibling.tag in _HEADINGS or sibling in taken or next(
                sibling.iter(*_HEADINGS, "table"), None) is not None:
            break
        if sibling.tag in ("ul", "ol") or next(sibling.iter("ul", "ol"), None) is not None:
            size += text.get(sibling, 0)
            if size > MAX_INTRODUCED:
                break
            found.append(sibling)
    return found


def text_before(element: html.HtmlElement, anchor: html.HtmlElement) -> list[str]:
    """The element's text before `anchor`, in document order."""
    out = [element.text or ""]
    for inner in element.iterdescendants():
        if inner is anchor:
            break
        out.append(inner.text or "")
        if anchor not in inner.iterdescendants():  # an element holding it ends after it
            out.append(inner.tail or "")
    return out
