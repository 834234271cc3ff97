"""Boxes drawn side by side on a PDF page (cards, a seller's and a buyer's panel, framed blocks
of a form), each read as one unit. Read as lines, a row of text ran on across the boxes
("Name: Bernard Okafor Name: Chen Jiayi"), mixing their texts line by line. A box is a cell of
a ruled table of one row (pdfplumber's) or a rectangle drawn on its own (PyMuPDF's drawings,
which pdfplumber does not take for a table); it counts when it holds a block (two lines or
more) and another box holding a block stands beside it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import pymupdf
from pdfplumber.table import Table

from ingest.text import join_lines, normalize

Box = tuple[float, float, float, float]
_MIN_SIDE = 10.0  # points: a smaller drawing is a tick box or a rule, not a frame
# closed shapes on a page: more is a drawing, a map or a grid of cells (a form has ~130), and
# matching every one against every line would cost seconds a page
MAX_FRAMES = 1000


def block_cells(table: Table) -> list[Box]:
    """The cells of a one-row table that hold a block."""
    return [cell for cell, text in zip(table.rows[0].cells, table.extract()[0], strict=True)
            if cell and text and text.strip().count("\n") >= 1]


def drawn_boxes(page: pymupdf.Page, blocks: list[dict[str, Any]], tables: Sequence[Box]
                ) -> list[tuple[Box, str]]:
    """Rectangles drawn on an unturned page, each with its text read row by row, that hold a
    block and no other such rectangle (a card's frame, not the page's border around the cards)
    and neither lie in a table (a ruled table's cells drawn one by one) nor hold one."""
    if page.rotation % 360:
        return []
    lines = [(pymupdf.Rect(line["bbox"]), normalize("".join(s["text"] for s in line["spans"])))
             for block in blocks for line in block.get("lines", [])
             if (round(line["dir"][0]), round(line["dir"][1])) == (1, 0)]
    frames = sorted({tuple(path["rect"]) for path in page.get_drawings() if _closed(path)})
    if len(frames) > MAX_FRAMES:
        return []
    held = []
    for rect in frames:
        box = pymupdf.Rect(rect)
        inside = [(r, text) for r, text in lines if text.strip() and box.contains(
            pymupdf.Point((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2))]
        if len(_rows(inside)) >= 2 and all(_apart(box, table) for table in tables):
            held.append((box, inside))
    return [((box.x0, box.y0, box.x1, box.y1), _read(inside)) for box, inside in held
            if not any(other != box and box.contains(other) for other, _ in held)]


def beside_another(groups: Sequence[Sequence[Box]]) -> list[int]:
    """Indices of the groups (a one-row table's cells, a drawn box) holding a box that stands
    beside a box of any group: level with it, neither reaching over the other."""
    boxes = [box for group in groups for box in group]
    return [n for n, group in enumerate(groups)
            if any(_beside(box, other) for box in group for other in boxes)]


def _closed(path: dict[str, Any]) -> bool:
    """A rectangle: one `re` item, or four or five straight lines going round its edges back
    to where they start (LibreOffice's frames)."""
    rect, items = path["rect"], path["items"]
    if rect.width < _MIN_SIDE or rect.height < _MIN_SIDE:
        return False
    if len(items) == 1:
        return bool(items[0][0] in {"re", "qu"})
    return (4 <= len(items) <= 5 and all(item[0] == "l" for item in items)
            and all(abs(a.x - b.x) < 1 or abs(a.y - b.y) < 1 for _, a, b in items)
            and (path.get("closePath") or abs(items[0][1] - items[-1][2]) < 1))


def _apart(box: pymupdf.Rect, table: Box) -> bool:
    """Neither inside the other (a table's grid may cross a card's frame)."""
    inner = pymupdf.Rect(box.x0 + 1, box.y0 + 1, box.x1 - 1, box.y1 - 1)
    outer = pymupdf.Rect(box.x0 - 1, box.y0 - 1, box.x1 + 1, box.y1 + 1)
    return not pymupdf.Rect(table).contains(inner) and not outer.contains(pymupdf.Rect(table))


def _rows(lines: list[tuple[pymupdf.Rect, str]]) -> list[list[tuple[pymupdf.Rect, str]]]:
    """Lines grouped by baseline (bottoms within a quarter line), top to bottom."""
    rows: list[list[tuple[pymupdf.Rect, str]]] = []
    for line in sorted(lines, key=lambda line: line[0].y1):
        last = rows[-1][-1][0] if rows else None
        if last is not None and abs(line[0].y1 - last.y1) <= 0.25 * min(
                line[0].height, last.height):
            rows[-1].append(line)
        else:
            rows.append([line])
    return rows


def _read(lines: list[tuple[pymupdf.Rect, str]]) -> str:
    """A box's text: its rows top to bottom, each row's pieces left to right."""
    rows = [" ".join(text.strip() for _, text in sorted(row, key=lambda line: line[0].x0))
            for row in _rows(lines)]
    return functools.reduce(join_lines, rows)


def _beside(a: Box, b: Box) -> bool:
    return a[1] < b[3] and b[1] < a[3] and (a[2] <= b[0] + 1 or b[2] <= a[0] + 1)
