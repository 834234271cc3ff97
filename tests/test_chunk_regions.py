"""Chunks keep where their text sits on the page (issue 41: the console outlines them): a PDF
generated here with clauses at known places, and the scanned sample read by OCR."""

from __future__ import annotations

import itertools
from pathlib import Path

import pymupdf

from ingest.chunk import chunk_document
from ingest.models import ChunkKind, Region
from ingest.parse import ParseLimits, parse_document, read_meta

SAMPLE_DOCS = Path(__file__).resolve().parents[1] / "sample_docs"
WIDTH, HEIGHT = 595, 842


def parse_and_chunk(path: Path):
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return chunk_document(parse_document(meta, data, ParseLimits()))


def inside(region: Region, x: float, y: float) -> bool:
    x0, y0, x1, y1 = region.box
    return x0 <= x / WIDTH <= x1 and y0 <= y / HEIGHT <= y1


def test_each_clause_chunk_outlines_the_lines_it_came_from(tmp_path: Path) -> None:
    doc = pymupdf.open()
    places = {}  # clause → (page, x, y) of its baseline start
    for page_no, clauses in enumerate([("第一条", "第二条"), ("第三条",)], start=1):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        if page_no == 1:
            page.insert_text((200, 120), "区域测试办法", fontname="china-s", fontsize=20)
        for n, clause in enumerate(clauses):
            y = 300 + 250 * n
            page.insert_text((80, y), f"{clause} 本条规定员工办理报销手续的期限为三十日。",
                             fontname="china-s", fontsize=11)
            places[clause] = (page_no, 90, y - 4)
    path = tmp_path / "regions.pdf"
    path.write_bytes(doc.tobytes())
    chunks = [c for c in parse_and_chunk(path) if c.kind != ChunkKind.PARENT]
    by_clause = {c.clause_no: c for c in chunks}
    assert set(places) <= set(by_clause)
    for clause, (page, x, y) in places.items():
        regions = by_clause[clause].regions
        assert [r.page for r in regions] == [page]
        assert inside(regions[0], x, y)
        # and not the other clauses' lines
        assert not any(inside(regions[0], ox, oy) for other, (op, ox, oy) in places.items()
                       if other != clause and op == page)


def test_ocr_read_pages_get_regions_too() -> None:
    chunks = parse_and_chunk(SAMPLE_DOCS / "seal_policy_scanned.pdf")
    clauses = [c for c in chunks if c.kind == ChunkKind.CLAUSE]
    assert clauses and all(c.regions for c in clauses)
    for c in clauses:
        assert {r.page for r in c.regions} <= set(range(c.page_start, c.page_end + 1))
        assert all(0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1 for x0, y0, x1, y1 in
                   (r.box for r in c.regions))


def test_formats_without_pages_have_no_regions() -> None:
    chunks = parse_and_chunk(SAMPLE_DOCS / "leave_policy.md")
    assert chunks and not any(c.regions for c in chunks)


def test_each_table_row_outlines_its_own_row() -> None:
    """expense_standards.pdf: a ruled table running onto page 2 (header not repeated)."""
    chunks = parse_and_chunk(SAMPLE_DOCS / "expense_standards.pdf")
    rows = [c for c in chunks if c.kind == ChunkKind.TABLE_ROW]
    assert len(rows) > 10 and all(len(c.regions) == 1 for c in rows)
    for page in {c.regions[0].page for c in rows}:
        boxes = [c.regions[0].box for c in rows if c.regions[0].page == page]
        tops = [box[1] for box in boxes]
        assert tops == sorted(tops) and len(set(tops)) == len(tops)  # one row each, in order
        for upper, lower in itertools.pairwise(boxes):
            assert upper[3] <= lower[1] + 0.002  # rows do not overlap
    assert {c.regions[0].page for c in rows} == {1, 2}
