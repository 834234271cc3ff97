"""PDF text with page numbers (PyMuPDF); running headers and footers dropped by repetition."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import pymupdf

from ingest.models import Block, BlockKind
from ingest.text import is_structure_start, join_lines, normalize

MARGIN_SHARE = 0.1  # top/bottom share of the page where running headers and footers live


@dataclass
class _Line:
    text: str
    page: int
    in_margin: bool
    x0: float
    y0: float
    x1: float
    y1: float


class ParseError(ValueError):
    """A document that cannot be read; the reason goes to the manifest."""


def parse_pdf(data: bytes) -> tuple[list[Block], int]:
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises its own FileDataError/RuntimeError variants
        raise ParseError(f"not a readable PDF: {exc}") from exc
    with doc:
        if doc.needs_pass:
            raise ParseError("PDF is encrypted with a password")
        if doc.page_count == 0:
            raise ParseError("PDF has no pages")
        lines = [line for page in doc for line in _page_lines(page)]
        pages = doc.page_count
    if not any(line.text for line in lines):
        raise ParseError("PDF has no text layer (scanned pages need OCR)")
    running = _running_lines(lines, pages)
    kept = [line for line in lines if not (line.in_margin and _shape(line.text) in running)]
    return _paragraphs(kept), pages


def _page_lines(page: pymupdf.Page) -> list[_Line]:
    height = page.rect.height
    out = []
    for block in page.get_text("dict", sort=True)["blocks"]:
        for line in block.get("lines", []):
            text = normalize("".join(span["text"] for span in line["spans"]))
            if not text:
                continue
            x0, y0, x1, y1 = line["bbox"]
            in_margin = y1 < height * MARGIN_SHARE or y0 > height * (1 - MARGIN_SHARE)
            out.append(_Line(text, page.number + 1, in_margin, x0, y0, x1, y1))
    return out


def _shape(text: str) -> str:
    """Page numbers differ from page to page; the rest of a running line does not."""
    return re.sub(r"\d+", "#", text.replace(" ", ""))


def _running_lines(lines: list[_Line], pages: int) -> set[str]:
    if pages < 2:
        return set()
    seen = Counter({(shape, page) for shape, page in ((_shape(x.text), x.page) for x in lines
                                                      if x.in_margin)})
    per_shape = Counter(shape for shape, _ in seen)
    return {shape for shape, n in per_shape.items() if n >= max(2, pages // 2)}


def _paragraphs(lines: list[_Line]) -> list[Block]:
    """Wrapped lines back into paragraphs.

    A line opens a paragraph when it starts a clause or heading, is indented or centred, changes
    font size, follows a vertical gap, or follows a short line that ended a sentence.
    """
    if not lines:
        return []
    starts = Counter(round(line.x0) for line in lines)
    margin = min((x for x, n in starts.items() if n >= 3), default=min(starts))
    right = max(line.x1 for line in lines)
    blocks: list[Block] = []
    previous: _Line | None = None
    for line in lines:
        starts_new = (
            previous is None
            or is_structure_start(line.text)
            or line.x0 > margin + 6
            or abs(_height(line) - _height(previous)) > 0.2 * _height(previous)
            or (line.page == previous.page and line.y0 - previous.y1 > 0.8 * _height(previous))
            or (previous.text[-1] in "。：:！？" and previous.x1 < right - 24)
        )
        if starts_new:
            blocks.append(Block(kind=BlockKind.PARAGRAPH, text=line.text, page=line.page))
        else:
            blocks[-1].text = join_lines(blocks[-1].text, line.text)
        previous = line
    return blocks


def _height(line: _Line) -> float:
    return line.y1 - line.y0
