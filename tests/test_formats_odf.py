"""What an OpenDocument file shows beyond its own text: documents embedded in it as objects
(ingest.parse.embedded), read from real files made by OpenOffice/LibreOffice (odfpy's and the
ODF Toolkit's test documents, bench/format_corpus/PROVENANCE.md)."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import pytest

from ingest.chunk import chunk_document
from ingest.models import ParsedDocument
from ingest.parse import parse_document, read_meta

pytestmark = pytest.mark.skipif(shutil.which("soffice") is None,
                                reason="LibreOffice is installed by `make test` (engines.sh)")

CORPUS = Path(__file__).parents[1] / "bench" / "format_corpus"


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def chunk_text(doc: ParsedDocument) -> str:
    return "\n".join(c.text for c in chunk_document(doc))


def test_a_spreadsheet_embedded_in_a_deck_is_read_as_a_section_with_its_rows() -> None:
    """odfpy's emb_spreadsheet.odp: one slide showing a Calc object (a 3 x 3 table)."""
    doc = parse(CORPUS / "odfpy" / "emb_spreadsheet.odp")
    text = chunk_text(doc)
    assert "Embedded Spreadsheet" in "\n".join(b.text for b in doc.blocks)
    for row in ("col1: val11; col2: val21; col3: val31", "col1: val13; col2: val23; col3: val33"):
        assert row in text, text
    assert doc.report.attachments == 1


def test_a_text_object_is_read_and_charts_are_not_read_twice() -> None:
    """SlideTest2.odp holds a Writer object; presentationWithEmbedDoc.odp two chart objects,
    which LibreOffice turns into the deck's charts (read there), so they are no attachment."""
    text_object = parse(CORPUS / "odftoolkit" / "SlideTest2.odp")
    assert "Text Properties" in chunk_text(text_object)
    assert text_object.report.attachments == 1
    charts = parse(CORPUS / "odftoolkit" / "presentationWithEmbedDoc.odp")
    assert "Column 1: Row 1 9.1; Row 2 2.4" in chunk_text(charts)
    assert charts.report.attachments == 0
    assert not any(key.startswith("embedded") for key in charts.report.skipped)


def test_an_object_declaring_a_dtd_is_counted_and_the_deck_still_read(tmp_path: Path) -> None:
    """A billion-laughs object part: never unpacked by kbflow, the deck's own text is read."""
    source = CORPUS / "odfpy" / "emb_spreadsheet.odp"
    hostile = io.BytesIO()
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(hostile, "w") as out:
        for info in original.infolist():
            data = original.read(info)
            if info.filename == "Object 1/content.xml":
                data = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                        b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>' + data.split(b"?>", 1)[1])
            out.writestr(info, data)
    path = tmp_path / "laughs.odp"
    path.write_bytes(hostile.getvalue())
    doc = parse(path)
    assert "Embedded Spreadsheet" in "\n".join(b.text for b in doc.blocks)
    assert "val11" not in "\n".join(b.text for b in doc.blocks)
    assert doc.report.skipped["embedded_unreadable"] == 1

