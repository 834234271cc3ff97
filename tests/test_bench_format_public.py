"""bench/format_public.py --collect: every collection in bench/format_corpus is declared where
its files come from, and collecting some collections from a git mirror rewrites only their rows
of PROVENANCE.md, keeping the others, the rows of files made here and the notes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package
from bench.format_public import CORPUS, _provenance, collect
from bench.format_sources import SOURCES, TIKA_FILES


def test_every_collection_and_row_is_declared() -> None:
    rows, _ = _provenance((CORPUS / "PROVENANCE.md").read_text("utf-8"))
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir() and p.name != "_expected"}
    assert folders == set(SOURCES) == set(rows)
    for collection, (repo, licence, paths) in SOURCES.items():
        declared = {Path(p).name: p for p in TIKA_FILES} if collection == "tika" else {
            (e[1] if isinstance(e, tuple) else Path(e).name): (e[0] if isinstance(e, tuple) else e)
            for e in paths}
        collected = set()
        for row in rows[collection]:
            name, source, path, row_licence = (c.strip() for c in row.strip("|").split(" | "))
            name = name.removeprefix(f"{collection}/")
            if source == "made here":
                continue
            assert source.startswith(f"{repo} @ ") and row_licence == licence, row
            assert path.endswith(declared[name]), row
            collected.add(name)
        assert collected == set(declared), collection
        files = {p.name for p in (CORPUS / collection).iterdir()}
        assert files == {r.split(" | ")[0].removeprefix(f"| {collection}/")
                         for r in rows[collection]}


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                          text=True).stdout


@pytest.mark.parametrize("collection", ["hutool", "metafiles"])
def test_collecting_one_collection_keeps_every_other_row(tmp_path: Path, collection: str) -> None:
    """A collection's files from a mirror made here (a real git repository at a new commit):
    only its rows change, to the new commit; a file made here keeps its row, after the
    collected ones (metafiles' procurement_zh.docx); the other collections' rows and the notes
    after the table are kept as written."""
    repo, _, paths = SOURCES[collection]
    mirror = tmp_path / "mirrors" / repo.replace("/", "+") / "repo"
    for number, path in enumerate(paths):
        assert isinstance(path, str)
        (mirror / path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / path).write_bytes(f"测试文件 {number}".encode())
    git(mirror, "init", "-q")
    git(mirror, "add", ".")
    git(mirror, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "x")
    commit = git(mirror, "rev-parse", "HEAD").strip()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(CORPUS / "PROVENANCE.md", corpus)
    old, notes = _provenance((corpus / "PROVENANCE.md").read_text("utf-8"))
    collect([collection], corpus, tmp_path / "mirrors")
    new, new_notes = _provenance((corpus / "PROVENANCE.md").read_text("utf-8"))
    assert sorted(p.name for p in corpus.iterdir()) == ["PROVENANCE.md", collection]
    first = paths[0]
    assert isinstance(first, str)
    assert (corpus / collection / Path(first).name).read_bytes() == "测试文件 0".encode()
    assert new_notes == notes and notes.strip()
    assert list(new) == list(old)  # the collections' order is kept
    assert {c: r for c, r in new.items() if c != collection} == {
        c: r for c, r in old.items() if c != collection}
    made_here = [r for r in old[collection] if " | made here | " in r]
    assert new[collection] == [r.replace(r.split(" @ ")[1][:12], commit[:12])
                               for r in old[collection] if r not in made_here] + made_here
    assert len(made_here) == (collection == "metafiles")


def test_a_page_whose_test_gives_its_text_is_collected_with_that_text(tmp_path: Path) -> None:
    """Zyte's pages are stored gzipped with a person's article body in ground-truth.json:
    collected unpacked, with that body as the reference beside them; newspaper's test text
    that is, in capitals, the reason newspaper fails on a page is no reference."""
    import gzip
    import json

    from bench import page_references

    _, _, paths = SOURCES["article-extraction"]
    mirror = tmp_path / "mirrors" / "scrapinghub+article-extraction-benchmark" / "repo"
    (mirror / "html").mkdir(parents=True)
    truth = {}
    for number, entry in enumerate(paths):
        assert isinstance(entry, tuple)
        (mirror / entry[0]).write_bytes(gzip.compress(f"<p>页面 {number}</p>".encode()))
        truth[Path(entry[0]).name.split(".")[0]] = {"articleBody": f"正文 {number}\n\nmore"}
    (mirror / "ground-truth.json").write_text(json.dumps(truth), "utf-8")
    git(mirror, "init", "-q")
    git(mirror, "add", ".")
    git(mirror, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "x")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(CORPUS / "PROVENANCE.md", corpus)
    collect(["article-extraction"], corpus, tmp_path / "mirrors")
    stored = paths[1][1] if isinstance(paths[1], tuple) else ""
    assert (corpus / "article-extraction" / stored).read_bytes() == "<p>页面 1</p>".encode()
    assert (corpus / "_expected" / "article-extraction" / f"{stored}.txt").read_text(
        "utf-8") == "正文 1\n\nmore"

    news = tmp_path / "news"
    (news / "tests/data/text").mkdir(parents=True)
    (news / "tests/data/text/a.com1.txt").write_text("MISSED LAST PARAGRAPH\n", "utf-8")
    (news / "tests/data/text/chinese.txt").write_text("香港行政长官\n\nNEW YORK (AP) — x", "utf-8")
    git(news, "init", "-q")
    git(news, "add", ".")
    git(news, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "x")
    assert page_references.newspaper_text(news, "tests/data/html/a.com1.html") == ""
    assert page_references.newspaper_text(news, "tests/data/html/b.com1.html") == ""
    assert page_references.newspaper_text(news, "tests/data/html/chinese_article.html") == (
        "香港行政长官\n\nNEW YORK (AP) — x")


def test_a_trafilatura_page_is_scored_on_the_phrases_its_evaluation_picked(tmp_path: Path) -> None:
    """trafilatura's evaluation keys its pages by URL; a page's reference is the "with" phrases
    of the entry naming its file, one a line, never another page's; a page it names without
    phrases, or does not name, has none."""
    import json

    from bench import page_references

    mirror = tmp_path / "traf"
    (mirror / "tests").mkdir(parents=True)
    (mirror / "tests/evaldata.json").write_text(json.dumps({
        "http://a.example/1": {"file": "a.example.1.html", "with": ["一个约定，信守15年", "Eye"],
                               "without": ["Impressum"]},
        "http://b.example/2": {"file": "b.example.2.html", "with": ["other page"]},
        "http://c.example/3": {"file": "c.example.3.html", "author": "x"}}), "utf-8")
    git(mirror, "init", "-q")
    git(mirror, "add", ".")
    git(mirror, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "x")
    text = page_references.trafilatura_text
    assert text(mirror, "tests/eval/a.example.1.html") == "一个约定，信守15年\nEye"
    assert text(mirror, "tests/cache/c.example.3.html") == ""
    assert text(mirror, "tests/cache/d.example.4.html") == ""


def test_a_scanned_chinese_pdf_is_read_by_tesseract_in_chinese_page_by_page(
        tmp_path: Path) -> None:
    """Tika OCRs a scanned PDF in English only (Latin junk for a Chinese page): the reference
    of a scanned PDF in OCR_LANGUAGES is Tesseract in that language over its rendered pages,
    every page, in order."""
    import pymupdf

    from bench.format_public import squeeze, tesseract_text
    from bench.format_sources import OCR_LANGUAGES

    assert OCR_LANGUAGES["small_ocr.pdf"] == "chi_sim"
    text = tmp_path / "text.pdf"
    with pymupdf.open() as pdf:
        for line in ("商品的使用价值为商品学", "交换价值首先表现为量的关系"):
            page = pdf.new_page(width=420, height=200)
            page.insert_text((30, 100), line, fontname="china-s", fontsize=22)
        pdf.save(text)
    scanned = tmp_path / "scanned.pdf"
    with pymupdf.open(text) as pdf, pymupdf.open() as out:
        for page in pdf:
            picture = page.get_pixmap(dpi=200)
            out.new_page(width=page.rect.width, height=page.rect.height).insert_image(
                page.rect, pixmap=picture)
        out.save(scanned)
    with pymupdf.open(scanned) as pdf:
        assert not "".join(page.get_text() for page in pdf).strip()  # no text layer
    read = squeeze(tesseract_text(scanned, "chi_sim"))
    assert "使用价值" in read and "交换价值" in read
    assert read.index("使用价值") < read.index("交换价值")
