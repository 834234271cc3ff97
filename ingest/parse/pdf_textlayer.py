"""Whether a PDF page's text layer says what the page shows.

A font with a broken or missing ToUnicode map (or an odd encoding) gives text that is not
language while the page reads fine: letters mapped to code points of other scripts inside one
word ("usեr", "mოdეl": Latin with Armenian and Georgian), private-use code points, control
characters, pdfminer's "(cid:12)", U+FFFD. Such a page is read by OCR of its rendering instead
(ingest.parse.pdf). The check must not fire on real text that is merely unusual: Chinese or
Japanese with Latin words run in, Greek or Cyrillic, maths, Arabic and Hebrew, ligatures, the
long s, IPA, a table of symbols — so a word mixing scripts counts only when the scripts are never
written together, and a page needs many such words, or much garbage, before it is refused.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby

from ingest.parse.layout import Line
from ingest.parse.ocr import OcrPage

MIN_WORDS = 4  # fewer mixed-script words than this is a stray glyph, not a broken map
MIXED_SHARE = 0.15  # of the page's words of two letters or more
GARBAGE_SHARE = 0.3  # of the page's non-space characters: U+FFFD, private use, control, (cid:N)
OCR_SHARE = 0.5  # OCR replaces a garbled layer when it reads at least this share of its characters
CONFIDENT = 0.8  # and its mean confidence per character is at least this
_CID = re.compile(r"\(cid:\d+\)")
_WORD = re.compile(r"[^\W\d_]{2,}")  # letters (and marks) of one run, digits and '_' split it
# scripts written together in one word: CJK with each other and with Latin, Greek or Cyrillic
# run in ("使用Python", "α射线"); Latin with Greek (units, maths: "μm", "βcatenin")
_CJK = frozenset({"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "BOPOMOFO",
                  "IDEOGRAPHIC"})
_TOGETHER = [_CJK | {"LATIN", "GREEK", "CYRILLIC"}, frozenset({"LATIN", "GREEK"})]
_NEUTRAL = frozenset({"", "COMBINING", "MODIFIER", "MATHEMATICAL", "SUPERSCRIPT", "SUBSCRIPT",
                      "SCRIPT", "BLACK-LETTER", "DOUBLE-STRUCK", "CIRCLED", "PARENTHESIZED",
                      "SQUARED", "NEGATIVE", "SMALL"})


@dataclass(frozen=True)
class TextLayer:
    """What a page's text layer holds: its words, the words mixing scripts never written
    together, and its characters that are no text at all."""

    words: int
    mixed: int
    chars: int
    garbage: int

    @property
    def garbled(self) -> bool:
        return bool(self.reason)

    @property
    def reason(self) -> str:
        """Why the text layer is not language ("" when it is)."""
        if self.mixed >= MIN_WORDS and self.mixed >= MIXED_SHARE * self.words:
            return f"{self.mixed} of {self.words} words mix scripts never written together"
        if self.garbage >= MIN_WORDS and self.garbage >= GARBAGE_SHARE * self.chars:
            return (f"{self.garbage} of {self.chars} characters are unmapped, private-use or "
                    "control codes")
        return ""


def text_layer(text: str) -> TextLayer:
    """Counts of `text` (a page's text layer) that tell language from a broken font map."""
    cids = _CID.findall(text)
    text = _CID.sub(" ", text)
    chars = [c for c in text if not c.isspace()]
    garbage = sum(len(cid) for cid in cids) + sum(1 for c in chars if _garbage(c))
    words = _WORD.findall(text)
    mixed = sum(1 for word in words if _mixed(word))
    return TextLayer(len(words), mixed, len(chars) + sum(len(cid) for cid in cids), garbage)


def _garbage(char: str) -> bool:
    """U+FFFD, a private-use code point (a symbol font's glyph or an unmapped one) or a control
    character other than tab and line ends."""
    category = unicodedata.category(char)
    return char == "\ufffd" or category == "Co" or (category == "Cc" and char not in "\t\r\n")


def _mixed(word: str) -> bool:
    """A letter or two of one script inside a word of another, the two never written together
    ("usեr"): a broken map swaps single glyphs. Whole words of two scripts run together (table
    cells joined: "Nameالاسم") are real text."""
    scripts = [script for script in map(_script, word) if script not in _NEUTRAL]
    runs = [(script, len(list(group))) for script, group in groupby(scripts)]
    return any(length <= 2 and before == after and not _together(middle, before)
               for (before, _), (middle, length), (after, _) in zip(
                   runs, runs[1:], runs[2:], strict=False))


def _together(one: str, other: str) -> bool:
    return any({one, other} <= scripts for scripts in _TOGETHER)


@lru_cache(maxsize=4096)
def _script(char: str) -> str:
    """The script a letter or mark belongs to, from its Unicode name ("ARMENIAN SMALL LETTER
    AYB" → ARMENIAN); full- and half-width forms by the letter they stand for."""
    words = unicodedata.name(char, "").split()
    if words[:1] in (["FULLWIDTH"], ["HALFWIDTH"]):
        words = words[1:]
    return words[0] if words else ""


def reads_better(reading: OcrPage, lines: list[Line]) -> bool:
    """Whether OCR's reading of a page whose text layer is not language should replace that
    layer: it must be language itself, read with confidence, and hold at least half as many
    characters. An engine that does not know the page's script (PP-OCR and Arabic or Urdu)
    reads little or nothing, and the layer is kept rather than lost."""
    ocr = text_layer("\n".join(line.text for line in reading.lines))
    layer = sum(1 for line in lines for char in line.text if not char.isspace())
    return (not ocr.garbled and ocr.chars >= OCR_SHARE * layer
            and reading.confident_chars >= CONFIDENT * reading.chars)
