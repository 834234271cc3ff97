"""Spreadsheet parsing in bounded memory: a large sheet is streamed, never held whole.

    python -m bench.sheet_memory [--rows 100000] [--cols 10]

Writes a ROWS x COLS workbook with openpyxl's write-only mode (text, numbers, dates and
percentages, one header row) in a temporary folder, then parses it through `parse_document` in
a child process and prints the rows per second and the child's peak RSS (ru_maxrss; it includes
the interpreter and every parser module parse_document imports). The target is under 300 MB for
100,000 x 10.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import openpyxl
from openpyxl.cell import WriteOnlyCell


def make_workbook(path: Path, rows: int, cols: int) -> None:
    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("数据")
    sheet.append([f"字段{c + 1}" for c in range(cols)])
    day = dt.date(2026, 1, 1)
    for r in range(rows):
        share = WriteOnlyCell(sheet, value=(r % 100) / 100)
        share.number_format = "0%"
        kinds = [f"部门{r % 37}", r, r * 1.25, day + dt.timedelta(days=r % 365), share,
                 f"备注文本第{r}行"]
        sheet.append([kinds[c % len(kinds)] for c in range(cols)])
    workbook.save(path)


def child(path: Path) -> None:
    """Parse in this (fresh) process and print what it took as JSON."""
    from ingest.parse import ParseLimits, parse_document, read_meta

    usage = resource.getrusage(resource.RUSAGE_SELF)
    before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    started = time.perf_counter()
    doc = parse_document(meta, data, ParseLimits(max_rows=1_000_000))
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak = usage.ru_maxrss  # KiB on Linux
    print(json.dumps({"rows": doc.report.table_rows, "tables": doc.report.tables,
                      "seconds": round(seconds, 2), "peak_rss_mb": round(peak / 1024, 1),
                      "cpu_seconds": round(usage.ru_utime + usage.ru_stime - cpu_before, 2),
                      "rss_before_parse_mb": round(before / 1024, 1)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--cols", type=int, default=10)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "large.xlsx"
        make_workbook(path, args.rows, args.cols)
        size_mb = path.stat().st_size / 1024 / 1024
        out = subprocess.run([sys.executable, "-m", "bench.sheet_memory", "--child", str(path)],
                             check=True, capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    print(f"{args.rows:,} rows x {args.cols} columns ({size_mb:.1f} MB file): "
          f"{result['rows']:,} rows in {result['tables']:,} tables, {result['seconds']} s "
          f"({result['rows'] / result['seconds']:,.0f} rows/s; {result['cpu_seconds']} s of "
          f"CPU), peak RSS "
          f"{result['peak_rss_mb']} MB ({result['rss_before_parse_mb']} MB before parsing)")


if __name__ == "__main__":
    main()
