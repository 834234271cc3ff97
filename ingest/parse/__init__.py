"""Parse stage: a file becomes metadata plus text blocks in reading order, with page numbers,
and a report of how well it was read.

`parse_document` parses in the calling process; `ParseWorker` parses in a child process that is
stopped after `parse_timeout_s`, and `ParsePool` keeps several of them busy side by side.
"""

from __future__ import annotations

import time
from pathlib import Path

from ingest.models import BlockKind, DocumentMeta, ParsedDocument, ParseReport
from ingest.parse.metadata import SIDECAR_SUFFIX, base_meta, complete_meta
from ingest.parse.office import parse_docx, parse_html, parse_markdown, parse_pptx, parse_text
from ingest.parse.pdf import ParseError, ParseResult, describe_content, parse_pdf
from ingest.parse.quality import flag_near_duplicates
from ingest.parse.worker import ParsePool, ParseWorker

PARSER_VERSION = "kbflow-parse@0.2"
SUPPORTED_SUFFIXES = {".pdf", ".md", ".markdown", ".txt", ".html", ".htm", ".docx", ".pptx"}
_ZIP_FORMATS = {".docx": "DOCX", ".pptx": "PPTX"}

__all__ = [
    "PARSER_VERSION",
    "ParseError",
    "ParsePool",
    "ParseWorker",
    "discover",
    "parse_document",
    "read_meta",
]


def discover(root: Path) -> list[Path]:
    """Every file under root that is a document (sidecars and hidden files are not)."""
    if root.is_file():
        return [root]
    return sorted(
        p for p in root.rglob("*")
        if p.is_file() and not p.name.endswith(SIDECAR_SUFFIX)
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def read_meta(path: Path, root: Path, default_tenant: str, default_acl: list[str]
              ) -> tuple[DocumentMeta, bytes]:
    data = path.read_bytes()
    return base_meta(path, root, data, default_tenant, default_acl), data


def parse_document(meta: DocumentMeta, data: bytes, *, max_file_mb: float = 100.0
                   ) -> ParsedDocument:
    """Dispatch on the file type; raise ParseError with a readable reason on bad input."""
    started = time.perf_counter()
    suffix = Path(meta.source_path).suffix.lower()
    if not data:
        raise ParseError("file is empty (0 bytes)")
    if suffix not in SUPPORTED_SUFFIXES:
        raise ParseError(f"unsupported file type {suffix or '(none)'}")
    if len(data) > max_file_mb * 1024 * 1024:
        raise ParseError(f"file is {len(data) / 1024 / 1024:.1f} MB, over the {max_file_mb:g} MB "
                         "limit (the max_file_mb setting)")
    try:
        result = _parse(suffix, data)
    except ParseError:
        raise
    except Exception as exc:  # any library failure on bad input is a reason, not a crash
        kind = suffix.lstrip(".").upper()
        raise ParseError(f"not a readable {kind} file: {type(exc).__name__}: {exc}") from exc
    blocks = result.blocks
    if not blocks:
        pdf = f" ({result.pages} pages, {result.ocr_pages} read by OCR)" if suffix == ".pdf" else ""
        raise ParseError(f"no text found in document{pdf}")
    near_duplicates = flag_near_duplicates(blocks)
    meta = complete_meta(meta, blocks)
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
        seconds=round(time.perf_counter() - started, 3),
    )
    return ParsedDocument(meta=meta, blocks=blocks, parser_version=PARSER_VERSION,
                          pages=result.pages, report=report)


def _parse(suffix: str, data: bytes) -> ParseResult:
    if suffix == ".pdf":
        return parse_pdf(data)
    if suffix in _ZIP_FORMATS and not data.startswith(b"PK\x03\x04"):
        raise ParseError(f"not a {_ZIP_FORMATS[suffix]} file: {describe_content(data)}")
    if suffix == ".docx":
        blocks, pages = parse_docx(data)
        return ParseResult(blocks, pages)
    if suffix == ".pptx":
        blocks, pages = parse_pptx(data)
        return ParseResult(blocks, pages)
    if suffix in {".html", ".htm"}:
        return ParseResult(parse_html(data), 1)
    text = _decode(data)
    markdown = suffix in {".md", ".markdown"}
    return ParseResult(parse_markdown(text) if markdown else parse_text(text), 1)


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        reason = f"text file is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        raise ParseError(reason) from exc
