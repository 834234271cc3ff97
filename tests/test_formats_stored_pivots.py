"""Pivot tables and formula results as Excel stored them in an .xlsb or .xls, where LibreOffice's
conversion rebuilds a pivot table in its own words, filters and layout, or drops it
(ingest.parse.stored_results, ingest.parse.sheet_overlay). Read from SheetJS's test workbooks
(bench/format_corpus/PROVENANCE.md, tests/fixtures/formats/PROVENANCE.md)."""

from __future__ import annotations

import io
import shutil
import zipfile
from datetime import datetime
from pathlib import Path

import openpyxl
import pytest
from lxml import etree

from ingest.models import Block, BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta
from ingest.parse.convert import convert
from ingest.parse.result import ParseLimits
from ingest.parse.sheet_overlay import StoredSheet, overlay
from ingest.parse.spreadsheet import parse_xlsx
from ingest.parse.stored_results import keep_xlsb_values

pytestmark = pytest.mark.skipif(shutil.which("soffice") is None,
                                reason="LibreOffice is installed by `make test` (engines.sh)")

ROOT = Path(__file__).parents[1]
XLSB = ROOT / "bench" / "format_corpus" / "sheetjs" / "pivot_table_named_range.xlsb"
FIXTURES = ROOT / "tests" / "fixtures" / "formats"
MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
# Excel's pivot table with a label filter on Foo: 8 of the 10 rows of Baz/Quux items are shown
FILTERED = ("| Foo | (Multiple Items) |",
            "| Row Labels | 10 | 14 | 18 | 22 | 26 | 30 | 34 | 38 | Grand Total |",
            "| Grand Total | 1 | 1 | 1 | 1 | 1 | 1 | 1 | 1 | 8 |")


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def sheet_text(blocks: list[Block], title: str) -> str:
    """The text of the blocks of one sheet (from its heading to the next)."""
    out, inside = [], False
    for block in blocks:
        if block.kind is BlockKind.HEADING:
            inside = block.text == title
        elif inside:
            out.append(block.text)
    return "\n".join(out)


def part(xlsx: bytes, name: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(xlsx)) as archive:
        return archive.read(name)


def with_values_removed(xlsx: bytes, name: str, refs: set[str]) -> bytes:
    """`xlsx` with the values of the given cells of one sheet part removed (the cells stay)."""
    root = etree.fromstring(part(xlsx, name))
    for cell in root.iter(f"{MAIN}c"):
        if cell.get("r") in refs:
            for value in cell.findall(f"{MAIN}v"):
                cell.remove(value)
            cell.attrib.pop("t", None)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(xlsx)) as source, zipfile.ZipFile(out, "w") as target:
        for member in source.infolist():
            target.writestr(member, etree.tostring(root) if member.filename == name
                            else source.read(member))
    return out.getvalue()


def test_an_xlsb_pivot_table_shows_the_cells_excel_stored() -> None:
    """LibreOffice rebuilds it from the pivot cache without the label filter, in its words."""
    rebuilt = sheet_text(parse_xlsx(convert(XLSB.read_bytes(), ".xlsb", "xlsx"),
                                    ParseLimits()).blocks, "PTWithLabelFilter")
    assert "Total Result" in rebuilt and "- multiple -" in rebuilt
    doc = parse(XLSB)
    text = sheet_text(doc.blocks, "PTWithLabelFilter")
    for row in FILTERED:
        assert row in text, text
    for words in ("Total Result", "- multiple -", "(empty)", "| 2 | 6 |"):
        assert words not in text, text  # nothing of LibreOffice's rebuild is left over
    assert "| Foo | (All) | 列3 | 列4 |\n| --- | --- | --- | --- |\n| Bar | (Multiple Items) |" in (
        sheet_text(doc.blocks, "PTRange"))  # two page fields above the table
    assert "Foo: 5; Bar: 10; Qux: buzz; Quux: buzz" in "\n".join(b.text for b in doc.blocks)


def test_an_xls_pivot_table_libreoffice_drops_is_read_as_excel_stored_it() -> None:
    """LibreOffice 7.4 writes none of this .xls's pivot cells (one "(empty)" in A1): xlrd reads
    them, and a value the xlsx shows none of is added."""
    doc = parse(FIXTURES / "pivot_table_named_range.xls")
    text = sheet_text(doc.blocks, "PTWithLabelFilter")
    for row in FILTERED[1:]:
        assert row in text, text
    assert "| Group1 |  |  |  |\n|  | 0.9 | 1.5 | 1 |\n| fizz | 1.2 | 0 | 1 |" in sheet_text(
        doc.blocks, "PTRange")


def test_a_pivot_table_the_stored_file_holds_nothing_of_keeps_libreoffices_cells() -> None:
    """A reader that finds no cell there must not empty the table LibreOffice wrote."""
    xlsx = convert(XLSB.read_bytes(), ".xlsb", "xlsx")
    nothing = StoredSheet(lambda row, col: None, lambda: [])
    assert overlay(xlsx, dict.fromkeys(("PTWithLabelFilter", "PTTable", "PTRange"),
                                       nothing)) is xlsx


def test_a_worksheet_calamine_cannot_read_keeps_libreoffices_values() -> None:
    """The first worksheet's BIFF12 part cut short: that sheet is LibreOffice's, the others
    are overlaid; bytes that are no workbook leave the xlsx as it is."""
    xlsb = XLSB.read_bytes()
    xlsx = convert(xlsb, ".xlsb", "xlsx")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(xlsb)) as source, zipfile.ZipFile(out, "w") as target:
        for member in source.infolist():
            data = source.read(member)
            target.writestr(member, data[:40] if member.filename == "xl/worksheets/sheet1.bin"
                            else data)
    kept = keep_xlsb_values(out.getvalue(), xlsx)
    sheets = {name: part(kept, f"xl/worksheets/sheet{n}.xml") for n, name in enumerate(
        ("PTWithLabelFilter", "FizzBuzzTable", "PTTable", "PTRange"), 1)}
    assert sheets["PTWithLabelFilter"] == part(xlsx, "xl/worksheets/sheet1.xml")
    assert b"<v>Grand Total</v>" not in part(xlsx, "xl/worksheets/sheet4.xml")
    assert b"<v>Grand Total</v>" in sheets["PTRange"]
    assert keep_xlsb_values(b"PK\x03\x04 not a workbook", xlsx) is xlsx


@pytest.mark.parametrize(("name", "first"), [("1900.xlsb", datetime(1900, 1, 1)),
                                             ("1904.xlsb", datetime(1904, 1, 2))])
def test_stored_dates_and_formula_results_go_back_as_excel_counts_days(
        name: str, first: datetime) -> None:
    """Values the xlsx lacks are put back: dates as serial numbers of the workbook's date system
    (the 1900 one counting Lotus's 29 February 1900), TEXT() results as Excel stored them."""
    xlsb = (FIXTURES / name).read_bytes()
    sheet = "xl/worksheets/sheet1.xml"
    emptied = with_values_removed(convert(xlsb, ".xlsb", "xlsx"), sheet,
                                  {f"{col}{row}" for col in "BC" for row in range(1, 6)})
    book = openpyxl.load_workbook(io.BytesIO(keep_xlsb_values(xlsb, emptied)), data_only=True)
    column = [(row[1].value, row[2].value) for row in book.worksheets[0].iter_rows(max_row=5)]
    assert column[0] == (first, first.strftime("%Y-%m-%d"))
    assert [text for _, text in column][1:] == (
        ["1900-01-11", "1900-04-20", "1903-01-15", "1930-06-02"] if first.year == 1900
        else ["1904-01-12", "1904-04-21", "1907-01-16", "1934-06-03"])
