"""Which recogniser reads OCR'd lines better (issue #40): RapidOCR's own PP-OCRv4, the PP-OCRv6
small shipped in the `rapidocr` wheel, and kbflow's use of both (PP-OCRv4 reads every line, PP-OCRv6
again those without a Chinese or Japanese character), behind the same detector, on pages with
known text.

    .venv/bin/python -m bench.ocr_reading [--pages corpus|pictures|chinese ...]

Pages: `corpus`, Tesseract's test scans (bench/ocr_corpus) at full size, 1/2 and 1/3 (as 150
and 100 dpi scans of them); `pictures`, the bench's five pictures (bench/format_corpus) against
a person's transcription of them (bench/format_visible_read.json), as they are and halved;
`chinese`, the first 900 characters from 第一条 of two LawRefBook laws (../shared/realworld),
set in 11.5 points with PyMuPDF's CJK font, rasterised at 300 dpi and shrunk to 150, 100 and
75 dpi. Figures per page: character accuracy, word recall and CPU seconds as
bench/ocr_lowres.py measures them.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pymupdf
from PIL import Image

from bench.ocr_lowres import CORPUS, measure, page_pixels
from ingest.parse import ocr
from ingest.parse.ocr import Engine

BENCH = Path(__file__).parent
LAWS = BENCH.parents[1] / "shared/realworld/laws"
CHINESE = ["社会法/劳动合同法(2012-12-28).md", "行政法/个人信息保护法(2021-08-20).md"]
Page = tuple[str, np.ndarray, str]


def engines() -> dict[str, Engine]:
    from rapidocr_onnxruntime import RapidOCR

    def reading(rapid: RapidOCR) -> Engine:
        return lambda image: [(b, t, s) for b, t, s in rapid(image, use_cls=False)[0] or []]

    return {"PP-OCRv4": reading(RapidOCR()), "PP-OCRv6": reading(RapidOCR(**ocr._recognizer())),
            "kbflow (v4, v6 for lines without CJK)": ocr._rapid()}


def bgr(image: Image.Image, scale: float = 1.0) -> np.ndarray:
    if scale != 1:
        size = (round(image.width * scale), round(image.height * scale))
        image = image.resize(size, Image.Resampling.BOX)
    return np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])


def corpus_pages() -> Iterator[Page]:
    for name in ["phototest", "eurotext", "8087_054.3B", "8071_093.3B"]:
        truth = (CORPUS / f"{name}.txt").read_text("utf-8", "replace")
        for scale in (1, 1 / 2, 1 / 3):
            yield f"{name} ×{scale:.2f}", page_pixels(name, scale), truth


def picture_pages() -> Iterator[Page]:
    read = json.loads((BENCH / "format_visible_read.json").read_text("utf-8"))["pictures"]
    for key, picture in read.items():
        with Image.open(BENCH / "format_corpus" / key) as image:
            rgb = image.convert("RGB")
        for scale in (1, 1 / 2):
            yield f"{key} ×{scale:.2f}", bgr(rgb, scale), "\n".join(picture["lines"])


def chinese_pages() -> Iterator[Page]:
    for law in CHINESE:
        text = (LAWS / law).read_text("utf-8")
        body = re.sub(r"[#*>\s]+", "", text[text.index("第一条"):])[:900]
        lines = [body[i:i + 36] for i in range(0, len(body), 36)]
        doc = pymupdf.open()
        page = doc.new_page(width=595, height=842)
        for n, line in enumerate(lines):
            page.insert_text((50, 70 + 18 * n), line, fontname="china-s", fontsize=11.5)
        pix = page.get_pixmap(dpi=300, colorspace=pymupdf.csGRAY)
        gray = Image.frombytes("L", (pix.width, pix.height), pix.samples)
        for dpi in (300, 150, 100, 75):
            yield f"{law.split('/')[1][:6]} {dpi} dpi", bgr(gray, dpi / 300), "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sets = {"corpus": corpus_pages, "pictures": picture_pages, "chinese": chinese_pages}
    parser.add_argument("--pages", action="append", choices=list(sets))
    args = parser.parse_args()
    readers = engines()
    print("| page | pixels | " + " | ".join(f"{n}: accuracy, word recall, CPU s" for n in readers)
          + " |\n|---|---|" + "---|" * len(readers))
    totals = {name: np.zeros(3) for name in readers}
    count = 0
    for name in args.pages or list(sets):
        for label, pixels, truth in sets[name]():
            count += 1
            cells = []
            for reader, engine in readers.items():
                figures = measure(engine, pixels, truth)
                totals[reader] += figures
                cells.append("{:.3f}, {:.3f}, {:.1f}".format(*figures))
            print(f"| {label} | {pixels.shape[1]} × {pixels.shape[0]} | " + " | ".join(cells)
                  + " |", flush=True)
    print(f"| **mean, mean, total** ({count}) | | " + " | ".join(
        f"{t[0] / count:.3f}, {t[1] / count:.3f}, {t[2]:.1f}" for t in totals.values()) + " |")


if __name__ == "__main__":
    main()
