"""Small text by OCR: character accuracy and CPU seconds of RapidOCR as kbflow calls it, and of
two ways to read small text better (issue #40), on scans with known text.

    .venv/bin/python -m bench.ocr_lowres [--scale 0.5] [--page NAME] [--held-out] [--variant V]

Pages: Tesseract's own test scans with the text a person reads on them (`bench/ocr_corpus/`,
see its PROVENANCE.md), each also shrunk as a 150 dpi or 100 dpi scan of it would be (a 300 dpi
page at 1/2 and 1/3, box filter, as a scanner averages). Variants: `as-is` (the engine kbflow
uses), `enlarged` (the image enlarged with Lanczos, twice or up to the 2,000 pixels RapidOCR
shrinks a longer side to, before detection and recognition: about four times the pixels) and
`detector` (only the detector's input enlarged, short side 1,472 instead of 736: lines found at
twice the resolution, recognised from the image's own pixels). Character accuracy is
1 − edit distance / length over letters and digits (NFKC, lowercased, lines top to bottom as the
engine gives them, the same for every variant: on the UNLV pages, set in columns, that order
interleaves the columns, so there it measures order more than reading); word recall counts the
reference's words found, in any order (RapidOCR drops spaces between small words, which this
counts and character accuracy does not).
CPU seconds are the process's (both cores count): compare the columns of one run. 8071_093.3B
is held out (`--held-out`): looked at once, after choosing.
"""

from __future__ import annotations

import argparse
import re
import time
import unicodedata
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image

from ingest.parse import ocr
from ingest.parse.ocr import Engine

CORPUS = Path(__file__).parent / "ocr_corpus"
PAGES = ["phototest", "eurotext", "8087_054.3B"]
HELD_OUT = ["8071_093.3B"]
SCALES = [1.0, 1 / 2, 1 / 3]
VARIANTS = ["as-is", "enlarged", "detector"]
ENGINE_SIDE = 2000  # RapidOCR shrinks an image with a longer side to this before reading it


def distance(a: str, b: str) -> int:
    """Levenshtein distance, bit-parallel (Myers/Hyyrö): pages of thousands of characters in
    milliseconds."""
    if not a:
        return len(b)
    masks: dict[str, int] = {}
    for i, char in enumerate(a):
        masks[char] = masks.get(char, 0) | 1 << i
    every, last = (1 << len(a)) - 1, 1 << (len(a) - 1)
    plus, minus, score = every, 0, len(a)
    for char in b:
        eq = masks.get(char, 0)
        xv = eq | minus
        xh = (((eq & plus) + plus) ^ plus) | eq
        ph = minus | ~(xh | plus)
        mh = plus & xh
        score += 1 if ph & last else -1 if mh & last else 0
        ph = (ph << 1) | 1
        mh <<= 1
        plus = (mh | ~(xv | ph)) & every
        minus = ph & xv & every
    return score


def squeeze(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower()))


def page_pixels(name: str, scale: float) -> np.ndarray:
    """The scan as BGR pixels, shrunk by `scale` (box filter) as a coarser scan would be."""
    with Image.open(CORPUS / f"{name}.tif") as image:
        gray = image.convert("L")
    if scale != 1:
        size = (round(gray.width * scale), round(gray.height * scale))
        gray = gray.resize(size, Image.Resampling.BOX)
    return np.ascontiguousarray(np.asarray(gray.convert("RGB"))[:, :, ::-1])


def variant(name: str) -> Engine:
    if name == "as-is":
        return ocr.engine()
    from rapidocr_onnxruntime import RapidOCR

    rapid = RapidOCR(det_limit_side_len=1472) if name == "detector" else RapidOCR()
    grow = name == "enlarged"

    def run(image: np.ndarray) -> list[ocr.RawLine]:
        zoom = min(2.0, ENGINE_SIDE / max(image.shape[:2])) if grow else 1.0
        if zoom > 1:
            size = (round(image.shape[1] * zoom), round(image.shape[0] * zoom))
            image = np.asarray(Image.fromarray(image).resize(size, Image.Resampling.LANCZOS))
        result, _ = rapid(image, use_cls=False)
        return [([[x / zoom, y / zoom] for x, y in box], text, score)
                for box, text, score in result or []]

    return run


def measure(engine: Engine, pixels: np.ndarray, truth: str) -> tuple[float, float, float]:
    """(character accuracy, word recall, CPU seconds) of one reading."""
    started = time.process_time()
    lines = sorted(engine(pixels), key=lambda line: (min(p[1] for p in line[0]),
                                                     min(p[0] for p in line[0])))
    seconds = time.process_time() - started
    text = "\n".join(text for _, text, _ in lines)
    want, got = squeeze(truth), squeeze(text)
    accuracy = 1 - distance(want, got) / max(len(want), 1)
    recalled = sum((words(truth) & words(text)).values()) / max(sum(words(truth).values()), 1)
    return accuracy, recalled, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, action="append", help="only these scales")
    parser.add_argument("--page", action="append", help="only these pages")
    parser.add_argument("--held-out", action="store_true", help="the held-out page only")
    parser.add_argument("--variant", action="append", choices=VARIANTS)
    args = parser.parse_args()
    pages = args.page or (HELD_OUT if args.held_out else PAGES)
    names = args.variant or VARIANTS
    engines = {name: variant(name) for name in names}  # model loading is not a page's cost
    print("| page | scale | pixels | " + " | ".join(
        f"{name}: accuracy, word recall, CPU s" for name in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    totals = {name: np.zeros(3) for name in names}
    for name in pages:
        truth = (CORPUS / f"{name}.txt").read_text("utf-8", "replace")
        for scale in args.scale or SCALES:
            pixels = page_pixels(name, scale)
            cells = []
            for engine_name, engine in engines.items():
                figures = measure(engine, pixels, truth)
                totals[engine_name] += figures
                cells.append("{:.3f}, {:.3f}, {:.1f}".format(*figures))
            print(f"| {name} | {scale:.2f} | {pixels.shape[1]} × {pixels.shape[0]} | "
                  + " | ".join(cells) + " |", flush=True)
    runs = len(pages) * len(args.scale or SCALES)
    print(f"| **mean accuracy, mean word recall, total s** ({runs}) | | | " + " | ".join(
        f"{t[0] / runs:.3f}, {t[1] / runs:.3f}, {t[2]:.1f}" for t in totals.values()) + " |")


if __name__ == "__main__":
    main()
