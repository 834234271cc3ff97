"""Formula results as the author's Excel saved them, put back into LibreOffice's xlsx of an .xls.

LibreOffice recalculates volatile formulas (TODAY(), NOW(), RAND(), OFFSET() …) and the cells
that depend on them whenever it opens a file, whatever its recalculation settings (they govern
only ODF and OOXML, and even there not volatile cells), so the xlsx of a 2006 workbook would
show the day of its conversion where the author saw and saved 12/7/06. An .xls keeps each
formula's last result beside the formula; xlrd reads it, and it replaces LibreOffice's value in
every formula cell of the xlsx (the cell's style, hence its number format, stays LibreOffice's
translation of the original's). Sheets are matched by name. A file xlrd cannot read keeps
LibreOffice's values: the text is all there, only volatile results may be of the day.
"""

from __future__ import annotations

import io
import re
import zipfile

import xlrd
from lxml import etree

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_REF = re.compile(r"([A-Z]{1,3})(\d{1,7})")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def keep_stored_results(xls: bytes, xlsx: bytes) -> bytes:
    """`xlsx` (LibreOffice's conversion of `xls`) with each formula cell holding the result the
    .xls stored; `xlsx` unchanged when xlrd cannot read the .xls or no value differs."""
    try:
        book = xlrd.open_workbook(file_contents=xls, on_demand=True)
    except Exception:  # noqa: BLE001 - any reader error: LibreOffice's values stay
        return xlsx
    try:
        with zipfile.ZipFile(io.BytesIO(xlsx)) as archive:
            parts = {name: archive.read(name) for name in archive.namelist()}
        changed = False
        for name, part in _sheet_parts(parts).items():
            if name not in book.sheet_names() or part not in parts:
                continue
            rewritten = _rewrite(parts[part], book.sheet_by_name(name))
            if rewritten is not None:
                parts[part], changed = rewritten, True
    except Exception:  # noqa: BLE001 - a malformed stored record: LibreOffice's values stay
        return xlsx
    finally:
        book.release_resources()
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


def _rewrite(part: bytes, sheet: xlrd.sheet.Sheet) -> bytes | None:
    """The sheet part with its formula cells' values from `sheet`; None when none changed."""
    root = etree.fromstring(part, _PARSER)
    changed = False
    for cell in root.iter(f"{{{_MAIN}}}c"):
        formula = cell.find(f"{{{_MAIN}}}f")
        match = _REF.fullmatch(cell.get("r", ""))
        if formula is None or match is None:
            continue
        row, col = int(match.group(2)) - 1, _column(match.group(1))
        if row >= sheet.nrows or col >= sheet.row_len(row):
            continue
        stored = _stored(sheet.cell(row, col))
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


def _stored(cell: xlrd.sheet.Cell) -> tuple[str, str] | None:
    """(OOXML cell type, value text) of an xlrd cell; None for an empty one."""
    if cell.ctype in (xlrd.XL_CELL_NUMBER, xlrd.XL_CELL_DATE):  # a date is a serial number
        return "n", repr(float(cell.value)).removesuffix(".0")
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
