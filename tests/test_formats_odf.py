"""What an OpenDocument file shows beyond what LibreOffice's conversion keeps as saved: documents
embedded in it as objects (ingest.parse.embedded), read from real files made by OpenOffice/
LibreOffice (odfpy's and the ODF Toolkit's test documents, bench/format_corpus/PROVENANCE.md),
and the values a spreadsheet's volatile formulas and a text's volatile fields had when the file
was saved (ingest.parse.stored_results, ingest.parse.odf_prepare), on files LibreOffice writes
here."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import zipfile
from datetime import date
from html import escape
from pathlib import Path

import docx
import openpyxl
import pytest
from docx.oxml import parse_xml

from ingest.chunk import chunk_document
from ingest.models import ParsedDocument
from ingest.parse import parse_document, read_meta
from ingest.parse.convert import convert
from ingest.parse.odf_prepare import prepared
from ingest.parse.result import ParseLimits
from ingest.parse.spreadsheet import parse_xlsx

pytestmark = pytest.mark.skipif(shutil.which("soffice") is None,
                                reason="LibreOffice is installed by `make test` (engines.sh)")

CORPUS = Path(__file__).parents[1] / "bench" / "format_corpus"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


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
    """A billion-laughs object part: never unpacked by kbflow, the deck's own text is read (the
    object's preview picture, drawn on the slide, is read as a picture like any other)."""
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
    assert not [b for b in doc.blocks if b.text.startswith("附件")]
    assert doc.report.attachments == 0
    assert doc.report.skipped["embedded_unreadable"] == 1


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An .ods LibreOffice wrote (from an openpyxl workbook) with TODAY() in a date cell and in
    a text formula; LibreOffice stores the day of writing in both."""
    folder = tmp_path_factory.mktemp("ods")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "台账"
    sheet.append(["项目", "日期", "金额"])
    sheet.append(["核对日", "=TODAY()", 100])
    sheet.append(["合计", '=TEXT(TODAY(),"yyyy年m月d日")', "=C2*2"])
    sheet["B2"].number_format = "yyyy-mm-dd"
    workbook.save(folder / "ledger.xlsx")
    subprocess.run(["soffice", f"-env:UserInstallation={(folder / '.profile').as_uri()}",
                    "--headless", "--norestore", "--convert-to", "ods", "--outdir", str(folder),
                    str(folder / "ledger.xlsx")], check=True, capture_output=True, timeout=300)
    return folder / "ledger.ods"


def saved_on(ods: Path, day: str, chinese: str, out: Path) -> Path:
    """The .ods as if saved on `day`: the stored results of its TODAY() cells set to it."""
    today = date.today()
    with zipfile.ZipFile(ods) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "content.xml":
                assert today.isoformat().encode() in data
                data = data.replace(today.isoformat().encode(), day.encode()).replace(
                    f"{today.year}年{today.month}月{today.day}日".encode(), chinese.encode())
            target.writestr(info, data)
    return out


def test_volatile_formulas_of_an_ods_show_what_was_saved_not_the_day_read(
        ledger: Path, tmp_path: Path) -> None:
    doc = parse(saved_on(ledger, "2006-12-07", "2006年12月7日", tmp_path / "ledger.ods"))
    text = chunk_text(doc)
    assert "日期: 2006-12-07" in text and "日期: 2006年12月7日" in text, text
    assert "金额: 200" in text  # an ordinary formula keeps its (same) value
    assert date.today().isoformat() not in text


def test_an_unreadable_stored_value_leaves_libreoffices_values(
        ledger: Path, tmp_path: Path) -> None:
    doc = parse(saved_on(ledger, "not a date", "2006年12月7日", tmp_path / "odd.ods"))
    text = chunk_text(doc)
    assert "项目: 合计" in text and "金额: 200" in text
    assert "2006年12月7日" not in text  # the whole overlay is dropped, not half applied


def test_an_odts_date_and_file_name_fields_keep_what_was_saved(tmp_path: Path) -> None:
    """A .docx with DATE, FILENAME and AUTHOR fields, written as .odt by LibreOffice (which
    stores the day of writing and the name it read), its stored day then set to 2006-12-07:
    the conversion shows neither its own day nor its temporary file name."""
    document = docx.Document()
    document.core_properties.author = "张三"
    for label, instruction, shown in (("编制日期：", 'DATE \\@ "yyyy-MM-dd"', "2006-12-07"),
                                      ("文件名：", "FILENAME", "采购办法.docx"),
                                      ("编制人：", "AUTHOR", "张三")):
        paragraph = document.add_paragraph(label)
        paragraph._p.append(parse_xml(
            f'<w:fldSimple xmlns:w="{W}" w:instr="{escape(instruction, quote=True)}">'
            f"<w:r><w:t>{shown}</w:t></w:r></w:fldSimple>"))
    document.save(tmp_path / "fields.docx")
    subprocess.run(["soffice", f"-env:UserInstallation={(tmp_path / '.profile').as_uri()}",
                    "--headless", "--norestore", "--convert-to", "odt", "--outdir",
                    str(tmp_path), str(tmp_path / "fields.docx")], check=True,
                   capture_output=True, timeout=300)
    today = date.today().isoformat()
    with zipfile.ZipFile(tmp_path / "fields.odt") as source, \
            zipfile.ZipFile(tmp_path / "saved.odt", "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "content.xml":
                assert today.encode() in data and b"<text:file-name" in data
                data = data.replace(today.encode(), b"2006-12-07")
            target.writestr(info, data)
    text = "\n".join(b.text for b in parse(tmp_path / "saved.odt").blocks)
    assert "编制日期:2006-12-07" in text and "文件名:fields.docx" in text, text
    assert "编制人:张三" in text
    assert today not in text and "document.odt" not in text


def test_a_sheets_empty_styled_tail_is_not_written_out_and_nothing_changes() -> None:
    """ODF Toolkit's ST_Formulas.ods ends in an empty row repeated 65,535 times: LibreOffice
    wrote 13 MB of empty xlsx rows for it. Prepared, the same blocks come from a sheet of a few
    kilobytes."""
    data = (CORPUS / "odftoolkit" / "ST_Formulas.ods").read_bytes()
    sheets = []
    for source in (data, prepared(data)):
        xlsx = convert(source, ".ods", "xlsx")
        with zipfile.ZipFile(io.BytesIO(xlsx)) as archive:
            size = sum(i.file_size for i in archive.infolist() if "worksheets/" in i.filename)
        # the sheet's NOW() is recalculated by each conversion: its minute may roll between two
        texts = [re.sub(r"\b\d{1,2}:\d{2}\b", "h:mm", b.text)
                 for b in parse_xlsx(xlsx, ParseLimits()).blocks]
        sheets.append((size, texts))
    (before, blocks), (after, same) = sheets
    assert after * 100 < before
    assert same == blocks and len(blocks) > 20
