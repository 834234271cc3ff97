"""The main content of saved web pages as their own projects' tests give it, as text or JSON.

newspaper's tests (codelucas/newspaper, MIT) pair each saved page `tests/data/html/X.html`
with the article text its test expects (`tests/data/text/X.txt`; a language's page
`chinese_article.html` with `chinese.txt`). Zyte's article-extraction-benchmark
(scrapinghub/article-extraction-benchmark, MIT) gives each gzipped page `html/<hash>.html.gz`
a person's annotation of its article body (`ground-truth.json`, `articleBody`).
chrislinan/cx-extractor-python (MIT) pairs 74 saved NetEase (163.com) finance news pages in GBK,
`RawHtml/N.html`, with the article text its line-block extractor gave and its author kept
(`Text/N.txt`). trafilatura's evaluation (adbar/trafilatura, Apache-2.0) gives each saved page
of `tests/eval/` and `tests/cache/` the phrases a person picked from its main content
(`tests/evaldata.json`, "with"; a few per page, Chinese and Japanese pages among them). All are
independent of kbflow and of Readability (bench/format_public's other
web-page reference); newspaper's and cx-extractor's are an extractor's output a person
accepted, Zyte's and trafilatura's a person's annotation.
Read from the bare git directories the search tool's `fetch` leaves; bench/format_public
stores the expected text beside a page it copies, bench/html_sets scores whole sets.
"""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path

NEWSPAPER = "codelucas/newspaper"
ZYTE = "scrapinghub/article-extraction-benchmark"
CX = "chrislinan/cx-extractor-python"
TRAFILATURA = "adbar/trafilatura"


def git_bytes(git: Path, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(git), "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def git_paths(git: Path, folder: str) -> list[str]:
    return subprocess.run(["git", "-C", str(git), "ls-tree", "-r", "--name-only",
                           "HEAD", folder], check=True, capture_output=True,
                          text=True).stdout.split()


def page_bytes(git: Path, path: str) -> bytes:
    """A saved page as a browser gets it: Zyte's pages are stored gzipped."""
    data = git_bytes(git, path)
    return gzip.decompress(data) if path.endswith(".gz") else data


def newspaper_text(git: Path, path: str) -> str:
    """newspaper's expected text of `tests/data/html/X.html`; '' when its test gives none, or
    gives instead, in capitals, why newspaper fails on the page ("EXTRACTED NOTHING",
    "MISSED LAST PARAGRAPH": its test prints the file as the reason of a failure)."""
    stem = Path(path).stem.replace("_article", "")
    try:
        text = git_bytes(git, f"tests/data/text/{stem}.txt").decode("utf-8")
    except subprocess.CalledProcessError:
        return ""
    cased = [c for c in text.strip().split("\n")[0] if c.isupper() or c.islower()]
    return "" if cased and sum(c.isupper() for c in cased) > 0.6 * len(cased) else text


@cache
def _zyte_truth(git: Path) -> dict[str, dict[str, str]]:
    truth: dict[str, dict[str, str]] = json.loads(git_bytes(git, "ground-truth.json"))
    return truth


def zyte_text(git: Path, path: str) -> str:
    """The annotated article body of `html/<hash>.html.gz`."""
    return _zyte_truth(git).get(Path(path).name.split(".")[0], {}).get("articleBody", "")


def cx_text(git: Path, path: str) -> str:
    """cx-extractor-python's text of `RawHtml/N.html` (`Text/N.txt`, GBK as its pages)."""
    try:
        return git_bytes(git, f"Text/{Path(path).stem}.txt").decode("gb18030")
    except subprocess.CalledProcessError:
        return ""


@cache
def _trafilatura_truth(git: Path) -> dict[str, list[str]]:
    entries = json.loads(git_bytes(git, "tests/evaldata.json"))
    return {entry["file"]: entry.get("with") or [] for entry in entries.values()}


def trafilatura_text(git: Path, path: str) -> str:
    """The phrases a person picked from the main content of `tests/eval|cache/<file>`, one a
    line (the bench samples its phrases from lines)."""
    return "\n".join(_trafilatura_truth(git).get(Path(path).name, []))


# collection or set -> (repository, expected text of a page's path in it)
EXPECTED: dict[str, tuple[str, Callable[[Path, str], str]]] = {
    "newspaper": (NEWSPAPER, newspaper_text),
    "article-extraction": (ZYTE, zyte_text),
    "cx-extractor": (CX, cx_text),
    "trafilatura": (TRAFILATURA, trafilatura_text),
}
