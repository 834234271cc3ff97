"""What a person reads in pictures and scanned pages, found in kbflow's chunks (issue #40).

    .venv/bin/python -m bench.picture_lines [--collection NAME ...] [--out FILE]

bench.format_public samples its phrases from Tika's Tesseract reading and keeps those a
person's transcription (bench/format_visible_read.json) holds: a short picture ("我是中国人",
a shop sign, "TEST") gives no phrase of six letters, and a Chinese poster, vertical writing or
a photographed sign that Tesseract misreads gives next to none, so such files go unmeasured.
Here the phrases come from the transcription itself: each line read by eye, whole when short
(up to 8 CJK characters or 5 words), else a window of that size at a place seeded by the file's
name, compared as the format bench compares (letters and digits, NFKC, lowercased). Every
file of the collections that has a transcription is parsed and chunked as the format bench
does.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.format_public import CORPUS, squeeze, window
from bench.format_visible import READ_BY_HAND
from ingest.chunk import chunk_document
from ingest.parse import ParseError, parse_document, read_meta

MIN_CHARS = 2  # a line of fewer letters and digits (a lone digit, "TM") is not searched for


@dataclass
class Found:
    file: str
    phrases: int
    missed: list[str]
    status: str
    seconds: float

    @property
    def recalled(self) -> int:
        return self.phrases - len(self.missed)


def line_phrases(lines: list[str], seed: str) -> list[str]:
    """One phrase per transcribed line: the line when short, else a window of 8 CJK characters
    or 5 words."""
    rng = random.Random(seed)
    out = []
    for line in lines:
        if len(squeeze(line)) < MIN_CHARS:
            continue
        out.append(window(line, rng))
    return list(dict.fromkeys(p for p in out if len(squeeze(p)) >= MIN_CHARS))


def run(collections: list[str] | None) -> list[Found]:
    read = json.loads(READ_BY_HAND.read_text("utf-8"))["pictures"]
    results = []
    for key, entry in sorted(read.items()):
        collection, name = key.split("/", 1)
        path = CORPUS / collection / name
        if (collections and collection not in collections) or not path.is_file():
            continue
        wanted = line_phrases(entry["lines"], name)
        started = time.perf_counter()
        try:
            meta, data = read_meta(path, path.parent, "bench", ["all"])
            chunks = chunk_document(parse_document(meta, data))
            status = "ok"
        except (ParseError, ValueError) as exc:
            chunks, status = [], f"failed: {exc}"[:120]
        indexed = squeeze("\n".join(f"{' '.join(c.title_path)} {c.prefix} {c.text}"
                                    for c in chunks))
        found = Found(key, len(wanted), [p for p in wanted if squeeze(p) not in indexed], status,
                      round(time.perf_counter() - started, 1))
        results.append(found)
        print(f"{key}: {found.recalled}/{found.phrases} {status} {found.seconds}s "
              f"missed {found.missed}", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collection", action="append", help="only these collections")
    parser.add_argument("--out", type=Path, help="per-file results as JSON")
    args = parser.parse_args()
    results = run(args.collection)
    phrases = sum(r.phrases for r in results)
    recalled = sum(r.recalled for r in results)
    failed = sum(r.status.startswith("failed") for r in results)
    print(f"{len(results)} files, {recalled}/{phrases} phrases "
          f"({recalled / max(phrases, 1):.3f}), {failed} failed")
    if args.out:
        args.out.write_text(json.dumps([asdict(r) for r in results], ensure_ascii=False,
                                       indent=1), "utf-8")


if __name__ == "__main__":
    main()
