"""Page layout to blocks: reading order over columns, running headers and footers, paragraphs and
headings. Works on positioned lines, whether they come from a PDF text layer or from OCR boxes.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ingest.models import Block, BlockKind
from ingest.parse.boilerplate import is_page_number, line_shape, repeated_shapes
from ingest.text import (
    ARTICLE,
    is_structure_start,
    join_lines,
    looks_like_heading,
    numbered_heading_level,
)

MARGIN_SHARE = 0.1  # top/bottom share of the page where running headers and footers live
# lines beside each other that all stand further apart than this share of the page are a label
# and its value set flush right on one row, not two columns (a real gutter is a few per cent)
GUTTER_SHARE = 0.3
HEADING_SIZE_RATIO = 1.15  # a line this much larger than the body text can be a heading
# a Chinese label, a colon, a value (text is NFKC already); "Part 1: Scope" stays a heading
FIELD = re.compile(r"[\u4e00-\u9fff]{1,8}:\s*\S")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@dataclass
class Line:
    """One text line with its box (PDF points, top-left origin) and what its font says."""

    text: str
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    size: float  # font size; the box height for OCR lines
    bold: bool = False
    confidence: float | None = None  # the OCR score; None for a text-layer line
    in_margin: bool = False
    band: str = ""  # "L"/"R" on a two-column page: indents are measured per column

    @property
    def height(self) -> float:
        return self.y1 - self.y0


class Boxed(Protocol):
    x0: float
    y0: float
    x1: float
    y1: float


class TableItem(Boxed, Protocol):
    """A table placed among the lines; it turns itself into blocks once its caption is known."""

    def blocks(self, caption: str) -> list[Block]: ...


def in_margin(y0: float, y1: float, height: float) -> bool:
    return y1 < height * MARGIN_SHARE or y0 > height * (1 - MARGIN_SHARE)


# ---- reading order -----------------------------------------------------------------------------


Item = Line | TableItem


def reading_order(items: Sequence[Item], width: float) -> list[Item]:
    """Top to bottom; where a page has two columns, the left column before the right one, between
    items that span both (a title, a wide table, the running header)."""
    ordered = sorted(items, key=lambda i: (round(i.y0), i.x0))
    gutter = find_gutter([i for i in ordered if isinstance(i, Line) and not i.in_margin], width)
    if gutter is None:
        return ordered
    out: list[Item] = []
    left: list[Item] = []
    right: list[Item] = []
    across = _rows_across([i for i in ordered if isinstance(i, Line) and i.confidence is None],
                          gutter)
    for item in ordered:
        if item.x1 <= gutter and id(item) not in across:
            left.append(item)
        elif item.x0 >= gutter and id(item) not in across:
            right.append(item)
        else:
            out += _columns(left, right)
            left, right = [], []
            out.append(item)
        if isinstance(item, Line) and id(item) not in across:
            item.band = "L" if item.x1 <= gutter else "R" if item.x0 >= gutter else ""
    return out + _columns(left, right)


def _columns(left: list[Item], right: list[Item]) -> list[Item]:
    """The left column, then the right one; text-layer lines of the left column below the
    whole right one (a table's caption over a table drawn across both, `_rows_across`) after
    it."""
    bottom = max((item.y1 for item in right), default=float("inf"))
    cut = len(left)
    while cut and isinstance(line := left[cut - 1], Line) and line.confidence is None and (
            line.y0 >= bottom):
        cut -= 1
    return left[:cut] + right + left[cut:]


def find_gutter(lines: list[Line], width: float) -> float | None:
    """The x of a blank vertical strip in the middle of the page with at least three lines side
    by side across it and (almost) no line crossing it where the columns run; None when the page
    has one column. Candidates are just right of line ends in the middle of the page. Side by
    side means one text-layer line each side on a row: a row of three or more pieces is a
    table's (an unruled lab table's names and values taken for two columns were read apart).
    Where even the closest such pair stands a third of the page apart, the rows are labels
    with values set flush right (a résumé's certificates and their dates were read apart)."""
    best: tuple[int, float] | None = None
    candidates = sorted({round(line.x1) + 1 for line in lines
                         if width * 0.3 <= line.x1 <= width * 0.7})
    rows = _rows(lines) if candidates else {}
    for x in candidates:
        left = [line for line in lines if line.x1 <= x]
        right = [line for line in lines if line.x0 >= x]
        if len(left) < 3 or len(right) < 3:
            continue
        pairs = [r for r in right if _side_by_side(r, rows[id(r)], x)]
        gaps = [r.x0 - max(o.x1 for o in rows[id(r)] if o.x1 <= x)
                for r in pairs if r.confidence is None]  # an OCR box may be a line's piece
        if len(pairs) < 3 or min(gaps, default=0) > width * GUTTER_SHARE:
            continue
        top = min(r.y0 for r in pairs)
        bottom = max(r.y1 for r in pairs)
        crossing = [line for line in lines
                    if line.x0 < x < line.x1 and line.y1 > top and line.y0 < bottom]
        if len(crossing) <= 1 and (best is None or len(pairs) > best[0]):
            best = (len(pairs), (max(line.x1 for line in left) + min(r.x0 for r in right)) / 2)
    return best[1] if best else None


def _side_by_side(line: Line, row: list[Line], x: float) -> bool:
    """Whether a line right of x stands beside one line left of it and no other right of it.
    An OCR box ends where the detector saw a wide space, so an OCR'd column's line may come
    in pieces: beside any line left of x."""
    left = sum(other.x1 <= x for other in row)
    if line.confidence is not None:
        return left > 0
    return left == 1 and sum(other.x0 >= x for other in row) == 1


def _rows(lines: list[Line]) -> dict[int, list[Line]]:
    """Each line's row: the lines beside it, itself among them."""
    return {id(line): [other for other in lines if _beside(line, other)] for line in lines}


def _rows_across(lines: list[Line], gutter: float) -> set[int]:
    """ids of text-layer lines in rows of two or more pieces each side of the gutter: a table
    drawn across both columns without rules, whose halves were read one after the other."""
    return {key for key, row in _rows(lines).items()
            if sum(other.x1 <= gutter for other in row) >= 2
            and sum(other.x0 >= gutter for other in row) >= 2}


def _beside(a: Line, b: Line) -> bool:
    return a.y0 < b.y1 and b.y0 < a.y1


# ---- running headers and footers -------------------------------------------------------------


def running_lines(lines: list[Line], pages: int) -> set[int]:
    """ids of lines in the top or bottom margin that are page numbers, or that repeat (digits
    aside) on at least half of the pages (ingest.parse.boilerplate)."""
    margin = [line for line in lines if line.in_margin]
    per_page: list[list[str]] = [[] for _ in range(pages)]
    for line in margin:
        per_page[line.page - 1].append(line.text)
    repeated = repeated_shapes(per_page)
    return {id(line) for line in margin
            if is_page_number(line.text) or line_shape(line.text) in repeated}


# ---- paragraphs and headings -----------------------------------------------------------------


def blocks_from_items(items: Sequence[Item], caption_test: Callable[[str], bool]
                      ) -> list[Block]:
    """Lines joined into paragraphs and headings; tables turned into their blocks in place.

    A line opens a paragraph when it starts a clause or heading, is indented or centred, changes
    font size or weight, follows a vertical gap, or follows a short line that ended a sentence.
    """
    lines = [item for item in items if isinstance(item, Line)]
    bands = _band_edges(lines)
    blocks: list[Block] = []
    runs: list[list[Line]] = []
    previous: Line | None = None
    row: list[_Cell] = []  # the last block's cells when it is a row of pieces
    for n, item in enumerate(items):
        if not isinstance(item, Line):
            last = blocks[-1] if blocks else None
            caption = last.text if last and runs[-1] and caption_test(last.text) else ""
            table = item.blocks(caption)
            for block in table:
                block.bbox = block.bbox or (item.x0, item.y0, item.x1, item.y1)
            blocks += table
            runs += [[] for _ in table]
            previous, row = None, []
            continue
        following = items[n + 1] if n + 1 < len(items) else None
        if previous is not None and _continues_row(item, previous):
            row = row or [_Cell(previous, [blocks[-1].text], previous.y1, previous.x1)]
            row.append(_Cell(item, [item.text], item.y1, item.x1))
        elif row and (cell := _wrapped_cell(item, row, following)) is not None:
            cell.texts.append(item.text)
            cell.bottom, cell.right = item.y1, item.x1
        elif previous is None or row or _opens_paragraph(item, previous, bands):
            blocks.append(Block(kind=BlockKind.PARAGRAPH, text=item.text, page=item.page))
            runs.append([item])
            previous, row = item, []
            continue
        else:
            blocks[-1].text = join_lines(blocks[-1].text, item.text)
            runs[-1].append(item)
            previous = item
            continue
        blocks[-1].text = " ".join(functools.reduce(join_lines, cell.texts) for cell in row)
        runs[-1].append(item)
        previous = item
    _mark_headings(blocks, runs, lines)
    _mark_ocr(blocks, runs)
    for block, run in zip(blocks, runs, strict=True):
        if run:
            block.bbox = (min(line.x0 for line in run), min(line.y0 for line in run),
                          max(line.x1 for line in run), max(line.y1 for line in run))
    return blocks


def _continues_row(line: Line, previous: Line) -> bool:
    """Whether a text-layer line is the next piece of the previous one's row: to its right in
    the same column, on (about) its baseline. The cells of a table drawn without rules (and a
    label's value set apart by a tab) are lines of their own; each opened a paragraph (or a
    heading, a bold figure), and the row's next label was joined to its last figure."""
    return (line.confidence is None and previous.confidence is None
            and line.page == previous.page and line.band == previous.band
            and line.x0 >= previous.x1 - 1
            and abs(line.y1 - previous.y1) <= 0.25 * min(line.height, previous.height))


@dataclass
class _Cell:
    """A piece of a row of pieces: its first line, its text lines, its last line's bottom and
    right end."""

    first: Line
    texts: list[str]
    bottom: float
    right: float


def _wrapped_cell(line: Line, row: list[_Cell], following: Item | None) -> _Cell | None:
    """The cell of the row above that `line` wraps onto ("Mean cell" / "volume"), if any: it
    starts under the cell's first line and follows close below; its first word would not have
    fitted in the room the cell's last line leaves before the next cell (a form's next label
    would); it does not open a clause or list item, and no piece stands beside it (the next
    row's first cell has some). The last cell's room is unknown: it is not wrapped onto."""
    if is_structure_start(line.text) or (
            isinstance(following, Line) and _continues_row(following, line)):
        return None
    for cell, after in itertools.pairwise(row):
        piece = cell.first
        if (piece.page == line.page and piece.band == line.band
                and abs(line.x0 - piece.x0) <= 2 and line.x1 <= after.first.x0
                and 0 <= line.y0 - cell.bottom <= 0.5 * piece.height
                and after.first.x0 - cell.right <= _first_word(line) + 1.5 * piece.height):
            return cell
    return None


def _first_word(line: Line) -> float:
    """The width of the line's first word (its first character where it is Chinese or
    Japanese, which wraps anywhere), from its share of the line's characters."""
    word = line.text.split(" ", 1)[0]
    if _CJK.match(word):
        word = word[0]
    return (line.x1 - line.x0) * len(word) / len(line.text)


def _band_edges(lines: list[Line]) -> dict[str, tuple[float, float]]:
    """Per column band: the common left edge (the margin) and the rightmost line end."""
    edges: dict[str, tuple[float, float]] = {}
    for band in {line.band for line in lines}:
        members = [line for line in lines if line.band == band]
        starts = Counter(round(line.x0) for line in members)
        margin = min((x for x, n in starts.items() if n >= 3), default=min(starts))
        edges[band] = (margin, max(line.x1 for line in members))
    return edges


def _opens_paragraph(line: Line, previous: Line, bands: dict[str, tuple[float, float]]) -> bool:
    margin, _ = bands[line.band]
    _, right = bands[previous.band]
    return (
        is_structure_start(line.text)
        or line.x0 > margin + 6
        or (line.page == previous.page and line.confidence is None  # back left: below both
            and (previous.band, line.band) == ("R", "L"))
        or abs(line.height - previous.height) > 0.2 * previous.height
        or line.bold != previous.bold
        or (line.page == previous.page and line.band == previous.band
            and line.y0 - previous.y1 > 0.8 * previous.height)
        or (previous.text[-1] in "。:.!?" and previous.x1 < right - 24)  # text is NFKC already
    )


def _mark_headings(blocks: list[Block], runs: list[list[Line]], lines: list[Line]) -> None:
    """Headings by numbering (第X章, 4.2 …) or by looks (a larger or bold short line). Numbered
    headings take the numbering's level; the others rank by font size, largest first."""
    body = _body_size(lines)
    styled = {i for i, (block, run) in enumerate(zip(blocks, runs, strict=True))
              if run and _looks_styled(block.text, run, body)}
    sizes = sorted({round(max(line.size for line in runs[i])) for i in styled}, reverse=True)
    for i, (block, run) in enumerate(zip(blocks, runs, strict=True)):
        if not run:
            continue
        level = numbered_heading_level(block.text)
        if level is None and i in styled:
            level = sizes.index(round(max(line.size for line in run))) + 1
        if level is not None:
            block.kind, block.level = BlockKind.HEADING, level


def _looks_styled(text: str, run: list[Line], body: float) -> bool:
    """Short, not a clause, and larger or bold. A "label: value" line is a field, however it
    is set: a signature line (项目经理:韩立峰) read from a scan comes out larger when the seal
    stamped over it widens its box, and as a heading its words left the searched text."""
    if len(run) > 2 or ARTICLE.match(text) or not looks_like_heading(text) or FIELD.match(text):
        return False
    return max(line.size for line in run) >= body * HEADING_SIZE_RATIO or all(
        line.bold for line in run)


def _body_size(lines: list[Line]) -> float:
    """The font size most of the text is set in."""
    weights = Counter[float]()
    for line in lines:
        weights[round(line.size, 1)] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def _mark_ocr(blocks: list[Block], runs: list[list[Line]]) -> None:
    for block, run in zip(blocks, runs, strict=True):
        scores = [line.confidence for line in run if line.confidence is not None]
        if scores:
            block.ocr, block.ocr_confidence = True, round(sum(scores) / len(scores), 4)
