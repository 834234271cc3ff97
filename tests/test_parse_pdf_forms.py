"""Filled PDF forms: pypdf's sample of a form LibreOffice exported (tests/fixtures/formats), as
filed and with more of its fields set through PyMuPDF's form API, as a reader's viewer would."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from ingest.models import ParsedDocument
from ingest.parse import ParseLimits, parse_document, read_meta

FORM = Path(__file__).parent / "fixtures/formats/libreoffice-form.pdf"


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, ParseLimits())


def texts(doc: ParsedDocument) -> list[str]:
    return [block.text for block in doc.blocks]


def test_a_filled_text_field_is_read_once_after_its_label() -> None:
    """MuPDF draws "Alice" a little above its label, so position order read "Alice First
    Name"; the value now follows the label, once, and no field's internal name is printed.
    The row goes on to the next label, whose box is empty, as the page shows it."""
    blocks = texts(parse(FORM))
    assert "First Name Alice Last Name" in blocks
    joined = "\n".join(blocks)
    assert joined.count("Alice") == 1 and joined.count("Bob") == 1
    assert "First Name_2" not in joined and "Off" not in joined


def test_ticked_boxes_and_a_chosen_option_read_as_the_reader_sees_them(tmp_path: Path) -> None:
    """A ticked box came out as its ZapfDingbats glyph ("3"); now as ☑ before its label, a
    radio button as ◉/○, and a choice as its option's text."""
    with pymupdf.open(FORM) as doc:
        for widget in doc[0].widgets():
            if widget.field_name == "gdpr":
                widget.field_value = widget.on_state()
            elif widget.field_name == "female" and widget.on_state() == "2":
                widget.field_value = widget.on_state()  # the second button: Male
            elif widget.field_name == "Nationality":
                widget.field_value = "German"
            else:
                continue
            widget.update()
        doc.save(tmp_path / "filled.pdf")
    joined = "\n".join(texts(parse(tmp_path / "filled.pdf")))
    assert "○ Female" in joined and "◉ Male" in joined
    assert "German" in joined
    assert "3" not in joined.replace("2019", "")  # no tick glyph read as a digit


def test_empty_fields_keep_their_labels_and_show_empty_marks() -> None:
    """Last Name and Birthday are empty, no option is chosen: the labels stay as printed and
    each box or button shows as the empty mark a reader sees (the check boxes sit in what
    pdfplumber takes for a ruled table, which reads them as empty cells)."""
    joined = "\n".join(texts(parse(FORM)))
    for shown in ("Last Name", "Birthday", "○ Female", "○ Male", "Nationality:",
                  "Agree to privacy policy"):
        assert shown in joined
    assert "◉" not in joined and "☑" not in joined


def test_values_in_a_ruled_table_form_reach_their_cells(tmp_path: Path) -> None:
    """A claim form laid out as a ruled table, its fields filled through PyMuPDF's form API:
    pdfplumber reads the cells from the page's content, which holds the labels but not the
    values, and lines inside a table are left out, so every value was lost. A password field
    is shown masked, and stays out."""
    rows = [("申请人", "张三"), ("Policy number", "PN-2026-0042"), ("Claim amount", "1,250.00"),
            ("Password", "s3cret")]
    with pymupdf.open() as doc:
        page = doc.new_page(width=595, height=842)
        top, left, middle, right, height = 100, 60, 200, 500, 30
        for r in range(len(rows) + 1):
            page.draw_line((left, top + r * height), (right, top + r * height))
        for x in (left, middle, right):
            page.draw_line((x, top), (x, top + len(rows) * height))
        for r, (label, value) in enumerate(rows):
            y = top + r * height
            page.insert_text((left + 5, y + 20), label, fontsize=11,
                             fontname="helv" if label.isascii() else "china-s")
            widget = pymupdf.Widget()
            widget.field_type = pymupdf.PDF_WIDGET_TYPE_TEXT  # type: ignore[attr-defined]
            widget.field_name, widget.field_value = f"field{r}", value
            widget.rect = pymupdf.Rect(middle + 4, y + 6, right - 4, y + height - 6)
            widget.text_font = "Helv" if value.isascii() else "china-s"
            if label == "Password":
                widget.field_flags = 1 << 13
            page.add_widget(widget)
        doc.save(tmp_path / "claim.pdf")
    blocks = parse(tmp_path / "claim.pdf").blocks
    joined = "\n".join(block.text for block in blocks)
    for label, value in rows[:3]:  # the table's Markdown, row by row
        assert f"| {label} | {value} |" in joined
    assert "s3cret" not in joined


def test_a_hidden_field_is_not_read(tmp_path: Path) -> None:
    """A field set hidden (a viewer does not show it) keeps its value out of the index."""
    with pymupdf.open(FORM) as doc:
        for widget in doc[0].widgets():
            if widget.field_name == "First Name":
                widget.field_display = 1  # PyMuPDF's "hidden"
                widget.update()
        doc.save(tmp_path / "hidden.pdf")
    joined = "\n".join(texts(parse(tmp_path / "hidden.pdf")))
    assert "Alice" not in joined and "Bob" in joined
