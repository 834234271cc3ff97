"""What every format's parser returns: blocks in reading order plus what the parse report
needs to know about how they were read (one shape for all formats, as Docling has one backend
interface per input format)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ingest.models import Block

if TYPE_CHECKING:
    from ingest.config import Settings


@dataclass
class ParseResult:
    """Blocks plus how they were read.

    `chars_seen` counts all text the format holds (body, tables, notes, footnotes, text boxes,
    alt text, and what was skipped on purpose); `skipped` counts the parts left out on purpose
    by kind ("comments", "hidden_sheets", "boilerplate", …). A parser that cannot tell what it
    saw leaves `chars_seen` at None: then it is taken to be what was indexed."""

    blocks: list[Block]
    pages: int
    ocr_pages: int = 0
    ocr_confidences: list[float] = field(default_factory=list)  # one per OCR line
    empty_pages: int = 0
    headers_footers_removed: int = 0
    repaired: bool = False  # PyMuPDF had to rebuild the file (truncated or damaged)
    encoding: str | None = None
    encoding_confidence: float | None = None  # how sure the detected encoding is (0..1)
    chars_seen: int | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    chars_skipped: int = 0  # characters of the parts in `skipped` (part of chars_seen)
    title: str = ""  # the title the format states (metadata, title slide), when it states one
    title_source: str = ""  # where `title` came from
    turned_pages: list[int] = field(default_factory=list)  # scans read after turning them upright
    attachments: int = 0  # attached or embedded files read as sections of their own
    warnings: list[str] = field(default_factory=list)  # doubts for the parse report, with why


@dataclass(frozen=True)
class ParseLimits:
    """What a file may hold before it fails with a reason instead of exhausting the worker's
    time or memory, and which parts kept from its reader are read all the same (the settings
    of the same names, see ingest.config)."""

    max_file_mb: float = 100.0
    allow_repaired_pdf: bool = False  # publish PDFs PyMuPDF had to repair (maybe partial)
    max_rows: int = 200_000  # rows of a spreadsheet or CSV file, all sheets together
    max_pages: int = 1_000  # pages of a PDF or a multi-page image
    max_image_megapixels: float = 150.0  # pixels of one page image (a 600-dpi A3 scan is 70)
    max_image_frames: int = 50  # frames of a multi-page image read (OCR'd); the rest counted
    max_pictures: int = 20  # pictures inside an Office file read by OCR; the rest counted
    include_hidden: bool = False  # index hidden rows, columns, sheets, text, slides, elements
    include_comments: bool = False  # index review comments

    @classmethod
    def of(cls, settings: Settings) -> ParseLimits:
        return cls(max_file_mb=settings.max_file_mb,
                   allow_repaired_pdf=settings.allow_repaired_pdf,
                   max_rows=settings.parse_max_rows, max_pages=settings.parse_max_pages,
                   max_image_megapixels=settings.parse_max_image_megapixels,
                   max_image_frames=settings.parse_max_image_frames,
                   max_pictures=settings.parse_max_pictures,
                   include_hidden=settings.parse_include_hidden,
                   include_comments=settings.parse_include_comments)


Parser = Callable[[bytes, ParseLimits], ParseResult]
DEFAULT_LIMITS = ParseLimits()
