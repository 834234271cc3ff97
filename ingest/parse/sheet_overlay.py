"""Stored cell values written into LibreOffice's xlsx of a workbook; ingest.parse.stored_results
reads them from the original (.xls, .et, .xlsb, .ods).

A formula cell always takes the stored value. LibreOffice also rebuilds every pivot table of an
.xls or .xlsb from its cache, in its own words ("Total Result", "- multiple -", "(empty)") and
with its own filters and layout, or writes nothing of one it cannot rebuild, where Excel stored
the table it showed as plain cells ("Grand Total", "(Multiple Items)", "Row Labels"). So for
those formats the stored cells win inside each pivot table LibreOffice wrote (its location and
the page fields above: a cell the original left empty is emptied), and a value stored where the
xlsx shows none is added. Other plain cells keep LibreOffice's reading (it decodes old code
pages xlrd may not). An .ods keeps its pivot (data pilot) output as it was saved: there only
formula cells are overlaid."""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from lxml import etree

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_C, _V, _IS, _ROW, _T, _R = (f"{{{_MAIN}}}{tag}" for tag in ("c", "v", "is", "row", "t", "r"))
_REF = re.compile(r"([A-Z]{1,3})(\d{1,7})")
PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
Stored = tuple[str, str]  # (OOXML cell type, value text)
Lookup = Callable[[int, int], "Stored | None"]
Area = tuple[int, int, int, int]  # first row, first column, last row, last column (0-based)


@dataclass(frozen=True)
class StoredSheet:
    """What the author's application stored in one sheet: `at` a cell's value; `cells` every
    value (for pivot output and what LibreOffice dropped), None where only formulas differ."""
    at: Lookup
    cells: Callable[[], Iterable[tuple[int, int, Stored]]] | None = None


def overlay(xlsx: bytes, sheets: dict[str, StoredSheet]) -> bytes:
    """`xlsx` with the cells of each named sheet given the stored values."""
    with zipfile.ZipFile(io.BytesIO(xlsx)) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    changed, strings = False, _shared_strings(parts)
    for name, part in _sheet_parts(parts).items():
        if name not in sheets or part not in parts:
            continue
        rewritten = _rewrite(parts[part], sheets[name], _pivot_areas(parts, part), strings)
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
    workbook = etree.fromstring(parts["xl/workbook.xml"], PARSER)
    targets = _targets(parts, "xl/_rels/workbook.xml.rels")
    out = {}
    for sheet in workbook.iter(f"{{{_MAIN}}}sheet"):
        target = targets.get(sheet.get(f"{{{_REL}}}id", ""), "").lstrip("/")
        out[sheet.get("name", "")] = target if target.startswith("xl/") else f"xl/{target}"
    return out


def _targets(parts: dict[str, bytes], rels: str) -> dict[str, str]:
    """Relationship id -> target of a .rels part ({} when there is none)."""
    if rels not in parts:
        return {}
    root = etree.fromstring(parts[rels], PARSER)
    return {r.get("Id", ""): r.get("Target", "") for r in root.iter(f"{{{_PKG_REL}}}Relationship")}


def _pivot_areas(parts: dict[str, bytes], sheet_part: str) -> list[Area]:
    """The cells of each pivot table LibreOffice wrote on a sheet: its location and the rows of
    its page fields above it (one per field, then an empty row)."""
    folder, name = posixpath.split(sheet_part)
    areas = []
    for target in _targets(parts, f"{folder}/_rels/{name}.rels").values():
        path = posixpath.normpath(posixpath.join(folder, target))
        if "/pivotTables/" not in path or path not in parts:
            continue
        location = etree.fromstring(parts[path], PARSER).find(f"{{{_MAIN}}}location")
        refs = [_REF.fullmatch(ref) for ref in (location.get("ref", "") if location is not None
                                                 else "").split(":")]
        if location is None or len(refs) != 2 or None in refs:
            continue
        (top, left), (bottom, right) = (_position(match) for match in refs if match)
        pages = int(location.get("rowPageCount", "0"))
        areas.append((max(0, top - pages - 1) if pages else top, left, bottom,
                      max(right, left + 1)))
    return areas


def _shared_strings(parts: dict[str, bytes]) -> list[str]:
    """The text of each shared string (its runs, not their phonetic guides)."""
    if "xl/sharedStrings.xml" not in parts:
        return []
    root = etree.fromstring(parts["xl/sharedStrings.xml"], PARSER)
    return ["".join(t.text or "" for t in item.findall(_T) + item.findall(f"{_R}/{_T}"))
            for item in root.iter(f"{{{_MAIN}}}si")]


def _rewrite(part: bytes, sheet: StoredSheet, pivots: list[Area], strings: list[str]
             ) -> bytes | None:
    """The sheet part with the stored values of its formula cells and pivot tables, and the
    stored values it shows none of; None when none changed."""
    root = etree.fromstring(part, PARSER)
    cells = {}
    for cell in root.iter(_C):
        match = _REF.fullmatch(cell.get("r", ""))
        if match is not None:
            cells[_position(match)] = cell
    if pivots and sheet.cells is not None:  # a pivot LibreOffice rebuilt where Excel stored one
        pivots = [area for area in pivots if any(sheet.at(row, col) is not None for row, col
                                                 in cells if _inside(area, row, col))]
    else:
        pivots = []
    changed = False
    for (row, col), cell in cells.items():
        pivot = any(_inside(area, row, col) for area in pivots)
        if cell.find(f"{{{_MAIN}}}f") is None and not pivot:
            continue
        stored = sheet.at(row, col)
        if stored is not None:
            changed |= _put(cell, stored, strings)
        elif pivot and cell.find(f"{{{_MAIN}}}f") is None and _shown(cell):
            _clear(cell)
            changed = True
    for row, col, stored in sheet.cells() if sheet.cells is not None else ():
        held = cells.get((row, col))
        if held is None or not _shown(held):  # a value LibreOffice's xlsx does not show
            changed |= _put(_new_cell(root, row, col) if held is None else held, stored, strings)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8",
                          standalone=True) if changed else None


def _inside(area: Area, row: int, col: int) -> bool:
    return area[0] <= row <= area[2] and area[1] <= col <= area[3]


def _shown(cell: etree._Element) -> bool:
    value = cell.find(_V)
    return cell.find(_IS) is not None or (value is not None and bool(value.text))


def _put(cell: etree._Element, stored: Stored, strings: list[str]) -> bool:
    """Whether the cell had to change to hold the stored value."""
    kind, text = stored
    value, inline = cell.find(_V), cell.find(_IS)
    if value is not None and inline is None and _same(cell.get("t", "n"), value.text or "",
                                                      stored, strings):
        return False
    _clear(cell)
    etree.SubElement(cell, _V).text = text
    cell.set("t", kind)
    return True


def _same(kind: str, text: str, stored: Stored, strings: list[str]) -> bool:
    if kind == "s" and stored[0] == "str":
        return text.isdigit() and int(text) < len(strings) and strings[int(text)] == stored[1]
    return (kind, text) == stored


def _clear(cell: etree._Element) -> None:
    for child in cell.findall(_V) + cell.findall(_IS):
        cell.remove(child)
    cell.attrib.pop("t", None)


def _new_cell(root: etree._Element, row: int, col: int) -> etree._Element:
    """An empty cell put in its place in the sheet's rows (a streaming reader needs order)."""
    data = root.find(f"{{{_MAIN}}}sheetData")
    if data is None:
        data = etree.SubElement(root, f"{{{_MAIN}}}sheetData")
    rows = data.findall(_ROW)
    line = next((r for r in rows if r.get("r") == str(row + 1)), None)
    if line is None:
        line = etree.Element(_ROW, r=str(row + 1))
        later = [r for r in rows if int(r.get("r", "0")) > row + 1]
        if later:
            later[0].addprevious(line)
        else:
            data.append(line)
    cell = etree.Element(_C, r=f"{_letters(col)}{row + 1}")
    later = [c for c in line.findall(_C) if (match := _REF.fullmatch(c.get("r", "")))
             and _position(match)[1] > col]
    if later:
        later[0].addprevious(cell)
    else:
        line.append(cell)
    return cell


def _position(match: re.Match[str]) -> tuple[int, int]:
    """(row, column), 0-based, of a matched A1 reference."""
    index = 0
    for letter in match.group(1):
        index = index * 26 + ord(letter) - 64
    return int(match.group(2)) - 1, index - 1


def _letters(col: int) -> str:
    letters = ""
    col += 1
    while col:
        col, rest = divmod(col - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


