"""Formula results as the author's application saved them, put back into LibreOffice's xlsx of
an .xls or an .ods.

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
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial

import xlrd
from lxml import etree

from ingest.parse.archive import check_archive

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_REF = re.compile(r"([A-Z]{1,3})(\d{1,7})")
_DURATION = re.compile(r"-?P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
_MAX_CELLS = 1_000_000  # formula cells taken from one .ods (a repeated formula counts each)
Stored = tuple[str, str]  # (OOXML cell type, value text)
Lookup = Callable[[int, int], "Stored | None"]


def keep_stored_results(xls: bytes, xlsx: bytes) -> bytes:
    """`xlsx` (LibreOffice's conversion of `xls`) with each formula cell holding the result the
    .xls stored; `xlsx` unchanged when xlrd cannot read the .xls or no value differs."""
    try:
        book = xlrd.open_workbook(file_contents=xls, on_demand=True)
    except Exception:  # noqa: BLE001 - any reader error: LibreOffice's values stay
        return xlsx
    try:
        return _overlay(xlsx, {name: partial(_xls_cell, book.sheet_by_name(name))
                               for name in book.sheet_names()})
    except Exception:  # noqa: BLE001 - a malformed stored record: LibreOffice's values stay
        return xlsx
    finally:
        book.release_resources()


def keep_ods_results(ods: bytes, xlsx: bytes) -> bytes:
    """`xlsx` (LibreOffice's conversion of `ods`) with each formula cell holding the value the
    .ods stored; `xlsx` unchanged when the .ods cannot be read so or no value differs."""
    try:
        check_archive(ods, "ODS")
        with zipfile.ZipFile(io.BytesIO(ods)) as archive:
            content = etree.fromstring(archive.read("content.xml"), _PARSER)
        with zipfile.ZipFile(io.BytesIO(xlsx)) as archive:
            workbook = etree.fromstring(archive.read("xl/workbook.xml"), _PARSER)
        pr = workbook.find(f"{{{_MAIN}}}workbookPr")
        epoch = datetime(1904, 1, 1) if pr is not None and pr.get("date1904") in (
            "1", "true") else datetime(1899, 12, 30)
        return _overlay(xlsx, {name: partial(_ods_cell, cells) for name, cells in
                               _ods_formula_values(content, epoch).items()})
    except Exception:  # noqa: BLE001 - any reader error: LibreOffice's values stay
        return xlsx


def _overlay(xlsx: bytes, sheets: dict[str, Lookup]) -> bytes:
    """`xlsx` with the formula cells of each named sheet given the stored values."""
    with zipfile.ZipFile(io.BytesIO(xlsx)) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    changed = False
    for name, part in _sheet_parts(parts).items():
        if name not in sheets or part not in parts:
            continue
        rewritten = _rewrite(parts[part], sheets[name])
        if rewritten is not None:
            parts[part], changed = rewritten, True
    if not changed:
        return xlsx
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return out.getvalue()


def _sheet_parts(parts: dict[str, bytes]) -> dict[str, str]:
    """Sheet name -> its part's path in the xlsx."""
    workbook = etree.fromstring(parts["xl/workbook.xml"], _PARSER)
    rels = etree.fromstring(parts["xl/_rels/workbook.xml.rels"], _PARSER)
    targets = {r.get("Id"): r.get("Target", "") for r in rels.iter(f"{{{_PKG_REL}}}Relationship")}
    out = {}
    for sheet in workbook.iter(f"{{{_MAIN}}}sheet"):
        target = targets.get(sheet.get(f"{{{_REL}}}id"), "").lstrip("/")
        out[sheet.get("name", "")] = target if target.startswith("xl/") else f"xl/{target}"
    return out


def _rewrite(part: bytes, stored_at: Lookup) -> bytes | None:
    """The sheet part with its formula cells' stored values; None when none changed."""
    root = etree.fromstring(part, _PARSER)
    changed = False
    for cell in root.iter(f"{{{_MAIN}}}c"):
        formula = cell.find(f"{{{_MAIN}}}f")
        match = _REF.fullmatch(cell.get("r", ""))
        if formula is None or match is None:
            continue
        stored = stored_at(int(match.group(2)) - 1, _column(match.group(1)))
        if stored is None:
            continue
        kind, text = stored
        value = cell.find(f"{{{_MAIN}}}v")
        if value is None:
            value = etree.SubElement(cell, f"{{{_MAIN}}}v")
        if value.text != text or cell.get("t", "n") != kind:
            value.text, changed = text, True
            cell.set("t", kind)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8",
                          standalone=True) if changed else None


def _xls_cell(sheet: xlrd.sheet.Sheet, row: int, col: int) -> Stored | None:
    if row >= sheet.nrows or col >= sheet.row_len(row):
        return None
    return _stored(sheet.cell(row, col))


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


def _column(letters: str) -> int:
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - 64
    return index - 1


def _ods_cell(cells: dict[tuple[int, int], Stored], row: int, col: int) -> Stored | None:
    return cells.get((row, col))


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
