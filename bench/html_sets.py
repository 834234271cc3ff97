"""HTML main content on whole sets of saved pages whose main content their project's test
gives as text: newspaper's (about 150 pages), Zyte's article-extraction-benchmark (181
pages, each article body annotated by a person) and cx-extractor-python's (74 Chinese news
pages).

    .venv/bin/python -m bench.html_sets [--set NAME] [--per-page]

The pages and their expected text are read at run time from the bare git directories the search
tool's `fetch` leaves (bench/page_references), never copied here (bench/format_public holds 12
of newspaper's and Zyte's, 9 of cx-extractor's). Scored as bench/html_readability scores
readability's pages: recall of up to 40 phrases of the expected lines found in kbflow's blocks,
precision as the share of kbflow's block characters in lines of the expected text (the page's
headline is in none of the references, so a page's precision is a little under what a reader
would judge). Macro averages; dev = two thirds by name, held-out = every third (nothing tuned
on it); CJK pages apart.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench import html_readability, page_references
from bench.html_readability import squeeze

MIRRORS = Path("/work/.mirror")
FOLDERS = {"newspaper": "tests/data/html", "article-extraction": "html",
           "cx-extractor": "RawHtml"}


def pages(name: str) -> dict[str, tuple[bytes, str]]:
    """Each page of a set with its expected text (pages whose test gives none left out)."""
    repo, expected = page_references.EXPECTED[name]
    git = MIRRORS / repo.replace("/", "+") / "repo"
    found = {}
    for path in page_references.git_paths(git, FOLDERS[name]):
        text = expected(git, path)
        if squeeze(text):
            found[Path(path).name.split(".html")[0]] = (page_references.page_bytes(git, path),
                                                        text)
    return dict(sorted(found.items()))


def run(name: str) -> dict[str, object]:
    rows = {}
    for page, (source, text) in pages(name).items():
        expected = [line.strip() for line in text.splitlines() if squeeze(line)]
        rows[page] = html_readability.score_page(source, expected, page, [])
    return html_readability.report(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", choices=sorted(FOLDERS))
    parser.add_argument("--per-page", action="store_true")
    args = parser.parse_args()
    for name in args.set or sorted(FOLDERS):
        result = run(name)
        if not args.per_page:
            result.pop("per_page")
        print(json.dumps({name: result}, indent=1), flush=True)


if __name__ == "__main__":
    main()
