"""Pictures inside Word, PowerPoint and Excel files read by OCR, as a PDF page's pictures are: a
pasted scan of a signed notice, a screenshot of a table, a photographed form.

A picture's size is read from its header before a pixel is decoded. Small pictures (icons,
bullets, rules: under MIN_SIDE pixels on a side, or under MIN_LONG_SIDE on both) are decoration
and left alone; a banner one line of text high is not (234 × 60, "RUSSIAN FINANCIAL CONTROL
MONITOR" in POI's drawing.docx). One over the image pixel limit is counted, not read (the
document's text is still worth indexing); at most `max_pictures` are read per document (OCR
costs about a second each), the others counted; a picture used again (a logo on every slide) is
read once. Lines recognised with less than MIN_CONFIDENCE are a photograph's texture, not text.

A picture's lines are one paragraph, top to bottom; a table in it (a screenshot of a table
pasted into a Word file) is read row by row as a scanned page's is (ingest.parse.ocr_rows), a
TABLE and one TABLE_ROW per row in its place among the lines: joined top to bottom, the cells
of one row interleaved with the next row's, and a row was in no chunk of its own.

Vector pictures (EMF, WMF: diagrams, pasted charts, OLE objects' previews) hold their text as
characters: it is read from their records (ingest.parse.metafile), exactly and without OCR; a
damaged one is skipped with its reason (logged) and counted, the document read all the same.

The OCR engine (and PyMuPDF, which ingest.parse.ocr imports) is loaded with the first picture
worth reading, so a worker reading Word files without pictures never pays for it.
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import warnings
from collections import Counter

import numpy as np
from PIL import Image, ImageOps

from ingest.models import Block, BlockKind
from ingest.parse import metafile
from ingest.parse.ground import on_ground
from ingest.parse.layout import Line
from ingest.parse.ocr_rows import OcrTable, ocr_items
from ingest.parse.result import ParseLimits
from ingest.parse.tables import is_caption
from ingest.text import join_lines, normalize

MIN_SIDE = 16  # a line of legible text is taller; rules and borders are thinner
MIN_LONG_SIDE = 200  # a word or more of text is wider; icons and bullets are smaller
MAX_SIDE = 4000  # larger pictures are scaled down to this before OCR (text stays legible)
MIN_CONFIDENCE = 0.6
VECTOR_RECORDS = 1_000_000  # drawing records of all vector pictures of a document (seconds)
FORMATS = ("PNG", "JPEG", "BMP", "TIFF", "GIF", "WEBP")  # never EPS, PSD … (EMF/WMF: metafile)
log = logging.getLogger(__name__)
# What Pillow raises on data it cannot read (unknown, truncated, damaged, a pixel bomb)
_BAD_PICTURE = (OSError, ValueError, SyntaxError, EOFError, Image.DecompressionBombError)


class Pictures:
    """The pictures of one document, read in the order they are met, within its budget."""

    def __init__(self, limits: ParseLimits) -> None:
        self.limits = limits
        self.read = 0
        self.seen: set[str] = set()
        self.skipped: Counter[str] = Counter()
        self.confidences: list[float] = []
        self.vector_records = 0

    def blocks(self, blob: bytes, page: int) -> list[Block]:
        """The picture's text as paragraphs ("图片文字: …") and the rows of a table in it; none
        for a picture without text, a decoration, a repeat, or one over the limits (counted in
        `skipped`)."""
        digest = hashlib.sha256(blob).hexdigest()
        if digest in self.seen:
            return []
        self.seen.add(digest)
        if metafile.kind(blob) is not None:
            vector = self._vector(blob, page)
            return [vector] if vector is not None else []
        pixels = self._pixels(blob)
        if pixels is None:
            return []
        from ingest.parse.ocr import ocr_image  # PyMuPDF and the OCR models: only when needed

        lines = [Line(text, page, *line.bbox, size=line.bbox[3] - line.bbox[1],
                      confidence=line.confidence)
                 for line in ocr_image(pixels, turns=False).lines
                 if line.confidence >= MIN_CONFIDENCE and (text := normalize(line.text))]
        self.confidences += [line.confidence or 0.0 for line in lines]
        return _ocr_blocks(lines)

    def _vector(self, blob: bytes, page: int) -> Block | None:
        """An EMF or WMF picture's text, as drawn (no OCR, so no confidence), within the
        document's budget of records (a file of many huge drawings costs seconds, not hours)."""
        if self.vector_records >= VECTOR_RECORDS:
            self.skipped["pictures_over_limit"] += 1
            return None
        try:
            drawing = metafile.read(blob, VECTOR_RECORDS - self.vector_records)
        except metafile.MetafileError as error:
            self.vector_records += error.records
            self.skipped["pictures_damaged"] += 1
            log.warning("vector picture (EMF/WMF) on page %d skipped: %s", page, error)
            return None
        self.vector_records += drawing.records
        if drawing.capped:
            self.skipped["pictures_text_capped"] += 1
        lines = [text for line in drawing.lines if (text := normalize(line))]
        if not lines:
            return None
        text = functools.reduce(join_lines, lines)
        return Block(kind=BlockKind.PARAGRAPH, text=f"图片文字: {text}", page=page)

    def _pixels(self, blob: bytes) -> np.ndarray | None:
        """The picture as BGR pixels, or None when it is not to be read."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                image = Image.open(io.BytesIO(blob), formats=FORMATS)
        except _BAD_PICTURE:  # damaged or unknown data
            self.skipped["pictures_unreadable"] += 1
            return None
        with image:
            width, height = image.size
            if min(width, height) < MIN_SIDE or max(width, height) < MIN_LONG_SIDE:
                return None  # decoration, not counted
            if width * height > self.limits.max_image_megapixels * 1_000_000:
                self.skipped["pictures_too_large"] += 1
                return None
            if self.read >= self.limits.max_pictures:
                self.skipped["pictures_over_limit"] += 1
                return None
            self.read += 1
            try:
                image.draft("RGB", (MAX_SIDE, MAX_SIDE))  # JPEG: decode at a reduced size
                upright = ImageOps.exif_transpose(image)
                upright.thumbnail((MAX_SIDE, MAX_SIDE))
                rgb = (on_ground(upright) if upright.has_transparency_data
                       else upright.convert("RGB"))
            except _BAD_PICTURE:  # a truncated or damaged picture
                self.skipped["pictures_unreadable"] += 1
                return None
        return np.ascontiguousarray(np.asarray(rgb)[:, :, ::-1])


def _ocr_blocks(lines: list[Line]) -> list[Block]:
    """The lines top to bottom as paragraphs, cut where a table's rows stand (its caption the
    line just above it, when that names a table)."""
    copies = [Line(line.text, line.page, line.x0, line.y0, line.x1, line.y1, size=line.size,
                   confidence=line.confidence) for line in lines]  # ocr_items joins its boxes
    tables = [item for item in ocr_items(copies) if isinstance(item, OcrTable)]
    tabled = {id(box) for table in tables for row in table.cells for box in row}
    items: list[Line | OcrTable] = [line for line, copy in zip(lines, copies, strict=True)
                                    if id(copy) not in tabled]
    items += tables
    blocks: list[Block] = []
    run: list[Line] = []
    for item in [*sorted(items, key=lambda item: item.y0), None]:
        if isinstance(item, Line):
            run.append(item)
            continue
        if run:
            blocks.append(_paragraph(run))
        if item is not None:
            caption = run[-1].text if run and is_caption(run[-1].text) else ""
            blocks += [block.model_copy(update={"bbox": None}) for block in item.blocks(caption)]
        run = []
    return blocks


def _paragraph(lines: list[Line]) -> Block:
    text = functools.reduce(join_lines, (line.text for line in lines))
    mean = sum(line.confidence or 0.0 for line in lines) / len(lines)
    return Block(kind=BlockKind.PARAGRAPH, text=f"图片文字: {text}", page=lines[0].page, ocr=True,
                 ocr_confidence=round(mean, 4))
