"""OCR for pages without a usable text layer (scans, photographed pages).

PaddleOCR is used when it is installed with its models already on disk (it would otherwise
download them on first use, which fails offline); RapidOCR runs the same PP-OCR models from the
ONNX files inside its wheel and always works offline.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pymupdf

OCR_DPI = 200
log = logging.getLogger(__name__)

# (corner points, text, score) per recognized line, as both engines report it
RawLine = tuple[list[list[float]], str, float]
Engine = Callable[[np.ndarray], list[RawLine]]


@dataclass(frozen=True)
class OcrLine:
    text: str
    bbox: tuple[float, float, float, float]  # x0, y0, x1, y1 in page points (as displayed)
    confidence: float


def ocr_page(page: pymupdf.Page) -> list[OcrLine]:
    """Lines of a rendered page with their boxes in page coordinates, top to bottom."""
    pix = page.get_pixmap(dpi=OCR_DPI, colorspace=pymupdf.csRGB, alpha=False)
    image = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width, 3)
    image = np.ascontiguousarray(image[:, :, ::-1])  # the engines expect OpenCV's BGR order
    scale = 72 / OCR_DPI
    lines = []
    for box, text, score in engine()(image):
        xs, ys = [p[0] for p in box], [p[1] for p in box]
        bbox = (min(xs) * scale, min(ys) * scale, max(xs) * scale, max(ys) * scale)
        lines.append(OcrLine(text, bbox, float(score)))
    return sorted(lines, key=lambda line: (line.bbox[1], line.bbox[0]))


@functools.cache
def engine() -> Engine:
    """The OCR engine, loaded once per process (model loading takes about a second)."""
    return _paddle() or _rapid()


def _rapid() -> Engine:
    from rapidocr_onnxruntime import RapidOCR

    rapid = RapidOCR()

    def run(image: np.ndarray) -> list[RawLine]:
        result, _ = rapid(image)
        return [(box, text, score) for box, text, score in result or []]

    return run


def _paddle() -> Engine | None:
    """PaddleOCR 2.x, only if its models are on disk already (PADDLEOCR_HOME or ~/.paddleocr)."""
    if importlib.util.find_spec("paddleocr") is None:
        return None
    home = Path(os.environ.get("PADDLEOCR_HOME", Path.home() / ".paddleocr"))
    if not home.is_dir() or not any(home.rglob("*.pdmodel")):
        log.info("paddleocr is installed but has no models under %s: using RapidOCR", home)
        return None
    from paddleocr import PaddleOCR

    paddle = PaddleOCR(use_angle_cls=True, lang="ch", show_log=False)

    def run(image: np.ndarray) -> list[RawLine]:
        result = paddle.ocr(image, cls=True)
        return [(box, text, score) for box, (text, score) in (result[0] or [])] if result else []

    return run
