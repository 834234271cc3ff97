"""Workbooks that failed whole on held-out public files (issue #40, session 10;
bench/format_corpus/PROVENANCE.md): the Open Preservation Foundation's MonteCarlo.xls, one of
whose charts LibreOffice 7.4 converts with the tail of a longer chart left after the root, and
SheetJS's pivot_table_named_range.xlsb, whose named ranges and print titles LibreOffice writes
as empty defined names, on which openpyxl fails. Each is read from the real file; the repairs
are also checked on a real workbook changed the same way, whatever LibreOffice's version."""

from __future__ import annotations

import io
import logging
import zipfile
from pathlib import Path

import openpyxl
import pytest

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import ParseError, parse_document, read_meta
from ingest.parse.sheet_extras import without_empty_names

CORPUS = Path(__file__).parents[1] / "bench" / "format_corpus"
CHARTED = CORPUS / "phpspreadsheet" / "32chartreadwrite.xlsx"  # one sheet of data, one chart
CHART, WORKBOOK = "xl/charts/chart1.xml", "xl/workbook.xml"
AXES = "Axes: Financial Period / Value (£)"
# as LibreOffice writes what it cannot convert: names without a formula
EMPTY_NAMES = (b'<definedNames><definedName name="PTData"></definedName>'
               b'<definedName localSheetId="0" name="_xlnm.Print_Titles"></definedName>'
               b'<definedName name="Budget">Data!$A$3:$M$3</definedName></definedNames>')


def parse(path: Path, data: bytes | None = None) -> ParsedDocument:
    meta, read = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, read if data is None else data)


def texts(doc: ParsedDocument) -> list[str]:
    return [block.text for block in doc.blocks]


def with_part(path: Path, name: str, content: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        for member in source.infolist():
            target.writestr(member, content if member.filename == name else source.read(member))
    return out.getvalue()


def part(path: Path, name: str) -> bytes:
    with zipfile.ZipFile(path) as archive:
        return archive.read(name)


def test_an_xls_whose_converted_chart_is_not_well_formed_keeps_its_sheets_and_charts() -> None:
    doc = parse(CORPUS / "format-corpus" / "MonteCarlo.xls")
    assert "Monte Carlo 1: PF simulation" in texts(doc)
    assert "Axes: Date (m-d) / Moisture content (cm3/cm3)" in texts(doc)
    assert "Axes: Absolute Z-score / Cumulative rel. frequency (%)" in texts(doc)


def test_a_chart_part_with_bytes_after_its_root_is_read_as_recovered(
        caplog: pytest.LogCaptureFixture) -> None:
    chart = part(CHARTED, CHART)
    data = with_part(CHARTED, CHART, chart + chart[len(chart) // 2:])  # a longer chart's tail
    with caplog.at_level(logging.WARNING):
        doc = parse(CHARTED, data)
    assert AXES in texts(doc)
    assert any(text.startswith("Budget: 2008 Qtr 1 1690") for text in texts(doc))
    assert "a chart part is not well-formed XML, read as recovered" in caplog.text


def test_a_chart_part_nothing_can_be_read_of_fails_the_file_with_its_reason() -> None:
    data = with_part(CHARTED, CHART, b"\x00\x01 not xml at all")
    with pytest.raises(ParseError, match="a chart part is not well-formed XML"):
        parse(CHARTED, data)


def test_an_xlsb_whose_named_ranges_convert_empty_is_read() -> None:
    doc = parse(CORPUS / "sheetjs" / "pivot_table_named_range.xlsb")
    headings = [b.text for b in doc.blocks if b.kind is BlockKind.HEADING]
    assert {"FizzBuzzTable", "PTTable", "PTRange"} <= set(headings)
    assert "Foo: 5; Bar: 10; Qux: buzz; Quux: buzz" in texts(doc)


def test_empty_defined_names_are_left_out_and_the_others_kept() -> None:
    workbook = part(CHARTED, WORKBOOK).replace(b"</sheets>", b"</sheets>" + EMPTY_NAMES)
    data = with_part(CHARTED, WORKBOOK, workbook)
    with pytest.raises(TypeError):  # what failed the xlsb: openpyxl reads the empty print titles
        openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    repaired = openpyxl.load_workbook(io.BytesIO(without_empty_names(data)), read_only=True)
    assert list(repaired.defined_names) == ["Budget"]
    assert AXES in texts(parse(CHARTED, data))


def test_a_workbook_without_empty_names_is_not_rewritten() -> None:
    plain = CHARTED.read_bytes()
    assert without_empty_names(plain) is plain
