"""A ruled table whose column heads are set slanted (a narrow column's name at 45°, as airline
and survey tables print them): the head row's slanted cells give pdfplumber column edges that
do not line up with the body's, so every value fell into two grid columns and every name was
cut into letters across them. Such a table is read from the body's own columns, each named by
the slanted line whose foot (its end nearest the body) stands over it."""

from __future__ import annotations

import itertools
from typing import Any

import pymupdf
from pdfplumber.table import Table

from ingest.parse.tables import cell_text

_SLANTED = 3  # slanted lines in the head row that make it a row of slanted names


def slanted_grid(table: Table, page: pymupdf.Page, blocks: list[dict[str, Any]]
                 ) -> tuple[list[list[str]], list[float]] | None:
    """The table's rows (its names first) and column edges when its first row holds slanted
    names, else None. Coordinates are pdfplumber's (the page as shown)."""
    if len(table.rows) < 3:
        return None
    head = pymupdf.Rect(table.bbox[0], table.rows[0].bbox[1], table.bbox[2], table.rows[0].bbox[3])
    turn = page.rotation_matrix
    slanted, upright = [], []
    for line in (line for block in blocks for line in block.get("lines", [])):
        text = "".join(span["text"] for span in line["spans"]).strip()
        box = pymupdf.Rect(line["bbox"]) * turn
        if not text or not box.intersects(head):
            continue
        shown = pymupdf.Point(line["dir"]) * pymupdf.Matrix(turn.a, turn.b, turn.c, turn.d, 0, 0)
        if abs(shown.x) > 0.2 and abs(shown.y) > 0.2:
            # its foot, the end nearest the body: the right end when it runs down to the right
            slanted.append((box.x1 - 1 if shown.x * shown.y > 0 else box.x0 + 1, text))
        else:
            upright.append(((box.x0 + box.x1) / 2, text))
    if len(slanted) < _SLANTED:
        return None
    edges = sorted({round(cell[0], 1) for row in table.rows[1:] for cell in row.cells if cell}
                   | {round(table.bbox[2], 1)})
    bands = list(itertools.pairwise(edges))
    names = [" ".join(text for x, text in sorted(slanted + upright) if left <= x < right)
             for left, right in bands]
    cells = [(cell, text) for row, texts in zip(table.rows[1:], table.extract()[1:], strict=True)
             for cell, text in zip(row.cells, texts, strict=True) if cell]
    rows = [names]
    for row in table.rows[1:]:
        y = (row.bbox[1] + min(cell[3] for cell in row.cells if cell)) / 2  # not a merged one's
        rows.append([cell_text(next((text for (x0, y0, x1, y1), text in cells
                                     if x0 <= (left + right) / 2 <= x1 and y0 <= y <= y1), ""))
                     for left, right in bands])
    keep = [c for c in range(len(bands)) if any(row[c] for row in rows)]
    return [[row[c] for c in keep] for row in rows], [edges[c] for c in keep] + [edges[-1]]
