"""Images of pages (PNG, JPEG, multi-page TIFF, BMP: scans, faxes, photographed notices) read
the way scanned PDF pages are.

The header is checked before any pixel is decoded: an image over the pixel limit or a TIFF with
more frames than the page limit fails with a reason instead of exhausting the worker's memory
or time. The frames then become the pages of a PDF, sized so that rendering them at the OCR
resolution gives back their own pixels, and that PDF goes through `parse_pdf`: OCR, turning
sideways pages upright, reading order and the report are those of scanned PDFs.

OCR costs seconds a page, and a TIFF of thousands of frames takes a few megabytes (a 3.8 MB
one cost 127 s of CPU): only the first `max_image_frames` frames are read, the others are
counted in the report (`skipped["image_frames"]`), and a frame of one colour is a blank page,
never OCR'd.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pymupdf
from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from ingest.parse.errors import ParseError, describe_content
from ingest.parse.ground import on_ground, one_colour
from ingest.parse.ocr import OCR_DPI
from ingest.parse.pdf import parse_pdf
from ingest.parse.result import ParseLimits, ParseResult

FORMATS = ("PNG", "JPEG", "TIFF", "BMP")  # what Pillow may open these as (never EPS, PSD, …)


def parse_image(data: bytes, limits: ParseLimits) -> ParseResult:
    """One page per TIFF frame, else one page; page numbers are frame numbers."""
    with _own_size_checks():
        try:
            image = Image.open(io.BytesIO(data), formats=FORMATS)
        except UnidentifiedImageError as exc:
            raise ParseError(f"not a readable image: {describe_content(data)}") from exc
        with image:
            frames = _checked_frames(image, limits)
            read = min(frames, limits.max_image_frames)
            pdf = _as_pdf(image, read)
    result = parse_pdf(pdf, limits)
    if frames > read:
        result.skipped["image_frames"] = frames - read
    return result


@contextmanager
def _own_size_checks() -> Iterator[None]:
    """Pillow's decompression-bomb check off while an image is read here: it would warn, or
    refuse with a reason naming no setting, at sizes other than the configured limit. Every
    frame's size is checked against the limit from its header before it is decoded instead."""
    pillow_limit = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = pillow_limit


def _checked_frames(image: Image.Image, limits: ParseLimits) -> int:
    """How many pages the image has, each within the pixel limit: counted and sized from the
    frame headers alone, and only up to one frame over the page limit."""
    count = 0
    for frame in ImageSequence.Iterator(image) if image.format == "TIFF" else [image]:
        count += 1
        if count > limits.max_pages:
            raise ParseError(f"image has more than {limits.max_pages} pages (TIFF frames), over "
                             "the page limit (the parse_max_pages setting)")
        width, height = frame.size
        megapixels = width * height / 1_000_000
        if megapixels > limits.max_image_megapixels:
            where = f"page {count} of the image" if count > 1 else "image"
            raise ParseError(f"{where} is {width} × {height} pixels ({megapixels:,.0f} "
                             f"megapixels), over the {limits.max_image_megapixels:g} megapixel "
                             "limit (the parse_max_image_megapixels setting)")
    return count


def _as_pdf(image: Image.Image, frames: int) -> bytes:
    """A PDF with one page per frame, each frame at OCR_DPI (so OCR reads its own pixels); a
    frame of one colour is an empty page (nothing to OCR)."""
    pdf = pymupdf.open()
    for number in range(frames):
        image.seek(number)
        pixels = _page_pixels(image)
        gray = pixels.mode == "L"
        page = pdf.new_page(width=pixels.width * 72 / OCR_DPI,
                            height=pixels.height * 72 / OCR_DPI)
        if one_colour(pixels):
            continue
        pixmap = pymupdf.Pixmap(pymupdf.csGRAY if gray else pymupdf.csRGB, pixels.width,
                                pixels.height, pixels.tobytes(), False)
        page.insert_image(page.rect, pixmap=pixmap)
    data: bytes = pdf.tobytes(deflate=True)
    return data


def _page_pixels(frame: Image.Image) -> Image.Image:
    """The frame as 8-bit gray or RGB: turned as its EXIF orientation says (phone photos),
    transparency on white (on black when nothing shows on white), 16-bit and float gray scaled
    down rather than clipped to white."""
    frame = ImageOps.exif_transpose(frame)
    if frame.mode in {"I", "F"} or frame.mode.startswith("I;16"):
        values = np.asarray(frame, dtype=np.float64)
        scaled = np.clip(values * (255 / max(float(values.max()), 255.0)), 0, 255)
        return Image.fromarray(scaled.astype(np.uint8))
    if frame.has_transparency_data:
        return on_ground(frame)
    if frame.mode in {"L", "RGB"}:
        return frame
    return frame.convert("L" if frame.mode == "1" else "RGB")
