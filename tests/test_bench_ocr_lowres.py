"""bench.ocr_lowres's measures: the bit-parallel edit distance agrees with the textbook one (its
figures decide OCR settings), and a page shrunk as a coarser scan keeps its proportions."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not an installed package
from bench.ocr_lowres import PAGES, distance, page_pixels, squeeze


def textbook(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[-1]


def test_distance_agrees_with_the_textbook_algorithm() -> None:
    rng = random.Random(40)
    for _ in range(300):
        a = "".join(rng.choice("ab中c") for _ in range(rng.randint(0, 90)))
        b = "".join(rng.choice("abd中") for _ in range(rng.randint(0, 90)))
        assert distance(a, b) == textbook(a, b), (a, b)
    assert distance("kitten", "sitting") == 3


def test_squeeze_keeps_letters_and_digits_only() -> None:
    assert squeeze("Nasdaq & AMEX\n36.71，第４条") == "nasdaqamex3671第4条"


def test_a_page_shrunk_to_a_third_is_a_third_of_its_size() -> None:
    full, third = page_pixels(PAGES[0], 1.0), page_pixels(PAGES[0], 1 / 3)
    assert third.shape[2] == 3 and third.dtype.name == "uint8"
    assert abs(third.shape[0] - full.shape[0] / 3) <= 1
    assert abs(third.shape[1] - full.shape[1] / 3) <= 1
    assert third.min() < 128 < third.max()  # still text on paper, not one grey
