"""HTML as text blocks laid out the way a browser lays them out, for web pages and for the raw
HTML inside Markdown: every text a reader sees, once, in reading order.

A block element (div, p, li, section, td, …) ends the line before it and after it, and so
does <br>: each line is a paragraph of its own, and an element's text never includes a nested
block's (a list item holds its own words, its sub-list's items follow as blocks). A heading's
lines stay one heading, a <pre>'s lines are paragraphs as a text file's are. A table is one
TABLE block plus its rows, its cells' lines joined as wrapped lines are (tables.cell_text).
Meaningful alt text of an image is a paragraph; a file name is not.

libxml2's HTML parser reads no DTD and resolves no entity but HTML's own; the network is off.
It drops whatever follows `</html>`, which a browser shows at the end of the body: the
antivirus and mailing-list footers mail programs append to an HTML mail after its end
(unstructured's email-no-utf8-2008-07-16.062410.eml). So the body and html end tags are
left out of what it reads, and every element closes at the end of the text.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Sequence

from lxml import etree, html

from ingest.models import Block, BlockKind
from ingest.parse.errors import ParseError
from ingest.parse.tables import (
    caption_before,
    cell_text,
    grid_blocks,
    html_table_rows,
    labelled,
)
from ingest.text import join_lines, normalize

NOT_TEXT = ("script", "style", "noscript", "template")  # code, not text: dropped uncounted
# a ruby's reading (furigana, pinyin) shown above its words: read inline it splits each word it
# annotates ("子<rt>こ</rt>ども" read "子こども"), so the words are kept and the reading is not
RUBY_READING = ("rt", "rp")
# Elements a browser lays out as blocks (their own lines); any other tag, unknown ones
# included (<o:p>, <st1:chsdate> of Word's HTML), is inline.
BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li",
    "listing", "main", "menu", "nav", "ol", "optgroup", "option", "p", "plaintext", "pre",
    "search", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    "xmp",
})
_PRE = {"pre", "listing", "plaintext", "xmp"}
# </body> and </html>: libxml2 drops what follows them, a browser does not (bytes: ASCII-based
# encodings; a UTF-16 page keeps libxml2's reading)
_END_TAGS = re.compile(r"</(?:body|html)\s*>", re.IGNORECASE)
_END_TAGS_BYTES = re.compile(rb"</(?:body|html)\s*>", re.IGNORECASE)
# alt text that names no content: a file name, an address, a placeholder word
_NO_ALT = re.compile(r"(?i)^(?:.*\.(?:png|jpe?g|gif|bmp|svg|webp|tiff?|ico)|\w+://\S*"
                     r"|image|img|picture|photo|icon|图片|图像|图标|照片)$")


def read_html(markup: bytes | str, encoding: str | None = None) -> html.HtmlElement:
    """The document tree without comments, processing instructions, scripts, styles and ruby
    readings; a ParseError when libxml2 stopped reading at its depth limit (the rest would be
    lost)."""
    parser = html.HTMLParser(encoding=encoding, no_network=True, remove_comments=True,
                             remove_pis=True)
    markup = (_END_TAGS.sub("", markup) if isinstance(markup, str)
              else _END_TAGS_BYTES.sub(b"", markup))
    tree = html.document_fromstring(markup, parser=parser)
    limit = next((e for e in parser.error_log if e.type_name == "ERR_RESOURCE_LIMIT"), None)
    if limit is not None:
        reason = limit.message.split(",")[0]  # "Excessive depth in document: 256"
        raise ParseError(f"HTML page is beyond the parser's limits, not read to its end: {reason}")
    etree.strip_elements(tree, *NOT_TEXT, *RUBY_READING, with_tail=False)
    return tree


def fragment_blocks(markup: str, before: Sequence[Block] = ()) -> list[Block]:
    """Blocks of an HTML fragment (a raw HTML block of a Markdown file); `before` are the
    blocks read so far, where a table's caption may be."""
    body = read_html(f"<html><body>{markup}</body></html>").find("body")
    return [] if body is None else html_blocks(body, before)


def is_block(element: html.HtmlElement) -> bool:
    return element.tag in BLOCK_TAGS


def alt_text(element: html.HtmlElement) -> str:
    """An <img>'s alt text when it says something (not empty, not a file name)."""
    if element.tag != "img":
        return ""
    alt = cell_text(element.get("alt"))
    return "" if _NO_ALT.match(alt) else alt


def html_blocks(root: html.HtmlElement, before: Sequence[Block] = ()) -> list[Block]:
    """The blocks of root's content (not of its tail) in document order. A walk with its own
    stack, no recursion: a page may be as deep as libxml2 lets it be."""
    reader = _Reader(list(before))
    stack: list[tuple[html.HtmlElement, bool]] = [(root, True)]
    while stack:
        element, entering = stack.pop()
        if not isinstance(element.tag, str):
            continue
        if entering and not reader.leaf(element):
            reader.open(element)
            stack.append((element, False))
            stack += [(child, True) for child in reversed(element)]
            continue
        if not entering:
            reader.close(element)
        if element is not root:
            reader.parts.append(element.tail or "")
    reader.flush()  # root may be inline (<font> around paragraphs)
    return reader.blocks[len(before):]


class _Reader:
    """The current line's text pieces, and the block elements it lies in."""

    def __init__(self, blocks: list[Block]) -> None:
        self.blocks = blocks
        self.parts: list[str] = []
        self.heading: list[int | None] = [None]  # the innermost heading's level, per block
        self.pre: list[bool] = [False]

    def open(self, element: html.HtmlElement) -> None:
        if is_block(element):
            self.flush()
            tag = str(element.tag)
            level = int(tag[1]) if re.fullmatch(r"h[1-6]", tag) else self.heading[-1]
            self.heading.append(level)
            self.pre.append(self.pre[-1] or tag in _PRE)
        self.parts.append(element.text or "")

    def close(self, element: html.HtmlElement) -> None:
        if is_block(element):
            self.flush()
            self.heading.pop()
            self.pre.pop()

    def leaf(self, element: html.HtmlElement) -> bool:
        """<br> ends a line (in a heading or <pre>, a line of the block); an image's alt text
        is a paragraph; a data table is blocks of its own. False for any other element, a
        layout table too, whose content is walked."""
        if element.tag == "br":
            if self.heading[-1] is None and not self.pre[-1]:
                self.flush()
            else:
                self.parts.append("\n")
        elif element.tag == "img":
            if alt := alt_text(element):
                self.flush()
                self.blocks.append(Block(kind=BlockKind.PARAGRAPH, text=alt))
        elif element.tag == "table":
            self.flush()
            table = table_blocks(element, self.blocks)
            if table is None:
                return False
            self.blocks += table
        else:
            return False
        return True

    def flush(self) -> None:
        text = normalize("".join(self.parts))
        self.parts.clear()
        if not text:
            return
        level = self.heading[-1]
        if self.pre[-1]:
            self.blocks += [Block(kind=BlockKind.PARAGRAPH, text=line)
                            for line in text.split("\n")]
        elif level is None:
            self.blocks.append(Block(kind=BlockKind.PARAGRAPH, text=one_line(text)))
        else:
            self.blocks.append(Block(kind=BlockKind.HEADING, text=one_line(text), level=level))


def one_line(text: str) -> str:
    """Normalized text's lines joined as a browser wraps source lines (no space within CJK)."""
    return functools.reduce(join_lines, text.split("\n"))


def table_blocks(table: html.HtmlElement, before: list[Block]) -> list[Block] | None:
    """A data table's blocks (tables.grid_blocks); None for a layout table, one that holds
    another table or whose spans would multiply its text (tables.html_table_rows): its cells
    are read once, in order, like any block, and a nested table is a table of its own. In a
    copy, a line break (<br>, a block inside a cell) becomes a newline and an image its alt
    text, so that cell_text reads a cell's lines as wrapped lines ("First Line Second Line",
    "第一行第二行") instead of gluing words."""
    if table.find(".//table") is not None:
        return None
    grid = copy.deepcopy(table)
    for element in grid.iter(etree.Element):
        if element.tag == "img" and (alt := alt_text(element)):
            element.tail = f" {alt} {element.tail or ''}"
        elif element.tag == "br":
            element.tail = "\n" + (element.tail or "")
        elif is_block(element):
            element.text = "\n" + (element.text or "")
            element.tail = "\n" + (element.tail or "")
    rows = html_table_rows(html.tostring(grid, encoding="unicode"))
    if rows is None:
        return None
    caption = cell_text(" ".join(table.xpath("./caption//text()"))) or caption_before(before)
    return grid_blocks(rows, caption=caption, labelled=labelled(table))
