"""Which reader for .xls: LibreOffice → .xlsx → the spreadsheet parser, or xlrd's cells directly?

    .venv/bin/python -m bench.xls_readers [--results]

Phrase recall against Apache Tika's text (as in bench.format_public) of the .xls files of
`bench/format_corpus`, and the time each takes. xlrd (a dev dependency, here only) reads the
BIFF records fast but gives raw cell values: no number formats, merged cells or hidden sheets.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import xlrd

from bench import write_section
from bench.format_public import CORPUS, DEFAULT_TIKA, RESULTS, phrases, squeeze, tika_texts
from ingest.chunk import chunk_document
from ingest.parse import ParseError, parse_document, read_meta

SECTION = "## .xls readers: LibreOffice + the xlsx parser vs xlrd (issue #40)"


def libreoffice_text(path: Path) -> str:
    try:
        meta, data = read_meta(path, path.parent, "bench", ["all"])
        chunks = chunk_document(parse_document(meta, data))
    except ParseError:
        return ""
    return "\n".join(f"{c.prefix} {c.text}" for c in chunks)


def xlrd_text(path: Path) -> str:
    book = xlrd.open_workbook(str(path))
    lines = []
    for sheet in book.sheets():
        lines.append(sheet.name)
        lines += [" ".join(str(v) for v in sheet.row_values(r)) for r in range(sheet.nrows)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", action="store_true")
    args = parser.parse_args()
    paths = sorted(CORPUS.glob("*/*.xls"))
    texts = tika_texts(paths, DEFAULT_TIKA)
    rows, totals = [], {"phrases": 0, "LibreOffice": 0.0, "xlrd": 0.0}
    seconds = {"LibreOffice": 0.0, "xlrd": 0.0}
    for path in paths:
        wanted = phrases(texts[path], path.name)
        found = {}
        for name, read in (("LibreOffice", libreoffice_text), ("xlrd", xlrd_text)):
            started = time.perf_counter()
            text = squeeze(read(path))
            seconds[name] += time.perf_counter() - started
            found[name] = sum(squeeze(p) in text for p in wanted)
            totals[name] += found[name]
        totals["phrases"] += len(wanted)
        rows.append(f"| {path.name} | {len(wanted)} | {found['LibreOffice']} | {found['xlrd']} |")
    n = totals["phrases"] or 1
    text = "\n".join([
        SECTION, "", f"{len(paths)} .xls files; `python -m bench.xls_readers`.", "",
        "| file | phrases | LibreOffice | xlrd |", "|---|---|---|---|", *rows,
        f"| **recall** | {totals['phrases']} | {totals['LibreOffice'] / n:.3f} | "
        f"{totals['xlrd'] / n:.3f} |",
        f"| **seconds** | | {seconds['LibreOffice']:.1f} | {seconds['xlrd']:.2f} |", ""])
    print(text)
    if args.results:
        write_section(RESULTS, SECTION, text)


if __name__ == "__main__":
    main()
