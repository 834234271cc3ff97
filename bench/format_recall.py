"""Text recall per format on Docling's public test documents: kbflow vs Docling's simple pipeline.

    .venv/bin/python -m bench.format_recall [--docling-git DIR] [--docling-python PY]
        [--out FILE.json] [--results]

Our own sample documents test what we thought of; Docling's test suite (tests/data/<format>/
sources, with the Markdown it expects in tests/data/<format>/groundtruth) was built by others
around the hard cases of each format: merged cells, text boxes, nested lists, odd CSV dialects.
The files are read at run time from a bare git directory (the search tool's `fetch` of
docling-project/docling) into a temporary folder, never copied into this repository.

Metric: bag-of-tokens recall with clipped multiplicity, sum(min(gt[t], ours[t])) / sum(gt), so
text read twice cannot make up for text missed. Tokens are CJK characters one by one and
lowercased Latin words/numbers; markup (|, #, *, table rules, `<!-- image -->`, link targets,
list markers, LaTeX command names) is not text a reader sees and is stripped on both sides.
kbflow's text is its blocks' text without TABLE_ROW blocks: they restate the TABLE block's
Markdown rows as "header: value" pairs, so counting them would let repeated headers hide missed
cells (ingest.parse.coverage counts indexed text the same way). A file kbflow refuses or
fails on scores 0.

The ground truth is Docling's own output, so Docling's column (run through `--docling-python`,
a separate venv, never a dependency of this project) is near 1 by construction: it checks the
metric and the version drift, it is not a neutral referee. Read kbflow's column as "how much of
what Docling extracts does kbflow extract too".
"""

from __future__ import annotations

import argparse
import html
import io
import json
import os
import re
import subprocess
import tarfile
import tempfile
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench import write_section
from ingest.models import BlockKind
from ingest.parse import SUPPORTED_SUFFIXES, parse_document, read_meta

DEFAULT_GIT = Path("/work/.mirror/docling-project+docling/repo")
DEFAULT_PY = Path("/tmp/docling-venv/bin/python")
RESULTS = Path(__file__).with_name("RESULTS.md")
UNSUPPORTED = "unsupported file type"
SECTION = "## Format text recall (Docling's public test documents)"
# format -> (folder under tests/data, ground truth path for a source name); images only have
# OCR engines' outputs as ground truth, the clean one of which is Tesseract's full-page read.
FORMATS: dict[str, tuple[str, str]] = {
    ".docx": ("docx", "groundtruth/{name}.md"), ".pptx": ("pptx", "groundtruth/{name}.md"),
    ".xlsx": ("xlsx", "groundtruth/{name}.md"), ".html": ("html", "groundtruth/{name}.md"),
    ".csv": ("csv", "groundtruth/{name}.md"), ".md": ("md", "groundtruth/{name}.md"),
    "image": ("webp", "groundtruth/tesseract/full_page/{stem}.tesseract.full_page.md"),
}
_CJK = "\u2e80-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_MARKUP = [(re.compile(r"<!--.*?-->", re.S), " "),  # <!-- image -->, <!-- page break -->
           (re.compile(r"\]\([^)\s]*(?: \"[^\"]*\")?\)"), "] "),  # [text](target): the text
           (re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s)?", re.M), " "),  # list items
           (re.compile(r"\\[a-zA-Z]+"), " "),  # LaTeX commands of formulas (\frac, \left)
           (re.compile(r"</?[a-zA-Z][^>]*>"), " ")]  # stray HTML tags
_DOCLING = """
import json, sys
from docling.document_converter import DocumentConverter
conv = DocumentConverter()
out = {}
for path in sys.argv[1:]:
    try:
        out[path] = conv.convert(path).document.export_to_markdown()
    except Exception as exc:
        out[path] = ""  # a failed file scores 0, as on kbflow's side
        print(f"docling failed on {path}: {exc}", file=sys.stderr)
print(json.dumps(out))
"""


def tokens(text: str) -> Counter[str]:
    """The words a reader sees: markup stripped, NFKC, lowercased; CJK counted per character."""
    for pattern, repl in _MARKUP:
        text = pattern.sub(repl, text)
    text = unicodedata.normalize("NFKC", html.unescape(text))  # after markup: &lt;div&gt; is text
    return Counter(_TOKEN.findall(text.lower()))


def recall(truth: Counter[str], got: Counter[str]) -> tuple[float, list[str]]:
    """Clipped bag-of-tokens recall, and the tokens missed most (for reading a low score)."""
    total = sum(truth.values())
    missed = truth - got
    score = 1.0 - sum(missed.values()) / total if total else 1.0
    return score, [t for t, _ in missed.most_common(8)]


@dataclass
class FileScore:
    fmt: str
    name: str
    kbflow: float
    missed: list[str]
    docling: float | None = None
    note: str = ""


def extract(git_dir: Path, dest: Path) -> list[tuple[str, Path, Path]]:
    """Docling's test sources with a ground truth, as (format, source, truth) under dest."""
    folders = [f"tests/data/{folder}" for folder, _ in FORMATS.values()]
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar",
                              "HEAD", "--", *folders], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    pairs = []
    for fmt, (folder, pattern) in FORMATS.items():
        for src in sorted((dest / "tests/data" / folder / "sources").glob("*")):
            truth = src.parents[1] / pattern.format(name=src.name, stem=src.stem)
            if truth.is_file() and src.is_file():
                pairs.append((fmt, src, truth))
    return pairs


def kbflow_text(path: Path, root: Path) -> tuple[str, str]:
    """kbflow's indexed text of a file (TABLE_ROW blocks left out), and why it is empty."""
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        return "", f"{UNSUPPORTED} {path.suffix}"
    try:
        meta, data = read_meta(path, root, "default", ["all-staff"])
        doc = parse_document(meta, data)
    except Exception as exc:  # noqa: BLE001 - a refused or failed file scores 0, with its reason
        return "", f"{type(exc).__name__}: {exc}"[:120]
    return "\n".join(b.text for b in doc.blocks if b.kind != BlockKind.TABLE_ROW), ""


def docling_texts(python: Path, paths: list[Path]) -> dict[str, str]:
    """Docling's Markdown for each file, from one subprocess in its own venv (one import)."""
    # No hub: the simple pipeline needs no model, prove it. A fixed hash seed: Docling 2.121's
    # text boxes (textbox.docx) come out in full or not depending on set order.
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONHASHSEED": "0"}
    run = subprocess.run([str(python), "-c", _DOCLING, *map(str, paths)], capture_output=True,
                         text=True, timeout=1800, check=True, env=env)
    result: dict[str, str] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


def score(git_dir: Path, python: Path | None) -> list[FileScore]:
    """Every test document scored on both sides; the files live only in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="format-recall-") as tmp:
        root = Path(tmp)
        pairs = extract(git_dir, root)
        office = [src for fmt, src, _ in pairs if fmt != "image"]  # simple pipeline, no models
        theirs = docling_texts(python, office) if python else {}
        scores = []
        for fmt, src, truth_path in pairs:
            truth = tokens(truth_path.read_text(encoding="utf-8"))
            text, note = kbflow_text(src, root)
            ours, missed = recall(truth, tokens(text))
            other = theirs.get(str(src))
            scores.append(FileScore(fmt, src.name, ours, missed, None if other is None else
                                    recall(truth, tokens(other))[0], note))
    return scores


def table(scores: list[FileScore]) -> str:
    """Per format: documents, mean recall of both sides, kbflow's three worst files."""
    lines = ["| format | docs | kbflow recall | Docling recall | kbflow's worst 3 (recall) |",
             "|---|---:|---:|---:|---|"]
    scored: list[FileScore] = []
    for fmt in FORMATS:
        rows = [s for s in scores if s.fmt == fmt]
        if all(s.note.startswith(UNSUPPORTED) for s in rows):  # no parser (yet): no score
            lines += [f"| {fmt} | {len(rows)} | not supported | n/a | |"] if rows else []
            continue
        scored += rows
        docling = [s.docling for s in rows if s.docling is not None]
        worst = sorted(rows, key=lambda s: s.kbflow)[:3]
        lines.append(
            f"| {fmt} | {len(rows)} | {sum(s.kbflow for s in rows) / len(rows):.3f} | "
            + (f"{sum(docling) / len(docling):.3f}" if docling else "n/a")
            + (f" ({len(docling)} docs)" if docling and len(docling) < len(rows) else "")
            + " | " + ", ".join(f"{s.name} {s.kbflow:.2f}" for s in worst) + " |")
    mean = sum(s.kbflow for s in scored) / max(len(scored), 1)
    theirs = [s.docling for s in scored if s.docling is not None]
    other = f"{sum(theirs) / len(theirs):.3f}" if theirs else "n/a"
    lines.append(f"| all scored | {len(scored)} | {mean:.3f} | {other} | |")
    return "\n".join(lines)


def details(scores: list[FileScore]) -> str:
    """The worst files' most-missed tokens and failure notes: what to look at first."""
    out = []
    for fmt in FORMATS:
        rows = [s for s in scores if s.fmt == fmt and s.kbflow < 1]
        for s in sorted(rows, key=lambda s: s.kbflow)[:3]:
            why = s.note or "missed most: " + ", ".join(s.missed)
            out.append(f"- {s.name} ({s.kbflow:.2f}): {why}")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docling-git", type=Path, default=DEFAULT_GIT,
                    help="bare git dir of docling-project/docling (the search tool's fetch)")
    ap.add_argument("--docling-python", type=Path, default=DEFAULT_PY,
                    help="python of a venv with docling installed; missing = kbflow only")
    ap.add_argument("--out", type=Path, help="write every file's score as JSON here")
    ap.add_argument("--results", action="store_true", help=f"write {SECTION!r} in RESULTS.md")
    args = ap.parse_args()
    python = args.docling_python if args.docling_python.exists() else None
    scores = score(args.docling_git, python)
    commit = subprocess.run(["git", "--git-dir", str(args.docling_git), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    version = "not run" if python is None else subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('docling-slim'))"],
        capture_output=True, text=True, check=False).stdout.strip() or "unknown"
    text = "\n\n".join([
        SECTION,
        f"- Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by bench/format_recall.py: Docling's test "
        f"documents and ground-truth Markdown at commit {commit[:12]}; Docling {version} "
        "(DocumentConverter: simple pipeline for office/web formats, no models, own venv).\n"
        "- Recall: share of the ground truth's tokens (CJK characters; lowercased words and "
        "numbers; Markdown markup, link targets, list markers, LaTeX commands stripped) found in "
        "the output, counts clipped. kbflow's text leaves out TABLE_ROW blocks (they restate the "
        "TABLE block); a refused or failed file scores 0.\n"
        "- The ground truth is Docling's own output (some files made with non-default options, "
        "e.g. comments on), so its column is a check of the metric and of version drift, not a "
        "neutral referee. Images: the only ground truth is OCR output, and Docling would need "
        "its layout/OCR models there, so it is not run on them.\n"
        "- Rerun: fetch `github:docling-project/docling` (a bare git dir); optionally `python3 "
        "-m venv /tmp/docling-venv && /tmp/docling-venv/bin/pip install docling` (about 6 GB "
        "with torch); then `.venv/bin/python -m bench.format_recall --docling-git DIR "
        "[--docling-python /tmp/docling-venv/bin/python] [--out scores.json] --results`.",
        table(scores), "kbflow's worst files, most-missed ground-truth tokens:", details(scores)])
    print(text)
    if args.out:
        args.out.write_text(json.dumps([asdict(s) for s in scores], indent=1), encoding="utf-8")
    if args.results:
        write_section(RESULTS, SECTION, text + "\n")


if __name__ == "__main__":
    main()
