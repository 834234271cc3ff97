"""Phrase recall on real public test documents of every format kbflow reads (issue #40).

    .venv/bin/python -m bench.format_public [--collect] [--tika-jar JAR] [--collection NAME]

The corpus (`bench/format_corpus/<collection>/`, listed with repository, commit, path and
licence in its PROVENANCE.md) is test documents of other projects' test suites, none of them
used before by this project (none of Docling's). First round, the formats kbflow reads since
issue #40: Apache Tika's, ofdrw's (Chinese OFD), python-oxmsg's, xlrd's, pandoc's and
php-imap's (mail in several charsets). Second round, the formats it read before: kreuzberg's
(PDFs text, scanned and turned by 90/270°, pictures incl. Chinese, OOXML, CSV, Markdown, text),
Apache POI's (Word, slides and sheets incl. Chinese, headers, notes, charts), python-docx's and
python-pptx's, mozilla/readability's web pages (Chinese and Japanese among them), chardet's and
charset_normalizer's text in Big5, Shift-JIS, UTF-16 with a BOM, GB18030 …, pdfminer.six's
(Japanese) and PyMuPDF's (a Chinese table) PDFs. Third round, legacy and ODF files:
odftoolkit's and odfpy's (charts, embedded objects, a Chinese .ods), easyexcel's and hutool's
(Chinese .xls), and POI's Office files with EMF/WMF pictures (`metafiles`, with one Chinese
file made here). Fourth round, workbooks Kingsoft WPS Office saved as .et and .xlsx
(`kingsoft`, SheetJS's). Fifth round, played as held-out files a new user brings:
markitdown's, unstructured's and poi-tl's (Chinese Word templates); then PHPOffice's
(PHPWord, PhpSpreadsheet, PHPPresentation), mailparser's, msg-extractor's, epub.js's and
zc310/ofd's office, mail, EPUB and OFD files, and MimeKit's mails. Round 2 of the held-out play for
PDFs and pictures: pdfplumber's and camelot's PDFs (Chinese reports, a lab report, tables shown
sideways, scans) and TableStructureRec's pictures of tables; round 3: MinerU's, CnOCR's,
Pix2Text's, RapidOCRPDF's, the PDF Association's and tabula-java's PDFs (a scanned Chinese
book, a Chinese deck and handout, papers, PDF 2.0 UTF-8 strings, Arabic) and pictures (a
Chinese train ticket, a paragraph, a formula line). `--collect` copies them
(with `--collection`, only those) from the bare git directories the search tool's `fetch`
leaves under /work/.mirror (test documents only).

Reference: what a person sees, taken from an independent extraction: Apache Tika's plain text
(`tika-app -t`, from Maven Central: `mvn dependency:get -Dartifact=org.apache.tika:tika-app:
2.9.2`; it reads embedded attachments too), or for OFD, which Tika does not read, every
TextCode of the pages and their templates in file order; a file Tika prints nothing of
(Microsoft Works' .wps) has a person's reading of it instead where one was made
(bench/format_visible.py's `documents`). Tika OCRs pictures and scanned PDF
pages with Tesseract (English; Debian's tesseract-ocr), a different engine from kbflow's; a
picture of Chinese text, or a scanned Chinese PDF's pages rendered at 300 dpi, is read by
Tesseract with `chi_sim` (`tesseract-ocr-chi-sim`). A web
page's reference is Tika's text of readability's expected main content of it, not of the whole
page (menus and footers are not what a reader of the article sees); for newspaper's and Zyte's
pages (sixth round, held-out play for web pages), the main content their own test expects, as
text, and for trafilatura's the phrases its evaluation expects (bench/page_references.py;
Zyte's gzipped pages are stored unpacked). chardet's files are
decoded with the encoding their test folder declares, not guessed by Tika, as are other
projects' text files whose test declares theirs (`DECLARED_FILES`). Up to 25 phrases per file
are sampled from its lines (8 characters of a CJK line, 5 words of another), seeded by the
file's name. A phrase is recalled when it occurs in the text of the file's chunks (chunk text,
prefix and title path), compared on letters and digits only (NFKC, lowercased): table pipes,
tabs and punctuation differ between extractors and are not what a reader searches for.

A file is READY with nothing when it parses and no chunk holds a letter or digit of it; a file
whose chunks hold its text but none of its phrases is a recall of 0, not that (pandoc's
footnote.odt: Tika's one line puts the footnote's text inside the sentence it annotates).

Next to Tika's figure, office files are also scored against a visible reference, the phrases
LibreOffice's rendering of the file shows, and pictures against a person's transcription of
them (bench/format_visible.py, which lists each exclusion in bench/format_visible_excluded.md).
A file that fails holding no letter or digit (in that rendering, or in the reference of other
formats), or only phrases a person found are not text (a fax picture's PDF whose one phrase is
its Title metadata), is counted as "no text", not as failed.

Every third file of each collection (sorted by name) is held out: nothing here was tuned on
it, and its recall is reported apart so later tuning on the rest can be checked against it.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import shutil
import subprocess
import tempfile
import unicodedata
import zipfile
from pathlib import Path

import lxml.html
import pymupdf
from lxml import etree

from bench import format_visible, page_references, write_section
from bench.format_report import SECTION, FileResult, report
from bench.format_sources import (
    DECLARED_ENCODINGS,
    DECLARED_FILES,
    OCR_LANGUAGES,
    SOURCES,
    TIKA_FILES,
)
from ingest.chunk import chunk_document
from ingest.parse import ParseError, parse_document, read_meta

CORPUS = Path(__file__).with_name("format_corpus")
RESULTS = Path(__file__).with_name("RESULTS.md")
MIRRORS = Path("/work/.mirror")
EXPECTED = CORPUS / "_expected"
DEFAULT_TIKA = Path.home() / ".m2/repository/org/apache/tika/tika-app/2.9.2/tika-app-2.9.2.jar"
PHRASES_PER_FILE = 25
# Tika prints an Excel sheet's print header/footer as its raw codes ("&C&\"Times\"&12Page &P"):
# not text a person sees on a page
_PRINT_CODES = re.compile(r'&[LCRAPNDTFZGKBIUSEXY"\d]')
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def collect(only: list[str] | None = None, corpus: Path = CORPUS,
            mirrors: Path = MIRRORS) -> None:
    """Copy the test documents of the collections (`only` these, else all) from the fetched
    mirrors and rewrite their rows of PROVENANCE.md. The other collections' rows, the rows of
    files made here (not copied: "made here" in the repository column) and the notes after the
    table are kept as written."""
    provenance = corpus / "PROVENANCE.md"
    kept, notes = _provenance(provenance.read_text("utf-8") if provenance.exists() else "")
    rows = []
    for collection, (repo, licence, paths) in SOURCES.items():
        if only and collection not in only:
            rows += kept.pop(collection, [])
            continue
        git = mirrors / repo.replace("/", "+") / "repo"
        commit = _git(git, "rev-parse", "HEAD").strip()
        if collection == "tika":
            listing = _git(git, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
            paths = [next(p for p in listing if p.endswith("/" + name) and "test-documents"
                          in p) for name in TIKA_FILES]
        target = corpus / collection
        target.mkdir(parents=True, exist_ok=True)
        for entry in paths:
            path, name = entry if isinstance(entry, tuple) else (entry, Path(entry).name)
            (target / name).write_bytes(_git_epub(git, path) if path.endswith("/")
                                         else page_references.page_bytes(git, path))
            rows.append(f"| {collection}/{name} | {repo} @ {commit[:12]} | {path} | {licence} |")
            if collection in page_references.EXPECTED:  # the reference: its test's text
                expected = corpus / "_expected" / collection / f"{name}.txt"
                expected.parent.mkdir(parents=True, exist_ok=True)
                expected.write_text(page_references.EXPECTED[collection][1](git, path), "utf-8")
            if collection == "readability":  # the reference: the page's expected main content
                expected = corpus / "_expected" / collection / name
                expected.parent.mkdir(parents=True, exist_ok=True)
                expected.write_bytes(_git_bytes(git, path.replace("source.html",
                                                                  "expected.html")))
        rows += [row for row in kept.pop(collection, []) if " | made here | " in row]
    rows += [row for other in kept.values() for row in other]  # collections no longer declared
    provenance.write_text(
        "# Public test documents for bench/format_public.py (unchanged bytes)\n\n"
        "Held out: every third file of each collection, sorted by name (see the bench). "
        "`_expected/readability/` holds each page's expected.html (its reference), "
        "`_expected/newspaper/`, `_expected/article-extraction/` and `_expected/cx-extractor/` "
        "the text their project's test expects, `_expected/trafilatura/` the phrases "
        "trafilatura's evaluation expects (bench/page_references.py).\n\n"
        "| file | repository @ commit | path | licence |\n|---|---|---|---|\n"
        + "\n".join(rows) + "\n" + notes, encoding="utf-8")


def _provenance(text: str) -> tuple[dict[str, list[str]], str]:
    """PROVENANCE.md's file rows by collection, and the notes written after its table."""
    rows: dict[str, list[str]] = {}
    lines = text.splitlines(keepends=True)
    table = [n for n, line in enumerate(lines) if line.startswith("| ") and "/" in line
             and not line.startswith("| file |")]
    for line in (lines[n] for n in table):
        rows.setdefault(line[2:].split("/", 1)[0], []).append(line.rstrip("\n"))
    return rows, "".join(lines[table[-1] + 1:]) if table else ""


def _git_bytes(git: Path, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(git), "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def _git_epub(git: Path, folder: str) -> bytes:
    """An EPUB folder packed as its .epub: `mimetype` first and stored, the rest deflated;
    media the snapshot lacks (large audio, no text) are left out."""
    names = sorted(_git(git, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only",
                          "HEAD", folder).splitlines(),
                   key=lambda name: name != folder + "mimetype")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in names:
            try:
                data = _git_bytes(git, name)
            except subprocess.CalledProcessError:
                continue
            entry = zipfile.ZipInfo(name.removeprefix(folder))  # dated 1980: same bytes each time
            entry.compress_type = (zipfile.ZIP_STORED if name.endswith("/mimetype")
                                   else zipfile.ZIP_DEFLATED)
            archive.writestr(entry, data)
    return out.getvalue()


def _git(git: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(git), *args], check=True, capture_output=True,
                          text=True).stdout


def files() -> list[tuple[str, Path, bool]]:
    out = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir() and p.name != "_expected"):
        for index, path in enumerate(sorted(folder.iterdir())):
            out.append((folder.name, path, index % 3 == 2))
    return out


def tika_texts(paths: list[Path], jar: Path) -> dict[Path, str]:
    """Tika's plain text of each file, in one JVM (batch mode)."""
    with tempfile.TemporaryDirectory() as tmp:
        source, out = Path(tmp) / "in", Path(tmp) / "out"
        source.mkdir()
        for number, path in enumerate(paths):
            shutil.copy(path, source / f"{number:03d}{path.suffix}")
        subprocess.run(["java", "-jar", str(jar), "-t", "-i", str(source), "-o", str(out)],
                       capture_output=True, timeout=1800)
        texts = {}
        for number, path in enumerate(paths):
            result = out / f"{number:03d}{path.suffix}.txt"
            texts[path] = result.read_text("utf-8", "replace") if result.exists() else ""
        return texts


def ofd_text(path: Path) -> str:
    """Every TextCode of an OFD's pages and of the templates a page lays over, in file order,
    one per line (no layout, no reading order). A template no page uses is never shown."""
    def tree(data: bytes) -> etree._Element:
        return etree.parse(io.BytesIO(data), etree.XMLParser(
            resolve_entities=False, no_network=True)).getroot()

    def named(root: etree._Element, name: str) -> list[etree._Element]:
        return [e for e in root.iter() if isinstance(e.tag, str)
                and etree.QName(e).localname == name]

    with zipfile.ZipFile(path) as archive:
        parts = {name: tree(archive.read(name)) for name in sorted(archive.namelist())
                 if name.endswith(("Content.xml", "Document.xml"))}
    used = {t.get("TemplateID") for name, root in parts.items() if "/Pages/" in name
            for t in named(root, "Template")}
    shown = {name for name in parts if "/Pages/" in name and name.endswith("Content.xml")}
    for name, root in parts.items():
        if name.endswith("Document.xml"):
            folder = name.rsplit("/", 1)[0]
            shown |= {f"{folder}/{t.get('BaseLoc', '').lstrip('/')}"
                      for t in named(root, "TemplatePage") if t.get("ID") in used}
    return "\n".join(e.text or "" for name in sorted(shown) if name in parts
                     for e in named(parts[name], "TextCode"))


def reference(collection: str, path: Path, texts: dict[Path, str]) -> str:
    """What a person reading the file sees, from outside kbflow (see the module docstring)."""
    if path.suffix == ".ofd":
        return ofd_text(path)
    if collection == "chardet":
        return declared_text(path)
    if collection in page_references.EXPECTED:
        return (EXPECTED / collection / f"{path.name}.txt").read_text("utf-8")
    if path.name in DECLARED_FILES:
        return path.read_bytes().decode(DECLARED_FILES[path.name])
    if path.name in OCR_LANGUAGES:  # Tika calls Tesseract in English only
        return tesseract_text(path, OCR_LANGUAGES[path.name])
    tika = texts.get(_tika_input(collection, path) or path, "")
    return format_visible.reference_text(
        collection, path, format_visible.without_cell_notes(path, tika))


def tesseract_text(path: Path, language: str) -> str:
    """Tesseract's text of a picture, or of a scanned PDF's pages rendered at 300 dpi (what
    Tika does, in `language` instead of English)."""
    if path.suffix != ".pdf":
        return subprocess.run(["tesseract", str(path), "-", "-l", language],
                              capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp, pymupdf.open(path) as pdf:
        pages = []
        for number, page in enumerate(pdf):
            picture = Path(tmp) / f"{number:04d}.png"
            page.get_pixmap(dpi=300).save(picture)
            pages.append(tesseract_text(picture, language))
        return "\n".join(pages)


def _tika_input(collection: str, path: Path) -> Path | None:
    """The file Tika reads for `path`'s reference: a page's expected main content for
    readability's pages; none where the reference is made otherwise."""
    if collection == "readability":
        return EXPECTED / collection / path.name
    if (path.suffix == ".ofd" or collection in {"chardet", *page_references.EXPECTED}
            or path.name in OCR_LANGUAGES
            or path.name in DECLARED_FILES):
        return None
    return path


def declared_text(path: Path) -> str:
    """chardet's test files decoded as the folder they come from says (the name's prefix);
    a page's text without its head (title, metadata), scripts and styles."""
    declared = next(name for name in DECLARED_ENCODINGS if path.name.startswith(name + "_"))
    text = path.read_bytes().decode(DECLARED_ENCODINGS[declared], "replace")
    if path.suffix != ".html":
        return text
    root = lxml.html.fromstring(text)
    for element in root.xpath("//head | //script | //style"):
        element.drop_tree()
    return str(root.text_content())


def squeeze(text: str) -> str:
    """Letters and digits only, NFKC, lowercased."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if unicodedata.category(c)[0] in "LN")


def window(line: str, rng: random.Random) -> str:
    """A phrase of a line: 8 characters of a mostly Chinese line, else 5 words, from a random
    place."""
    if len(_CJK.findall(line)) * 2 >= len(squeeze(line)):
        start = rng.randrange(max(len(line) - 8, 0) + 1)
        return line[start:start + 8]
    words = line.split()
    start = rng.randrange(max(len(words) - 5, 0) + 1)
    return " ".join(words[start:start + 5])


def phrases(reference: str, seed: str) -> list[str]:
    rng = random.Random(seed)
    candidates = []
    for line in reference.splitlines():
        line = unicodedata.normalize("NFKC", line).strip()
        if len(squeeze(line)) < 6 or _PRINT_CODES.match(line):
            continue
        candidates.append(window(line, rng))
    candidates = [c for c in dict.fromkeys(candidates) if len(squeeze(c)) >= 4]
    text = "".join(line.strip() for line in reference.splitlines())
    if not candidates and len(_CJK.findall(text)) >= 6:
        # vertical CJK (pdfminer's jo.pdf): one character a line; read as lines of 40
        return phrases("\n".join(text[i:i + 40] for i in range(0, len(text), 40)), seed)
    return rng.sample(candidates, min(PHRASES_PER_FILE, len(candidates)))


def run(jar: Path, only: list[str] | None = None) -> list[FileResult]:
    import time

    entries = [e for e in files() if not only or e[0] in only]
    texts = tika_texts([t for c, p, _ in entries if (t := _tika_input(c, p))], jar)
    rendered = format_visible.rendered_texts(((c, p) for c, p, _ in entries), jar)
    results = []
    for collection, path, held_out in entries:
        source = reference(collection, path, texts)
        wanted = phrases(source, path.name)
        started = time.perf_counter()
        try:
            meta, data = read_meta(path, path.parent, "bench", ["all"])
            doc = parse_document(meta, data)
            chunks = chunk_document(doc)
            status = "ok"
        except (ParseError, ValueError) as exc:
            chunks, status = [], f"failed: {exc}"[:160]
        seconds = round(time.perf_counter() - started, 1)
        indexed = squeeze("\n".join(f"{' '.join(c.title_path)} {c.prefix} {c.text}"
                                    for c in chunks))
        recalled = sum(squeeze(p) in indexed for p in wanted)
        if status == "ok" and not indexed:  # READY, and no chunk holds a letter or digit
            status = "ready-with-nothing"
        shown = rendered.get(path)
        by_hand = format_visible.not_text(collection, path)
        kept, excluded = format_visible.split(  # not rendered: all but `not_text`
            wanted, source if shown is None else shown, squeeze, by_hand)
        if status.startswith("failed") and (not squeeze(source if shown is None else shown) or (
                wanted and all(p in by_hand for p in wanted))):  # all it holds is not text
            status = "no text: " + status.removeprefix("failed: ")
        results.append(FileResult(
            collection, path.name, held_out, len(wanted), recalled, status, seconds,
            len(kept), sum(squeeze(p) in indexed for p in kept),
            [(p, squeeze(p) in indexed, "") for p in excluded]))
        print(f"{collection}/{path.name}: {recalled}/{len(wanted)} visible "
              f"{results[-1].visible_recalled}/{len(kept)} {status} {seconds}s", flush=True)
    placed = format_visible.places([(path, [p for p, *_ in r.excluded]) for (_, path, _), r
                                    in zip(entries, results, strict=True)], jar, squeeze)
    for r, where in zip(results, placed, strict=True):
        r.excluded = [(p, ok, w) for (p, ok, _), w in zip(r.excluded, where, strict=True)]
    format_visible.write_excluded([(f"{r.collection}/{r.name}", *e) for r in results
                                   for e in r.excluded], only)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collect", action="store_true", help="copy the corpus from mirrors")
    parser.add_argument("--tika-jar", type=Path, default=DEFAULT_TIKA)
    parser.add_argument("--out", type=Path, help="per-file results as JSON")
    parser.add_argument("--collection", action="append", help="only these collections")
    parser.add_argument("--results", action="store_true", help="write bench/RESULTS.md")
    args = parser.parse_args()
    if args.collect:
        collect(args.collection)
    results = run(args.tika_jar, args.collection)
    if args.out:
        args.out.write_text(json.dumps([r.__dict__ for r in results], ensure_ascii=False,
                                       indent=1), encoding="utf-8")
    text = report(results)
    print(text)
    if args.results:
        write_section(RESULTS, SECTION, text)


if __name__ == "__main__":
    main()
