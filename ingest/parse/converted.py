"""Legacy Office, Excel binary (.xlsb), OpenDocument, RTF and Kingsoft WPS files: converted to
OOXML by LibreOffice (ingest.parse.convert), then read by the DOCX, XLSX or PPTX parser, so every
part those parsers read (notes, text boxes, merged cells, hidden sheets, speaker notes) is read
here too.

An OpenDocument file's volatile fields (date, file name, author) keep the text they showed when
saved and a sheet's empty tail is not repeated (ingest.parse.odf_prepare); an .ods keeps its
formulas' saved values (ingest.parse.stored_results): LibreOffice would fill both anew.

LibreOffice picks its import filter from the content, the suffix being a hint: Kingsoft's
.wps/.et/.dps are the Word/Excel/PowerPoint 97 binary formats under other names. WPS Office
keeps its pictures in cells of an .et (or of an .xls it saved) in a stream of its own, which
LibreOffice does not read: the xlsx parser is handed it (ingest.parse.sheet_extras.CellPictures).
"""

from __future__ import annotations

import olefile

from ingest.parse.archive import check_archive
from ingest.parse.convert import convert
from ingest.parse.odf_prepare import prepared
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.slides import parse_pptx
from ingest.parse.spreadsheet import parse_xlsx
from ingest.parse.stored_results import keep_ods_results, keep_stored_results, keep_xlsb_values
from ingest.parse.word import parse_docx


def _text(data: bytes, suffix: str, limits: ParseLimits) -> ParseResult:
    return parse_docx(convert(data, suffix, "docx"), limits)


def _deck(data: bytes, suffix: str, limits: ParseLimits) -> ParseResult:
    return parse_pptx(convert(data, suffix, "pptx"), limits)


def parse_doc(data: bytes, limits: ParseLimits) -> ParseResult:
    return _text(data, ".doc", limits)


def parse_rtf(data: bytes, limits: ParseLimits) -> ParseResult:
    return _text(data, ".rtf", limits)


def parse_odt(data: bytes, limits: ParseLimits) -> ParseResult:
    return _text(prepared(data), ".odt", limits)


def parse_wps(data: bytes, limits: ParseLimits) -> ParseResult:
    return _text(data, ".wps", limits)


def _binary_sheets(data: bytes, suffix: str, limits: ParseLimits) -> ParseResult:
    """An Excel 97 workbook: LibreOffice's xlsx with the formula results the file stored."""
    pictures = _cell_pictures(data)
    return parse_xlsx(keep_stored_results(data, convert(data, suffix, "xlsx")), limits, pictures)


def _cell_pictures(data: bytes) -> bytes | None:
    """The zip of WPS Office's pictures in cells a workbook holds (its ETCellImageData
    stream), checked as an Office package is; None when it holds none."""
    # olefile takes shorter bytes for a file name; an HTML table saved as .xls is no OLE file
    if len(data) < olefile.MINIMAL_OLEFILE_SIZE or not data.startswith(olefile.MAGIC):
        return None
    try:
        with olefile.OleFileIO(data) as ole:
            if not ole.exists("ETCellImageData"):
                return None
            package: bytes = ole.openstream("ETCellImageData").read()
    except OSError:  # a compound file olefile cannot walk: LibreOffice may still read it
        return None
    check_archive(package, "WPS pictures in cells (ETCellImageData)")
    return package


def parse_xls(data: bytes, limits: ParseLimits) -> ParseResult:
    return _binary_sheets(data, ".xls", limits)


def parse_xlsb(data: bytes, limits: ParseLimits) -> ParseResult:
    """Excel's binary workbook (BIFF12 parts in a zip, checked as any Office package is):
    openpyxl does not read it; LibreOffice's xlsx with the formula results and pivot tables
    Excel stored."""
    return parse_xlsx(keep_xlsb_values(data, convert(data, ".xlsb", "xlsx")), limits)


def parse_ods(data: bytes, limits: ParseLimits) -> ParseResult:
    """LibreOffice's xlsx with the formula values the .ods stored (it recalculates volatile
    ones on opening)."""
    return parse_xlsx(keep_ods_results(data, convert(prepared(data), ".ods", "xlsx")), limits)


def parse_et(data: bytes, limits: ParseLimits) -> ParseResult:
    return _binary_sheets(data, ".et", limits)


def parse_ppt(data: bytes, limits: ParseLimits) -> ParseResult:
    return _deck(data, ".ppt", limits)


def parse_odp(data: bytes, limits: ParseLimits) -> ParseResult:
    return _deck(prepared(data), ".odp", limits)


def parse_dps(data: bytes, limits: ParseLimits) -> ParseResult:
    return _deck(data, ".dps", limits)
