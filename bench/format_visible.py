"""The visible reference of bench.format_public: of Tika's phrases of an office file, those an
office application shows (issue #40).

Tika's text of an office file holds more than a reader sees: the core-properties title
("PowerPoint Presentation"), embedded objects' storage names and a chart's data workbook, Word
field codes, hidden text and comments, phonetic guides, empty sheets' tab names, master
placeholder prompts. Here a Tika phrase counts as visible when it is also in what LibreOffice
renders of the file: the headless PDF export (writer/calc/impress, sheets one page each so rows
are not cut across pages, slides with their notes pages, as notes are what a presenter reads;
for a workbook also its HTML export, whose cells are whole where the page clips them),
its text taken by PyMuPDF in stream order and in position order, compared on the bench's
letters-and-digits normalisation. Pictures in the rendering are read by Tesseract in English,
as Tika reads them, so text inside a shown picture stays in (a document's thumbnail, which no
page shows, does not). The renderings are cached as text in `bench/.cache/` (ignored by git,
as pytest's cache is; about 0.6 MB, a first run takes ~5 min): each holds the SHA-256 of the
file it was made from and is remade when the file changes.

Bias: kbflow reads the legacy formats (.doc .xls .ppt .rtf .odt .ods .odp .wps) through
LibreOffice too, so for them this reference shares LibreOffice's blind spots. To size that,
each excluded phrase is placed in Tika's XHTML (`tika -x`, cached there too): metadata title,
embedded object, picture OCR, header/footer or shape, notes, master slide, or body text.
Excluded phrases Tika puts in body text are where LibreOffice and Tika disagree about visible
text; `EXCLUDED` lists every exclusion with its place, to audit.

Pictures (.jpg .jpeg .png): Tika's reference is Tesseract's reading, whose misreads ("分池" for
分泌) would count as kbflow's misses. A person's transcription of each picture, made by eye and
kept in `READ_BY_HAND` with who made it and how, stands in for the rendering: a Tika phrase of a
picture is visible when the transcription holds it; each one left out is listed in `EXCLUDED`
with what the picture shows there. The same file lists, with a reason, phrases of office files
that are Tesseract's reading of a photograph holding no text a person reads as such (a Greek
manuscript read as English); those are left out although the rendering's OCR shows them too.

Pictures inside files: Tika OCRs them with Tesseract too, and so does the rendering, so its
misreads would count as kbflow's misses there as well. Each such picture read by a person is in
`READ_BY_HAND`'s `in_files`, under its file and its key: for a rendered office file the SHA-256
of the picture's pixels as the rendering holds them (the cache keeps each picture's Tesseract
text under that key), whose transcription replaces Tesseract's; for EPUB and mail, which are not
rendered, the picture's name in the file, and the reference is Tika's text without its OCR
blocks plus the file's transcriptions. Tika's own labels that the file's application does not
show (`TOOL_LABELS`, Tika's "Recipients" in a .msg's header, its name for an attached item)
are left out like `not_text`.

A file Tika prints nothing of (Microsoft Works' .wps) would have no phrase: a person's reading
of it (`READ_BY_HAND`'s `documents`) is its reference and, as a picture's transcription does,
stands in for its rendering.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import lxml.etree as etree
import lxml.html
import pymupdf

BENCH = Path(__file__).parent
CACHE = BENCH / ".cache"
RENDERED = CACHE / "rendered_v2"  # v2: each picture's OCR kept under its key
XHTML_CACHE = CACHE / "tika_xhtml"
EXCLUDED = BENCH / "format_visible_excluded.md"
READ_BY_HAND = BENCH / "format_visible_read.json"
# suffix -> LibreOffice's PDF export for its application
_PICTURES = ('"UseLosslessCompression":{"type":"boolean","value":"true"},'
             '"ReduceImageResolution":{"type":"boolean","value":"false"}')
_WRITER = f"pdf:writer_pdf_Export:{{{_PICTURES}}}"
_CALC = (f'pdf:calc_pdf_Export:{{{_PICTURES},'
         '"SinglePageSheets":{"type":"boolean","value":"true"}}')
_IMPRESS = (f'pdf:impress_pdf_Export:{{{_PICTURES},'
            '"ExportNotesPages":{"type":"boolean","value":"true"}}')
EXPORTS = {".doc": _WRITER, ".docx": _WRITER, ".odt": _WRITER, ".rtf": _WRITER,
           ".wps": _WRITER, ".xls": _CALC, ".xlsx": _CALC, ".xlsm": _CALC, ".ods": _CALC,
           ".et": _CALC, ".ppt": _IMPRESS, ".pptx": _IMPRESS, ".pptm": _IMPRESS,
           ".odp": _IMPRESS, ".dps": _IMPRESS}
# formats kbflow itself reads through LibreOffice (ingest/parse/convert.py)
CONVERTED = {".doc", ".xls", ".ppt", ".rtf", ".odt", ".ods", ".odp", ".wps", ".et", ".dps"}
# Tika XHTML class -> where an excluded phrase sits; text under none of them is body text
_KINDS = {"package-entry": "embedded object", "embedded": "embedded object",
          "ocr": "picture OCR", "header": "header/footer/shape", "footer": "header/footer/shape",
          "outside": "header/footer/shape", "slide-notes": "notes", "notes": "notes",
          "notes-content": "notes", "note": "notes", "slide-master-content": "master slide",
          "comment": "comment", "annotation": "comment"}
BODY, HEAD, OCR, UNPLACED = "body", "metadata title", "picture OCR", "unplaced"
TIMEOUT_S = 600
MIN_PICTURE_PX = 16  # pictures smaller on a side (rules, bullets) are not read
_PART, _PICTURE = "\n\f\n", "picture "  # a cached part: "picture <key>\n<Tesseract's text>"
# Tika's labels that the application showing the file does not, by suffix, with the reason
TOOL_LABELS = {".msg": {"Recipients": (
    "Tika's own label for the recipients' addresses in its mail header list (From, To, "
    "Recipients); Outlook shows To:/Cc: and the names, nowhere 'Recipients'"),
    "__substg1.0_3701000D.msg": (
        "Tika's name for an Outlook item attached to the message: the compound file's storage "
        "name (PidTagAttachDataObject) with .msg added; Outlook shows the attachment's display "
        "name (PidTagDisplayName: 'Inner mail', '無題'), and no property of the file holds this "
        "name (checked on msgreader's four such files, 2026-12-06)")}}
Squeeze = Callable[[str], str]  # the bench's normalisation (bench.format_public.squeeze)


def is_office(path: Path) -> bool:
    return path.suffix.lower() in EXPORTS


def rendered_texts(entries: Iterable[tuple[str, Path]], jar: Path | None = None
                   ) -> dict[Path, str | None]:
    """LibreOffice's rendering of each office file as text, from the committed cache; the
    missing or stale ones are rendered now (one LibreOffice run per export filter). None
    where LibreOffice gave no PDF (then the file keeps Tika's phrases). A picture read by hand
    gets its transcription instead, and so does a document read by hand (`documents`, not
    rendered), and so do pictures inside files (with Tika's `jar`, those of EPUB and mail
    too)."""
    entries = list(entries)
    read = _read_by_hand()
    documents = read.get("documents", {})
    office = [(c, p) for c, p in entries if is_office(p) and f"{c}/{p.name}" not in documents]
    stale = [(c, p) for c, p in office if _cached(_rendered_path(c, p), p) is None]
    for export in sorted({EXPORTS[p.suffix.lower()] for _, p in stale}):
        _render([(c, p) for c, p in stale if EXPORTS[p.suffix.lower()] == export], export)
    inside = read.get("in_files", {})
    texts: dict[Path, str | None] = {}
    for c, p in office:
        cached = _cached(_rendered_path(c, p), p)
        texts[p] = None if cached is None else with_readings(
            cached, inside.get(f"{c}/{p.name}", {}), f"{c}/{p.name}")
    unrendered = [p for c, p in entries if not is_office(p) and f"{c}/{p.name}" in inside]
    xhtml = tika_xhtml(unrendered, jar) if jar and unrendered else {}
    texts.update({p: without_ocr(xhtml[p]) + _PART + "\n".join(
        line for picture in inside[f"{c}/{p.name}"].values() for line in picture["lines"])
        for c, p in entries if p in xhtml})
    texts.update({p: "\n".join(entry["lines"]) for c, p in entries
                  if (entry := read["pictures"].get(f"{c}/{p.name}")
                      or documents.get(f"{c}/{p.name}"))})
    return texts


def reference_text(collection: str, path: Path, tika: str) -> str:
    """Tika's text of a file, or where it holds no letter or digit, a person's reading of the
    file (`documents`) when there is one: a file Tika cannot read is still measured."""
    if any(c.isalnum() for c in tika):
        return tika
    entry = _read_by_hand().get("documents", {}).get(f"{collection}/{path.name}")
    return "\n".join(entry["lines"]) if entry else tika


def with_readings(text: str, readings: Mapping[str, Mapping[str, Any]], file: str) -> str:
    """A cached rendering's text with each picture's Tesseract text replaced by a person's
    transcription where `readings` (the file's `in_files` entry) has one; a picture with text
    that nobody read keeps Tesseract's, and is named so that it gets read."""
    parts = []
    for part in text.split(_PART):
        if part.startswith(_PICTURE):
            key, _, ocr = part.removeprefix(_PICTURE).partition("\n")
            if key in readings:
                part = "\n".join(readings[key]["lines"])
            else:
                part = ocr
                if any(c.isalnum() for c in ocr):
                    print(f"{file}: picture {key} not read by a person", flush=True)
        if part.strip():
            parts.append(part)
    return _PART.join(parts)


def without_ocr(xhtml: str) -> str:
    """Tika's text of a file, in order, less its pictures' OCR (the XHTML's `ocr` blocks)."""
    return "\n".join(text for kind, text in _pieces(xhtml) if kind != OCR)


def _read_by_hand() -> dict[str, dict[str, Any]]:
    """`READ_BY_HAND`: transcriptions of pictures, readings of their left-out phrases, phrases
    of office files that are not text (see the module docstring)."""
    data: dict[str, dict[str, Any]] = json.loads(READ_BY_HAND.read_text("utf-8"))
    return data


def not_text(collection: str, path: Path) -> dict[str, str]:
    """Phrases of a file that are not text a person sees, each with the reason."""
    return _not_text(f"{collection}/{path.name}")


def without_cell_notes(path: Path, text: str) -> str:
    """Tika's text of a workbook less its cells' notes ("author: text", which Tika writes
    after the cell's value): a note shows only while the pointer rests on its cell, and
    kbflow leaves comments out by design (`parse_include_comments`), as Word's are left out
    by their place in Tika's XHTML."""
    if path.suffix.lower() not in {".xlsx", ".xlsm"}:
        return text
    import openpyxl  # only the workbooks' references need it

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl's notes on extensions it does not read
        workbook = openpyxl.load_workbook(path, data_only=True)
    for sheet in workbook.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if cell.comment is None:
                    continue
                words = f"{cell.comment.author or ''}: {cell.comment.text}".split()
                text = re.sub(r"\s*".join(map(re.escape, words)), "\n", text, count=1)
    return text


def _not_text(file: str) -> dict[str, str]:
    listed: dict[str, str] = _read_by_hand()["not_text"].get(file, {})
    return {**TOOL_LABELS.get(Path(file).suffix.lower(), {}), **listed}


def _rendered_path(collection: str, path: Path) -> Path:
    return RENDERED / collection / f"{path.name}.txt"


def _store(target: Path, source: Path, text: str) -> None:
    """Cache `text` made from `source`, under a cache folder git ignores."""
    target.parent.mkdir(parents=True, exist_ok=True)
    (CACHE / ".gitignore").write_text("*\n", "utf-8")
    target.write_text(f"sha256 {_digest(source)}\n{text}", "utf-8")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cached(cache: Path, source: Path) -> str | None:
    """The cached text when its first line names `source`'s current SHA-256."""
    if not cache.is_file():
        return None
    head, _, text = cache.read_text("utf-8").partition("\n")
    return text if head == f"sha256 {_digest(source)}" else None


def _render(entries: list[tuple[str, Path]], export: str) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        work = Path(tmp)
        for number, (_, path) in enumerate(entries):
            shutil.copy(path, work / f"{number:03d}{path.suffix}")
        sources = [str(work / f"{n:03d}{p.suffix}") for n, (_, p) in enumerate(entries)]
        subprocess.run(["soffice", f"-env:UserInstallation={(work / 'profile').as_uri()}",
                        "--headless", "--norestore", "--convert-to", export, "--outdir",
                        str(work / "out"), *sources], capture_output=True, timeout=TIMEOUT_S,
                       env={**os.environ, "HOME": str(work)})
        if export == _CALC:  # each cell whole, as the sheet shows it when selected
            subprocess.run(["soffice", f"-env:UserInstallation={(work / 'profile').as_uri()}",
                            "--headless", "--norestore", "--convert-to", "html", "--outdir",
                            str(work / "html"), *sources], capture_output=True,
                           timeout=TIMEOUT_S, env={**os.environ, "HOME": str(work)})
        for number, (collection, path) in enumerate(entries):
            pdf, html = work / "out" / f"{number:03d}.pdf", work / "html" / f"{number:03d}.html"
            if pdf.is_file():
                cells = sheet_cells(html) if html.is_file() else ""
                _store(_rendered_path(collection, path), path, pdf_text(pdf) + cells)


def pdf_text(pdf: Path) -> str:
    """Every page's text in stream order, then again in position order (rows of a sheet
    rendered as separate cells can come in either), then the text of each picture the
    rendering shows, read by Tesseract as Tika reads pictures (English), under the picture's
    key (`picture_key`): a phrase matches in one or another."""
    with pymupdf.open(pdf) as document:
        pages = list(document)
        stream = "".join(page.get_text() for page in pages)
        ordered = "".join(page.get_text(sort=True) for page in pages)
        pictures = {xref: (width, height) for page in pages
                    for xref, _, width, height, *_ in page.get_images(full=True)}
        ocr = [f"{_PICTURE}{picture_key(pymupdf.Pixmap(document, xref))}\n"
               + _ocr(document.extract_image(xref)) for xref, (width, height) in
               sorted(pictures.items()) if min(width, height) >= MIN_PICTURE_PX]
    return _PART.join([stream] + ([ordered] if ordered != stream else []) + ocr)


def picture_key(pixels: pymupdf.Pixmap) -> str:
    """A picture's key in `in_files`: the SHA-256 of its pixels (16 hex digits), the same
    whichever way the PDF compresses them."""
    return hashlib.sha256(pixels.samples).hexdigest()[:16]


def sheet_cells(html: Path) -> str:
    """A workbook's cells, row by row, and its sheets' names, from LibreOffice's HTML export
    (which leaves out sheets without a cell, and names sheets only when two or more are
    filled). The printed page clips a cell's text where the next cell is filled; the sheet
    shows it whole in the cell's editor."""
    root = lxml.html.fromstring(html.read_bytes())
    names = [str(e.text_content()) for e in root.xpath("//h1/em")]
    rows = ["\t".join(str(c.text_content()) for c in row.xpath("./td"))
            for row in root.xpath("//tr")]
    return "\n\f\n" + "\n".join(names + rows)


def _ocr(image: dict[str, object]) -> str:
    data = image.get("image")
    if not isinstance(data, bytes):
        return ""
    with tempfile.NamedTemporaryFile(suffix=f".{image.get('ext', 'png')}") as picture:
        picture.write(data)
        picture.flush()
        done = subprocess.run(["tesseract", picture.name, "-", "-l", "eng"],
                              capture_output=True, text=True, timeout=120)
    return done.stdout


def split(wanted: list[str], rendered: str, squeeze: Squeeze,
          not_text: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """The phrases the rendering shows, and the ones it does not or that are `not_text`
    (the exclusions). A phrase is matched within one part (the pages' text, a picture's),
    not across two: squeezed, a page ending "worksheet" and a picture's "1 2 3 4" would
    show "Sheet1"."""
    shown = [squeeze(part) for part in rendered.split(_PART)]
    kept = [p for p in wanted if any(squeeze(p) in part for part in shown)
            and p not in (not_text or {})]
    return kept, [p for p in wanted if p not in kept]


def tika_xhtml(paths: list[Path], jar: Path) -> dict[Path, str]:
    """Tika's XHTML of each file (`tika -x`, one JVM), cached by the file's SHA-256."""
    missing = [p for p in paths if _cached(_xhtml_path(p), p) is None]
    if missing:
        with tempfile.TemporaryDirectory() as tmp:
            source, out = Path(tmp) / "in", Path(tmp) / "out"
            source.mkdir()
            for number, path in enumerate(missing):
                shutil.copy(path, source / f"{number:03d}{path.suffix}")
            subprocess.run(["java", "-jar", str(jar), "-x", "-i", str(source), "-o", str(out)],
                           capture_output=True, timeout=1800)
            for number, path in enumerate(missing):
                result = out / f"{number:03d}{path.suffix}.xml"
                if result.exists():
                    _store(_xhtml_path(path), path, result.read_text("utf-8", "replace"))
    return {p: _cached(_xhtml_path(p), p) or "" for p in paths}


def _xhtml_path(path: Path) -> Path:
    return XHTML_CACHE / f"{_digest(path)[:16]}{path.suffix}.xml"


def kinds(xhtml: str, squeeze: Squeeze) -> dict[str, str]:
    """Tika's XHTML text by where it sits (_KINDS, the head's title, body), each squeezed."""
    parts: dict[str, list[str]] = {}
    for kind, text in _pieces(xhtml):
        parts.setdefault(kind, []).append(text)
    return {kind: squeeze(" ".join(texts)) for kind, texts in parts.items()}


def _pieces(xhtml: str) -> Iterator[tuple[str, str]]:
    """Tika's XHTML text in document order, each piece with where it sits."""
    if not xhtml.strip():
        return
    root = etree.fromstring(xhtml.encode("utf-8"), etree.XMLParser(
        recover=True, resolve_entities=False, no_network=True, huge_tree=True))
    if root is None:
        return
    for event, element in etree.iterwalk(root, events=("start", "end")):
        if not isinstance(element.tag, str):
            continue
        # an element's text sits in its place, its tail (after its end) in its parent's
        text, owner = ((element.text, element) if event == "start"
                       else (element.tail, element.getparent()))
        if text:
            yield _kind(owner), text


def _kind(element: etree._Element | None) -> str:
    while element is not None:
        name = etree.QName(element).localname
        if name == "head":
            return HEAD
        for css in (element.get("class") or "").split():
            if css in _KINDS:
                return _KINDS[css]
        element = element.getparent()
    return BODY


def places(items: list[tuple[Path, list[str]]], jar: Path, squeeze: Squeeze
           ) -> list[list[str]]:
    """Where Tika's XHTML puts each file's excluded phrases (see `place`)."""
    xhtml = tika_xhtml([path for path, excluded in items if excluded], jar)
    out = []
    for path, excluded in items:
        by_kind = kinds(xhtml[path], squeeze) if excluded else {}
        out.append([place(phrase, by_kind, squeeze) for phrase in excluded])
    return out


def place(phrase: str, by_kind: dict[str, str], squeeze: Squeeze) -> str:
    """Where Tika puts an excluded phrase: body text first (the disagreements), then the
    first other place holding it; unplaced when it spans two places."""
    key = squeeze(phrase)
    if key in by_kind.get(BODY, ""):
        return BODY
    return next((kind for kind, text in sorted(by_kind.items()) if key in text), UNPLACED)


def exclusion_table(rows: list[tuple[str, str, bool]]) -> list[str]:
    """Markdown rows: excluded phrases per format (suffix, place, kbflow recalled it) by place,
    with how many kbflow's chunks hold anyway; formats kbflow converts marked *."""
    places = [BODY, HEAD, "embedded object", "picture OCR", "header/footer/shape", "notes",
              "master slide", "comment", UNPLACED]
    lines = ["| format | excluded | " + " | ".join(places) + " | in kbflow's chunks |",
             "|---" * (len(places) + 3) + "|"]
    for suffix in sorted({s for s, _, _ in rows}):
        mine = [(where, ok) for s, where, ok in rows if s == suffix]
        counts = [sum(where == p for where, _ in mine) for p in places]
        lines.append(f"| {suffix}{'*' if suffix in CONVERTED else ''} | {len(mine)} | "
                     + " | ".join(map(str, counts)) + f" | {sum(ok for _, ok in mine)} |")
    counts = [sum(where == p for _, where, _ in rows) for p in places]
    lines.append(f"| **all** | {len(rows)} | " + " | ".join(map(str, counts))
                 + f" | {sum(ok for *_, ok in rows)} |")
    return lines


def write_excluded(rows: list[tuple[str, str, bool, str]],
                   only: list[str] | None = None) -> None:
    """The audit file: every excluded phrase with its file, Tika's place (and, for a file read
    by hand, what a person reads there) and kbflow's recall. A run of `only` some collections
    rewrites their rows and keeps the others'."""
    by_hand = _read_by_hand()
    notes = {file: {**by_hand["readings"].get(file, {}), **_not_text(file)}
             for file in {file for file, *_ in rows}}
    old = EXCLUDED.read_text("utf-8").splitlines() if only and EXCLUDED.exists() else []
    kept = [line for line in old if line.startswith("| ") and "/" in (file := _row_file(line))
            and file.removeprefix("| ").split("/", 1)[0] not in (only or [])]
    lines = ["# Phrases left out of the visible reference (bench/format_visible.py)", "",
             "Tika's phrases of office files that LibreOffice's rendering does not show, of "
             "pictures that a person's transcription does not hold, and phrases listed as not "
             f"text in `{READ_BY_HAND.name}`. `where`: the place Tika's XHTML puts it (for a "
             "file read by hand, then what the picture shows there, or why it is not text); "
             "`kbflow`: whether kbflow's chunks hold it anyway. Rewritten by each run of "
             "`python -m bench.format_public`, for the collections it ran.",
             "", "| file | phrase | where | kbflow |", "|---|---|---|---|"]
    new = []
    for file, phrase, recalled, where in rows:
        if note := notes[file].get(phrase):
            where = f"{where}; read by hand: {note}"
        phrase_cell, where = (c.replace("|", "\\|").replace("\n", " ") for c in (phrase, where))
        new.append(f"| {file} | {phrase_cell} | {where} | {'yes' if recalled else 'no'} |")
    EXCLUDED.write_text("\n".join(lines + sorted(kept + new, key=_row_file)) + "\n", "utf-8")


def _row_file(line: str) -> str:
    return line.split(" | ", 1)[0]
