"""Parse stage: a file becomes metadata plus text blocks in reading order, with page numbers,
and a report of how well it was read.

`parse_document` parses in the calling process; `ParseWorker` parses in a child process that is
stopped after `parse_timeout_s`, and `ParsePool` keeps several of them busy side by side.
"""

from __future__ import annotations

import functools
import importlib
import os
import stat
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ingest.config import AUTHORITY_LEVELS
from ingest.models import BlockKind, DocumentMeta, ParsedDocument, ParseReport
from ingest.parse.archive import check_archive
from ingest.parse.convert import transitional
from ingest.parse.coverage import indexed_chars, package_chars
from ingest.parse.embedded import add_embedded
from ingest.parse.encoding import warning
from ingest.parse.errors import ParseError, describe_content
from ingest.parse.folder_meta import FOLDER_META_NAME, folder_defaults, metadata_top
from ingest.parse.metadata import SIDECAR_SUFFIX, base_meta, complete_meta
from ingest.parse.opening import RefusedFile, read_checked
from ingest.parse.pdf_stamps import with_stamps_drawn
from ingest.parse.quality import flag_near_duplicates
from ingest.parse.result import DEFAULT_LIMITS, ParseLimits, Parser, ParseResult
from ingest.parse.roots import real_roots
from ingest.parse.worker import ParsePool, ParseWorker

if TYPE_CHECKING:
    from ingest.scopes import TenantTree

# 0.6: web page parts by kind, OCR table rows, deck footers, EPUB pictures, chart numbers,
# WPS cell pictures; 0.7: Latin OCR lines read by PP-OCRv6, tables in Office pictures by rows,
# spanning title rows as captions, mail after </html>, UTF-16 mails, encoded .msg senders;
# 0.8: white text on a transparent ground, a broken XML part of a deck or Word file repaired,
# mail reports and receipts as body text, mails with a byte-order mark, Excel form controls,
# a heading's number set apart in a scan read with its words; 0.9: linked story sentences,
# story boxes between ads, ruby readings left out, ISO-2022 text, Outlook code pages and nested
# items, Excel notes shown on the sheet, chart sheets, Strict Open XML and .xlsb through
# LibreOffice, number formats without a whole digit (".5"), a turned page read by its rows;
# 0.10: filled PDF form fields, sideways and unruled PDF tables by their rows, two-row headers,
# right-to-left cells, stamp-only pages OCR'd, whole repaired PDFs published, mails three deep,
# broken chart parts recovered, Chinese and Japanese OCR lines read again by PP-OCRv6, wrapped
# Arabic and Hebrew words spaced; 0.11: rows of unruled PDF tables as rows (no false two-column
# gutters), web captions in boxes of their own and pull quotes, pivot tables and formula results
# as Excel stored them in .xlsb and .xls, SmartArt in decks, a line upside down on an upright
# page read turned, PDF tables with slanted or turned column names; 0.12: a PDF page whose text
# layer is not language read by OCR, boxes drawn side by side read one at a time, links the story
# introduces ("Read more:", "See also") kept, a teaser page's article from its JSON-LD, no false
# gutter between a label and its far value
PARSER_VERSION = "kbflow-parse@0.12"
# One parser module per format, each behind ingest.parse.result.Parser (module, function). A
# module is imported when its first file comes: PyMuPDF alone takes about 190 MB of a worker's
# memory, which a worker reading only spreadsheets or Word files never needs.
PARSERS: dict[str, tuple[str, str]] = {
    ".pdf": ("pdf", "parse_pdf"),
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff"), ("image", "parse_image")),
    ".md": ("markdown_text", "parse_markdown_file"),
    ".markdown": ("markdown_text", "parse_markdown_file"),
    ".txt": ("markdown_text", "parse_text_file"),
    ".html": ("webpage", "parse_html"), ".htm": ("webpage", "parse_html"),
    **dict.fromkeys((".docx", ".docm", ".dotx", ".dotm"), ("word", "parse_docx")),
    ".pptx": ("slides", "parse_pptx"), ".pptm": ("slides", "parse_pptx"),  # macros never run
    ".xlsx": ("spreadsheet", "parse_xlsx"), ".xlsm": ("spreadsheet", "parse_xlsx"),
    ".xlsb": ("converted", "parse_xlsb"),  # Excel's binary workbook: a zip of BIFF12 parts
    ".csv": ("delimited", "parse_csv"), ".tsv": ("delimited", "parse_tsv"),
    # converted to OOXML by LibreOffice, then read by the parsers above
    **{s: ("converted", f"parse_{s[1:]}") for s in (".doc", ".rtf", ".odt", ".wps", ".xls",
                                                     ".ods", ".et", ".ppt", ".odp", ".dps")},
    ".eml": ("mail", "parse_eml"), ".msg": ("outlook", "parse_msg"),
    ".epub": ("epub", "parse_epub"), ".ofd": ("ofd", "parse_ofd"),
}
SUPPORTED_SUFFIXES = set(PARSERS)
# whose text runs are counted apart from the parser
_RUNS_COUNTED = {".docx", ".docm", ".dotx", ".dotm", ".pptx", ".pptm"}
_ZIP_FORMATS = {".docx": "DOCX", ".docm": "DOCX", ".dotx": "DOCX", ".dotm": "DOCX",
                ".pptx": "PPTX", ".pptm": "PPTX", ".xlsx": "XLSX", ".xlsm": "XLSX",
                ".xlsb": "XLSB"}

__all__ = [
    "PARSER_VERSION",
    "ParseError",
    "ParseLimits",
    "ParsePool",
    "ParseWorker",
    "RefusedFile",
    "discover",
    "parse_document",
    "read_meta",
    "walk",
]


def discover(root: Path) -> list[Path]:
    """Every file under root that is a document (sidecars and hidden files are not)."""
    return walk(root)[0]


def walk(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The documents under root, and the entries refused with their reason: symbolic links
    out of root, and anything that is not a regular file (a FIFO would block the read forever,
    a device would be read until memory runs out).

    A link is never followed out of root: a link to a file elsewhere would publish that file
    under the folder's ACL. A link to a file inside root is read as its target (the path
    recorded is the real one, so a file reached twice is one document); links to folders are
    not walked (an inner one's files are met where they really are)."""
    if root.is_file():
        return [root], []
    base = root.resolve()
    found: set[Path] = set()
    refused: list[tuple[Path, str]] = []
    for folder, dirs, names in os.walk(base, followlinks=False):
        here = Path(folder)
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in dirs:
            link = here / name
            if link.is_symlink() and not _resolves_under(link, base):
                refused.append((link, f"symbolic link to a folder outside {base}: not followed"))
        for name in names:
            path = here / name
            if name.startswith(".") or _is_metadata(name):
                continue
            if not path.is_symlink():
                try:
                    mode = path.lstat().st_mode
                except OSError as exc:
                    refused.append((path, f"cannot be read: {exc.strerror or exc}"))
                    continue
                if stat.S_ISREG(mode):
                    found.add(path)
                else:
                    refused.append((path, "not a regular file: not read"))
                continue
            try:
                target = path.resolve(strict=True)
            except (OSError, RuntimeError) as exc:
                refused.append((path, f"broken symbolic link: {exc}"))
                continue
            if not target.is_relative_to(base):
                refused.append((path, f"symbolic link to {target}, outside {base}: not followed"))
            elif target.is_file() and not _is_metadata(target.name) and not any(
                    part.startswith(".") for part in target.relative_to(base).parts):
                found.add(target)
    return sorted(found), sorted(refused)


def _is_metadata(name: str) -> bool:
    """Sidecars and folder metadata files describe documents; they are never one."""
    return name.endswith(SIDECAR_SUFFIX) or name == FOLDER_META_NAME


def _resolves_under(path: Path, base: Path) -> bool:
    try:
        return path.resolve().is_relative_to(base)
    except (OSError, RuntimeError):
        return False


def read_meta(path: Path, root: Path, default_tenant: str, default_acl: list[str], *,
              document_roots: Sequence[Path] = (), max_file_mb: float = 100.0,
              authority_levels: Sequence[str] = AUTHORITY_LEVELS,
              scopes: TenantTree | None = None, published: Collection[str] = (),
              shared_stem: bool = False) -> tuple[DocumentMeta, bytes]:
    """The file's metadata and bytes, read once from a descriptor checked to be a regular file
    inside `root` (and inside the document roots, when they are configured) and within the size
    limit; RefusedFile with the reason otherwise (see ingest.parse.opening). Folder metadata
    files apply from the document root holding the file (else from the top metadata_top finds)
    down: where a file lies decides its defaults, not which folder a run was given.
    `published` and `shared_stem` decide a doc id the sidecar leaves open (see
    ingest.parse.metadata.file_doc_id)."""
    if _is_metadata(path.name):
        raise RefusedFile(f"{path.name} is metadata (sidecar or folder file), not a document")
    real_root = root.resolve()
    roots = real_roots(document_roots)
    allowed = readable_folders(real_root, roots) if roots else [real_root]
    data = read_checked(path, allowed, int(max_file_mb * 1024 * 1024), hidden_below=roots)
    real = path.resolve()
    top = min((r for r in roots if real.is_relative_to(r)), key=lambda r: len(r.parts),
              default=None) or metadata_top(real.parent)
    folder = folder_defaults(path, top, scopes)
    return base_meta(path, root, data, default_tenant, default_acl, folder=folder,
                     authority_levels=authority_levels, scopes=scopes, published=published,
                     shared_stem=shared_stem), data


def readable_folders(root: Path, roots: Sequence[Path]) -> list[Path]:
    """Where a file of the folder `root` may lie when document roots are configured: inside
    both trees (root itself if it is inside a document root, else the roots inside it)."""
    if any(root.is_relative_to(r) for r in roots):
        return [root]
    return [r for r in roots if r.is_relative_to(root)]


def parse_document(meta: DocumentMeta, data: bytes,
                   limits: ParseLimits = DEFAULT_LIMITS) -> ParsedDocument:
    """Dispatch on the file type; raise ParseError with a readable reason on bad input.

    A PDF PyMuPDF had to repair (truncated, damaged) may be missing pages without any error:
    it fails unless `limits.allow_repaired_pdf`, or unless it ends whole and every page was read
    (then it is published with a warning); its report says so either way."""
    started = time.perf_counter()
    suffix = Path(meta.source_path).suffix.lower()
    if not data:
        raise ParseError("file is empty (0 bytes)")
    if suffix not in SUPPORTED_SUFFIXES:
        raise ParseError(f"unsupported file type {suffix or '(none)'}")
    if len(data) > limits.max_file_mb * 1024 * 1024:
        raise ParseError(f"file is {len(data) / 1024 / 1024:.1f} MB, over the "
                         f"{limits.max_file_mb:g} MB "
                         "limit (the max_file_mb setting)")
    try:
        result = _parse(suffix, data, limits)
    except (ParseError, MemoryError):  # a worker reports running out of memory as such
        raise
    except Exception as exc:  # any library failure on bad input is a reason, not a crash
        kind = suffix.lstrip(".").upper()
        raise ParseError(f"not a readable {kind} file: {type(exc).__name__}: {exc}") from exc
    blocks = result.blocks
    pages_read = result.pages - result.empty_pages
    repaired_whole = result.repaired and _ends_whole(data) and pages_read == result.pages
    if result.repaired and not limits.allow_repaired_pdf and not repaired_whole:
        raise ParseError(f"damaged PDF: repaired by PyMuPDF, {pages_read} of {result.pages} "
                         "pages read (set KBFLOW_ALLOW_REPAIRED_PDF=true to publish it anyway)")
    if not blocks:
        pdf = f" ({result.pages} pages, {result.ocr_pages} read by OCR)" if suffix == ".pdf" else ""
        raise ParseError(f"no text found in document{pdf}")
    near_duplicates = flag_near_duplicates(blocks)
    meta, title_source = complete_meta(meta, blocks, result.title, result.title_source)
    indexed = indexed_chars(blocks)
    seen = max(indexed, result.chars_seen or 0,
               package_chars(data) if suffix in _RUNS_COUNTED else 0)
    confidences = result.ocr_confidences
    report = ParseReport(
        pages=result.pages,
        ocr_pages=result.ocr_pages,
        ocr_mean_confidence=round(sum(confidences) / len(confidences), 4) if confidences else None,
        tables=sum(1 for b in blocks if b.kind == BlockKind.TABLE),
        table_rows=sum(1 for b in blocks if b.kind == BlockKind.TABLE_ROW),
        empty_pages=result.empty_pages,
        headers_footers_removed=result.headers_footers_removed,
        near_duplicate_blocks=near_duplicates,
        missing_title=not meta.title,
        repaired=result.repaired,
        pages_read=pages_read if suffix == ".pdf" else None,
        encoding=result.encoding,
        encoding_confidence=result.encoding_confidence,
        warnings=[w for w in [warning(result.encoding, result.encoding_confidence)] if w]
        + (["repaired PDF: its cross-reference table was rebuilt by PyMuPDF; the file ends "
            "whole and every page was read"] if repaired_whole else [])
        + result.warnings + meta.warnings,
        chars_indexed=indexed,
        chars_seen=seen,
        chars_skipped=min(result.chars_skipped, seen - indexed),
        skipped=dict(result.skipped),
        title_source=title_source,
        turned_pages=result.turned_pages,
        attachments=result.attachments,
        seconds=round(time.perf_counter() - started, 3),
    )
    return ParsedDocument(meta=meta, blocks=blocks, parser_version=PARSER_VERSION,
                          pages=result.pages, report=report)


def _ends_whole(data: bytes) -> bool:
    """Whether a PDF still ends as a PDF ends: a wrong cross-reference offset (hand-edited files,
    sloppy writers) makes MuPDF repair a file that lost nothing, while a cut-off file ends early."""
    return b"%%EOF" in data[-1024:]


def _parse(suffix: str, data: bytes, limits: ParseLimits) -> ParseResult:
    if suffix in _ZIP_FORMATS:  # Office files: the archive's declared sizes first
        if not data.startswith(b"PK\x03\x04"):
            raise ParseError(_not_zip_reason(_ZIP_FORMATS[suffix], data))
        check_archive(data, _ZIP_FORMATS[suffix])
        if suffix != ".xlsb":  # Strict OOXML: LibreOffice (no binary workbook is Strict)
            data = transitional(data, _ZIP_FORMATS[suffix].lower())
    if suffix == ".pdf":  # a page shown only by a Stamp annotation (pdf_stamps.py)
        data = with_stamps_drawn(data, limits.max_pages)
    result = parser_for(suffix)(data, limits)
    add_embedded(result, suffix, data, limits)  # OLE objects: Word, Excel, PDF files inside
    return result


@functools.cache
def parser_for(suffix: str) -> Parser:
    """The parse function of a supported suffix, its module imported on first use."""
    module, function = PARSERS[suffix]
    parser: Parser = getattr(importlib.import_module(f"ingest.parse.{module}"), function)
    return parser


def _not_zip_reason(kind: str, data: bytes) -> str:
    """Office encrypts a file with a password by wrapping it in an OLE (CFB) container with an
    EncryptionInfo stream; a legacy .xls or .doc renamed is an OLE file without one."""
    if data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1") and (
            "EncryptionInfo".encode("utf-16-le") in data):
        noun = "workbook" if kind in ("XLSX", "XLSB") else f"{kind} file"
        return f"password-protected (encrypted) {noun}: remove the password to index it"
    return f"not a {kind} file: {describe_content(data)}"
