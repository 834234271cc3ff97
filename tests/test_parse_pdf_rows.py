"""Rows of public PDFs (bench/format_corpus, PROVENANCE.md) read as rows: a label with the
value printed far right of it on one line, and a ruled table's figures once each."""

from __future__ import annotations

from pathlib import Path

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta

CORPUS = Path(__file__).parents[1] / "bench" / "format_corpus"


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "bench", ["all"])
    return parse_document(meta, data)


def test_resume_labels_keep_their_dates_and_ratings_on_their_row() -> None:
    """Page 2 of pdfplumber's issue-71 résumé: certificates at the left, their dates at the right
    edge, 200 points apart. Taken for two columns, every label was read before every date."""
    texts = [b.text for b in parse(CORPUS / "pdfplumber" / "issue-71-duplicate-chars.pdf").blocks
             if b.page == 2]
    for row in ("意大利语 读写能力 听说能力", "英语 一般 使用时长: 12个月"):
        assert row in texts, texts
    for label, date in (("3com 认证网络大师", "2019年05月"), ("微软公司的", "2019年11月"),
                        ("计算机", "2019年12月"), ("midd", "2020年02月")):
        assert any(label in text and date in text for text in texts), texts


def test_figures_merged_with_currency_columns_stand_once_and_first_row_is_data() -> None:
    """NVIDIA's 10-K table (olmOCR's earnings.pdf): "$" has a column of its own, merged into the
    figure's cell on rows without it; the column names stand above the rules."""
    blocks = parse(CORPUS / "olmocr" / "earnings.pdf").blocks
    table = next(b.text for b in blocks if b.kind is BlockKind.TABLE)
    assert "| Research and development |  | 3,423 |  | 2,532 |  | 1,892 |" in table
    assert "3,423 | 3,423" not in table
    rows = [b.text for b in blocks if b.kind is BlockKind.TABLE_ROW]
    assert rows == ["Cost of revenue: $ 178; $ 141; $ 138",
                    "Research and development: 3,423; 2,532; 1,892",
                    "Sales, general and administrative: 1,136; 876; 680",
                    "Total: $ 4,737; $ 3,549; $ 2,710"]
