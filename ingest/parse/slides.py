"""PPTX (python-pptx): slides in order, shapes top to bottom; the page is the slide number."""

from __future__ import annotations

import functools
import io
from collections.abc import Iterable

import pptx
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.shapes.autoshape import Shape
from pptx.shapes.base import BaseShape
from pptx.shapes.graphfrm import GraphicFrame
from pptx.shapes.group import GroupShape
from pptx.table import Table as PptxTable

from ingest.models import Block, BlockKind
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.tables import caption_before, cell_text, grid_blocks
from ingest.text import join_lines, normalize

_TITLES = {PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE}


def parse_pptx(data: bytes, limits: ParseLimits) -> ParseResult:
    """Slides in order, shapes top to bottom; slide titles are headings (the first slide's is
    the document title); tables as rows. The page number is the slide number."""
    presentation = pptx.Presentation(io.BytesIO(data))
    blocks: list[Block] = []
    for number, slide in enumerate(presentation.slides, start=1):
        for shape in _shapes(slide.shapes):
            if isinstance(shape, GraphicFrame) and shape.has_table:
                blocks += grid_blocks(_pptx_grid(shape.table), number, caption_before(blocks))
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
    return ParseResult(blocks, len(presentation.slides))


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
