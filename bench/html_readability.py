"""HTML main content on mozilla/readability's test pages: recall of the expected article and
precision of what kbflow keeps, for the main-content picker and its alternatives.

    .venv/bin/python -m bench.html_readability [--git DIR] [--candidates a,b,…]

readability's `test/test-pages/<name>/` (Apache-2.0) holds about 130 pages, most of them real
saved pages (news, blogs, wikis in many languages, two of them Chinese or Japanese beyond
bench/format_public's nine), some small made-up ones for single rules, each with the main
content Readability.js extracts (`expected.html`) and its metadata. The pages are read
at run time from the bare git directory the search tool's `fetch` of mozilla/readability leaves,
never copied here. The nine pages bench/format_public.py scores are left out; of the rest,
sorted by name, every third is held out (nothing was tuned on it).

Per page, both after NFKC, lowercasing and keeping letters and digits only:
- recall: the share of phrases of the expected content's lines (8 characters of a CJK line,
  5 words of another; up to 40 a page, seeded by its name) found in kbflow's blocks;
- precision: the share of kbflow's block characters (a table's rows, not the table again) in
  lines found in the expected content (or its metadata's title, byline and excerpt, which
  Readability keeps apart): menus, footers and link lists kept lower it.
Pages are averaged (macro; recall over the pages with a phrase); CJK pages are reported
apart. `readability` and `union` need readability-lxml installed (not a dependency of
kbflow).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import subprocess
import tarfile
import unicodedata
from collections.abc import Callable
from pathlib import Path
from statistics import mean

import lxml.html
import trafilatura

from ingest.models import BlockKind
from ingest.parse import main_content
from ingest.parse.result import ParseLimits
from ingest.parse.webpage import parse_html

GIT = Path("/work/.mirror/mozilla+readability/repo")
SCORED_ELSEWHERE = Path(__file__).parent / "format_corpus" / "readability"
BLOCKS = ("address", "article", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption",
          "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "ol", "p", "pre",
          "section", "table", "td", "th", "tr", "ul")
PHRASES = 40


def squeeze(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


def _cjk(text: str) -> bool:
    return sum("\u3040" <= c <= "\u9fff" for c in text) > 0.3 * max(len(squeeze(text)), 1)


def pages(git: Path) -> dict[str, dict[str, bytes]]:
    """Each test page's files (source.html, expected.html, expected-metadata.json)."""
    tar = subprocess.run(["git", "--git-dir", str(git), "archive", "HEAD", "test/test-pages"],
                         check=True, capture_output=True).stdout
    found: dict[str, dict[str, bytes]] = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member) if member.isfile() else None
            if handle is not None:
                *_, name, file = member.name.split("/")
                found.setdefault(name, {})[file] = handle.read()
    skip = {p.stem for p in SCORED_ELSEWHERE.glob("*.html")}
    return {n: f for n, f in sorted(found.items()) if n not in skip and "expected.html" in f}


def lines(markup: bytes) -> list[str]:
    """A fragment's text, one line per block as a browser shows it."""
    root = lxml.html.fromstring(markup.decode("utf-8"))
    for element in root.iter(*BLOCKS):
        element.tail = "\n" + (element.tail or "")
        element.text = "\n" + (element.text or "")
    return [line.strip() for line in root.text_content().splitlines() if squeeze(line)]


def phrases(expected: list[str], name: str) -> list[str]:
    rng = random.Random(name)
    out = []
    for line in expected:
        if _cjk(line):
            chars = squeeze(line)
            start = rng.randrange(max(len(chars) - 8, 0) + 1)
            out.append(chars[start:start + 8])
        else:
            words = line.split()
            start = rng.randrange(max(len(words) - 5, 0) + 1)
            out.append(squeeze(" ".join(words[start:start + 5])))
    out = [p for p in out if len(p) >= 4]
    return rng.sample(out, PHRASES) if len(out) > PHRASES else out


def score(files: dict[str, bytes], name: str) -> dict[str, float]:
    expected = lines(files["expected.html"])
    meta = json.loads(files.get("expected-metadata.json", b"{}"))
    return score_page(files["source.html"], expected, name, [
        str(meta.get(k) or "") for k in ("title", "byline", "excerpt")])


def score_page(source: bytes, expected: list[str], name: str,
               also: list[str]) -> dict[str, float]:
    """Recall and precision of kbflow's blocks of a page against its expected lines (`also`:
    text the reference keeps apart from them, e.g. its title, which kbflow may keep)."""
    allowed = squeeze("\n".join(expected)) + "|" + "|".join(squeeze(a) for a in also)
    result = parse_html(source, ParseLimits())
    blocks = result.blocks
    kept = [squeeze(b.text) for b, after in zip(blocks, [*blocks[1:], None][:len(blocks)],
                                                 strict=True)
            if b.kind != BlockKind.TABLE or after is None or after.kind != BlockKind.TABLE_ROW]
    text = "|".join(kept)
    wanted = phrases(expected, name)
    total = sum(len(k) for k in kept)
    return {"recall": sum(p in text for p in wanted) / max(len(wanted), 1),
            "phrases": len(wanted),
            "precision": sum(len(k) for k in kept if k in allowed) / total if total else 0.0,
            "tiny": float(total < 200), "cjk": float(_cjk("\n".join(expected)))}


def _trafilatura(**options: bool) -> Callable[[lxml.html.HtmlElement], str]:
    def extract(body: lxml.html.HtmlElement) -> str:
        return trafilatura.extract(body, output_format="txt", include_comments=False,
                                   **options) or ""
    return extract


def _readability(body: lxml.html.HtmlElement) -> str:
    from readability import Document  # type: ignore[import-not-found, unused-ignore]

    markup = lxml.html.tostring(body.getroottree(), encoding="unicode")
    try:
        summary = Document(markup).summary(html_partial=True)
    except RecursionError:  # readability-lxml recurses over the tree: a deep page fails
        return ""
    return str(lxml.html.fromstring(summary).text_content())


CANDIDATES: dict[str, Callable[[lxml.html.HtmlElement], str]] = {
    "current": main_content.article_text,
    "traf-default": _trafilatura(include_tables=True),
    "traf-precision": _trafilatura(include_tables=True, favor_precision=True),
    "traf-recall-notables": _trafilatura(include_tables=False, favor_recall=True),
    "traf-recall-links": _trafilatura(include_tables=True, favor_recall=True,
                                      include_links=True),
    "readability": _readability,
    "union": lambda body: CANDIDATES["current"](body) + "\n" + _readability(body),
    "whole-page": lambda body: str(body.text_content()),
}


def summary(rows: list[dict[str, float]]) -> dict[str, float]:
    recalls = [r["recall"] for r in rows if r["phrases"]]
    return {"pages": len(rows),
            "recall": round(mean(recalls), 3) if recalls else 0.0,
            "precision": round(mean(r["precision"] for r in rows), 3) if rows else 0.0,
            "pages_recall_under_0.5": sum(r < 0.5 for r in recalls),
            "pages_under_200_chars": int(sum(r["tiny"] for r in rows))}


def run(candidate: str, corpus: dict[str, dict[str, bytes]]) -> dict[str, object]:
    original = main_content.article_text
    main_content.article_text = CANDIDATES[candidate]  # type: ignore[assignment]
    try:
        rows = {name: score(files, name) for name, files in corpus.items()}
    finally:
        main_content.article_text = original  # type: ignore[assignment]
    return report(rows)


def report(rows: dict[str, dict[str, float]]) -> dict[str, object]:
    """Pages scored by `score_page`, summed as dev, held out (every third page) and CJK."""
    held = {n for i, n in enumerate(rows) if i % 3 == 2}
    return {"dev": summary([r for n, r in rows.items() if n not in held]),
            "held_out": summary([r for n, r in rows.items() if n in held]),
            "cjk": summary([r for r in rows.values() if r["cjk"]]),
            "per_page": {n: [round(r["recall"], 2), round(r["precision"], 2)]
                         for n, r in rows.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--git", type=Path, default=GIT)
    parser.add_argument("--candidates", default="current")
    parser.add_argument("--per-page", action="store_true")
    args = parser.parse_args()
    corpus = pages(args.git)
    for candidate in args.candidates.split(","):
        result = run(candidate, corpus)
        if not args.per_page:
            result.pop("per_page")
        print(json.dumps({candidate: result}, indent=1))


if __name__ == "__main__":
    main()
