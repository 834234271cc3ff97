"""Parse stage: a file becomes metadata plus text blocks in reading order, with page numbers."""

from __future__ import annotations

import zipfile
from pathlib import Path

from lxml import etree

from ingest.models import DocumentMeta, ParsedDocument
from ingest.parse.metadata import SIDECAR_SUFFIX, base_meta, complete_meta
from ingest.parse.office import parse_docx, parse_html, parse_markdown, parse_text
from ingest.parse.pdf import ParseError, parse_pdf

PARSER_VERSION = "kbflow-parse@0.1"
SUPPORTED_SUFFIXES = {".pdf", ".md", ".markdown", ".txt", ".html", ".htm", ".docx"}

__all__ = [
    "PARSER_VERSION",
    "ParseError",
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


def parse_document(meta: DocumentMeta, data: bytes) -> ParsedDocument:
    """Dispatch on the file type; raise ParseError with a readable reason on bad input."""
    suffix = Path(meta.source_path).suffix.lower()
    if not data:
        raise ParseError("file is empty (0 bytes)")
    if suffix not in SUPPORTED_SUFFIXES:
        raise ParseError(f"unsupported file type {suffix or '(none)'}")
    pages = 1
    if suffix == ".pdf":
        blocks, pages = parse_pdf(data)
    elif suffix == ".docx":
        try:
            blocks, pages = parse_docx(data)
        except (zipfile.BadZipFile, KeyError, ValueError) as exc:
            raise ParseError(f"not a readable DOCX file: {exc}") from exc
    elif suffix in {".html", ".htm"}:
        try:
            blocks = parse_html(data)
        except (ValueError, etree.ParserError) as exc:
            raise ParseError(f"not a readable HTML file: {exc}") from exc
    else:
        text = _decode(data)
        blocks = parse_markdown(text) if suffix in {".md", ".markdown"} else parse_text(text)
    if not blocks:
        raise ParseError("no text found in document")
    return ParsedDocument(
        meta=complete_meta(meta, blocks), blocks=blocks, parser_version=PARSER_VERSION, pages=pages
    )


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        reason = f"text file is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        raise ParseError(reason) from exc
