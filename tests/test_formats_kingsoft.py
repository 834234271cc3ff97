"""Workbooks Kingsoft WPS Office saved (.et, and .xlsx), from SheetJS's test files
(bench/format_corpus/kingsoft, PROVENANCE.md there): read through LibreOffice with what WPS
stored, and WPS's pictures in cells read as pictures, not as the formula text WPS stores."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import olefile
import pytest

from ingest.models import Block, ParsedDocument
from ingest.parse import ParseError, parse_document, read_meta
from ingest.parse.cfb import write_cfb
from ingest.parse.pictures import Pictures

KINGSOFT = Path(__file__).parents[1] / "bench" / "format_corpus" / "kingsoft"
pytestmark = pytest.mark.skipif(shutil.which("soffice") is None,
                                reason="LibreOffice (soffice) is not installed")


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "t", ["all"])
    return parse_document(meta, data)


def texts(doc: ParsedDocument) -> list[str]:
    return [block.text for block in doc.blocks]


@pytest.mark.parametrize("name", ["fn.et", "image.et", "write.et"])
def test_the_fixtures_are_files_wps_office_saved(name: str) -> None:
    with olefile.OleFileIO(str(KINGSOFT / name)) as ole:
        # Kingsoft pads the property with bytes of its own ("WPS Spreadsheets\0\0\x03")
        assert ole.get_metadata().creating_application.startswith("WPS Spreadsheets")
        assert ole.exists("ETExtData")  # a stream only Kingsoft writes


def test_an_et_keeps_the_results_wps_stored() -> None:
    """LibreOffice recalculates EVALUATE, which it lacks, to #NAME?; WPS stored 2, and an
    error (#VALUE!) for FIELDVALUE, which Tika prints as 0."""
    rows = [text for text in texts(parse(KINGSOFT / "fn.et")) if text.startswith("Name:")]
    assert rows == ['Name: EVALUATE; Example: =EVALUATE("1+1"); Result: 2',
                    'Name: FIELDVALUE; Example: =FIELDVALUE(A2,"Result"); Result: #VALUE!']


@pytest.mark.parametrize("name", ["image.et", "image.xlsx"])
def test_a_picture_in_a_cell_is_read_as_a_picture_not_as_its_formula(name: str) -> None:
    """G15 holds WPS's DISPIMG picture "Desert" (in the .et's ETCellImageData stream, in the
    .xlsx's xl/cellimages.xml); the cell stores the formula's text, which no one sees."""
    text = "\n".join(texts(parse(KINGSOFT / name)))
    assert "DISPIMG" not in text and "ID_343DFC77" not in text
    assert "(图片:Desert)" in text
    assert text.count("(图片:Chrysanthemum)") == 3  # the drawing's pictures, as before


def edited(tmp_path: Path, old: str, new: str) -> Path:
    """image.xlsx with its sheet's XML edited."""
    path = tmp_path / "edited.xlsx"
    with zipfile.ZipFile(KINGSOFT / "image.xlsx") as source, zipfile.ZipFile(path, "w") as out:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                assert old.encode() in data
                data = data.replace(old.encode(), new.encode())
            out.writestr(item, data)
    return path


@pytest.fixture
def pictures_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each picture handed to OCR (ingest.parse.pictures), as it is handed."""
    read: list[int] = []
    blocks = Pictures.blocks

    def counted(self: Pictures, blob: bytes, page: int) -> list[Block]:
        read.append(len(blob))
        return blocks(self, blob, page)

    monkeypatch.setattr(Pictures, "blocks", counted)
    return read


@pytest.mark.parametrize(("shown", "hidden"), [
    ('<row r="15" ', '<row r="15" hidden="1" '),
    ('<col min="7" max="7" ', '<col min="7" max="7" hidden="1" ')])
def test_a_picture_in_a_hidden_cell_is_not_read(tmp_path: Path, pictures_read: list[int],
                                                shown: str, hidden: str) -> None:
    """image.xlsx with row 15, or column G, hidden: the picture in G15 is neither shown nor
    handed to OCR (the drawing's three pictures are, as in the file as saved)."""
    text = "\n".join(texts(parse(KINGSOFT / "image.xlsx")))
    assert "(图片:Desert)" in text and len(pictures_read) == 4
    pictures_read.clear()
    text = "\n".join(texts(parse(edited(tmp_path, shown, hidden))))
    assert "Desert" not in text and "DISPIMG" not in text
    assert text.count("(图片:Chrysanthemum)") == 3 and len(pictures_read) == 3


def test_a_picture_in_many_cells_is_read_once(tmp_path: Path, pictures_read: list[int]) -> None:
    formula = '<f>_xlfn.DISPIMG(&quot;ID_343DFC770DE840EFB3B0EC4FD4D2FCC0&quot;,1)</f><v>' \
              '=DISPIMG(&quot;ID_343DFC770DE840EFB3B0EC4FD4D2FCC0&quot;,1)</v>'
    rows = "".join(f'<row r="{n}"><c r="G{n}" t="str">{formula}</c></row>'
                   for n in range(16, 516))
    text = "\n".join(texts(parse(edited(tmp_path, "</row></sheetData>",
                                         f"</row>{rows}</sheetData>"))))
    assert "(图片:Desert)" in text and "DISPIMG" not in text
    assert len(pictures_read) == 4  # as in the file as saved, with one cell of it


def test_a_damaged_pictures_in_cells_stream_fails_its_file_with_the_reason(
        tmp_path: Path) -> None:
    with olefile.OleFileIO(str(KINGSOFT / "fn.et")) as ole:
        workbook = ole.openstream("Workbook").read()
    path = tmp_path / "damaged.et"
    path.write_bytes(write_cfb({"Workbook": workbook, "ETCellImageData": b"PK\x03\x04 cut"}))
    with pytest.raises(ParseError, match="ETCellImageData"):
        parse(path)
