"""bench/format_visible.py: the visible reference keeps what LibreOffice shows of a real Word
file (text, a picture's text) and leaves out what it does not (hidden text, the core title);
exclusions are placed where Tika's XHTML puts them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import docx
import openpyxl
import pymupdf
import pytest
from PIL import Image, ImageDraw, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package
from bench import format_visible
from bench.format_public import squeeze

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")


def word_file(folder: Path) -> Path:
    picture = Image.new("RGB", (1400, 140), "white")
    ImageDraw.Draw(picture).text((20, 30), "QUARTERLY 4821 BUDGET", fill="black",
                                 font=ImageFont.truetype(str(FONT), 64))
    picture.save(folder / "banner.png")
    document = docx.Document()
    document.core_properties.title = "Core properties title"
    document.add_paragraph("The committee approved the travel policy on Monday.")
    document.add_paragraph().add_run("Hidden reviewer instruction never shown").font.hidden = True
    document.add_picture(str(folder / "banner.png"), width=docx.shared.Inches(5))
    path = folder / "policy.docx"
    document.save(str(path))
    return path


needs_tools = pytest.mark.skipif(
    shutil.which("soffice") is None or shutil.which("tesseract") is None or not FONT.exists(),
    reason="needs LibreOffice, Tesseract and DejaVu")


@needs_tools
def test_the_rendering_shows_text_and_pictures_not_hidden_text_or_the_title(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(format_visible, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(format_visible, "RENDERED", tmp_path / "cache" / "rendered")
    path = word_file(tmp_path)
    shown = format_visible.rendered_texts([("c", path)])[path]
    assert shown is not None
    wanted = ["approved the travel policy", "QUARTERLY 4821 BUDGET",
              "Hidden reviewer instruction", "Core properties title"]
    kept, excluded = format_visible.split(wanted, shown, squeeze)
    assert kept == wanted[:2] and excluded == wanted[2:]
    assert (tmp_path / "cache" / ".gitignore").read_text() == "*\n"
    # cached: read back without LibreOffice; stale once the file changes
    assert format_visible.rendered_texts([("c", path)])[path] == shown
    path.write_bytes(path.read_bytes() + b"\0")
    assert format_visible._cached(format_visible._rendered_path("c", path), path) is None


@needs_tools
def test_a_picture_inside_a_file_is_judged_by_what_a_person_reads_in_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    monkeypatch.setattr(format_visible, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(format_visible, "RENDERED", tmp_path / "cache" / "rendered")
    path = word_file(tmp_path)
    wanted = ["approved the travel policy", "QUARTERLY 4821", "ANNUAL 4821 BUDGET"]
    # nobody read the banner: Tesseract's reading of it stands, and the run names it
    tesseract = format_visible.rendered_texts([("c", path)])[path] or ""
    key = format_visible.picture_key(pymupdf.Pixmap(str(tmp_path / "banner.png")))
    assert f"c/policy.docx: picture {key} not read by a person" in capsys.readouterr().out
    assert format_visible.split(wanted, tesseract, squeeze)[0] == wanted[:2]
    # read by a person (here, on purpose, otherwise than Tesseract): the reading stands
    # instead, keyed by the picture's pixels whichever way the PDF stores them
    read = {"pictures": {}, "readings": {}, "not_text": {}, "in_files": {"c/policy.docx": {
        key: {"lines": ["ANNUAL 4821 BUDGET"], "note": "a banner"}}}}
    (tmp_path / "read.json").write_text(json.dumps(read), "utf-8")
    monkeypatch.setattr(format_visible, "READ_BY_HAND", tmp_path / "read.json")
    shown = format_visible.rendered_texts([("c", path)])[path] or ""
    assert format_visible.split(wanted, shown, squeeze) == (
        ["approved the travel policy", "ANNUAL 4821 BUDGET"], ["QUARTERLY 4821"])
    # a phrase is not matched across the page's text and the picture's
    assert format_visible.split(["policy on Monday ANNUAL"], shown, squeeze)[0] == []
    assert "picture " not in shown and capsys.readouterr().out == ""


@needs_tools
def test_a_cell_the_printed_page_clips_is_shown_whole_and_empty_sheets_are_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(format_visible, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(format_visible, "RENDERED", tmp_path / "cache" / "rendered")
    book = openpyxl.Workbook()
    book.remove(book.worksheets[0])
    sheet = book.create_sheet("Budget")
    sheet["A1"] = "Travel costs approved by the finance committee in March"
    sheet["B1"] = 4821  # filled: the page clips A1 at the column's edge
    book.create_sheet("Staffing")["A1"] = "Headcount"
    book.create_sheet("Unused")
    path = tmp_path / "budget.xlsx"
    book.save(path)
    shown = format_visible.rendered_texts([("c", path)])[path]
    assert shown is not None
    wanted = ["approved by the finance committee in March", "4821", "Budget", "Staffing",
              "Unused"]
    kept, excluded = format_visible.split(wanted, shown, squeeze)
    assert kept == wanted[:4] and excluded == ["Unused"]


TIKA_LIKE = """<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml">
<head><meta name="dc:title" content="x"/><title>PowerPoint Presentation</title></head>
<body><div class="slide-content"><p>My Bar Chart</p></div>
<div class="slide-master-content"><p>Click to add title</p></div>
Sales 1st Qtr 8.2<p/>
<div class="package-entry"><h1>Microsoft_Excel_Worksheet1.xlsx</h1>
<table><tr><td>To resize chart data range</td></tr></table></div>
<div class="embedded" id="/docProps/thumbnail.jpeg"/>
<div class="ocr">Thumbnail words</div>
<p class="notes">Speaker <b>reminder</b> text</p>
</body></html>"""


def test_an_excluded_phrase_is_placed_where_tika_puts_it() -> None:
    by_kind = format_visible.kinds(TIKA_LIKE, squeeze)
    where = {phrase: format_visible.place(phrase, by_kind, squeeze) for phrase in (
        "PowerPoint Presentation", "Click to add title", "Worksheet1.xlsx",
        "resize chart data", "Thumbnail words", "Speaker reminder text", "Sales 1st Qtr",
        "My Bar Chart Click")}
    assert where == {
        "PowerPoint Presentation": "metadata title", "Click to add title": "master slide",
        "Worksheet1.xlsx": "embedded object", "resize chart data": "embedded object",
        "Thumbnail words": "picture OCR", "Speaker reminder text": "notes",
        "Sales 1st Qtr": "body",  # text directly in <body>, and a tail after a slide's div
        "My Bar Chart Click": "unplaced"}  # spans a slide and its master


def test_the_exclusion_table_counts_by_format_and_place() -> None:
    rows = [(".doc", "body", False), (".doc", "metadata title", True),
            (".pptx", "embedded object", False), (".pptx", "embedded object", True)]
    table = format_visible.exclusion_table(rows)
    assert table[2].startswith("| .doc* | 2 | 1 | 1 | 0 |") and table[2].endswith("| 1 |")
    assert table[3].startswith("| .pptx | 2 | 0 | 0 | 2 |")
    assert table[4].startswith("| **all** | 4 | 1 | 1 | 2 |") and table[4].endswith("| 2 |")


MAIL_XHTML = """<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Quarterly figures</title>
</head><body><dl><dt>From</dt><dd>Li Wei</dd><dt>Recipients</dt><dd>li@example.com</dd></dl>
<p>See the scan attached.</p><div class="package-entry"><h1>scan.png</h1>
<div class="ocr">Qnarterly tota1s 4821</div>Signed off by finance.</div></body></html>"""


def test_a_mail_keeps_tikas_text_less_its_ocr_plus_what_a_person_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert format_visible.without_ocr(MAIL_XHTML).split() == [
        "Quarterly", "figures", "From", "Li", "Wei", "Recipients", "li@example.com", "See",
        "the", "scan", "attached.", "scan.png", "Signed", "off", "by", "finance."]
    mail = tmp_path / "report.msg"
    mail.write_bytes(b"a mail")
    monkeypatch.setattr(format_visible, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(format_visible, "XHTML_CACHE", tmp_path / "cache" / "xhtml")
    format_visible._store(format_visible._xhtml_path(mail), mail, MAIL_XHTML)  # as Tika gave it
    read = {"pictures": {}, "readings": {}, "not_text": {}, "in_files": {"c/report.msg": {
        "scan.png": {"lines": ["Quarterly totals 4821"], "note": "a scanned table"}}}}
    (tmp_path / "read.json").write_text(json.dumps(read), "utf-8")
    monkeypatch.setattr(format_visible, "READ_BY_HAND", tmp_path / "read.json")
    shown = format_visible.rendered_texts([("c", mail)], tmp_path / "tika.jar")[mail] or ""
    wanted = ["Quarterly figures", "Quarterly totals 4821", "Qnarterly tota1s 4821",
              "Signed off by finance", "Recipients"]
    kept, excluded = format_visible.split(wanted, shown, squeeze,
                                          format_visible.not_text("c", mail))
    # Tika's Recipients label is not in the mail Outlook shows; a .eml has no such label
    assert kept == ["Quarterly figures", "Quarterly totals 4821", "Signed off by finance"]
    assert excluded == ["Qnarterly tota1s 4821", "Recipients"]
    assert "Recipients" not in format_visible.not_text("c", tmp_path / "report.eml")
    # without Tika's jar (or an entry) the file is not judged here: it keeps all its phrases
    assert mail not in format_visible.rendered_texts([("c", mail)])


def by_hand(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-by-hand file like bench/format_visible_read.json, and the audit file, in `folder`."""
    read = {"pictures": {"c/scan.jpg": {"lines": ["Invoice #: 123", "油脂分泌过多、外油内干"]}},
            "readings": {"c/scan.jpg": {"油脂分池过多": "油脂分泌过多 (泌, not 池)"}},
            "not_text": {"c/deck.pptx": {"Ada i yrep": "Tesseract's English reading of a "
                                                       "Greek manuscript photograph"}}}
    (folder / "read.json").write_text(json.dumps(read, ensure_ascii=False), "utf-8")
    monkeypatch.setattr(format_visible, "READ_BY_HAND", folder / "read.json")
    monkeypatch.setattr(format_visible, "EXCLUDED", folder / "excluded.md")


def test_a_picture_keeps_the_phrases_its_transcription_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    by_hand(tmp_path, monkeypatch)
    picture, other = tmp_path / "scan.jpg", tmp_path / "photo.png"
    shown = format_visible.rendered_texts([("c", picture), ("c", other)])
    assert other not in shown  # not read by hand: keeps all of Tika's phrases
    wanted = ["Invoice # 123", "油脂分池过多", "分泌过多、外油", "Bill Ta"]
    kept, excluded = format_visible.split(wanted, shown[picture] or "", squeeze)
    assert kept == ["Invoice # 123", "分泌过多、外油"] and excluded == ["油脂分池过多", "Bill Ta"]


def test_a_phrase_listed_as_not_text_is_left_out_though_the_rendering_shows_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    by_hand(tmp_path, monkeypatch)
    listed = format_visible.not_text("c", tmp_path / "deck.pptx")
    rendering = "Euclid's Elements\nAda i yrep dompriy"
    kept, excluded = format_visible.split(["Euclid's Elements", "Ada i yrep"], rendering,
                                          squeeze, listed)
    assert kept == ["Euclid's Elements"] and excluded == ["Ada i yrep"]
    assert format_visible.not_text("c", tmp_path / "other.pptx") == {}


def test_the_audit_says_what_the_picture_shows_and_a_partial_run_keeps_other_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    by_hand(tmp_path, monkeypatch)
    format_visible.write_excluded([("a/x.doc", "hidden | text", False, "body"),
                                   ("c/scan.jpg", "stale row", False, "picture OCR")])
    format_visible.write_excluded([("c/scan.jpg", "油脂分池过多", False, "picture OCR"),
                                   ("c/deck.pptx", "Ada i yrep", False, "picture OCR")], ["c"])
    lines = (tmp_path / "excluded.md").read_text("utf-8").splitlines()
    assert lines[0].startswith("# Phrases left out") and lines.count(lines[0]) == 1
    assert lines[6:] == [
        "| a/x.doc | hidden \\| text | body | no |",
        "| c/deck.pptx | Ada i yrep | picture OCR; read by hand: Tesseract's English reading "
        "of a Greek manuscript photograph | no |",
        "| c/scan.jpg | 油脂分池过多 | picture OCR; read by hand: 油脂分泌过多 (泌, not 池) | no |"]


def test_every_picture_of_the_bench_is_read_by_hand_and_every_entry_names_a_file() -> None:
    read = json.loads(format_visible.READ_BY_HAND.read_text("utf-8"))
    corpus = format_visible.BENCH / "format_corpus"
    pictures = {f"{p.parent.name}/{p.name}" for p in corpus.glob("*/*")
                if p.suffix.lower() in {".jpg", ".jpeg", ".png"}}
    assert pictures and pictures <= set(read["pictures"]) and all(  # and scanned pages
        (corpus / name).is_file() for name in read["pictures"])
    assert all(entry["lines"] and entry["note"] for entry in read["pictures"].values())
    named = (set(read["readings"]) | set(read["not_text"]) | set(read["in_files"])
             | set(read["documents"]))
    assert all((corpus / name).is_file() for name in named)
    assert all(entry["lines"] and entry["note"] for entry in read["documents"].values())
    inside = [entry for pictures in read["in_files"].values() for entry in pictures.values()]
    assert inside and all(isinstance(entry["lines"], list) and entry["note"] and entry["where"]
                          for entry in inside)


def test_a_file_tika_prints_nothing_of_is_measured_on_a_persons_reading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tika prints nothing of a Microsoft Works file: the reading in `documents` is its
    reference and its visible reference, without rendering it; a file Tika reads keeps Tika's
    text, and a blank file nobody read stays blank."""
    from bench.format_public import phrases

    monkeypatch.setattr(format_visible, "RENDERED", tmp_path / "rendered")
    works = format_visible.BENCH / "format_corpus" / "tika" / "testWORKS.wps"
    sentence = "This is an example document made with Microsoft Works Word Processor 7.0"
    assert format_visible.reference_text("tika", works, "\n \n") == sentence
    assert format_visible.reference_text("tika", works, "Tika's text") == "Tika's text"
    assert format_visible.reference_text("tika", works.with_name("other.wps"), " ") == " "
    wanted = phrases(format_visible.reference_text("tika", works, ""), works.name)
    assert len(wanted) == 1 and squeeze(wanted[0]) in squeeze(sentence)
    shown = format_visible.rendered_texts([("tika", works)])
    assert shown == {works: sentence} and not (tmp_path / "rendered").exists()
    assert format_visible.split(wanted, sentence, squeeze) == (wanted, [])


def test_a_cells_note_leaves_the_reference_and_its_value_stays(tmp_path: Path) -> None:
    """Tika writes a cell's note after its value ("author: text"); the note shows only under
    the pointer and kbflow leaves comments out by design, so the reference drops it, whatever
    the line breaks Tika gives it, and keeps the cells' own text."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet["A1"] = "廠商訂單編號"
    sheet["A1"].comment = openpyxl.comments.Comment("編號長度限制：20字內\n（編號不可重複）",
                                                    "jill.chen")
    sheet["B1"] = "物流廠商"
    path = tmp_path / "orders.xlsx"
    workbook.save(path)
    tika = "廠商訂單編號\njill.chen: 編號長度限制：20字內\n （編號不可重複）\n\t物流廠商\n"
    left = squeeze(format_visible.without_cell_notes(path, tika))
    assert "廠商訂單編號" in left and "物流廠商" in left
    assert "jill" not in left and "20字內" not in left
    assert format_visible.without_cell_notes(path.with_suffix(".csv"), tika) == tika
