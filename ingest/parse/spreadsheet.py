"""XLSX and XLSM (openpyxl, read-only): each visible sheet is a heading followed by its tables,
whose rows read "header: value; …" like the table rows of PDF and DOCX files, and by the text
of its drawing (text boxes, shapes, charts); print headers and footers once, at the end.

Rows are streamed, never a whole sheet held. Read-only openpyxl gives cell values (a formula's
cached result; macros never run) but neither hidden rows nor merged cells, so one lxml pass over
the sheet's XML reads those first: merges are listed after the rows, and a merged header cell
must be known before the rows under it are read. Legacy .xls (BIFF) files are not read.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import openpyxl
from lxml import etree
from openpyxl.chartsheet import Chartsheet
from openpyxl.utils.cell import range_boundaries

from ingest.models import Block, BlockKind
from ingest.parse.boilerplate import margin_blocks
from ingest.parse.comments import comment_blocks
from ingest.parse.coverage import indexed_chars, visible_chars
from ingest.parse.errors import ParseError
from ingest.parse.number_format import date_text, shown_number
from ingest.parse.pictures import Pictures
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.sheet_extras import (
    CellPictures,
    Columns,
    chart_sheet_blocks,
    chart_sheets,
    column_range,
    drawing_blocks,
    margin_texts,
    sheet_comments,
    without_empty_names,
)
from ingest.parse.tables import caption_before, cell_text, table_blocks
from ingest.text import normalize

CHUNK_ROWS = 50  # data rows per Markdown table block, so a long sheet is no single giant block
MAX_TITLE_LINES = 3  # single-cell lines above a table; a longer run of them is a one-column table
MAX_HEADER_ROWS = 3
MAX_MERGES = 100_000  # merged ranges of one sheet held in memory
_NUMBERS = {int, float, dt.datetime, dt.date, dt.time}  # shown by their number format
Span = tuple[int, int, str]  # first and last column (1-based) a merged value covers, the value


@dataclass
class Line:
    """One non-empty row as read: its cells' texts, how many hold numbers or dates, and the
    merged areas over it (their text is filled in only once the table's width is known)."""

    index: int
    cells: list[str]
    numeric: int = 0
    spans: list[Span] = field(default_factory=list)
    depth: int = 1  # rows a merged cell starting in this row reaches down (a header over rows)
    groups: bool = False  # a cell starting here is merged across columns (a group of columns)

    @property
    def filled(self) -> int:
        return sum(1 for cell in self.cells if cell)

    @property
    def texty(self) -> bool:
        return self.numeric * 2 < self.filled

    def padded(self, width: int) -> list[str]:
        cells = self.cells + [""] * (width - len(self.cells))
        for first, last, value in self.spans:
            cells[first - 1:min(last, width)] = [value] * (min(last, width) - first + 1)
        return cells


class RowCount:
    """Rows read in all sheets of a file together: past `limits.max_rows` the file fails at
    once, before more is read."""

    def __init__(self, limit: int) -> None:
        self.limit, self.rows = limit, 0

    def take(self, where: str) -> None:
        self.rows += 1
        if self.rows > self.limit:
            raise ParseError(f"more than {self.limit:,} rows (passed at {where}): over the "
                             f"{self.limit:,}-row limit (the parse_max_rows setting)")


class SheetTable:
    """One sheet's rows as blocks. Single-cell lines above the table become paragraphs (its
    title); the first row of mostly text, with the rows its merged cells reach down to, is the
    header; data rows go out as tables of at most CHUNK_ROWS rows, each followed by its rows."""

    def __init__(self, page: int, blocks: list[Block], skipped: Counter[str]) -> None:
        self.page, self.blocks, self.skipped = page, blocks, skipped
        self.titles: list[Line] = []
        self.head: list[Line] = []
        self.head_left = 0  # header rows still to come
        self.head_maybe = False  # the next row is a sub-header if it is mostly text
        self.header: list[str] | None = None
        self.caption = ""
        self.chunk: list[list[str]] = []
        self.data_rows = 0
        self.empty_run = 0

    def empty(self) -> None:
        """An empty row: counted as skipped when the table goes on below it."""
        self.empty_run += 1

    def add(self, line: Line) -> None:
        if self.empty_run and (self.titles or self.head or self.header is not None):
            self.skipped["empty_rows"] += self.empty_run
        self.empty_run = 0
        if self.header is not None and not self.data_rows and self._title_above(line):
            self._paragraphs(self.head)  # "2026年费用表 … 单位：元" above the real header
            self.head, self.header = [], None
            self._start(line)
        elif self.header is not None:
            self._data(line)
        elif self.head:
            if self.head_left or (self.head_maybe and line.texty and self._sub_header(line)):
                self.head.append(line)
                self.head_left, self.head_maybe = max(self.head_left - 1, 0), False
                if not self.head_left:
                    self._set_header()
            else:
                self._set_header()
                self._data(line)
        elif line.filled == 1 and len(self.titles) < MAX_TITLE_LINES:
            self.titles.append(line)
        elif line.filled == 1:  # a run of single cells: a one-column table under its first line
            first, *rest = [*self.titles, line]
            self.titles = []
            self._start(first)
            for later in rest:
                self.add(later)
        else:
            self._start(line)

    def close(self) -> None:
        if self.header is None and self.head:
            self._set_header()
        self._paragraphs(self.titles)
        self._flush()
        if self.header and not self.data_rows:
            self._paragraphs([Line(0, self.header)])

    def _start(self, line: Line) -> None:
        self._paragraphs(self.titles)
        self.titles = []
        self.caption = caption_before(self.blocks)
        if not line.texty:
            self.header = []
            self._data(line)
            return
        self.head = [line]
        self.head_left = min(line.depth, MAX_HEADER_ROWS) - 1
        self.head_maybe = line.groups and not self.head_left
        if not (self.head_left or self.head_maybe):
            self._set_header()

    def _sub_header(self, line: Line) -> bool:
        """The row below a header cell merged across columns names them only if all it holds
        is under such cells: under "类 别" (two columns) and "人数", "后勤部门 | 12" is data."""
        groups = [(first, last) for first, last, _ in self.head[0].spans if last > first]
        return all(any(first <= column <= last for first, last in groups)
                   for column, cell in enumerate(line.cells, 1) if cell)

    def _title_above(self, line: Line) -> bool:
        """The one-row header is a title line with a note beside it: the row below it is the
        header, naming at least twice as many cells."""
        return len(self.head) == 1 and line.texty and self.head[0].filled * 2 <= line.filled

    def _set_header(self) -> None:
        """Each column named by its header cells top to bottom ("预算/金额"); a cell merged
        down repeats, and is named once."""
        width = max(max([len(line.cells), *(last for _, last, _ in line.spans)])
                    for line in self.head)  # a group cell merged across the last columns too
        columns = zip(*(line.padded(width) for line in self.head), strict=True)
        self.header = ["/".join(dict.fromkeys(part for part in parts if part))
                       for parts in columns]

    def _data(self, line: Line) -> None:
        if self._across(line):  # a note or a group label over the rows, not a row
            self._flush()
            self._paragraphs([line])
            return
        self.chunk.append(line.padded(max(len(self.header or []), len(line.cells))))
        self.data_rows += 1
        if len(self.chunk) == CHUNK_ROWS:
            self._flush()

    def _across(self, line: Line) -> bool:
        """One value merged across at least half the table's columns (two at the least)."""
        width = len(self.header or [])
        return line.filled <= 1 and any(last - first + 1 >= max(2, width / 2)
                                        for first, last, _ in line.spans)

    def _flush(self) -> None:
        if not self.chunk:
            return
        width = max(len(self.header or []), *(len(row) for row in self.chunk))
        names = [*(self.header or []), *[""] * (width - len(self.header or []))]
        names = [name or f"列{i + 1}" for i, name in enumerate(names)]
        rows = [row + [""] * (width - len(row)) for row in self.chunk]
        self.blocks += table_blocks(names, rows, [self.page] * len(rows), self.caption)
        self.chunk = []

    def _paragraphs(self, lines: list[Line]) -> None:
        self.blocks += [Block(kind=BlockKind.PARAGRAPH, text="; ".join(c for c in line.cells if c),
                              page=self.page) for line in lines]


def value_text(value: object, number_format: str | None = None) -> str:
    """A cell's value as the sheet shows it, by its number format (ingest.parse.number_format):
    12 not 12.0, 25% not 0.25, 0.20001 not 0.200009999999992; dates without one as YYYY-MM-DD."""
    if value is None:
        return ""
    if isinstance(value, str):
        return cell_text(value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    shown = date_text(value, number_format) if isinstance(value, dt.date | dt.time) \
        and number_format else None
    if shown:
        return shown
    if isinstance(value, dt.datetime):
        if value.time() == dt.time():
            return value.date().isoformat()
        return value.isoformat(" ", "seconds" if value.second else "minutes")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat("seconds" if value.second else "minutes")
    if isinstance(value, int | float):
        return shown_number(value, number_format or "")
    return cell_text(str(value))


def parse_xlsx(data: bytes, limits: ParseLimits, cell_pictures: bytes | None = None
               ) -> ParseResult:
    """Every visible sheet as a heading and its tables, on the page of its place among the
    visible sheets; hidden sheets, hidden rows and empty rows are left out and counted.
    `cell_pictures`: the zip holding WPS Office's pictures in cells when they are not in the
    package (an .et's or .xls's, ingest.parse.converted)."""
    data = without_empty_names(data)
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True,
                                      keep_links=False)
    result = ParseResult(blocks=[], pages=0)
    count = RowCount(limits.max_rows)
    margins: list[str] = []  # print headers and footers, indexed once at the end
    pictures = Pictures(limits)
    try:
        sheets: list[Any] = [workbook[name] for name in workbook.sheetnames]  # chart sheets too
        with zipfile.ZipFile(io.BytesIO(data)) as archive, \
                zipfile.ZipFile(io.BytesIO(cell_pictures or data)) as held:
            charts = chart_sheets(archive)  # their state, which openpyxl does not read
            visible = [sheet for sheet in sheets if limits.include_hidden or (
                charts.get(sheet.title, ("", "hidden"))[1] if isinstance(sheet, Chartsheet)
                else sheet.sheet_state) == "visible"]
            in_cells = CellPictures(held, pictures)
            for page, sheet in enumerate(visible, 1):
                if isinstance(sheet, Chartsheet) and sheet.title in charts:
                    result.blocks += chart_sheet_blocks(archive, sheet.title,
                                                        charts[sheet.title][0], page, pictures)
                elif not isinstance(sheet, Chartsheet):
                    _read_sheet(sheet, archive, page, count, result, limits, margins, in_cells)
        for sheet in sheets:  # after the visible ones: the rows left under the limit go to them
            if sheet not in visible:
                result.skipped["hidden_sheets"] += 1
                if not isinstance(sheet, Chartsheet):
                    result.chars_skipped += _hidden_sheet_chars(sheet, count)
        title = workbook.properties.title
    finally:
        workbook.close()
    result.pages = len(visible)
    result.skipped += pictures.skipped
    result.ocr_confidences = pictures.confidences
    result.blocks += margin_blocks(margins, max(1, result.pages))
    if result.chars_skipped:  # all a sheet shows is indexed: what it hides is what is not
        result.chars_seen = indexed_chars(result.blocks) + result.chars_skipped
    if isinstance(title, str) and normalize(title):
        result.title, result.title_source = normalize(title).replace("\n", " "), "metadata"
    return result


def _read_sheet(sheet: Any, archive: zipfile.ZipFile, page: int, count: RowCount,
                result: ParseResult, limits: ParseLimits, margins: list[str],
                in_cells: CellPictures) -> None:
    """The sheet's rows as blocks, then the text of the drawing over it (text boxes, shapes,
    charts: ingest.parse.sheet_extras); hidden rows and columns left out and counted (unless
    `limits.include_hidden`): a hidden column of salaries or ID numbers is not shown, nor served."""
    # openpyxl keeps the sheet's part name private; it has not changed since openpyxl 2.4
    hidden, columns, merges = _layout(archive, sheet._worksheet_path, margins)
    if limits.include_hidden:
        hidden, columns = deque(), Columns(set())
    heading = Block(kind=BlockKind.HEADING, text=cell_text(sheet.title), page=page, level=1)
    result.blocks.append(heading)
    table = SheetTable(page, result.blocks, result.skipped)
    sheet.reset_dimensions()  # the size a sheet states can be wrong: rows end at their last cell
    for index, row in enumerate(sheet.iter_rows(min_row=1, min_col=1), 1):
        cells = [value_text(cell.value, cell.number_format if type(cell.value) in _NUMBERS
                            else None) for cell in row]
        spans, depth, groups = merges.at(index, cells)
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            table.empty()
            continue
        count.take(f"sheet {sheet.title!r}, row {index:,}")
        while hidden and hidden[0][1] < index:
            hidden.popleft()
        if hidden and hidden[0][0] <= index:
            result.skipped["hidden_rows"] += 1
            result.chars_skipped += visible_chars("".join(cells))
            continue
        if columns.hidden:
            result.chars_skipped += columns.take_hidden(cells)
            row, cells, spans = columns.shown(row), columns.shown(cells), columns.spans(spans)
            while cells and not cells[-1]:
                cells.pop()
            if not cells:  # all it holds is hidden
                continue
        numeric = sum(1 for cell in row if isinstance(cell.value, int | float | dt.date | dt.time))
        cells = [in_cells.text(cell) for cell in cells]  # a hidden cell's picture is not read
        table.add(Line(index, cells, numeric, spans, depth, groups))
    table.close()
    result.blocks += in_cells.blocks(page)
    result.blocks += drawing_blocks(archive, sheet._worksheet_path, page, in_cells.pictures)
    shown, comments = sheet_comments(archive, sheet._worksheet_path)
    result.blocks += comment_blocks(shown, page)  # on the sheet: read like its text boxes
    if limits.include_comments:
        result.blocks += comment_blocks(comments, page)
    elif comments:
        result.skipped["comments"] += len(comments)
        result.chars_skipped += sum(visible_chars(text) for text in comments)
    if columns.seen:
        result.skipped["hidden_columns"] += len(columns.seen)
    if result.blocks[-1] is heading:  # nothing in the sheet: no heading over nothing
        result.blocks.pop()
        result.empty_pages += 1


class Merges:
    """A sheet's merged ranges: a merged area shows its top-left value in every cell it covers."""

    def __init__(self, ranges: list[tuple[int, int, int, int]]) -> None:
        self.starting: dict[int, list[tuple[int, int, int, int]]] = {}
        for area in ranges:  # min_col, min_row, max_col, max_row
            self.starting.setdefault(area[1], []).append(area)
        self.active: list[tuple[int, Span]] = []  # last row, and what the area fills in

    def at(self, index: int, cells: list[str]) -> tuple[list[Span], int, bool]:
        """The areas over row `index` (rows come in order), and how far down and across the
        areas starting in it reach."""
        starting = self.starting.pop(index, [])
        self.active = [(last, span) for last, span in self.active if last >= index]
        for min_col, _, max_col, max_row in starting:
            value = cells[min_col - 1] if min_col <= len(cells) else ""
            self.active.append((max_row, (min_col, max_col, value)))
        depth = max((area[3] - index + 1 for area in starting), default=1)
        return [span for _, span in self.active], depth, any(a[2] > a[0] for a in starting)


def _layout(archive: zipfile.ZipFile, part: str, margins: list[str]
            ) -> tuple[deque[list[int]], Columns, Merges]:
    """The hidden rows (as runs of first and last row), hidden columns and merged ranges of
    one sheet; its print header and footer texts are added to `margins`."""
    hidden: deque[list[int]] = deque()
    columns: set[int] = set()
    ranges: list[tuple[int, int, int, int]] = []
    index = 0
    with archive.open(part.lstrip("/")) as source:
        for _, element in etree.iterparse(source, tag=("{*}row", "{*}mergeCell", "{*}col",
                                                       "{*}headerFooter"),
                                          resolve_entities=False, no_network=True):
            if etree.QName(element).localname == "headerFooter":
                margins += margin_texts(element)
            elif etree.QName(element).localname == "col":
                if element.get("hidden") in ("1", "true"):
                    columns.update(column_range(element))
            elif etree.QName(element).localname == "row":
                index = int(element.get("r") or index + 1)
                if element.get("hidden") in ("1", "true"):
                    if hidden and hidden[-1][1] == index - 1:
                        hidden[-1][1] = index
                    else:
                        hidden.append([index, index])
            elif len(ranges) < MAX_MERGES:
                ranges.append(range_boundaries(element.get("ref", "")))  # type: ignore[arg-type]
            else:
                raise ParseError(f"a sheet has more than {MAX_MERGES:,} merged ranges")
            element.clear()
            while element.getprevious() is not None:
                del element.getparent()[0]  # type: ignore[union-attr]
    return hidden, Columns(columns), Merges(ranges)


def _hidden_sheet_chars(sheet: Any, count: RowCount) -> int:
    """The text a hidden sheet holds, read while the row limit leaves room: it is not indexed,
    so it must not make the file fail."""
    sheet.reset_dimensions()
    chars = 0
    for row in sheet.iter_rows(min_row=1, min_col=1, values_only=True):
        texts = [value_text(value) for value in row if value is not None]
        if any(texts):
            if count.rows >= count.limit:
                break
            count.rows += 1
            chars += visible_chars("".join(texts))
    return chars
