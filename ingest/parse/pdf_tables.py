"""Ruled tables in PDFs (pdfplumber): cells on a grid, merged cells filled, and a table that
runs onto the next page without repeating its header row joined to its first part. A table
whose text does not run left to right on the page as shown (a landscape table on a page turned
by /Rotate), or whose rows stand between no rules, is read from PyMuPDF's words in the frame
where its text runs left to right (`_turned_grid`). A cell of Arabic or Hebrew, which
pdfplumber gives in the order drawn, is put in logical order (`_logical_cell`). Column names
set slanted above the columns: `pdf_slanted`."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pymupdf
from pdfplumber.page import Page as PlumberPage
from pdfplumber.table import Table
from pdfplumber.utils.clustering import cluster_objects

from ingest.models import Block, BlockKind
from ingest.parse.pdf_boxes import Box, beside_another, block_cells, drawn_boxes
from ingest.parse.pdf_slanted import slanted_grid
from ingest.parse.rtl import has_rtl, logical_line
from ingest.parse.tables import cell_text, fill_merged, markdown_table, row_texts

_WORD_GAP = 3.0  # points between glyphs that part two words (pdfplumber's x_tolerance)
_EDGE_TOLERANCE = 3.0  # points two parts' column edges may differ and still line up
_TURNS = {(1, 0): 0, (0, -1): 90, (-1, 0): 180, (0, 1): 270}  # a line's direction -> turn
_Box = tuple[float, float, float, float]
# a line in a cell: top, left and right in the table's frame, text, unrotated box
_Line = tuple[float, float, float, str, _Box]
_RUN_ON_ROWS = 3  # lines beside a table on its rows' baselines that make it part of a wider one
_VALUE = re.compile(r"[-+(]?[$€£¥]?\d[\d,.]*%?\)?")  # a number a cell does not wrap
_MONEY = re.compile(r"[$€£¥]\s*(\d[\d,.]*)?")  # a sum or its sign: never a column's name


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
    title: str = ""  # a first row of one text across every column, above the header row
    names: list[str] | None = None  # the columns' names when the header takes two rows
    # each grid row's box (same coordinates as the table's), for the row blocks' bbox
    row_boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    framed: bool = False  # boxes side by side, each read as a paragraph (`_framed`)
    headless: bool = False  # the first row is data: the names stand above the rules

    @property
    def header(self) -> list[str]:
        if self.head:
            return self.head.header
        return [""] * len(self.grid[0]) if self.headless else self.names or self.grid[0]

    @property
    def header_rows(self) -> int:
        return 0 if self.headless else 1 if self.names is None else 2

    @property
    def data_rows(self) -> list[list[str]]:
        return self.grid if self.head else self.grid[self.header_rows:]

    def blocks(self, caption: str) -> list[Block]:
        """The first part gives the whole table as Markdown, then its rows; a continuation part
        gives its rows, read against the first part's header and caption. Framed boxes give
        each box's text as a paragraph."""
        if self.framed:
            return [Block(kind=BlockKind.PARAGRAPH, text=text, page=self.page)
                    for text in self.grid[0] if text]
        if self.head is not None:
            return self._row_blocks(self.head.header, self.head.caption)
        if self.title:
            caption = f"{caption} {self.title}" if self.title not in caption else caption
        self.caption = caption = caption.strip()
        rows = self.data_rows + [row for part in self.parts for row in part.data_rows]
        shown = self.grid[1:self.header_rows]  # the Markdown keeps the header as drawn
        top = self.grid[0] if self.header_rows else self.header
        whole = Block(kind=BlockKind.TABLE, page=self.page,
                      text=markdown_table(top, shown + rows, caption))
        return [whole, *self._row_blocks(self.header, caption)]

    def _row_blocks(self, header: list[str], caption: str) -> list[Block]:
        boxes = self.row_boxes if self.head else self.row_boxes[self.header_rows:]
        if not any(header):  # rows without names read "label: values"
            prefix = f"{caption} | " if caption else ""
            return [Block(kind=BlockKind.TABLE_ROW, page=self.page, bbox=box, text=prefix + (
                        f"{row[0]}: " if row[0] else "") + _values(row[1:]))
                    for row, box in zip(self.data_rows, boxes, strict=True) if any(row)]
        return [Block(kind=BlockKind.TABLE_ROW, text=text, page=self.page, bbox=box)
                for row, box in zip(self.data_rows, boxes, strict=True)
                for text in row_texts([row], header, caption)]


def _values(cells: list[str]) -> str:
    """A row's values; a currency sign drawn in its own column stands before its figure."""
    out: list[str] = []
    for cell in cells:
        if out and _MONEY.fullmatch(out[-1]) and not _MONEY.fullmatch(cell):
            out[-1] = f"{out[-1]} {cell}"
        elif cell:
            out.append(cell)
    return "; ".join(out)


def find_tables(plumber_page: PlumberPage, page: pymupdf.Page, blocks: list[dict[str, Any]]
                ) -> list[PdfTable]:
    """Ruled tables of at least two rows and two columns, in PyMuPDF's (unrotated) coordinates.
    `blocks`: PyMuPDF's text of the page (`get_text("dict")`), which the PDF parser has read."""
    tables = []
    boxes: list[tuple[PdfTable, list[Box]]] = []  # one-row tables, their cells of a block
    words: list[tuple[Any, ...]] = []  # PyMuPDF's words, read once for the page when needed
    for table in plumber_page.find_tables():
        rect = pymupdf.Rect(table.bbox) * page.derotation_matrix
        if _rows_run_on(rect, blocks):
            continue  # its rules frame some columns of a wider table: read as lines
        turn = _table_turn(page, rect, blocks)
        slanted = slanted_grid(table, page, blocks) if turn == page.rotation % 360 else None
        if slanted is not None:  # names set slanted above the columns
            x0, _, x1, _ = table.bbox
            kept = [(row, tuple(pymupdf.Rect(x0, line.bbox[1], x1, line.bbox[3])
                                * page.derotation_matrix))
                    for row, line in zip(slanted[0], table.rows, strict=True) if any(row)]
            edges = slanted[1]
        elif turn == page.rotation % 360 and not _banded(table):  # as pdfplumber reads it
            # a row runs from its top to the next row's (a merged cell's box spans several rows)
            x0, _, x1, bottom = table.bbox
            tops = [row.bbox[1] for row in table.rows] + [bottom]
            kept = [(row, tuple(pymupdf.Rect(x0, top, x1, below) * page.derotation_matrix))
                    for row, top, below in zip(fill_merged(_grid(table)), tops, tops[1:],
                                               strict=False)
                    if any(row)]
            edges = [column.bbox[0] for column in table.columns] + [table.bbox[2]]
        else:
            words = words or page.get_text("words")
            cells = [pymupdf.Rect(cell) * page.derotation_matrix for cell in table.cells]
            kept, edges = _turned_grid(cells, words, turn)
        title = ""
        if len(kept) > 2 and len(set(kept[0][0])) == 1 < len(kept[0][0]) and all(
                cell and not _VALUE.fullmatch(cell) for cell in kept[1][0]):
            title = kept.pop(0)[0][0]  # the table's title, not every column's name
        names = _two_row_header(kept[0][0], kept[1][0]) if len(kept) > 2 else None
        grid = [row for row, _ in kept]
        found = PdfTable(page.number + 1, rect.x0, rect.y0, rect.x1, rect.y1, grid, edges,
                         title=title, names=names, headless=names is None and bool(grid) and any(
                             _MONEY.fullmatch(cell) for cell in grid[0][1:]),
                         row_boxes=[(b[0], b[1], b[2], b[3]) for _, b in kept])
        if len(grid) == 1 and turn == page.rotation % 360 and slanted is None:
            boxes.append((found, block_cells(table)))
        elif len(grid) > 1 and len(grid[0]) > 1:  # a box around a paragraph is not a table
            tables.append(found)
    return tables + _framed(page, blocks, tables, boxes)


def _framed(page: pymupdf.Page, blocks: list[dict[str, Any]], tables: list[PdfTable],
            boxes: list[tuple[PdfTable, list[Box]]]) -> list[PdfTable]:
    """One-row tables and rectangles drawn on their own, holding a block of lines beside
    another such box (ingest.parse.pdf_boxes): each box read as one paragraph."""
    drawn = drawn_boxes(page, blocks, [(t.x0, t.y0, t.x1, t.y1) for t in tables] + [
        (t.x0, t.y0, t.x1, t.y1) for t, _ in boxes])
    found = [table for table, _ in boxes] + [
        PdfTable(page.number + 1, *box, [[text]], [box[0], box[2]], row_boxes=[box])
        for box, text in drawn]
    kept = beside_another([held for _, held in boxes] + [[box] for box, _ in drawn])
    for n in kept:
        found[n].framed = True
    return [found[n] for n in kept]


def _rows_run_on(rect: pymupdf.Rect, blocks: list[dict[str, Any]]) -> bool:
    """Whether the table's rows go on beyond its rules: text lines left or right of it, set
    on the baselines of lines inside it (12s0324: rules drawn between three column groups of
    nine, the row names and the last group outside them). Read as a table, every group became
    one cell of a whole column's figures; read as lines, each row stays a row. Lines beside
    the table on baselines of their own (the other column of a two-column page) do not count."""
    inner: list[float] = []
    outer: list[float] = []
    for line in (line for block in blocks for line in block.get("lines", [])):
        if (round(line["dir"][0]), round(line["dir"][1])) != (1, 0) or not "".join(
                span["text"] for span in line["spans"]).strip():
            continue  # a turned table's rows are not on baselines
        x0, y0, x1, y1 = line["bbox"]
        if not rect.y0 <= (y0 + y1) / 2 <= rect.y1:
            continue
        if x0 >= rect.x0 - 1 and x1 <= rect.x1 + 1:
            inner.append(y1)
        elif x1 <= rect.x0 or x0 >= rect.x1:
            outer.append(y1)
    level = [y for y in outer if any(abs(y - other) < 1 for other in inner)]
    return len(level) >= _RUN_ON_ROWS and len(level) >= 0.8 * len(outer)


def _banded(table: Table) -> bool:
    """Whether a cell holds numbers on several lines: rows drawn without rules between them,
    which pdfplumber gives as one row (`_sub_rows` parts them)."""
    return any(text and "\n" in text and all(_VALUE.fullmatch(line.strip())
                                              for line in text.split("\n"))
               for row in table.extract() for text in row)


def _two_row_header(first: list[str], second: list[str]) -> list[str] | None:
    """A header of two rows ("费用" drawn across "交通费(元)" and "住宿费(元)", the other names
    drawn down both rows) as one: each column's name is both its rows'. Without it the second
    row was data, and every row read "费用: 1,280.00; 费用: 2,400.00", which is which lost."""
    spanned = [c for c, name in enumerate(first) if name and (
        first[c - 1: c] == [name] or first[c + 1: c + 2] == [name])]
    under = [second[c] for c in spanned]
    if not spanned or not all(under) or len(set(under)) < len(under) or any(
            _VALUE.fullmatch(name) for name in under) or any(
            second[c] not in ("", first[c]) for c in range(len(first)) if c not in spanned):
        return None
    return [name if second[c] in ("", name) else f"{name} {second[c]}"
            for c, name in enumerate(first)]


def _table_turn(page: pymupdf.Page, rect: pymupdf.Rect, blocks: list[dict[str, Any]]) -> int:
    """Degrees to turn the unrotated page by so that most of the table's lines run left to
    right (the page's /Rotate when it shows upright, as pdfplumber reads it). Lines, not
    characters: long column names turned 90° over short values outweighed the body by
    characters, and the whole table was read turned (its rows as columns)."""
    lines: dict[int, int] = {}
    for line in (line for block in blocks for line in block.get("lines", [])):
        turn = _TURNS.get((round(line["dir"][0]), round(line["dir"][1])))
        if turn is not None and pymupdf.Rect(line["bbox"]).intersects(rect) and any(
                span["text"].strip() for span in line["spans"]):
            lines[turn] = lines.get(turn, 0) + 1
    return max(lines, key=lambda turn: lines[turn], default=page.rotation % 360)


def _frame(rect: pymupdf.Rect, turn: int) -> tuple[float, float, float, float]:
    """(top, left, bottom, right) of an unrotated box in the page turned by `turn` degrees
    clockwise, up to a shift (only the order of boxes matters)."""
    x0, y0, x1, y1 = float(rect.x0), float(rect.y0), float(rect.x1), float(rect.y1)
    return {0: (y0, x0, y1, x1), 90: (x0, -y1, x1, -y0), 180: (-y1, -x1, -y0, -x0),
            270: (-x1, y0, -x0, y1)}[turn]


def _turned_grid(cells: list[pymupdf.Rect], words: list[tuple[Any, ...]], turn: int
                 ) -> tuple[list[tuple[list[str], _Box]], list[float]]:
    """Rows (cell texts, unrotated box) and column edges of a table read in the frame where its
    text runs left to right: pdfplumber's cells, placed in that frame, hold PyMuPDF's words. A
    cell spanning several rows or columns fills each position it covers."""
    framed = [_frame(cell, turn) for cell in cells]
    tops, lefts = _starts([f[0] for f in framed]), _starts([f[1] for f in framed])
    tops.append(max(f[2] for f in framed))
    lefts.append(max(f[3] for f in framed))
    lines = [_cell_lines(cell, words, turn) for cell in cells]
    rows = []
    for top, bottom in itertools.pairwise(tops):
        y = (top + bottom) / 2
        covering = [next((i for i, f in enumerate(framed)
                          if f[0] <= y <= f[2] and f[1] <= (left + right) / 2 <= f[3]), None)
                    for left, right in itertools.pairwise(lefts)]
        box = pymupdf.Rect()
        for i in covering:
            if i is not None:
                box |= cells[i]
        own = all(i is None or (abs(framed[i][0] - top) < 1 and abs(framed[i][2] - bottom) < 1)
                  for i in covering)
        bands = list(itertools.pairwise(lefts))
        cell_lines = [[] if i is None else _in_column(
            lines[i], [band for j, band in zip(covering, bands, strict=True) if j == i], band)
            for i, band in zip(covering, bands, strict=True)]
        subs = _sub_rows(cell_lines) if own else [cell_lines]
        for sub in subs:
            row = [cell_text("\n".join(line[3] for line in cell)) for cell in sub]
            if len(subs) > 1:  # a row between no rules: its own lines' box
                box = pymupdf.Rect()
                for line in itertools.chain(*sub):
                    box |= line[4]
            if any(row):
                rows.append((row, (box.x0, box.y0, box.x1, box.y1)))
    return rows, lefts


def _starts(values: list[float]) -> list[float]:
    """Distinct starts of cells (within a point of each other), in order."""
    out: list[float] = []
    for value in sorted(values):
        if not out or value - out[-1] > 1:
            out.append(value)
    return out


def _in_column(lines: list[_Line], spanned: list[tuple[float, float]],
               column: tuple[float, float]) -> list[_Line]:
    """A cell's lines at one column it spans: those standing within the column, when each of
    its lines stands within one ("Permit", "Handgun", "Long Gun" heading the columns under a
    cell drawn across them); else all of them."""
    def within(line: _Line, band: tuple[float, float]) -> bool:
        return band[0] - 1 <= line[1] and line[2] <= band[1] + 1

    if len(spanned) > 1 and all(any(within(line, band) for band in spanned) for line in lines):
        return [line for line in lines if within(line, column)]
    return lines


def _cell_lines(cell: pymupdf.Rect, words: list[tuple[Any, ...]], turn: int) -> list[_Line]:
    """The cell's lines of words (top, left and right in the turned frame, text), top to
    bottom."""
    inside: dict[tuple[int, int], list[tuple[Any, ...]]] = {}
    for word in words:
        if cell.contains(pymupdf.Point((word[0] + word[2]) / 2, (word[1] + word[3]) / 2)):
            inside.setdefault((word[5], word[6]), []).append(word)
    lines = []
    for line in inside.values():
        box = pymupdf.Rect()
        for word in line:
            box |= pymupdf.Rect(word[:4])
        top, left, _, right = _frame(box, turn)
        text = " ".join(word[4] for word in sorted(line, key=lambda word: word[7]))
        lines.append((top, left, right, text, (box.x0, box.y0, box.x1, box.y1)))
    return sorted(lines)


def _sub_rows(cells: list[list[_Line]]) -> list[list[list[_Line]]]:
    """A ruled row holding several rows between its rules (a band of five states): a number
    does not wrap, so the lines of the cells that hold only numbers, one on each line, start
    the rows; another cell's line belongs to the row it starts in or below (a wrapped name)."""
    numbers = [cell for cell in cells if len(cell) > 1
               and all(_VALUE.fullmatch(line[3]) for line in cell)]
    if not numbers or any(len(cell) != len(numbers[0]) or any(
            abs(a[0] - b[0]) > 2 for a, b in zip(cell, numbers[0], strict=True))
            for cell in numbers):
        return [cells]
    starts = [line[0] for line in numbers[0]]
    subs: list[list[list[_Line]]] = [[[] for _ in cells] for _ in starts]
    for c, cell in enumerate(cells):
        for line in cell:
            r = max((i for i, start in enumerate(starts) if start - 2 <= line[0]), default=0)
            subs[r][c].append(line)
    return subs


def _grid(table: Table) -> list[list[str | None]]:
    """Cell texts by grid position. pdfplumber reports a position covered by a merged cell as
    None; it gets the text of the cell whose box covers the position's centre."""
    boxes = [row.cells for row in table.rows]
    texts = [[_logical_cell(table.page, box) if box and text and has_rtl(text) else text
              for box, text in zip(box_row, text_row, strict=True)]
             for box_row, text_row in zip(boxes, table.extract(), strict=True)]
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
                box, text = next(((b, t) for b, t in known
                                  if b[0] <= x <= b[2] and b[1] <= y <= b[3]), (None, None))
            if box is not None and text and _VALUE.fullmatch(cell_text(text)) and (
                    c + 1 < len(xs) and box[2] - box[0] > xs[c + 1] - xs[c] + 1):
                text = text if _stands_in(table.page, box, xs[c], xs[c + 1]) else ""
            row.append(None if text is None else cell_text(text))
        grid.append(row)
    return grid


def _stands_in(page: PlumberPage, box: _Box, left: float, right: float) -> bool:
    """Whether a figure in a cell merged across columns is printed in the column from left to
    right: it stands once, where it is printed. Copied into each column, a figure merged with
    the narrow column of the currency signs in front of it was read twice ("3,423 | 3,423")."""
    x0, top, x1, bottom = box
    xs = [c["x0"] + c["x1"] for c in page.chars if x0 <= (c["x0"] + c["x1"]) / 2 <= x1
          and top <= (c["top"] + c["bottom"]) / 2 <= bottom and not c["text"].isspace()]
    return not xs or left <= (min(xs) + max(xs)) / 4 <= right


def _logical_cell(page: PlumberPage, box: _Box) -> str:
    """A cell holding right-to-left text, its lines rebuilt from pdfplumber's glyphs (in the
    order drawn, letters reversed) in logical order; a gap wider than pdfplumber's word
    tolerance is a space, as in pdfplumber's own text."""
    x0, top, x1, bottom = box
    chars = [c for c in page.chars if x0 <= (c["x0"] + c["x1"]) / 2 <= x1
             and top <= (c["top"] + c["bottom"]) / 2 <= bottom]
    lines = []
    for line in cluster_objects(chars, "top", _WORD_GAP):
        line = sorted(line, key=lambda c: c["x0"])
        glyphs = [line[0]["text"]]
        for previous, char in itertools.pairwise(line):
            if char["x0"] - previous["x1"] > _WORD_GAP and not (
                    char["text"].isspace() or previous["text"].isspace()):
                glyphs.append(" ")
            glyphs.append(char["text"])
        lines.append(logical_line(glyphs).strip())
    return "\n".join(lines)


def link_continuations(pages: Sequence[Sequence[object]]) -> None:
    """A table that opens a page continues the table that closed the page before when their
    columns line up: it takes that table's header (a repeated header row is dropped)."""
    for previous, current in itertools.pairwise(pages):
        last = next((i for i in reversed(previous) if not getattr(i, "in_margin", False)), None)
        first = next((i for i in current if not getattr(i, "in_margin", False)), None)
        if not (isinstance(last, PdfTable) and isinstance(first, PdfTable)) or (
                last.framed or first.framed):
            continue
        if len(last.edges) != len(first.edges) or any(
                abs(a - b) > _EDGE_TOLERANCE for a, b in zip(last.edges, first.edges, strict=True)):
            continue
        head = last.head or last
        n = head.header_rows
        if first.grid[:n] == head.grid[:n]:
            first.grid, first.row_boxes = first.grid[n:], first.row_boxes[n:]
        first.head = head
        head.parts.append(first)
