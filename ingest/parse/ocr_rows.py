"""OCR boxes to the lines and tables of a page.

OCR gives a box per stretch of text between wide spaces, so a table row comes as a box per cell,
and sorted top to bottom the cells of one row interleaved with the next row's (a row drifts down
a skewed photo). Here the boxes that overlap vertically, left to right, are a row.

Consecutive rows of three short boxes or more are a table (a row across two columns of text has
two long boxes, and two short ones more where a clause number is cut off by a wide space). Its
rows are kept as read, each a table row, never a heading nor cut apart: OCR does not say which
cells share a column (cells merge and split from row to row). As text lines, a row led by a
number ("8.37 4.50 ASE Tst 7.76") looked like a numbered heading, and a heading followed by the
next row's heading was in no chunk. A table's gap between two columns is no page gutter either.

The other boxes are lines, pieces less than 1.5 line heights apart joined ("第二条␣␣本规定" is
one line): a column gutter is wider, and the reading order finds it among them. A piece that is
a heading's number alone ("3", "4.2", "第一章") joins the text to its right up to 6 line heights
away: a numbered heading set with a wide gap ("3␣␣␣␣MovieShots Dataset") is one heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.models import Block, BlockKind
from ingest.parse.layout import Item, Line
from ingest.parse.tables import markdown_table
from ingest.text import CN_NUM

NEAR = 1.5  # line heights between pieces of one line of text
TABLE_CELLS = 3  # short boxes a table row has at least
CELL_CHARS = 12  # characters of a short box at most (a line of a column of text is longer)
TABLE_ROWS = 3  # consecutive table rows that make a table
LABEL_NEAR = 6.0  # line heights between a heading's number alone and its text
LABEL = re.compile(rf"(\d{{1,2}}(\.\d{{1,3}})*\.?|第{CN_NUM}[编章节条])")


@dataclass(eq=False)
class OcrTable:
    """Rows of a table read by OCR, each as read left to right."""

    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    rows: list[Line]
    cells: list[list[Line]]  # each row's boxes

    def blocks(self, caption: str) -> list[Block]:
        texts = [row.text for row in self.rows]
        whole = Block(kind=BlockKind.TABLE, page=self.page, ocr=True,
                      text=markdown_table(texts[:1], [[text] for text in texts[1:]], caption),
                      ocr_confidence=_mean([row.confidence or 0.0 for row in self.rows]))
        return [whole, *(Block(kind=BlockKind.TABLE_ROW, page=self.page, ocr=True,
                               text=(f"{caption} | " if caption else "") + row.text,
                               bbox=(row.x0, row.y0, row.x1, row.y1),
                               ocr_confidence=round(row.confidence or 0.0, 4))
                         for row in self.rows)]


def ocr_items(boxes: list[Line]) -> list[Item]:
    """The boxes of a page as tables where rows of cells run on, and the others as lines."""
    rows = sorted(_row_groups(boxes), key=lambda row: row[0].y0)
    tables = _tables(rows)
    tabled = {id(box) for table in tables for row in table.cells for box in row}
    rest = [box for box in boxes if id(box) not in tabled]
    return [*tables, *_join_row_pieces(rest)]


def _row_groups(boxes: list[Line]) -> list[list[Line]]:
    """Boxes left to right, each joining the row whose last box it overlaps most vertically (by
    more than half the lower box's height) and does not overlap horizontally: following the last
    box, a row follows the skew of a photo."""
    rows: list[list[Line]] = []
    for box in sorted(boxes, key=lambda b: b.x0):
        best: tuple[float, list[Line]] | None = None
        for row in rows:
            last = row[-1]
            overlap = min(last.y1, box.y1) - max(last.y0, box.y0)
            if (overlap > 0.5 * min(last.height, box.height)
                    and box.x0 - last.x1 >= -0.5 * last.height
                    and (best is None or overlap > best[0])):
                best = (overlap, row)
        if best is None:
            rows.append([box])
        else:
            best[1].append(box)
    return rows


def _join_row_pieces(boxes: list[Line]) -> list[Line]:
    """OCR cuts a line at a wide space ("第二条␣␣本规定…"); pieces on the same row less than
    1.5 line heights apart are one line again (a column gutter is wider)."""
    lines: list[Line] = []
    for box in sorted(boxes, key=lambda b: b.x0):
        host = next((line for line in lines
                     if min(line.y1, box.y1) - max(line.y0, box.y0) > 0.5 * min(
                         line.height, box.height)
                     and -0.5 * line.height <= box.x0 - line.x1 <= _reach(line)), None)
        if host is None:
            lines.append(box)
            continue
        weight = len(host.text), len(box.text)
        host.confidence = ((host.confidence or 0) * weight[0] + (box.confidence or 0) * weight[1]
                           ) / sum(weight)
        host.text = f"{host.text} {box.text}"
        host.x1, host.y0, host.y1 = box.x1, min(host.y0, box.y0), max(host.y1, box.y1)
        host.size = host.y1 - host.y0
        host.in_margin = host.in_margin and box.in_margin
    return lines


def _reach(line: Line) -> float:
    """How far right of `line` a piece of its row may start and still continue it."""
    return (LABEL_NEAR if LABEL.fullmatch(line.text.strip()) else NEAR) * line.height


def _tables(rows: list[list[Line]]) -> list[OcrTable]:
    """Runs of TABLE_ROWS or more table rows among the rows (top to bottom)."""
    tables = []
    run: list[list[Line]] = []
    for row in [*rows, []]:
        if sum(len(box.text) <= CELL_CHARS for box in row) >= TABLE_CELLS:
            run.append(row)
            continue
        if len(run) >= TABLE_ROWS:
            lines = [_joined(cells) for cells in run]
            tables.append(OcrTable(lines[0].page, min(r.x0 for r in lines),
                                   min(r.y0 for r in lines), max(r.x1 for r in lines),
                                   max(r.y1 for r in lines), lines, run))
        run = []
    return tables


def _joined(row: list[Line]) -> Line:
    """A table row's boxes as one line, its confidence theirs weighted by their characters."""
    weights = [len(box.text) for box in row]
    return Line(" ".join(box.text for box in row), row[0].page, row[0].x0,
                min(box.y0 for box in row), max(box.x1 for box in row),
                max(box.y1 for box in row), size=max(box.size for box in row),
                confidence=_mean([box.confidence or 0.0 for box in row], weights),
                in_margin=all(box.in_margin for box in row))


def _mean(values: list[float], weights: list[int] | None = None) -> float:
    weights = weights or [1] * len(values)
    return round(sum(v * w for v, w in zip(values, weights, strict=True)) / sum(weights), 4)
