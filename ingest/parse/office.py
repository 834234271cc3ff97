"""Markdown (markdown-it), HTML (lxml), DOCX (python-docx) and plain text.

unstructured's partitioners would cover these formats, but they classify every element with a
spaCy English model that they download on first use: that fails offline, and English sentence
heuristics misjudge Chinese clauses. These formats state their structure (heading tags and
styles, table cells), so reading it directly is both exact and offline.
"""

from __future__ import annotations

import functools
import io
import re

import docx
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import html
from markdown_it import MarkdownIt

from ingest.models import Block, BlockKind
from ingest.parse.tables import html_table_rows, row_texts
from ingest.text import join_lines, normalize


def parse_markdown(text: str) -> list[Block]:
    """Headings keep their level; tables become one block per data row."""
    blocks: list[Block] = []
    heading_level: int | None = None
    table: list[list[str]] | None = None
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        if token.type == "heading_open":
            heading_level = int(token.tag[1])
        elif token.type == "heading_close":
            heading_level = None
        elif token.type == "table_open":
            table = []
        elif token.type == "tr_open" and table is not None:
            table.append([])
        elif token.type == "table_close" and table is not None:
            blocks += [Block(kind=BlockKind.TABLE_ROW, text=row) for row in row_texts(table)]
            table = None
        elif token.type == "inline":
            content = functools.reduce(join_lines, normalize(_plain(token)).split("\n"))
            if table is not None:
                table[-1].append(content)
            elif content and heading_level is not None:
                blocks.append(Block(kind=BlockKind.HEADING, text=content, level=heading_level))
            elif content:
                blocks.append(Block(kind=BlockKind.PARAGRAPH, text=content))
    return blocks


def _plain(token) -> str:
    parts = []
    for child in token.children or []:
        if child.type in {"text", "code_inline"}:
            parts.append(child.content)
        elif child.type in {"softbreak", "hardbreak"}:
            parts.append("\n")
    return "".join(parts)


def parse_text(text: str) -> list[Block]:
    return [Block(kind=BlockKind.PARAGRAPH, text=line) for line in normalize(text).split("\n")]


def parse_docx(data: bytes) -> tuple[list[Block], int]:
    """Body paragraphs and tables in document order; heading levels from paragraph styles."""
    document = docx.Document(io.BytesIO(data))
    blocks: list[Block] = []
    page = 1
    for element in document.element.body.iterchildren():
        if element.tag == qn("w:tbl"):
            rows = [[normalize(cell.text).replace("\n", " ") for cell in row.cells]
                    for row in Table(element, document).rows]
            blocks += [Block(kind=BlockKind.TABLE_ROW, text=r, page=page) for r in row_texts(rows)]
        elif element.tag == qn("w:p"):
            paragraph = Paragraph(element, document)
            text = normalize(paragraph.text).replace("\n", "")
            level = _style_level(paragraph.style.name if paragraph.style is not None else "")
            if text:
                kind = BlockKind.HEADING if level else BlockKind.PARAGRAPH
                blocks.append(Block(kind=kind, text=text, page=page, level=level))
            page += len(element.findall(".//" + qn("w:br") + "[@" + qn("w:type") + "='page']"))
    return blocks, page


def _style_level(style: str) -> int | None:
    if style == "Title":
        return 1
    match = re.fullmatch(r"Heading (\d)", style)
    return int(match.group(1)) if match else None


_HTML_BLOCKS = {"h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "table", "pre", "blockquote",
                "dt", "dd", "caption"}
_HTML_SKIPPED = {"script", "style", "nav", "header", "footer", "noscript", "template"}


def parse_html(data: bytes) -> list[Block]:
    """Headings, paragraphs, list items and tables in document order (outermost block wins)."""
    tree = html.fromstring(data)
    blocks: list[Block] = []
    for element in tree.iter(*_HTML_BLOCKS):
        if any(a.tag in _HTML_BLOCKS | _HTML_SKIPPED for a in element.iterancestors()):
            continue
        if element.tag == "table":
            markup = html.tostring(element, encoding="unicode")
            blocks += [Block(kind=BlockKind.TABLE_ROW, text=r)
                       for r in row_texts(html_table_rows(markup))]
            continue
        text = normalize(element.text_content()).replace("\n", "")
        if not text:
            continue
        if element.tag[0] == "h" and element.tag[1:].isdigit():
            blocks.append(Block(kind=BlockKind.HEADING, text=text, level=int(element.tag[1])))
        else:
            blocks.append(Block(kind=BlockKind.PARAGRAPH, text=text))
    return blocks
