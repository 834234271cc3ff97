"""PDF to blocks: PyMuPDF for text lines and layout, pdfplumber for ruled tables, OCR for pages
without a usable text layer. Every page goes through the same path: positioned lines (and
tables) → reading order → running headers/footers dropped → paragraphs and headings."""

from __future__ import annotations

import io
import logging
import re
from typing import Any

import pdfplumber
import pymupdf
from pdfplumber.pdf import PDF as PlumberPDF

from ingest.models import Block
from ingest.parse.boilerplate import is_page_number, margin_blocks
from ingest.parse.errors import ParseError, describe_content
from ingest.parse.layout import (
    HEADING_SIZE_RATIO,
    Item,
    Line,
    blocks_from_items,
    in_margin,
    reading_order,
    running_lines,
)
from ingest.parse.metadata import _not_a_title
from ingest.parse.ocr import OcrPage, ocr_page
from ingest.parse.ocr_rows import OcrTable, ocr_items
from ingest.parse.pdf_forms import Field, fill_cells, inside, page_fields, place
from ingest.parse.pdf_tables import PdfTable, find_tables, link_continuations
from ingest.parse.pdf_textlayer import reads_better, text_layer
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.tables import is_caption
from ingest.text import join_lines, normalize, numbered_heading_level, tidy_numbering

MIN_TEXT_CHARS = 20  # a page with less readable text than this, and an image, is a scan
MAX_TITLE_CHARS = 100
SAME_SIZE = 0.9  # the lines of a wrapped title are set in (about) the same size
_PLACEHOLDER_TITLE = re.compile(  # a tool's default title, a file name or a path
    r"^(?:microsoft\s+\w+\s+-|untitled|无标题|新建\s*(?:microsoft|word|文本文档|文档)"
    r"|(?:document|文档|slide|title|标题)\s*\d*$|(?:[a-z]:)?[\\/])"
    r"|\.(?:docx?|xlsx?|pptx?|pdf|rtf|txt|wps|odt|html?|tmp|indd|jpe?g|png|tiff?|bmp)$|\\",
    re.I)
log = logging.getLogger(__name__)


def parse_pdf(data: bytes, limits: ParseLimits) -> ParseResult:
    doc = _open(data)
    with doc:
        if doc.needs_pass:
            raise ParseError("PDF is encrypted with a password")
        if doc.page_count == 0:
            raise ParseError("PDF has no pages")
        if doc.page_count > limits.max_pages:
            raise ParseError(f"PDF has {doc.page_count} pages, over the {limits.max_pages} "
                             "page limit (the parse_max_pages setting)")
        result = ParseResult(blocks=[], pages=doc.page_count, repaired=doc.is_repaired)
        stated_title = normalize((doc.metadata or {}).get("title") or "").replace("\n", " ")
        tables = _Tables(data)
        sizes: list[pymupdf.Rect] = []  # each page's area as its lines are placed in it
        try:
            pages = [_page_items(page, tables, result, sizes) for page in doc.pages()]
        finally:
            tables.close()
    lines = [item for items in pages for item in items if isinstance(item, Line)]
    running = running_lines(lines, result.pages)
    result.headers_footers_removed = len(running)
    margins = margin_blocks((line.text for line in lines if id(line) in running), result.pages)
    pages = [[item for item in items if id(item) not in running] for items in pages]
    if _meaningful_title(stated_title):
        result.title, result.title_source = stated_title, "metadata"
    elif heading := _largest_text([item for item in pages[0] if isinstance(item, Line)]):
        result.title, result.title_source = heading, "largest text"
    link_continuations(pages)
    result.blocks = blocks_from_items([item for items in pages for item in items], is_caption)
    _as_page_shares(result.blocks, sizes)
    result.blocks += margins
    return result


def _as_page_shares(blocks: list[Block], sizes: list[pymupdf.Rect]) -> None:
    """Block boxes as shares of their page's width and height (points or OCR pixels alike)."""
    for block in blocks:
        area = sizes[block.page - 1]
        if block.bbox is not None and area.width > 0 and area.height > 0:
            x0, y0, x1, y1 = block.bbox
            block.bbox = (round(max(0.0, x0 / area.width), 4),
                          round(max(0.0, y0 / area.height), 4),
                          round(min(1.0, x1 / area.width), 4),
                          round(min(1.0, y1 / area.height), 4))
        else:
            block.bbox = None


def _meaningful_title(title: str) -> bool:
    """A metadata title that names the document: not empty, not a file name or a tool's
    placeholder ("Microsoft Word - 制度.docx", "Untitled-1", "文档1"), not a revision or date."""
    return (0 < len(title) <= MAX_TITLE_CHARS and not _PLACEHOLDER_TITLE.search(title)
            and not _not_a_title(title))


def _largest_text(lines: list[Line]) -> str:
    """The first page's line in the largest font (with the lines of that size set tight below
    it: a wrapped title), when that font is larger than the body text. Revision, date and page
    number lines and numbered headings ("第一章 总则") are passed over. Text-layer lines only:
    an OCR box's height follows the glyphs and the line's length more than the font size."""
    lines = [line for line in lines if line.confidence is None]
    if not lines:
        return ""
    sizes = sorted(size for line in lines for size in [line.size] * len(line.text))
    usable = [not _not_a_title(line.text) and not is_page_number(line.text)
              and numbered_heading_level(line.text) is None for line in lines]
    largest = max((line.size for line, ok in zip(lines, usable, strict=True) if ok), default=0)
    if largest < HEADING_SIZE_RATIO * sizes[len(sizes) // 2]:
        return ""
    start = next(n for n, line in enumerate(lines) if usable[n] and line.size == largest)
    title, above = lines[start].text, lines[start]
    for line, ok in zip(lines[start + 1:], usable[start + 1:], strict=True):
        if not ok or line.size < SAME_SIZE * largest or line.y0 - above.y1 > 0.5 * largest:
            break
        title, above = join_lines(title, line.text), line
    return title if len(title) <= MAX_TITLE_CHARS else ""


def _open(data: bytes) -> pymupdf.Document:
    if b"%PDF-" not in data[:1024]:
        raise ParseError(f"not a PDF file: {describe_content(data)}")
    try:
        return pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises FileDataError, RuntimeError, …
        raise ParseError(f"not a readable PDF: {exc}") from exc


def _page_items(page: pymupdf.Page, tables: _Tables, result: ParseResult,
                sizes: list[pymupdf.Rect]) -> list[Item]:
    """The page's lines and tables in reading order (its area appended to `sizes`). Text-layer
    lines are in the unrotated page (as PyMuPDF reports them) turned so that most of its text
    runs left to right; OCR lines in the page as read, turned upright."""
    area = page.rect * page.derotation_matrix
    blocks = page.get_text("dict", sort=True)["blocks"]
    turn = _text_turn(blocks)
    if turn % 180:
        area = pymupdf.Rect(0, 0, area.height, area.width)
    fields = page_fields(page)
    lines = _text_lines(blocks, page.number + 1, area, turn, fields)
    found: list[PdfTable] = []
    read: list[OcrTable] = []  # tables read by OCR
    garbled = text_layer("\n".join(line.text for line in lines)).reason
    scan = _needs_ocr(page, lines)  # read by OCR whatever its layer says, as before
    reading = ocr_page(page) if garbled or scan else None
    if garbled and reading is not None:
        kept = scan or reads_better(reading, lines)
        result.warnings.append(f"page {page.number + 1}: its text layer is not language "
                               f"({garbled}): " + ("read by OCR of the page instead" if kept
                                                   else "kept, OCR read no better"))
        reading = reading if kept else None
    if reading is not None:
        area = pymupdf.Rect(0, 0, reading.width, reading.height)
        items = _ocr_items(reading, page.number + 1)
        lines = [item for item in items if isinstance(item, Line)]
        read = [item for item in items if isinstance(item, OcrTable)]
        result.ocr_pages += 1
        result.ocr_confidences += [line.confidence or 0.0 for line in lines] + [
            row.confidence or 0.0 for table in read for row in table.rows]
        if reading.turn:
            result.turned_pages.append(page.number + 1)
    elif _has_rules(page):
        found = tables.find(page, turn, fields, blocks)
        for table in found if turn else []:  # into the turned page, as its lines are
            table.x0, table.y0, table.x1, table.y1 = _turned(
                (table.x0, table.y0, table.x1, table.y1), turn, area)
            table.row_boxes = [_turned(box, turn, area) for box in table.row_boxes]
        lines = [line for line in lines if not any(_inside(line, t) for t in found)]
    if not lines and not found and not read:
        result.empty_pages += 1
    sizes.append(area)
    return reading_order([*lines, *found, *read], area.width)


def _text_turn(blocks: list[dict[str, Any]]) -> int:
    """Degrees (0, 90, 180, 270) to turn the unrotated page by so that most (over half) of its
    text runs left to right: a page whose /Rotate shows upright text drawn turned (a landscape lab
    report), or a table printed sideways. Read unturned, its rows come out column by column."""
    chars: dict[int, int] = {}
    for block in blocks:
        for line in block.get("lines", []):
            if line.get("wmode") == 1:  # vertical CJK writing: read by _vertical_text
                continue
            dx, dy = (round(v) for v in line["dir"])
            turn = _TURNS.get((dx, dy))
            if turn is not None:
                count = sum(len(span["text"].strip()) for span in line["spans"])
                chars[turn] = chars.get(turn, 0) + count
    turn = max(chars, key=lambda turn: chars[turn], default=0)
    return turn if chars and chars[turn] > 0.5 * sum(chars.values()) else 0


_TURNS = {(1, 0): 0, (0, -1): 90, (-1, 0): 180, (0, 1): 270}  # a line's direction -> turn


def _turned(bbox: tuple[float, float, float, float], turn: int, area: pymupdf.Rect
            ) -> tuple[float, float, float, float]:
    """A box of the unrotated page in the page turned by `turn` degrees clockwise (`area`:
    the turned page)."""
    x0, y0, x1, y1 = bbox
    if turn == 90:
        return area.width - y1, x0, area.width - y0, x1
    if turn == 180:
        return area.width - x1, area.height - y1, area.width - x0, area.height - y0
    if turn == 270:
        return y0, area.height - x1, y1, area.height - x0
    return bbox


def _text_lines(blocks: list[dict[str, Any]], number: int, area: pymupdf.Rect, turn: int,
                fields: list[Field]) -> list[Line]:
    """The page's text lines turned by `turn`, its form fields' values among them in place of
    MuPDF's drawing of them (ingest.parse.pdf_forms)."""
    out = []
    columns = []
    for block in blocks:
        if block.get("lines") and all(line.get("wmode") == 1 for line in block["lines"]):
            columns.append(block)
            continue
        for line in block.get("lines", []):
            spans = [span for span in line["spans"] if span["text"].strip()]
            text = tidy_numbering(normalize("".join(span["text"] for span in line["spans"])))
            if not text or not spans or inside(line["bbox"], fields):
                continue
            x0, y0, x1, y1 = _turned(line["bbox"], turn, area)
            out.append(Line(
                text, number, x0, y0, x1, y1, size=max(s["size"] for s in spans),
                bold=all(s["flags"] & pymupdf.TEXT_FONT_BOLD or "Bold" in s["font"]
                         for s in spans),
                in_margin=in_margin(y0, y1, area.height),
            ))
    out += place([(field.text, _turned(field.bbox, turn, area)) for field in fields], out, number)
    vertical = _vertical_text(columns, number)
    return [*out, vertical] if vertical else out


def _vertical_text(columns: list[dict[str, Any]], page: int) -> Line | None:
    """Vertical CJK writing (PyMuPDF's `wmode` 1: a block per column, each character a line of
    its own, which read by rows would interleave the columns): down each column, the columns
    right to left, tier by tier down the page, as one line of text (pdfminer's jo.pdf)."""
    tiers: list[list[dict[str, Any]]] = []
    for block in sorted(columns, key=lambda block: block["bbox"][1]):
        if tiers and block["bbox"][1] < max(b["bbox"][3] for b in tiers[-1]):
            tiers[-1].append(block)
        else:
            tiers.append([block])
    columns = [b for tier in tiers for b in sorted(tier, key=lambda b: -b["bbox"][2])]
    spans = [span for block in columns
             for line in sorted(block["lines"], key=lambda line: line["bbox"][1])
             for span in line["spans"]]
    text = normalize("".join(span["text"] for span in spans))
    if not text:
        return None
    x0, y0 = min(b["bbox"][0] for b in columns), min(b["bbox"][1] for b in columns)
    x1, y1 = max(b["bbox"][2] for b in columns), max(b["bbox"][3] for b in columns)
    return Line(text, page, x0, y0, x1, y1, size=max(span["size"] for span in spans))


def _needs_ocr(page: pymupdf.Page, lines: list[Line]) -> bool:
    """No usable text layer (too little text, or mostly undecodable glyphs) over an image."""
    text = "".join(line.text for line in lines)
    garbled = text.count("\ufffd")
    if len(text) - garbled >= MIN_TEXT_CHARS and garbled <= 0.3 * len(text):
        return False
    return bool(page.get_images())


def _ocr_items(reading: OcrPage, number: int) -> list[Item]:
    """OCR lines and tables in points of the page as read (turned upright when it was scanned
    turned)."""
    boxes = []
    for ocr in reading.lines:
        text = tidy_numbering(normalize(ocr.text))
        if text:
            x0, y0, x1, y1 = ocr.bbox
            boxes.append(Line(text, number, x0, y0, x1, y1, size=y1 - y0,
                              confidence=ocr.confidence,
                              in_margin=in_margin(y0, y1, reading.height)))
    return ocr_items(boxes)


def _has_rules(page: pymupdf.Page) -> bool:
    """Whether the page draws enough horizontal and vertical rules to hold a ruled table (most
    pages do not, and pdfplumber's table finder is the slowest step for a text page)."""
    horizontal = vertical = 0
    for path in page.get_drawings():
        for item in path["items"]:
            if item[0] in {"re", "qu"}:
                horizontal, vertical = horizontal + 2, vertical + 2
            elif item[0] == "l":
                start, end = item[1], item[2]
                horizontal += abs(start.y - end.y) < 1
                vertical += abs(start.x - end.x) < 1
    return horizontal >= 2 and vertical >= 2


def _inside(line: Line, table: PdfTable) -> bool:
    x, y = (line.x0 + line.x1) / 2, (line.y0 + line.y1) / 2
    return table.x0 - 2 <= x <= table.x1 + 2 and table.y0 - 2 <= y <= table.y1 + 2


class _Tables:
    """pdfplumber, opened only when a page looks like it holds a table."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pdf: PlumberPDF | None = None

    def find(self, page: pymupdf.Page, turn: int, fields: list[Field],
             blocks: list[dict[str, Any]]) -> list[PdfTable]:
        """The page's tables in unrotated coordinates, form fields' values in their cells.
        pdfplumber reads a page as its /Rotate shows it; where that shows the text sideways (a
        landscape table on a page turned to portrait), it gets a copy of the page turned by
        `turn` instead, so that its cells' text runs left to right (read sideways, each cell
        came out as a column of single words). `blocks`: PyMuPDF's text of the page, read
        once for its lines and its tables."""
        try:
            if turn % 360 != page.rotation % 360:
                return self._find_turned(page, turn, fields, blocks)
            if self.pdf is None:
                self.pdf = pdfplumber.open(io.BytesIO(self.data))
            found = find_tables(self.pdf.pages[page.number], page, blocks)
            fill_cells(found, fields, page.rotation_matrix)
            return found
        except Exception as exc:  # noqa: BLE001 - a table that cannot be read stays text
            log.warning("page %d: table detection failed, reading it as text: %s",
                        page.number + 1, exc)
            return []

    @staticmethod
    def _find_turned(page: pymupdf.Page, turn: int, fields: list[Field],
                     blocks: list[dict[str, Any]]) -> list[PdfTable]:
        with pymupdf.open() as single:
            single.insert_pdf(page.parent, from_page=page.number, to_page=page.number)
            single[0].set_rotation(turn)
            with pdfplumber.open(io.BytesIO(single.tobytes())) as pdf:
                found = find_tables(pdf.pages[0], single[0], blocks)
            fill_cells(found, fields, single[0].rotation_matrix)
        for table in found:
            table.page = page.number + 1
        return found

    def close(self) -> None:
        if self.pdf is not None:
            self.pdf.close()
