"""Parse throughput on this machine: pages per second for text PDFs, a PDF with ruled tables,
and scanned pages (OCR), measured on the sample corpus plus a generated long text PDF.

    .venv/bin/python scripts/bench_parse.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pymupdf

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from ingest.models import DocumentMeta  # noqa: E402
from ingest.parse import parse_document, read_meta  # noqa: E402
from ingest.parse.ocr import engine  # noqa: E402

SAMPLES = REPO_ROOT / "sample_docs"
CASES = [  # (label, files)
    ("text PDF (policy samples)", ["travel_expense_2025.pdf", "information_security.pdf"]),
    ("two-column text PDF", ["employee_handbook.pdf"]),
    ("PDF with ruled tables", ["expense_standards.pdf"]),
    ("scanned PDF (OCR)", ["seal_policy_scanned.pdf"]),
]


def long_text_pdf(pages: int) -> bytes:
    """A text PDF with a running header and 30 wrapped lines per page."""
    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page()
        page.insert_text((200, 44), "星河科技有限公司 内部制度文件", fontname="china-s", fontsize=9)
        for i in range(30):
            text = f"第{n * 30 + i + 1}条 员工出差应事先提交出差申请，经审批后方可出行。"
            page.insert_text((72, 90 + 22 * i), text, fontname="china-s", fontsize=11)
    return doc.tobytes()


def measure(docs: list[tuple[DocumentMeta, bytes]], repeat: int) -> tuple[int, float]:
    pages, seconds = 0, 0.0
    for _ in range(repeat):
        for meta, data in docs:
            started = time.perf_counter()
            pages += parse_document(meta, data).pages
            seconds += time.perf_counter() - started
    return pages, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per text case (OCR runs once)")
    args = parser.parse_args()
    started = time.perf_counter()
    engine()
    print(f"OCR engine load: {time.perf_counter() - started:.2f} s")
    rows = []
    for label, names in CASES:
        docs = [read_meta(SAMPLES / name, SAMPLES, "default", ["all-staff"]) for name in names]
        repeat = 1 if "OCR" in label else args.repeat
        rows.append((label, *measure(docs, repeat)))
    meta, _ = read_meta(SAMPLES / "travel_expense_2025.pdf", SAMPLES, "default", ["all-staff"])
    rows.append(("long text PDF (200 pages)", *measure([(meta, long_text_pdf(200))], 1)))
    print(f"{'case':<28}{'pages':>7}{'seconds':>10}{'pages/s':>10}{'s/page':>9}")
    for label, pages, seconds in rows:
        print(f"{label:<28}{pages:>7}{seconds:>10.2f}{pages / seconds:>10.2f}"
              f"{seconds / pages:>9.3f}")
    print(f"(load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
