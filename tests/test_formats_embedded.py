"""Documents embedded in Office files (OLE objects) are read as sections of the file holding
them (ingest.parse.embedded), on Apache Tika's public testWPSAttachment files (made by Kingsoft
WPS: a .doc, .xls and .ppt each embedding a .txt, .pdf, .xml, .doc, .docx, .xls, .xlsx, .ppt
and .pptx; bench/format_corpus/PROVENANCE.md)."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from email.message import EmailMessage
from pathlib import Path

import olefile
import pytest

from ingest.chunk import chunk_document
from ingest.models import ParsedDocument
from ingest.parse import parse_document, read_meta
from ingest.parse.cfb import MAX_CFB_BYTES, write_cfb
from ingest.parse.convert import convert
from ingest.parse.embedded import _ppt_objects

TIKA = Path(__file__).parents[1] / "bench" / "format_corpus" / "tika"
# the one text line of each embedded file
CONTENTS = ["txt_content", "pdf_content", "doc_content", "docx_content", "xls_content",
            "xlsx_content", "ppt_content", "pptx_content"]


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def text_of(doc: ParsedDocument) -> str:
    return "\n".join(block.text for block in doc.blocks)


@pytest.mark.parametrize("suffix", [".doc", ".xls", ".ppt"])
def test_documents_embedded_in_legacy_office_files_are_read_as_sections(suffix: str) -> None:
    doc = parse(TIKA / f"testWPSAttachment{suffix}")
    text = text_of(doc)
    assert all(line in text for line in CONTENTS), text
    assert "附件:TXT.txt" in text and "附件:PDF.pdf" in text  # a packaged file keeps its name
    assert doc.report.attachments == 8
    assert doc.report.skipped["embedded_not_documents"] == 1  # the .xml: no format kbflow reads


@pytest.mark.parametrize("suffix", [".doc", ".xls", ".ppt"])
def test_every_embedded_documents_text_reaches_a_chunk(suffix: str) -> None:
    """The embedded .ppt and .pptx are one slide holding only its title ("ppt_content"): the
    title is that slide's text, so a chunk holds it (a heading alone heads nothing)."""
    chunks = chunk_document(parse(TIKA / f"testWPSAttachment{suffix}"))
    texts = "\n".join(c.text for c in chunks)
    assert [line for line in CONTENTS if line not in texts] == []


def test_documents_embedded_in_an_ooxml_package_are_read(tmp_path: Path) -> None:
    """LibreOffice's .docx of the .doc keeps six of its objects as word/embeddings parts:
    OLE compound files (packaged files, a PowerPoint 97 deck) and OOXML files as they are
    (it drops the Word ones)."""
    path = tmp_path / "objects.docx"
    path.write_bytes(convert((TIKA / "testWPSAttachment.doc").read_bytes(), ".doc", "docx"))
    doc = parse(path)
    kept = [line for line in CONTENTS if not line.startswith("doc")]
    assert all(line in text_of(doc) for line in kept), text_of(doc)
    assert doc.report.attachments == 6


def test_an_attachments_embedded_documents_are_counted_not_read(tmp_path: Path) -> None:
    """Depth 1: a mail's attached workbook is read, the documents inside it are not."""
    message = EmailMessage()
    message["Subject"] = "对象附件"
    message.set_content("见附件。")
    message.add_attachment((TIKA / "testWPSAttachment.xls").read_bytes(),
                           maintype="application", subtype="vnd.ms-excel",
                           filename="objects.xls")
    path = tmp_path / "objects.eml"
    path.write_bytes(bytes(message))
    doc = parse(path)
    assert "附件:objects.xls" in text_of(doc)
    assert not any(line in text_of(doc) for line in CONTENTS)
    assert doc.report.skipped["embedded_too_deep"] == 1


def test_a_written_compound_file_reads_back_stream_for_stream() -> None:
    """Mini-stream and regular-sector streams, a name order the directory tree must keep."""
    streams = {"WordDocument": bytes(range(256)) * 40, "1Table": b"t" * 4095, "Data": b"",
               "\x05SummaryInformation": b"s" * 100, "B": b"b" * 4096, "a": b"a" * 1}
    with olefile.OleFileIO(write_cfb(streams)) as ole:
        assert sorted(path[0] for path in ole.listdir()) == sorted(streams)
        for name, data in streams.items():
            assert ole.openstream(name).read() == data


def test_a_compressed_powerpoint_object_unpacks_no_further_than_its_cap() -> None:
    """A zlib bomb in an ExOleObjStg record: 64 MB of zeros in 64 KB stop at the cap."""
    bomb = zlib.compress(b"\0" * (64 << 20), 9)
    record = struct.pack("<HHII", 0x10, 0x1011, len(bomb) + 4, 64 << 20) + bomb
    (name, blob), = _ppt_objects(record, 100 << 20)
    assert name == "object1" and len(blob) == MAX_CFB_BYTES + 1


def test_a_damaged_embedded_object_is_counted_and_the_file_still_reads(tmp_path: Path) -> None:
    """LibreOffice's .docx of Tika's .doc with one embedded compound file cut short."""
    source = convert((TIKA / "testWPSAttachment.doc").read_bytes(), ".doc", "docx")
    damaged = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(source)) as old, zipfile.ZipFile(damaged, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename.endswith("oleObject1.bin"):
                data = data[:700]  # a header and a few sectors of the compound file
            new.writestr(info, data)
    path = tmp_path / "damaged.docx"
    path.write_bytes(damaged.getvalue())
    doc = parse(path)
    assert doc.report.skipped["embedded_unreadable"] == 1
    assert "pdf_content" in text_of(doc) and "xlsx_content" in text_of(doc)
