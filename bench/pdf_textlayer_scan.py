"""Which PDF pages the text-layer check (ingest/parse/pdf_textlayer.py) refuses, to show that it
fires on garbled pages only.

    .venv/bin/python -m bench.pdf_textlayer_scan bench/format_corpus eval sample_docs tests/fixtures

Prints one line per refused page (file, page, reason, the layer's first characters) and a count.
Damaged files and pages that MuPDF cannot open are passed over, as a scan of other projects'
test PDFs meets many."""

from __future__ import annotations

import argparse
from pathlib import Path

import pymupdf

from ingest.parse.pdf_textlayer import text_layer
from ingest.text import normalize

MAX_PAGES = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="PDF files or folders")
    args = parser.parse_args()
    pymupdf.TOOLS.mupdf_display_errors(False)
    files = pages = fired = 0
    for path in [p for a in args.paths for p in (sorted(a.rglob("*.pdf")) if a.is_dir() else [a])]:
        try:
            doc = pymupdf.open(path)
            count = min(doc.page_count, MAX_PAGES)
        except Exception:  # noqa: BLE001 - a damaged test file is passed over
            continue
        files += 1
        with doc:
            for number in range(count):
                try:
                    text = "\n".join(map(normalize, doc[number].get_text().splitlines()))
                except Exception:  # noqa: BLE001 - likewise a page MuPDF cannot read
                    continue
                pages += 1
                if reason := text_layer(text).reason:
                    fired += 1
                    print(f"{path}\tp{number + 1}\t{reason}\t{text[:80]!r}")
    print(f"{files} files, {pages} pages, {fired} refused")


if __name__ == "__main__":
    main()
