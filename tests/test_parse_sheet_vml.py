"""Pictures of an XLSX sheet's legacy VML drawing (issue 40, "every visible part"): the previews
Excel shows of embedded objects, read like the sheet's other pictures, once each, in anchor
order; a hostile drawing is skipped with its reason and the sheet is read all the same.

The file is Apache POI's ExcelWithAttachments.xlsm (tests/fixtures/formats/PROVENANCE.md):
Excel wrote four OLE objects (an MS Graph chart, two Word documents, a PowerPoint deck) whose
EMF previews only its VML drawing names. LibreOffice 7.4 does not write such a file: saving
it as .xlsx turns the previews into DrawingML pictures, which the drawing reader already reads.
"""

from __future__ import annotations

import random
import struct
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from ingest.chunk import chunk_document
from ingest.parse import ParseLimits, parse_document, read_meta, sheet_vml
from ingest.parse.result import ParseResult
from ingest.parse.spreadsheet import parse_xlsx

FILE = Path(__file__).parent / "fixtures" / "formats" / "ExcelWithAttachments.xlsm"
VML = "xl/drawings/vmlDrawing1.vml"
VML_RELS = "xl/drawings/_rels/vmlDrawing1.vml.rels"
NO_OCR = ParseLimits(max_pictures=0)  # vector previews need no OCR budget
# the text of each preview, in the order of the cells they are anchored at (rows 17, 23, 29, 34)
PREVIEWS = ["Восток", "Документ-в-документе", "One more document", "Slide header"]


def variant(tmp_path: Path, changes: dict[str, Callable[[bytes], bytes]]) -> Path:
    """The fixture with some parts changed."""
    path = tmp_path / "variant.xlsm"
    with zipfile.ZipFile(FILE) as old, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = old.read(info)
            change = changes.get(info.filename)
            new.writestr(info.filename, change(data) if change else data)
    return path


def replaced(data: bytes) -> Callable[[bytes], bytes]:
    return lambda _: data


def read(path: Path, limits: ParseLimits = NO_OCR) -> ParseResult:
    return parse_xlsx(path.read_bytes(), limits)


def previews(result: ParseResult) -> list[str]:
    return [text for block in result.blocks if block.text.startswith("图片文字: ")
            for text in PREVIEWS if text in block.text]


def test_embedded_objects_previews_are_read_once_in_anchor_order() -> None:
    with zipfile.ZipFile(FILE) as archive:  # their text is in the EMF previews only
        assert not any("Документ-в-документе".encode() in archive.read(name)
                       for name in archive.namelist() if name.endswith((".xml", ".vml")))
    result = read(FILE)
    assert previews(result) == PREVIEWS
    texts = [block.text for block in result.blocks]
    assert texts.index("Луғат") < texts.index(next(t for t in texts if "Восток" in t))
    assert {block.page for block in result.blocks if "图片文字" in block.text} == {1}
    assert not any(block.ocr for block in result.blocks)
    assert "legacy_drawings_unreadable" not in result.skipped
    assert result.skipped["comments"] == 3  # the notes' shapes are not pictures


def test_previews_reach_the_chunks(tmp_path: Path) -> None:
    """Through the whole parse (the embedded documents left out, so no LibreOffice run)."""
    path = tmp_path / "previews.xlsm"
    with zipfile.ZipFile(FILE) as old, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if not info.filename.startswith("xl/embeddings/"):
                new.writestr(info, old.read(info))
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    chunks = " ".join(chunk.text for chunk in chunk_document(parse_document(meta, data, NO_OCR)))
    assert all(text in chunks for text in PREVIEWS)


def test_missing_and_external_relationships_are_skipped(tmp_path: Path) -> None:
    """rId1 (the chart) named by no relationship; rId2 pointing outside the package."""
    path = variant(tmp_path, {
        VML: lambda d: d.replace(b'o:relid="rId1"', b'o:relid="rId9"'),
        VML_RELS: lambda d: d.replace(b'Target="../media/image2.emf"',
                                      b'Target="file:///etc/passwd" TargetMode="External"')})
    assert previews(read(path)) == PREVIEWS[2:]


def test_a_picture_shown_many_times_and_a_looping_relationship(tmp_path: Path) -> None:
    """10,000 shapes showing one picture read it once; a relationship to the drawing itself
    is a picture Pillow cannot read (counted), not a loop."""
    def many(vml: bytes) -> bytes:
        start = vml.index(b'<v:shape id="_x0000_s1036"')
        end = vml.index(b"</v:shape>", start) + len(b"</v:shape>")
        return vml[:end] + vml[start:end] * 10_000 + vml[end:]

    path = variant(tmp_path, {VML: many, VML_RELS: lambda d: d.replace(
        b"../media/image1.emf", b"vmlDrawing1.vml")})
    started = time.process_time()
    result = read(path)
    assert time.process_time() - started < 10  # CPU seconds (about 1 on a 2-core machine)
    assert previews(result) == PREVIEWS[1:]
    assert result.skipped["pictures_unreadable"] == 1


def test_huge_picture_is_counted_not_decoded(tmp_path: Path) -> None:
    """A preview that is a 12,000 x 12,000 PNG (its header only): over the pixel limit."""
    header = struct.pack(">IIBBBBB", 12_000, 12_000, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    png = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(header)) + chunk
           + struct.pack(">I", zlib.crc32(chunk)) + struct.pack(">I", 0) + b"IEND"
           + struct.pack(">I", zlib.crc32(b"IEND")))
    path = variant(tmp_path, {"xl/media/image4.emf": replaced(png)})
    result = read(path, ParseLimits(max_pictures=1, max_image_megapixels=100))
    assert previews(result) == PREVIEWS[:3]
    assert result.skipped["pictures_too_large"] == 1


def test_hidden_picture_is_counted(tmp_path: Path) -> None:
    path = variant(tmp_path, {VML: lambda d: d.replace(
        b"height:41.25pt;z-index:5", b"height:41.25pt;z-index:5;visibility:hidden")})
    result = read(path)
    assert previews(result) == [PREVIEWS[0], PREVIEWS[1], PREVIEWS[3]]
    assert result.skipped["hidden_pictures"] == 1


def test_unclosed_br_of_old_excel_is_recovered(tmp_path: Path) -> None:
    """Excel 2003 wrote notes' line breaks as `<br>`; the pictures after them are read."""
    path = variant(tmp_path, {VML: lambda d: d.replace(
        b"<div style='text-align:left'></div>", b"<div style='text-align:left'>a<br>b</div>")})
    assert previews(read(path)) == PREVIEWS


@pytest.mark.parametrize("change, reason", [
    (lambda d: d.replace(b"<xml ", b'<!DOCTYPE xml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b '
                         b'"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><xml a="&b;" ', 1), "DTD"),
    (replaced(b""), "not readable"),
])
def test_hostile_drawing_is_skipped_with_its_reason(
        tmp_path: Path, change: Callable[[bytes], bytes], reason: str,
        caplog: pytest.LogCaptureFixture) -> None:
    result = read(variant(tmp_path, {VML: change}))
    assert previews(result) == []
    assert result.skipped["legacy_drawings_unreadable"] == 1
    assert reason in caplog.text and VML in caplog.text
    assert "Словарь" in [block.text for block in result.blocks]  # the sheet is read


def test_drawing_over_the_size_limit_is_skipped(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sheet_vml, "MAX_BYTES", 4096)  # the fixture's drawing is 4,872 bytes
    result = read(FILE)
    assert previews(result) == []
    assert result.skipped["legacy_drawings_unreadable"] == 1


def test_mutated_drawings_never_crash(tmp_path: Path) -> None:
    """The real drawing and its relationships overwritten at random places (fixed seed): the
    sheet is read every time, the drawing's pictures or as many as are left."""
    rng = random.Random(40)
    with zipfile.ZipFile(FILE) as archive:
        sources = {VML: archive.read(VML), VML_RELS: archive.read(VML_RELS)}
    read_whole = 0
    for round_ in range(60):
        part = [VML, VML_RELS][round_ % 2]
        blob = bytearray(sources[part])
        for _ in range(rng.randint(1, 6)):
            at = rng.randrange(len(blob))
            blob[at:at + 3] = rng.choice([b"<", b'"', b"\x00\xff", b"rId", rng.randbytes(3)])
        result = read(variant(tmp_path, {part: replaced(bytes(blob))}))
        read_whole += previews(result) == PREVIEWS
        assert "Словарь" in [block.text for block in result.blocks]  # the sheet is read
    assert 0 < read_whole < 60


def test_numbers_int_refuses_are_no_crash(tmp_path: Path) -> None:
    """A row or column number that str.isdigit accepts and int refuses ("²", 5,000 digits) in
    a drawing's anchor or a column range: the sheet is read, the object keeps a place."""
    many = b"9" * 5_000

    def rows(data: bytes) -> bytes:
        return data.replace(b'<col min="1" max="1"', b'<col min="1" max="' + many + b'"', 1)

    def anchors(data: bytes) -> bytes:
        return data.replace(b"<xdr:row>17</xdr:row>", "<xdr:row>²</xdr:row>".encode(), 1).replace(
            b"<xdr:row>24</xdr:row>", b"<xdr:row>" + many + b"</xdr:row>", 1)

    result = read(variant(tmp_path, {"xl/worksheets/sheet1.xml": rows,
                                     "xl/drawings/drawing1.xml": anchors}))
    assert "Луғат" in [block.text for block in result.blocks]
    assert sorted(previews(result)) == sorted(PREVIEWS)
