"""OCR for pages without a usable text layer (scans, photographed pages).

PaddleOCR is used when it is installed with its models already on disk (it would otherwise
download them on first use, which fails offline); RapidOCR runs the same PP-OCR models from the
ONNX files inside its wheel and always works offline.

A page is read as it lies first. Scanned sideways, its lines come back as tall boxes; upside
down, as low-confidence garbage, or as nothing at all when every line scores under the
engine's threshold (lines are recognised without the engines' per-line angle classifier, so a
turned line does not read well by accident). Only such a page is read again,
turned, and the reading with the most confidently recognised characters is kept: an upright
page costs one pass.

RapidOCR's wheel carries PP-OCRv4's recogniser, which reads Chinese well but runs small Latin
words together; a newer one shipped inside a registry package (see `_recognizer`) keeps them
apart but puts spaces inside Chinese dates ("202 5年2 月"). So PP-OCRv4 reads every line and a
line it read with no Chinese or Japanese character is read again by the newer model, when
installed (bench/RESULTS.md, branches ocr-reading and ocr-latin). PP-OCRv4 also drops what it
cannot read without a trace: kana, which it does not know ("ポイ捨て禁止!" reads "禁止!"), and
now and then a character it knows ("其他流动负" for 其他流动负债). So a line with a CJK character
is read by the newer model too, whose reading is kept only when it holds more letters and digits
(branch ocr).

A line can lie upside down on an upright page (a label pasted turned, a line set turned for a
fold; chineseocr_lite's mostAngle.jpg): the engine scores it under its threshold and drops it, so
the page looks clean and is never turned. Each line dropped so is read again turned half a turn
and kept, in its place, when that reading is confident (RapidOCR only: PaddleOCR keeps its
dropped lines to itself). A page with twice as much text upside down as upright is read again
turned whole instead, so that its lines come out in reading order.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf

OCR_DPI = 200
CONFIDENT = 0.85  # mean score per character of a page read upright (clean scans read ~0.95)
MIN_CHARS = 10  # fewer recognised characters than this on a page with text boxes is doubtful
TURN_GAIN = 1.25  # a turned reading must beat the one as the page lies by this factor
REC_MODEL = "PP-OCRv6_rec_small.onnx"  # the newer recogniser, for lines with no CJK character
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
log = logging.getLogger(__name__)

# (corner points, text, score) per recognized line, as both engines report it
RawLine = tuple[list[list[float]], str, float]
# the lines as they lie, and the lines that read only turned half a turn (read so)
Engine = Callable[[np.ndarray], tuple[list[RawLine], list[RawLine]]]


@dataclass(frozen=True)
class OcrLine:
    text: str
    bbox: tuple[float, float, float, float]  # x0, y0, x1, y1 in points of the page as read
    confidence: float

    @property
    def sideways(self) -> bool:
        """A box taller than wide holding several characters: a line of a page lying on its side
        (a lone digit or character is taller than wide on an upright page too)."""
        x0, y0, x1, y1 = self.bbox
        return y1 - y0 > x1 - x0 and len(self.text) >= 2


@dataclass(frozen=True)
class OcrPage:
    """A page's lines top to bottom, read after turning it `turn` degrees clockwise; boxes,
    width and height are in points of the page so turned (a quarter turn swaps the sides)."""

    lines: list[OcrLine]
    turn: int
    width: float
    height: float
    upside_down: tuple[OcrLine, ...] = ()  # lines that read only turned half a turn

    @property
    def chars(self) -> int:
        return sum(len(line.text) for line in self.lines)

    @property
    def confident_chars(self) -> float:
        return sum(len(line.text) * line.confidence for line in self.lines)

    @property
    def score(self) -> float:
        """Characters weighted by confidence, not counting sideways lines (their text may read
        but their boxes cannot be put in reading order)."""
        return sum(len(line.text) * line.confidence for line in self.lines if not line.sideways)

    @property
    def sideways(self) -> bool:
        tall = sum(len(line.text) for line in self.lines if line.sideways)
        return self.chars > 0 and 2 * tall >= self.chars

    @property
    def doubtful(self) -> bool:
        """Worth reading turned: sideways, little or unsure text, or none (upside down, or a
        blank page, which costs one more pass of the detector alone)."""
        return (not self.lines or self.sideways or self.chars < MIN_CHARS
                or self.score < CONFIDENT * self.chars
                or sum(len(line.text) for line in self.upside_down) > 2 * self.chars)

    def with_upside_down(self) -> OcrPage:
        """The page's lines with its upside-down lines among them, top to bottom."""
        lines = sorted([*self.lines, *self.upside_down],
                       key=lambda line: (line.bbox[1], line.bbox[0]))
        return OcrPage(lines, self.turn, self.width, self.height)


def ocr_page(page: pymupdf.Page) -> OcrPage:
    """The page's lines, read upright however the page was scanned."""
    pix = page.get_pixmap(dpi=OCR_DPI, colorspace=pymupdf.csRGB, alpha=False)
    image = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width, 3)
    return ocr_image(image[:, :, ::-1])  # the engines expect OpenCV's BGR order


def ocr_image(image: np.ndarray, turns: bool = True) -> OcrPage:
    """The lines of an image (BGR pixels at OCR_DPI: boxes are given in points at that
    resolution), read upright however it lies (or as it lies, without `turns`)."""
    as_lies = _read(image, 0)
    if not turns or not as_lies.doubtful:
        return as_lies.with_upside_down()
    best = as_lies
    for turn in _turns_to_try(as_lies):
        reading = _read(image, turn)
        if reading.score > TURN_GAIN * best.score:
            best = reading
        if not reading.doubtful:
            break
    return best.with_upside_down()


def _turns_to_try(as_lies: OcrPage) -> tuple[int, ...]:
    """Sideways lines: a quarter turn either way. The engines turn a tall line a quarter turn
    counterclockwise before reading it, so when the sideways lines read well the page lies
    turned clockwise and needs 270° more (trying that first saves a pass; either order works).
    Nothing or next to nothing read: upside down first, then either quarter turn (a Latin page
    lying on its side can read as nothing at all, kreuzberg's ocr_test_rotated_90.pdf); a blank
    page costs three passes of the detector."""
    if not as_lies.sideways:
        return (180, 90, 270) if as_lies.chars < MIN_CHARS else (180,)
    return (270, 90) if as_lies.confident_chars >= CONFIDENT * as_lies.chars else (90, 270)


def _read(image: np.ndarray, turn: int) -> OcrPage:
    turned = np.ascontiguousarray(np.rot90(image, k=-turn // 90))
    scale = 72 / OCR_DPI

    def placed(raw: list[RawLine]) -> list[OcrLine]:
        lines = []
        for box, text, score in raw:
            xs, ys = [p[0] for p in box], [p[1] for p in box]
            bbox = (min(xs) * scale, min(ys) * scale, max(xs) * scale, max(ys) * scale)
            lines.append(OcrLine(text, bbox, float(score)))
        return sorted(lines, key=lambda line: (line.bbox[1], line.bbox[0]))

    upright, upside_down = engine()(turned)
    height, width = turned.shape[:2]
    return OcrPage(placed(upright), turn, width * scale, height * scale,
                   tuple(placed(upside_down)))


@functools.cache
def engine() -> Engine:
    """The OCR engine, loaded once per process (model loading takes about a second)."""
    return _paddle() or _rapid()


def _rapid() -> Engine:
    from rapidocr_onnxruntime import RapidOCR

    rapid = RapidOCR()
    threshold = rapid.text_score  # a line scored under it is dropped
    settings = _recognizer()
    newer = RapidOCR(**settings) if settings else None

    def run(image: np.ndarray) -> tuple[list[RawLine], list[RawLine]]:
        # every line the detector found, each with its score (the threshold applied here)
        result, _ = rapid(image, use_cls=False, text_score=0.0)
        found = [(box, text, score) for box, text, score in result or []]
        lines = [line for line in found if line[2] >= threshold]
        upside_down = _upside_down(rapid, image, [line for line in found if line[2] < threshold])
        if newer is None or not lines:
            return lines, upside_down
        crops = rapid.get_crop_img_list(
            image, [np.array(box, dtype=np.float32) for box, _, _ in lines])
        readings, _ = newer.text_rec(crops)
        for i, ((box, first, _), (text, score, *_)) in enumerate(
                zip(lines, readings, strict=True)):
            if text.strip() and score >= newer.text_score and (
                    not _CJK.search(first) or _letters(text) > _letters(first)):
                lines[i] = (box, text, score)
        return lines, upside_down

    return run


def _upside_down(rapid: Any, image: np.ndarray, dropped: list[RawLine]) -> list[RawLine]:
    """The dropped lines that read confidently turned half a turn, read so."""
    if not dropped:
        return []
    crops = rapid.get_crop_img_list(
        image, [np.array(box, dtype=np.float32) for box, _, _ in dropped])
    readings, _ = rapid.text_rec([np.ascontiguousarray(np.rot90(crop, 2)) for crop in crops])
    return [(box, text, float(score)) for (box, _, _), (text, score, *_)
            in zip(dropped, readings, strict=True)
            if score >= CONFIDENT and _letters(text) >= 2]


def _letters(text: str) -> int:
    """Letters and digits, as search compares them (full-width forms folded)."""
    return sum(unicodedata.category(c)[0] in "LN" for c in unicodedata.normalize("NFKC", text))


def _recognizer() -> dict[str, str]:
    """RapidOCR's settings for the newer recogniser, PP-OCRv6 small, that the `rapidocr`
    package ships inside its wheel (its characters are in the model's metadata); none when it is
    not installed, and RapidOCR reads with its own PP-OCRv4. Found without importing the
    package: only its model file is used."""
    spec = importlib.util.find_spec("rapidocr")
    if spec is None or spec.origin is None:
        return {}
    model = Path(spec.origin).parent / "models" / REC_MODEL
    if not model.is_file():
        log.info("rapidocr is installed without %s: reading with PP-OCRv4", REC_MODEL)
        return {}
    return {"rec_model_path": str(model)}


def _paddle() -> Engine | None:
    """PaddleOCR 2.x, only if its models are on disk already (PADDLEOCR_HOME or ~/.paddleocr)."""
    if importlib.util.find_spec("paddleocr") is None:
        return None
    home = Path(os.environ.get("PADDLEOCR_HOME", Path.home() / ".paddleocr"))
    if not home.is_dir() or not any(home.rglob("*.pdmodel")):
        log.info("paddleocr is installed but has no models under %s: using RapidOCR", home)
        return None
    from paddleocr import PaddleOCR

    paddle = PaddleOCR(use_angle_cls=False, lang="ch", show_log=False)

    def run(image: np.ndarray) -> tuple[list[RawLine], list[RawLine]]:
        result = paddle.ocr(image, cls=False)
        return ([(box, text, score) for box, (text, score) in (result[0] or [])]
                if result else [], [])

    return run
