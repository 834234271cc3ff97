"""Phrase recall on real public test documents of the formats kbflow reads since issue #40.

    .venv/bin/python -m bench.format_public [--collect] [--tika-jar JAR] [--results]

The corpus (`bench/format_corpus/<collection>/`, listed with repository, commit, path and
licence in its PROVENANCE.md) is test documents of other projects' test suites, none of them
used before by this project: Apache Tika's, ofdrw's (Chinese OFD), python-oxmsg's, xlrd's,
pandoc's and php-imap's (mail in several charsets). `--collect` copies them from the bare git
directories the search tool's `fetch` leaves under /work/.mirror (test documents only).

Reference: what a person sees, taken from an independent extraction: Apache Tika's plain text
(`tika-app -t`, from Maven Central: `mvn dependency:get -Dartifact=org.apache.tika:tika-app:
2.9.2`; it reads embedded attachments too), or for OFD, which Tika does not read, every
TextCode of the pages and their templates in file order. Up to 25 phrases per file are sampled
from its lines (8 characters of a CJK line, 5 words of another), seeded by the file's name.
A phrase is recalled when it occurs in the text of the file's chunks (chunk text, prefix and
title path), compared on letters and digits only (NFKC, lowercased): table pipes, tabs and
punctuation differ between extractors and are not what a reader searches for.

A file is READY with nothing when it parses and no chunk holds a letter or digit of it; a file
whose chunks hold its text but none of its phrases is a recall of 0, not that (pandoc's
footnote.odt: Tika's one line puts the footnote's text inside the sentence it annotates).

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
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from bench import write_section
from ingest.chunk import chunk_document
from ingest.parse import ParseError, parse_document, read_meta

CORPUS = Path(__file__).with_name("format_corpus")
RESULTS = Path(__file__).with_name("RESULTS.md")
MIRRORS = Path("/work/.mirror")
DEFAULT_TIKA = Path.home() / ".m2/repository/org/apache/tika/tika-app/2.9.2/tika-app-2.9.2.jar"
SECTION = "## Format phrase recall (public test documents of other projects, issue #40)"
PHRASES_PER_FILE = 25
# collection -> (repository, licence, paths)
SOURCES: dict[str, tuple[str, str, list[str]]] = {
    "tika": ("apache/tika", "Apache-2.0", []),  # filled from the mirror by name (long paths)
    "ofdrw": ("ofdrw/ofdrw", "Apache-2.0", [
        "ofdrw-converter/src/test/resources/n.ofd", "ofdrw-converter/src/test/resources/999.ofd",
        "ofdrw-converter/src/test/resources/1.ofd", "ofdrw-converter/src/test/resources/z.ofd",
        "ofdrw-layout/src/test/resources/keyword.ofd", "ofdrw-layout/src/test/resources/fptpl.ofd",
        "ofdrw-reader/src/test/resources/helloworld.ofd",
        "ofdrw-converter/src/test/resources/V4RideRight.ofd",
        "ofdrw-layout/src/test/resources/SplitParagraph.ofd"]),
    "python-oxmsg": ("scanny/python-oxmsg", "MIT", [
        "tests/test_files/message.msg", "tests/test_files/no-attachments.msg"]),
    "xlrd": ("python-excel/xlrd", "BSD-3-Clause", [
        "tests/samples/profiles.xls", "tests/samples/namesdemo.xls", "tests/samples/Formate.xls",
        "tests/samples/ragged.xls", "tests/samples/sample.ods"]),
    "pandoc": ("jgm/pandoc", "GPL-2.0-or-later", [
        "test/epub/wasteland.epub", "test/epub/features.epub", "test/epub/formatting.epub",
        "test/odt/odt/table.odt", "test/odt/odt/footnote.odt", "test/odt/odt/unicode.odt"]),
    "php-imap": ("Webklex/php-imap", "MIT", [
        "tests/messages/gbk_charset.eml", "tests/messages/ks_c_5601-1987_headers.eml",
        "tests/messages/multiple_html_parts_and_attachments.eml",
        "tests/messages/embedded_email.eml", "tests/messages/html_only.eml",
        "tests/messages/plain_text_attachment.eml"]),
}
TIKA_FILES = [
    "testWORD.doc", "testWORD_various.doc", "testWORD_features.doc", "testWPSAttachment.doc",
    "testWPSAttachment.xls", "testWPSAttachment.ppt", "testEXCEL.xls",
    "testEXCEL_headers_footers.xls", "testEXCEL_textbox.xls", "testPPT.ppt", "testPPT_various.ppt",
    "testPPT_masterText.ppt", "testRTF.rtf", "testRTFJapanese.rtf", "testRTF-ms932.rtf",
    "testRTFVarious.rtf", "testOpenOffice2.odt", "testStyles.odt", "testFooter.ods",
    "test-columnar.ods", "testMasterFooter.odp", "LibreOfficeImpress_odp_1.3.odp",
    "LibreOfficeCalc_ods_1.3.ods", "LibreOfficeWriter_odt_1.3.odt", "testWORKS.wps",
    "testWORKS2000.wps", "testMSG.msg", "testMSG_chinese.msg", "testMSG_att_doc.msg",
    "test-outlook2003.msg", "testRFC822_multipart_attachments.eml", "testThunderbirdEml.eml",
    "testEmailWithPNGAtt.eml", "testEPUB.epub", "testEPUB_xml_ext.epub"]
# Tika prints an Excel sheet's print header/footer as its raw codes ("&C&\"Times\"&12Page &P"):
# not text a person sees on a page
_PRINT_CODES = re.compile(r'&[LCRAPNDTFZGKBIUSEXY"\d]')
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@dataclass
class FileResult:
    collection: str
    name: str
    held_out: bool
    phrases: int
    recalled: int
    status: str  # "ok", "failed: …", "ready-with-nothing"
    seconds: float


def collect() -> None:
    """Copy the test documents from the fetched mirrors; write PROVENANCE.md."""
    rows = []
    for collection, (repo, licence, paths) in SOURCES.items():
        git = MIRRORS / repo.replace("/", "+") / "repo"
        commit = _git(git, "rev-parse", "HEAD").strip()
        if collection == "tika":
            listing = _git(git, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
            paths = [next(p for p in listing if p.endswith("/" + name) and "test-documents"
                          in p) for name in TIKA_FILES]
        target = CORPUS / collection
        target.mkdir(parents=True, exist_ok=True)
        for path in paths:
            data = subprocess.run(["git", "-C", str(git), "show", f"HEAD:{path}"],
                                  check=True, capture_output=True).stdout
            (target / Path(path).name).write_bytes(data)
            rows.append(f"| {collection}/{Path(path).name} | {repo} @ {commit[:12]} | {path} "
                        f"| {licence} |")
    (CORPUS / "PROVENANCE.md").write_text(
        "# Public test documents for bench/format_public.py (unchanged bytes)\n\n"
        "Held out: every third file of each collection, sorted by name (see the bench).\n\n"
        "| file | repository @ commit | path | licence |\n|---|---|---|---|\n"
        + "\n".join(rows) + "\n", encoding="utf-8")


def _git(git: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(git), *args], check=True, capture_output=True,
                          text=True).stdout


def files() -> list[tuple[str, Path, bool]]:
    out = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
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


def squeeze(text: str) -> str:
    """Letters and digits only, NFKC, lowercased."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if unicodedata.category(c)[0] in "LN")


def phrases(reference: str, seed: str) -> list[str]:
    rng = random.Random(seed)
    candidates = []
    for line in reference.splitlines():
        line = unicodedata.normalize("NFKC", line).strip()
        if len(squeeze(line)) < 6 or _PRINT_CODES.match(line):
            continue
        if len(_CJK.findall(line)) * 2 >= len(squeeze(line)):
            start = rng.randrange(max(len(line) - 8, 0) + 1)
            candidates.append(line[start:start + 8])
        else:
            words = line.split()
            start = rng.randrange(max(len(words) - 5, 0) + 1)
            candidates.append(" ".join(words[start:start + 5]))
    candidates = [c for c in dict.fromkeys(candidates) if len(squeeze(c)) >= 4]
    return rng.sample(candidates, min(PHRASES_PER_FILE, len(candidates)))


def run(jar: Path) -> list[FileResult]:
    import time

    entries = files()
    texts = tika_texts([p for _, p, _ in entries if p.suffix != ".ofd"], jar)
    results = []
    for collection, path, held_out in entries:
        reference = ofd_text(path) if path.suffix == ".ofd" else texts.get(path, "")
        wanted = phrases(reference, path.name)
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
        results.append(FileResult(collection, path.name, held_out, len(wanted), recalled,
                                  status, seconds))
        print(f"{collection}/{path.name}: {recalled}/{len(wanted)} {status} {seconds}s",
              flush=True)
    return results


def report(results: list[FileResult]) -> str:
    by_format: dict[str, list[FileResult]] = defaultdict(list)
    for r in results:
        by_format[Path(r.name).suffix.lower()].append(r)

    def recall(rs: list[FileResult]) -> str:
        total = sum(r.phrases for r in rs)
        return f"{sum(r.recalled for r in rs) / total:.3f}" if total else "–"

    lines = [SECTION, "",
             f"{len(results)} files from {len({r.collection for r in results})} collections "
             "(`bench/format_corpus/PROVENANCE.md`); reference phrases from Apache Tika 2.9.2's "
             "plain text (OFD: its raw TextCodes); `python -m bench.format_public`. Before "
             "issue #40 every one of these formats was refused (`unsupported file type`): "
             "recall 0.", "",
             "| format | files | phrases | recall | held-out recall | failed "
             "| READY with nothing |",
             "|---|---|---|---|---|---|---|"]
    for suffix, rs in sorted(by_format.items()):
        held = [r for r in rs if r.held_out]
        lines.append(f"| {suffix} | {len(rs)} | {sum(r.phrases for r in rs)} | {recall(rs)} | "
                     f"{recall(held)} | {sum(r.status.startswith('failed') for r in rs)} | "
                     f"{sum(r.status == 'ready-with-nothing' for r in rs)} |")
    held = [r for r in results if r.held_out]
    lines.append(f"| **all** | {len(results)} | {sum(r.phrases for r in results)} | "
                 f"{recall(results)} | {recall(held)} | "
                 f"{sum(r.status.startswith('failed') for r in results)} | "
                 f"{sum(r.status == 'ready-with-nothing' for r in results)} |")
    lines += ["", "Files under 0.9, failed or READY with nothing:", ""]
    for r in results:
        low = r.phrases and r.recalled / r.phrases < 0.9
        if low or r.status != "ok":
            lines.append(f"- {r.collection}/{r.name}: {r.recalled}/{r.phrases}, {r.status}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collect", action="store_true", help="copy the corpus from mirrors")
    parser.add_argument("--tika-jar", type=Path, default=DEFAULT_TIKA)
    parser.add_argument("--out", type=Path, help="per-file results as JSON")
    parser.add_argument("--results", action="store_true", help="write bench/RESULTS.md")
    args = parser.parse_args()
    if args.collect:
        collect()
    results = run(args.tika_jar)
    if args.out:
        args.out.write_text(json.dumps([r.__dict__ for r in results], ensure_ascii=False,
                                       indent=1), encoding="utf-8")
    text = report(results)
    print(text)
    if args.results:
        write_section(RESULTS, SECTION, text)


if __name__ == "__main__":
    main()
