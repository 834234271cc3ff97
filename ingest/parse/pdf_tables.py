"""Ruled tables in PDFs (pdfplumber): cells on a grid, merged cells filled, and a table that
runs onto the next page without repeating its header row joined to its first part."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import pymupdf
from pdfplumber.page import Page as PlumberPage
from pdfplumber.table import Table

from ingest.models import Block, BlockKind
from ingest.parse.tables import cell_text, fill_merged, markdown_table, row_texts

_EDGE_TOLERANCE = 3.0  # points two parts' column edges may differ and still line up


@dataclass(eq=False)
class PdfTable:
    """One table part on one page; `head` is the first part when the table began a page earlier."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    grid: list[list[str]]
    edges: list[float]  # column boundaries, left to right
    head: PdfTable | None = None
    parts: list[PdfTable] = field(default_factory=list)  # continuation parts (on the head)
    caption: str = ""
    # each grid row's box (same coordinates as the table's), for the row blocks' bbox
    row_boxes: list[tuple[float, float, float, float]] = field(default_factory=list)

    @property
    def header(self) -> list[str]:
        return self.head.header if self.head else self.grid[0]

    @property
    def data_rows(self) -> list[list[str]]:
        return self.grid if self.head else self.grid[1:]

    def blocks(self, caption: str) -> list[Block]:
        """The first part gives the whole table as Markdown, then its rows; a continuation part
        gives its rows, read against the first part's header and caption."""
        if self.head is not None:
            return self._row_blocks(self.head.header, self.head.caption)
        self.caption = caption
        rows = self.data_rows + [row for part in self.parts for row in part.data_rows]
        whole = Block(kind=BlockKind.TABLE, text=markdown_table(self.header, rows, caption),
                      page=self.page)
        return [whole, *self._row_blocks(self.header, caption)]

    def _row_blocks(self, header: list[str], caption: str) -> list[Block]:
        boxes = self.row_boxes if self.head else self.row_boxes[1:]
        return [Block(kind=BlockKind.TABLE_ROW, text=text, page=self.page, bbox=box)
                for row, box in zip(self.data_rows, boxes, strict=True)
                for text in row_texts([row], header, caption)]


def find_tables(plumber_page: PlumberPage, page: pymupdf.Page) -> list[PdfTable]:
    """Ruled tables of at least two rows and two columns, in PyMuPDF's (unrotated) coordinates."""
    tables = []
    for table in plumber_page.find_tables():
        # a row runs from its top to the next row's (a merged cell's box spans several rows)
        x0, _, x1, bottom = table.bbox
        tops = [row.bbox[1] for row in table.rows] + [bottom]
        kept = [(row, tuple(pymupdf.Rect(x0, top, x1, below) * page.derotation_matrix))
                for row, top, below in zip(fill_merged(_grid(table)), tops, tops[1:],
                                           strict=False)
                if any(row)]
        grid = [row for row, _ in kept]
        if len(grid) < 2 or len(grid[0]) < 2:
            continue  # a box drawn around a paragraph is not a table
        rect = pymupdf.Rect(table.bbox) * page.derotation_matrix
        edges = [column.bbox[0] for column in table.columns] + [table.bbox[2]]
        tables.append(PdfTable(page.number + 1, rect.x0, rect.y0, rect.x1, rect.y1, grid, edges,
                               row_boxes=[(b[0], b[1], b[2], b[3]) for _, b in kept]))
    return tables


def _grid(table: Table) -> list[list[str | None]]:
    """Cell texts by grid position. pdfplumber reports a position covered by a merged cell as
    None; it gets the text of the cell whose box covers the position's centre."""
    texts = table.extract()
    boxes = [row.cells for row in table.rows]
    xs = [column.bbox[0] for column in table.columns] + [table.bbox[2]]
    ys = [row.bbox[1] for row in table.rows] + [table.bbox[3]]
    known = [(box, text) for box_row, text_row in zip(boxes, texts, strict=True)
             for box, text in zip(box_row, text_row, strict=True) if box is not None]
    grid: list[list[str | None]] = []
    for r, (box_row, text_row) in enumerate(zip(boxes, texts, strict=True)):
        y = (ys[r] + ys[r + 1]) / 2
        row: list[str | None] = []
        for c, (box, text) in enumerate(zip(box_row, text_row, strict=True)):
            if box is None and c + 1 < len(xs):
                x = (xs[c] + xs[c + 1]) / 2
                text = next((t for (x0, y0, x1, y1), t in known
                             if x0 <= x <= x1 and y0 <= y <= y1), None)
            row.append(None if text is None else cell_text(text))
        grid.append(row)
    return grid


def link_continuations(pages: Sequence[Sequence[object]]) -> None:
    """A table that opens a page continues the table that closed the page before when their
    columns line up: it takes that table's header (a repeated header row is dropped)."""
    for previous, current in itertools.pairwise(pages):
        last = next((i for i in reversed(previous) if not getattr(i, "in_margin", False)), None)
        first = next((i for i in current if not getattr(i, "in_margin", False)), None)
        if not (isinstance(last, PdfTable) and isinstance(first, PdfTable)):
            continue
        if len(last.edges) != len(first.edges) or any(
                abs(a - b) > _EDGE_TOLERANCE for a, b in zip(last.edges, first.edges, strict=True)):
            continue
        head = last.head or last
        if first.grid[0] == head.header:
            first.grid, first.row_boxes = first.grid[1:], first.row_boxes[1:]
        first.head = head
        head.parts.append(first)
