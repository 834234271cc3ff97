"""HTML (lxml): headings, paragraphs, list items and tables in document order."""

from __future__ import annotations

import codecs
import re

from lxml import html

from ingest.models import Block, BlockKind
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.tables import caption_before, cell_text, grid_blocks, html_table_rows
from ingest.text import normalize

_HTML_BLOCKS = {"h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "table", "pre", "blockquote",
                "dt", "dd"}
_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9_-]+)", re.IGNORECASE)
_HTML_SKIPPED = {"script", "style", "nav", "header", "footer", "noscript", "template"}


def parse_html(data: bytes, limits: ParseLimits) -> ParseResult:
    """Headings, paragraphs, list items and tables in document order (outermost block wins)."""
    tree = html.fromstring(data, parser=html.HTMLParser(encoding=_html_encoding(data)))
    blocks: list[Block] = []
    for element in tree.iter(*_HTML_BLOCKS):
        if any(a.tag in _HTML_BLOCKS | _HTML_SKIPPED for a in element.iterancestors()):
            continue
        if element.tag == "table":
            markup = html.tostring(element, encoding="unicode")
            caption = (cell_text(" ".join(element.xpath("./caption//text()")))
                       or caption_before(blocks))
            blocks += grid_blocks(html_table_rows(markup), caption=caption)
            continue
        text = normalize(element.text_content()).replace("\n", "")
        if not text:
            continue
        tag = str(element.tag)
        if tag[0] == "h" and tag[1:].isdigit():
            blocks.append(Block(kind=BlockKind.HEADING, text=text, level=int(tag[1])))
        else:
            blocks.append(Block(kind=BlockKind.PARAGRAPH, text=text))
    return ParseResult(blocks, 1)


def _html_encoding(data: bytes) -> str:
    """The declared charset; else UTF-8 when the bytes are UTF-8, else GB18030 (a superset of
    the GBK that older Chinese pages use). lxml would otherwise assume Latin-1."""
    declared = _CHARSET.search(data[:4096])
    if declared:
        try:
            return codecs.lookup(declared.group(1).decode("ascii")).name
        except LookupError:
            pass
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "gb18030"
    return "utf-8"
