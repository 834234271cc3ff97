"""Markdown (markdown-it), HTML (lxml), DOCX (python-docx), PPTX (python-pptx) and plain text.

unstructured's partitioners would cover these formats, but they classify every element with a
spaCy English model that they download on first use: that fails offline, and English sentence
heuristics misjudge Chinese clauses. These formats state their structure (heading tags and
styles, table cells), so reading it directly is both exact and offline.
"""

from __future__ import annotations

import codecs
import functools
import io
import re
from collections.abc import Iterable

import docx
import pptx
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import html
from markdown_it import MarkdownIt
from markdown_it.token import Token
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.shapes.autoshape import Shape
from pptx.shapes.base import BaseShape
from pptx.shapes.graphfrm import GraphicFrame
from pptx.shapes.group import GroupShape
from pptx.table import Table as PptxTable

from ingest.models import Block, BlockKind
from ingest.parse.tables import cell_text, grid_blocks, html_table_rows, is_caption
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
            blocks += grid_blocks(table, caption=_caption(blocks))
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


def _plain(token: Token) -> str:
    parts: list[str] = []
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
            # python-docx repeats a merged cell (gridSpan, vMerge) in every position it covers
            grid = [[cell_text(cell.text) for cell in row.cells]
                    for row in Table(element, document).rows]
            blocks += grid_blocks(grid, page, _caption(blocks))
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
                "dt", "dd"}
_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9_-]+)", re.IGNORECASE)
_HTML_SKIPPED = {"script", "style", "nav", "header", "footer", "noscript", "template"}


def parse_html(data: bytes) -> list[Block]:
    """Headings, paragraphs, list items and tables in document order (outermost block wins)."""
    tree = html.fromstring(data, parser=html.HTMLParser(encoding=_html_encoding(data)))
    blocks: list[Block] = []
    for element in tree.iter(*_HTML_BLOCKS):
        if any(a.tag in _HTML_BLOCKS | _HTML_SKIPPED for a in element.iterancestors()):
            continue
        if element.tag == "table":
            markup = html.tostring(element, encoding="unicode")
            caption = cell_text(" ".join(element.xpath("./caption//text()"))) or _caption(blocks)
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
    return blocks


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


def _caption(blocks: list[Block]) -> str:
    """The paragraph right before a table when it names the table ("表1 费用报销标准表")."""
    last = blocks[-1] if blocks else None
    return last.text if last and last.kind == BlockKind.PARAGRAPH and is_caption(last.text) else ""


_TITLES = {PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE}


def parse_pptx(data: bytes) -> tuple[list[Block], int]:
    """Slides in order, shapes top to bottom; slide titles are headings (the first slide's is
    the document title); tables as rows. The page number is the slide number."""
    presentation = pptx.Presentation(io.BytesIO(data))
    blocks: list[Block] = []
    for number, slide in enumerate(presentation.slides, start=1):
        for shape in _shapes(slide.shapes):
            if isinstance(shape, GraphicFrame) and shape.has_table:
                blocks += grid_blocks(_pptx_grid(shape.table), number, _caption(blocks))
                continue
            if not isinstance(shape, Shape):  # the one kind with a text frame
                continue
            title = shape.is_placeholder and shape.placeholder_format.type in _TITLES
            for paragraph in shape.text_frame.paragraphs:
                text = functools.reduce(join_lines, normalize(paragraph.text).split("\n"))
                if text and title:
                    blocks.append(Block(kind=BlockKind.HEADING, text=text, page=number,
                                        level=1 if number == 1 else 2))
                elif text:
                    blocks.append(Block(kind=BlockKind.PARAGRAPH, text=text, page=number))
    return blocks, len(presentation.slides)


def _shapes(shapes: Iterable[BaseShape]) -> list[BaseShape]:
    """Shapes in reading order (top to bottom, then left to right), groups opened."""
    out: list[BaseShape] = []
    for shape in sorted(shapes, key=lambda s: (s.top or 0, s.left or 0)):
        out += _shapes(shape.shapes) if isinstance(shape, GroupShape) else [shape]
    return out


def _pptx_grid(table: PptxTable) -> list[list[str | None]]:
    """A merged cell's text copied into every position it spans."""
    grid: list[list[str | None]] = [[None] * len(table.columns) for _ in table.rows]
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            if cell.is_spanned:
                continue
            text = cell_text(cell.text)
            for dr in range(cell.span_height if cell.is_merge_origin else 1):
                for dc in range(cell.span_width if cell.is_merge_origin else 1):
                    if r + dr < len(grid) and c + dc < len(grid[0]):
                        grid[r + dr][c + dc] = text
    return grid
