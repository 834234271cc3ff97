"""Ruled tables whose column names are set slanted above narrow columns (ingest/parse/
pdf_slanted.py): each value must be read against the name standing over its column."""

from __future__ import annotations

from pathlib import Path

from ingest.models import BlockKind
from ingest.parse import parse_document, read_meta

ROOT = Path(__file__).parents[1]


def rows(path: Path) -> list[str]:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return [b.text for b in parse_document(meta, data).blocks if b.kind == BlockKind.TABLE_ROW]


def test_names_set_slanted_by_calc_name_their_columns() -> None:
    """A Calc sheet with names turned 45° (tests/fixtures/formats/fleet_table_slanted_heads.pdf).
    On main every column was named "Station" (the slanted names were lost): "Boeing 787-9: R"
    could not be found by what it says."""
    got = rows(ROOT / "tests/fixtures/formats/fleet_table_slanted_heads.pdf")
    assert got[1] == ("Station: OSL; City: Oslo; Runway length: 11.8; Night operations: Yes; "
                      "Instrument approach: Yes; Boeing 787-9: R; Airbus A350-900: R; "
                      "Embraer E175: AO; Bombardier Q400: F; Airbus A321neo: R")
    assert got[3] == ("Station: SVG; City: Stavanger; Runway length: 8.3; Night operations: "
                      "Yes; Instrument approach: No; Boeing 787-9: F; Bombardier Q400: R")


def test_a_turned_page_with_names_slanted_down_reads_each_value_once() -> None:
    """pdf2htmlEX's svg_background_with_page_rotation_issue402.pdf (bench/format_corpus, not
    held out): a FrameMaker page under /Rotate 90, names slanted down to the right. On main the
    slanted cells' edges split every column in two: each value came twice under names cut into
    letters ("L o n g e A T A: KRS; s t R w y: KRS")."""
    got = rows(ROOT / "bench/format_corpus/pdf2htmlex"
               / "svg_background_with_page_rotation_issue402.pdf")
    assert got[0] == ("ICAO: ENCN; Location: KRISTIANSAND, NO; IATA: KRS; Longest Rwy: 6.6; "
                      "24 Hrs: N; Precision App: Y; B767-300: (T); B767-300ER: (T)")
    assert got[2].startswith("ICAO: ENSB; Location: SVALBARD, NO [SAQ]; IATA: LYR; ")
    assert got[1].endswith("B777-200LR: AO; MD88: ~; MD90: ~")
    assert len(got) == 25  # ENCN … FNLU, counted on the page


def test_names_turned_upright_over_a_table_do_not_turn_the_table() -> None:
    """The same sheet with its names turned 90° (fleet_table_vertical_heads.pdf). The names'
    characters outnumbered the short values', so on main the whole table was read turned: rows
    as columns ("SVG: Stavanger; TRD: Trondheim; OSL: Oslo; KRS: Kristiansan; Station: City")."""
    got = rows(ROOT / "tests/fixtures/formats/fleet_table_vertical_heads.pdf")
    assert got[1] == ("Station: OSL; City: Oslo; Runway length: 11.8; Night operations: Yes; "
                      "Instrument approac: Yes; Boeing 787-9: R; Airbus A350-900: R; "
                      "Embraer E175: AO; Bombardier Q400: F; Airbus A321neo: R")
    assert len(got) == 4
