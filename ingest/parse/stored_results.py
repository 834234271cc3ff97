"""Cell values as the author's application saved them, put back into LibreOffice's xlsx of an
.xls, an .xlsb or an .ods.

LibreOffice recalculates volatile formulas (TODAY(), NOW(), RAND(), OFFSET() …) and the cells
that depend on them whenever it opens a file, whatever its recalculation settings (they govern
only ODF and OOXML, and even there not volatile cells), so the xlsx of a 2006 workbook would
show the day of its conversion where the author saw and saved 12/7/06. An .xls keeps each
formula's last result beside the formula (xlrd reads it); an .ods keeps it in the formula
cell's `office:value` (or date, time, boolean value, or its text). It replaces LibreOffice's
value in every formula cell of the xlsx (the cell's style, hence its number format, stays
LibreOffice's translation of the original's). Sheets are matched by name. A file that cannot
be read so keeps LibreOffice's values: the text is all there, only volatile results may be of
the day.

An .xls's or .xlsb's pivot tables are also taken as stored (ingest.parse.sheet_overlay). An
.xlsb is read by calamine (python-calamine), which gives no error cells: a formula's error
stays LibreOffice's.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from functools import partial

import xlrd
from lxml import etree
from python_calamine import CalamineSheet, CalamineWorkbook, SheetTypeEnum

from ingest.parse.archive import check_archive
from ingest.parse.sheet_overlay import PARSER, Stored, StoredSheet, overlay

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_DURATION = re.compile(r"-?P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?")
_MAX_CELLS = 1_000_000  # stored cells taken from one file (a repeated .ods formula counts each)


def keep_stored_results(xls: bytes, xlsx: bytes) -> bytes:
    """`xlsx` (LibreOffice's conversion of `xls`) with each formula cell holding the result the
    .xls stored and its pivot tables as stored; `xlsx` unchanged when xlrd cannot read the .xls
    or no value differs."""
    try:
        book = xlrd.open_workbook(file_contents=xls, on_demand=True)
    except Exception:  # noqa: BLE001 - any reader error: LibreOffice's values stay
        return xlsx
    try:
        sheets = {}
        for name in book.sheet_names():
            sheet = book.sheet_by_name(name)
            sheets[name] = StoredSheet(partial(_xls_cell, sheet), partial(_xls_cells, sheet))
        return overlay(xlsx, sheets)
    except Exception:  # noqa: BLE001 - a malformed stored record: LibreOffice's values stay
        return xlsx
    finally:
        book.release_resources()


def keep_xlsb_values(xlsb: bytes, xlsx: bytes) -> bytes:
    """`xlsx` (LibreOffice's conversion of `xlsb`) with the formula results and pivot tables
    the .xlsb stored; a worksheet calamine cannot read keeps LibreOffice's values."""
    try:
        book = CalamineWorkbook.from_filelike(io.BytesIO(xlsb))
        epoch = _epoch(xlsx)
        sheets, taken = {}, 0
        for meta in book.sheets_metadata:
            if meta.typ != SheetTypeEnum.WorkSheet:
                continue
            try:
                sheet = book.get_sheet_by_name(meta.name)
                if taken + sheet.height * sheet.width > _MAX_CELLS:
                    continue
                taken += sheet.height * sheet.width
                cells = dict(_calamine_cells(sheet, epoch))
            except Exception:  # noqa: BLE001 - this sheet keeps LibreOffice's values
                continue
            sheets[meta.name] = StoredSheet(partial(_in, cells), partial(_items, cells))
        return overlay(xlsx, sheets)
    except Exception:  # noqa: BLE001 - any reader error: LibreOffice's values stay
        return xlsx


def keep_ods_results(ods: bytes, xlsx: bytes) -> bytes:
    """`xlsx` (LibreOffice's conversion of `ods`) with each formula cell holding the value the
    .ods stored; `xlsx` unchanged when the .ods cannot be read so or no value differs."""
    try:
        check_archive(ods, "ODS")
        with zipfile.ZipFile(io.BytesIO(ods)) as archive:
            content = etree.fromstring(archive.read("content.xml"), PARSER)
        return overlay(xlsx, {name: StoredSheet(partial(_in, cells)) for name, cells in
                               _ods_formula_values(content, _epoch(xlsx)).items()})
    except Exception:  # noqa: BLE001 - any reader error: LibreOffice's values stay
        return xlsx


def _epoch(xlsx: bytes) -> datetime:
    """Day 0 of the xlsx's date serial numbers (LibreOffice keeps the original's system)."""
    with zipfile.ZipFile(io.BytesIO(xlsx)) as archive:
        workbook = etree.fromstring(archive.read("xl/workbook.xml"), PARSER)
    pr = workbook.find(f"{{{_MAIN}}}workbookPr")
    return datetime(1904, 1, 1) if pr is not None and pr.get("date1904") in (
        "1", "true") else datetime(1899, 12, 30)


def _xls_cell(sheet: xlrd.sheet.Sheet, row: int, col: int) -> Stored | None:
    if row >= sheet.nrows or col >= sheet.row_len(row):
        return None
    return _stored(sheet.cell(row, col))


def _xls_cells(sheet: xlrd.sheet.Sheet) -> Iterator[tuple[int, int, Stored]]:
    taken = 0
    for row in range(sheet.nrows):
        for col in range(sheet.row_len(row)):
            stored = _stored(sheet.cell(row, col))
            if stored is not None and stored != ("str", ""):
                if taken == _MAX_CELLS:  # the cap reached: the rest is not walked
                    return
                taken += 1
                yield row, col, stored


def _stored(cell: xlrd.sheet.Cell) -> Stored | None:
    """(OOXML cell type, value text) of an xlrd cell; None for an empty one."""
    if cell.ctype in (xlrd.XL_CELL_NUMBER, xlrd.XL_CELL_DATE):  # a date is a serial number
        return "n", _number(float(cell.value))
    if cell.ctype == xlrd.XL_CELL_TEXT:
        return "str", str(cell.value)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return "b", "1" if cell.value else "0"
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return "e", xlrd.error_text_from_code.get(cell.value, "#N/A")
    return None


def _calamine_cells(sheet: CalamineSheet, epoch: datetime
                    ) -> Iterator[tuple[tuple[int, int], Stored]]:
    """(row, column) -> stored value of each cell calamine reads (an error reads as empty)."""
    if sheet.start is None:
        return
    top, left = sheet.start
    for row, values in enumerate(sheet.to_python(), top):
        for col, value in enumerate(values, left):
            stored = _calamine_value(value, epoch)
            if stored is not None:
                yield (row, col), stored


def _calamine_value(value: object, epoch: datetime) -> Stored | None:
    if isinstance(value, bool):
        return "b", "1" if value else "0"
    if isinstance(value, int | float):
        return "n", _number(float(value))
    if isinstance(value, str):
        return ("str", value) if value else None
    if isinstance(value, datetime | date):  # a date or time as its serial number
        day = value if isinstance(value, datetime) else datetime.combine(value, time())
        serial = (day - epoch) / timedelta(days=1)
        if epoch.year == 1899 and serial < 61:  # Excel's 1900 counts a 29 February 1900
            serial -= 1
        return "n", _number(serial)
    if isinstance(value, time):
        return "n", _number((datetime.combine(epoch, value) - epoch) / timedelta(days=1))
    if isinstance(value, timedelta):
        return "n", _number(value / timedelta(days=1))
    return None


def _in(cells: dict[tuple[int, int], Stored], row: int, col: int) -> Stored | None:
    return cells.get((row, col))


def _items(cells: dict[tuple[int, int], Stored]) -> Iterator[tuple[int, int, Stored]]:
    return ((row, col, stored) for (row, col), stored in cells.items())


def _ods_formula_values(content: etree._Element, epoch: datetime
                        ) -> dict[str, dict[tuple[int, int], Stored]]:
    """Sheet name -> (row, column) -> the stored value of each formula cell of an .ods."""
    out: dict[str, dict[tuple[int, int], Stored]] = {}
    taken = 0
    for table in content.iter(_TABLE + "table"):
        cells = out.setdefault(table.get(_TABLE + "name", ""), {})
        row = 0
        for row_element in table.iter(_TABLE + "table-row"):
            if next(row_element.iterancestors(_TABLE + "table")) is not table:
                continue  # a row of a table inside a cell
            rows = int(row_element.get(_TABLE + "number-rows-repeated", "1"))
            col = 0
            for cell in row_element:
                columns = int(cell.get(_TABLE + "number-columns-repeated", "1"))
                value = _ods_value(cell, epoch) if cell.get(_TABLE + "formula") else None
                if value is not None and taken + rows * columns <= _MAX_CELLS:
                    taken += rows * columns
                    cells.update({(r, c): value for r in range(row, row + rows)
                                  for c in range(col, col + columns)})
                col += columns
            row += rows
    return out


def _ods_value(cell: etree._Element, epoch: datetime) -> Stored | None:
    """(OOXML cell type, value text) an ODF cell stored (a date as a serial number)."""
    kind = cell.get(_OFFICE + "value-type", "")
    if kind in ("float", "percentage", "currency"):
        return "n", _number(float(cell.get(_OFFICE + "value", "")))
    if kind == "date":
        day = datetime.fromisoformat(cell.get(_OFFICE + "date-value", ""))
        return "n", _number((day - epoch) / timedelta(days=1))
    if kind == "time":
        match = _DURATION.fullmatch(cell.get(_OFFICE + "time-value", ""))
        if match is None:
            return None
        days, hours, minutes, seconds = (float(g or 0) for g in match.groups())
        return "n", _number(days + hours / 24 + minutes / 1440 + seconds / 86400)
    if kind == "boolean":
        return "b", "1" if cell.get(_OFFICE + "boolean-value") == "true" else "0"
    if kind == "string":
        text = cell.get(_OFFICE + "string-value")
        return "str", text if text is not None else "\n".join(
            "".join(p.itertext()) for p in cell.iter(_TEXT + "p"))
    return None


def _number(value: float) -> str:
    return repr(value).removesuffix(".0")
