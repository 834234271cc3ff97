"""What every format's parser returns: blocks in reading order plus what the parse report
needs to know about how they were read (one shape for all formats, as Docling has one backend
interface per input format)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from ingest.models import Block


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
    chars_seen: int | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    title: str = ""  # the title the format states (metadata, title slide), when it states one
    title_source: str = ""  # where `title` came from
    turned_pages: list[int] = field(default_factory=list)  # scans read after turning them upright


Parser = Callable[[bytes], ParseResult]
