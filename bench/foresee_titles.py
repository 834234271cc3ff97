"""Titles read ahead (ingest/pipeline/foresee.py) against the titles the full parse finds (#43).

    .venv/bin/python -m bench.foresee_titles [--laws DIR] [--every N]

Every Nth Markdown file of the laws folder (by path): its title read from its first
HEAD_CHARS characters as a run reads it ahead, and the title `parse_document` gives the whole
file. Prints the files that differ and the counts as JSON. A title read ahead wrongly costs a
relink at the end of the run, not a wrong citation.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.realworld import SHARED
from ingest.parse import parse_document
from ingest.parse.encoding import decode
from ingest.parse.metadata import base_meta, complete_meta
from ingest.pipeline.foresee import _TEXT, _head


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--laws", type=Path, default=SHARED / "laws")
    parser.add_argument("--every", type=int, default=1, help="every Nth file by path")
    args = parser.parse_args()
    paths = sorted(args.laws.rglob("*.md"))[::args.every]
    differ = []
    for path in paths:
        data = path.read_bytes()
        meta = base_meta(path, args.laws, data, "default", ["public"])
        ahead = complete_meta(meta, _TEXT[".md"](_head(decode(data).text)))[0].title
        parsed = parse_document(meta, data).meta.title
        if ahead != parsed:
            differ.append({"file": str(path.relative_to(args.laws)), "ahead": ahead,
                           "parsed": parsed})
    print(json.dumps({"files": len(paths), "same": len(paths) - len(differ), "differ": differ},
                     ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
