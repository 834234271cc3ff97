"""Boxes drawn side by side on a PDF page are read box by box (ingest.parse.pdf_boxes). Both
files were made here with LibreOffice 7.4 (tests/fixtures/formats/PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta

FIXTURES = Path(__file__).parent / "fixtures/formats"


def parse(name: str) -> ParsedDocument:
    meta, data = read_meta(FIXTURES / name, FIXTURES, "default", ["all-staff"])
    return parse_document(meta, data)


def test_cards_in_the_cells_of_a_one_row_table_are_read_card_by_card() -> None:
    """Three member cards and a seller's and a buyer's panel, each a cell of a ruled table of
    one row. pdfplumber's grid of one row is not a table, so the lines were read by rows:
    "Locker: 14 Card 102 Card 103", "Name: Bernard Okafor Name: Chen Jiayi", and the buyer's
    last line glued to the paragraph under the panels."""
    texts = [b.text for b in parse("cards_in_one_row_table.pdf").blocks]
    assert texts == [
        "Riverside Rowing Club: member cards",
        "Card 101 Name: Alice Martin Member since: 2019 Boat: Single scull Locker: 14",
        "Card 102 Name: Bernard Okafor Member since: 2021 Boat: Coxless pair Locker: 27",
        "Card 103 Name: Chen Jiayi Member since: 2016 Boat: Eight Locker: 3",
        "Cards are renewed every January at the boathouse office.",
        "Invoice 2026-0457",
        "Seller Northwind Traders Ltd 12 Harbour Road Bristol BS1 4QA VAT GB 123 4567 89",
        "Buyer Contoso Pharmacy 88 Elm Street Leeds LS2 7HZ Order ref PO-88213",
        "Payment due within 30 days of the invoice date.",
    ]


def test_framed_text_boxes_side_by_side_are_read_box_by_box() -> None:
    """Three Writer frames side by side, each a rectangle drawn on its own (no table at all):
    every row of text ran across the three ("To: Groningen To: Zwolle To: Frankfurt Hbf")."""
    blocks = parse("framed_boxes_writer.pdf").blocks
    assert [b.text for b in blocks if b.kind == BlockKind.PARAGRAPH] == [
        "Train IC 512 To: Groningen Platform: 4b Departs: 09:12",
        "Train SPR 7340 To: Zwolle Platform: 7a Departs: 09:18",
        "Train ICE 127 To: Frankfurt Hbf Platform: 11 Departs: 09:31",
        "Check the board again before boarding: platforms change at short notice.",
    ]

