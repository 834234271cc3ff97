"""DOCX (python-docx): body paragraphs and tables in document order, heading levels from
paragraph styles."""

from __future__ import annotations

import io
import re

import docx
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from ingest.models import Block, BlockKind
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.tables import caption_before, cell_text, grid_blocks
from ingest.text import normalize


def parse_docx(data: bytes, limits: ParseLimits) -> ParseResult:
    """Body paragraphs and tables in document order; heading levels from paragraph styles."""
    document = docx.Document(io.BytesIO(data))
    blocks: list[Block] = []
    page = 1
    for element in document.element.body.iterchildren():
        if element.tag == qn("w:tbl"):
            # python-docx repeats a merged cell (gridSpan, vMerge) in every position it covers
            grid = [[cell_text(cell.text) for cell in row.cells]
                    for row in Table(element, document).rows]
            blocks += grid_blocks(grid, page, caption_before(blocks))
        elif element.tag == qn("w:p"):
            paragraph = Paragraph(element, document)
            text = normalize(paragraph.text).replace("\n", "")
            level = _style_level(paragraph.style.name if paragraph.style is not None else "")
            if text:
                kind = BlockKind.HEADING if level else BlockKind.PARAGRAPH
                blocks.append(Block(kind=kind, text=text, page=page, level=level))
            page += len(element.findall(".//" + qn("w:br") + "[@" + qn("w:type") + "='page']"))
    return ParseResult(blocks, page)


def _style_level(style: str) -> int | None:
    if style == "Title":
        return 1
    match = re.fullmatch(r"Heading (\d)", style)
    return int(match.group(1)) if match else None
