"""Losses found on held-out public files (issue #40; bench/format_corpus/PROVENANCE.md): a deck
PHPPresentation wrote with one broken master (a Word file broken the same way), a bounce whose
delivery report held the reason, an Excel form whose check boxes' labels sat in Markup
Compatibility blocks, Strict Open XML files. Each is read from the real file its own project's
tests use."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import ParseError, parse_document, read_meta
from ingest.parse.convert import transitional
from ingest.parse.number_format import shown_number

CORPUS = Path(__file__).parents[1] / "bench" / "format_corpus"
DECK = CORPUS / "phppresentation" / "Sample_01_Simple.pptx"
MASTER = "ppt/slideMasters/slideMaster1.xml"


def parse(path: Path, data: bytes | None = None) -> ParsedDocument:
    meta, read = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, read if data is None else data)


def texts(doc: ParsedDocument) -> list[str]:
    return [block.text for block in doc.blocks]


def with_part(path: Path, name: str, content: bytes) -> bytes:
    """The package at `path` with part `name` replaced."""
    out = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        for member in source.infolist():
            target.writestr(member, content if member.filename == name else source.read(member))
    return out.getvalue()


def test_a_deck_with_a_broken_master_keeps_its_slides_and_counts_the_repair() -> None:
    with zipfile.ZipFile(DECK) as archive:  # the master really is broken: `<p:nvSpPr` has no `>`
        assert b"<p:nvSpPr\n" in archive.read(MASTER).replace(b"\r\n", b"\n")
    doc = parse(DECK)
    assert "Thank you for using PHPPowerPoint!" in texts(doc)
    assert doc.report.skipped["parts_repaired"] == 1


def test_a_deck_whose_broken_part_cannot_be_recovered_fails_with_its_reason() -> None:
    data = with_part(DECK, MASTER, b"\x00\x01 not xml at all")
    with pytest.raises(ParseError, match="not a readable PPTX file"):
        parse(DECK, data)


def test_a_word_file_with_a_broken_header_keeps_its_body() -> None:
    """PHPWord's sample with its header broken as PHPPresentation's master is (a start tag
    missing its `>`): the body is read, the part counted as repaired."""
    source = CORPUS / "phpword" / "Sample_11_ReadWord2007.docx"
    with zipfile.ZipFile(source) as archive:
        header = archive.read("word/header1.xml")
    data = with_part(source, "word/header1.xml", header.replace(b"<w:pPr>", b"<w:pPr", 1))
    doc = parse(source, data)
    assert "It can read track changes." in texts(doc)
    assert doc.report.skipped["parts_repaired"] == 1
    assert "parts_repaired" not in parse(source).report.skipped


def test_a_well_formed_deck_is_not_rewritten() -> None:
    doc = parse(CORPUS / "phppresentation" / "PPTX_ChartBar.pptx")
    assert "parts_repaired" not in doc.report.skipped
    assert "Lorem ipsum" in texts(doc)


def test_a_bounce_reads_its_delivery_report_and_the_returned_mail_once() -> None:
    doc = parse(CORPUS / "mailparser" / "delivery-status.eml")
    lines = texts(doc)
    assert "Action: failed" in lines
    assert "Final-Recipient: rfc822; xxxx@xxxx.com" in lines
    reason = next(line for line in lines if line.startswith("Diagnostic-Code: "))
    assert "it is on the suppression list for your account" in reason
    # the report is body text before the returned mail, not an unreadable "attachment"
    assert lines.index("Action: failed") < lines.index("附件:attachment.eml")
    headings = [b.text for b in doc.blocks if b.kind == BlockKind.HEADING]
    assert headings.count("附件:attachment.eml") == 1
    assert "test email" in lines
    assert "attachments_unreadable" not in doc.report.skipped


def test_form_controls_in_markup_compatibility_blocks_are_read_once() -> None:
    workbook = CORPUS / "phpspreadsheet" / "formscomments.xlsx"
    with zipfile.ZipFile(workbook) as archive:  # each check box is inside mc:AlternateContent
        drawing = archive.read("xl/drawings/drawing3.xml")
    assert drawing.count(b"<mc:AlternateContent") == 27
    lines = texts(parse(workbook))
    for label in ("SIM Swap", "Username Change", "Unlatch", "Remove Bolt On Code"):
        assert lines.count(label) == 1, label


def test_a_mail_saved_with_a_utf8_byte_order_mark_is_read_with_its_abuse_report() -> None:
    """MimeKit's ARF abuse report starts with a UTF-8 BOM (as Notepad and .NET save text): it
    failed as "no header lines"; its message/feedback-report fields are body text."""
    path = CORPUS / "mimekit" / "feedback-report.eml"
    assert path.read_bytes().startswith(b"\xef\xbb\xbfFrom: ")
    doc = parse(path)
    lines = texts(doc)
    assert doc.meta.title == "FW: Earn money"
    assert "Feedback-Type: abuse" in lines
    assert "Reported-Uri: http://example.net/earn_money.html" in lines
    assert "Spam Spam Spam" in lines  # the reported mail, attached
    assert "attachments_unreadable" not in doc.report.skipped


def test_strict_open_xml_files_are_read_through_libreoffice() -> None:
    """ISO/IEC 29500 Strict ("Strict Open XML Document" in Office's Save As): python-docx,
    python-pptx and openpyxl know only the transitional namespaces, so mammoth.js's
    strict-format.docx failed ("no relationship of type …officeDocument") and Apache POI's
    SampleSS.strict.xlsx (Excel) was "no text found". LibreOffice reads Strict: both are read
    through its transitional copy; a transitional file is not converted."""
    word = parse(CORPUS / "mammoth" / "strict-format.docx")
    assert texts(word) == ["Test"]
    sheet = parse(Path(__file__).parent / "fixtures" / "formats" / "SampleSS.strict.xlsx")
    text = "\n".join(texts(sheet))
    for shown in ("First Sheet", "Test spreadsheet", "This one is red", "Sheet Number 2",
                  "I'm in bold blue, on a yellow background"):
        assert shown in text, shown
    plain = (CORPUS / "mammoth" / "tables.docx").read_bytes()
    assert transitional(plain, "docx") is plain


def test_an_excel_binary_workbook_is_read_through_libreoffice() -> None:
    """Excel's binary workbook (.xlsb, "Excel Binary Workbook" in Save As) was refused as an
    unsupported file type: calamine's any_sheets.xlsb failed in the bench. LibreOffice reads
    it: calamine's issues.xlsb (saved by Excel) keeps its sheets' names and cells; an .xlsb
    that is no zip is refused with the reason, as any Office package is."""
    path = Path(__file__).parent / "fixtures" / "formats" / "issues.xlsb"
    doc = parse(path)
    text = "\n".join(texts(doc))
    for shown in ("datatypes", "1.5", "test", "10/20/2016", "issue2", "spc_chrs", "aaa ' aaa",
                  "àâéêèçöïî«»", "☺"):
        assert shown in text, shown
    with pytest.raises(ParseError, match="not a XLSB file"):
        parse(path, b"this is no workbook at all, only a line of text")


def test_a_number_format_without_a_whole_digit_shows_no_leading_zero() -> None:
    """Excel's "#" and "." formats: "#.0" or ".0" require no digit before the point, so 0.5
    shows ".5". The whole part was read as "0" and rounded away from the fraction: calamine's
    biff5-rich-text-string.xls (a 1900s voters' roll) showed the qualification 0.5 under ".0"
    as ".0" (Tika and LibreOffice: ".5"), and 1.5 would have read ".2"."""
    doc = parse(CORPUS / "calamine" / "biff5-rich-text-string.xls")
    assert "Qualification.: .5" in "\n".join(texts(doc))
    assert [shown_number(v, c) for v, c in ((0.5, ".0"), (1.5, ".0"), (0.25, "#,###.00"),
                                            (-0.5, "#.0"), (0.5, "0.0"), (12.5, "#,##0.0"))] \
        == [".5", "1.5", ".25", "-.5", "0.5", "12.5"]
