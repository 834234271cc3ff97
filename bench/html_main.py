"""HTML main content on real pages: how much of the article kbflow keeps, and of the boilerplate.

    .venv/bin/python -m bench.html_main --trafilatura-git DIR [--sample N] [--readability]

trafilatura's evaluation set (tests/evaldata.json and the saved pages of tests/eval, by its
authors: blogs, news, shops and forums in many languages, among them xinhuanet, banyuetan,
baidu baike and NHK pages) lists for each page phrases of its article ("with") and of its
boilerplate ("without"). The pages are read at run time from a bare git directory (the search
tool's `fetch` of adbar/trafilatura), never copied into this repository. A page scores the
share of its article phrases found in kbflow's blocks (body recall) and of its boilerplate
phrases found there too (boilerplate kept, lower is better), both after NFKC and whitespace
folding. `--readability` scores readability-lxml's summary too (not a dependency of kbflow:
install it to compare). Every CJK page is taken, plus a seeded sample of the others.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import subprocess
import tarfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from ingest.parse.result import ParseLimits
from ingest.parse.webpage import parse_html


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().lower()


def _cjk(text: str) -> bool:
    return any("\u3040" <= c <= "\u9fff" for c in text)


def _kbflow(raw: bytes) -> str:
    return "\n".join(b.text for b in parse_html(raw, ParseLimits()).blocks)


def _readability(raw: bytes) -> str:
    from lxml import html
    from readability import Document  # type: ignore[import-untyped]

    from ingest.parse.encoding import html_encoding

    text = raw.decode(html_encoding(raw)[0], errors="replace")
    return str(html.fromstring(Document(text).summary(html_partial=True)).text_content())


def pages(git_dir: Path) -> tuple[dict[str, dict[str, list[str]]], dict[str, bytes]]:
    """The annotations and the saved pages, from the bare repository's HEAD."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "HEAD",
                              "tests/evaldata.json", "tests/eval"], check=True,
                             capture_output=True).stdout
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(listing)) as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member) if member.isfile() else None
            if handle is not None:
                files[member.name] = handle.read()
    annotations = json.loads(files.pop("tests/evaldata.json"))
    saved = {Path(name).name: data for name, data in files.items()}
    return {url: a for url, a in annotations.items() if a["file"] in saved}, saved


def score(extract: Callable[[bytes], str], chosen: list[dict[str, list[str]]],
          saved: dict[str, bytes]) -> dict[str, float]:
    found = total = kept = boiler = cjk_found = cjk_total = tiny = 0
    started = time.perf_counter()
    for page in chosen:
        try:
            text = _norm(extract(saved[str(page["file"])]))
        except Exception:  # noqa: BLE001 - a page the extractor fails on keeps nothing
            text = ""
        hits = sum(_norm(p) in text for p in page["with"])
        found, total = found + hits, total + len(page["with"])
        kept += sum(_norm(p) in text for p in page.get("without", []))
        boiler += len(page.get("without", []))
        if _cjk(" ".join(page["with"])):
            cjk_found, cjk_total = cjk_found + hits, cjk_total + len(page["with"])
        tiny += len(text) < 200
    return {"body_recall": round(found / total, 3), "boilerplate_kept": round(kept / boiler, 3),
            "cjk_body_recall": round(cjk_found / max(cjk_total, 1), 3),
            "pages_under_200_chars": tiny,
            "ms_per_page": round(1000 * (time.perf_counter() - started) / len(chosen))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trafilatura-git", type=Path, required=True)
    parser.add_argument("--sample", type=int, default=200, help="non-CJK pages taken")
    parser.add_argument("--readability", action="store_true")
    args = parser.parse_args()
    annotations, saved = pages(args.trafilatura_git)
    cjk = [a for a in annotations.values() if _cjk(" ".join(a["with"]))]
    others = [a for a in annotations.values() if not _cjk(" ".join(a["with"]))]
    chosen = cjk + random.Random(7).sample(others, min(args.sample, len(others)))
    results = {"pages": len(chosen), "cjk_pages": len(cjk),
               "kbflow": score(_kbflow, chosen, saved)}
    if args.readability:
        results["readability-lxml"] = score(_readability, chosen, saved)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
