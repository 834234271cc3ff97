"""Text helpers shared by stages: normalization, structure markers, hashing, token estimates."""

from __future__ import annotations

import re
import unicodedata

import xxhash

CN_NUM = r"[一二三四五六七八九十百千零〇两\d]+"

# Markers that open a structural unit. Order matters: the first match wins.
PART = re.compile(rf"^第{CN_NUM}编")
CHAPTER = re.compile(rf"^第{CN_NUM}章")
SECTION = re.compile(rf"^第{CN_NUM}节")
ARTICLE = re.compile(rf"^(第{CN_NUM}条)")
DECIMAL = re.compile(r"^(\d{1,2}(?:\.\d{1,3})+)\.?(?=\s|[^\d.\s])")
TOP_NUMBER = re.compile(r"^(\d{1,2})\.?\s+(?=[A-Za-z\u4e00-\u9fff])")
SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|(?<=\.)\s+")
_SENTENCE_BREAK = re.compile(r"[。；;！？!?\n]|(?<=[a-z])\.\s")
_TOKEN = re.compile(r"[\u3400-\u9fff]|[A-Za-z]+|\d+|[^\sA-Za-z\d\u3400-\u9fff]")


def normalize(text: str) -> str:
    """NFKC (full-width digits and punctuation become ASCII) and collapsed whitespace per line."""
    text = unicodedata.normalize("NFKC", text).replace("\u3000", " ")
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


_SPACED_MARKER = re.compile(rf"第\s*({CN_NUM}(?:\s*\.\s*\d+)*)\s*([编章节条款项])")
_SPACED_DECIMAL = re.compile(r"^(\d{1,2}(?:\s*\.\s*\d{1,3})+)(?=\s)")
_WS = re.compile(r"\s+")
HEADING_MAX_CHARS = 40


def tidy_numbering(line: str) -> str:
    """Close the gaps OCR and justified PDF text leave inside numbering: "第 4 . 2 条" and
    "4 . 2 口令" become "第4.2条" and "4.2 口令", so clause markers still match."""
    line = _SPACED_MARKER.sub(lambda m: "第" + _WS.sub("", m.group(1)) + m.group(2), line)
    return _SPACED_DECIMAL.sub(lambda m: _WS.sub("", m.group(1)), line)


def looks_like_heading(text: str) -> bool:
    """Short and not a sentence: no full stop, no trailing colon or comma."""
    return 0 < len(text) <= HEADING_MAX_CHARS and "。" not in text and text[-1] not in ":：;；,，"


def numbered_heading_level(text: str) -> int | None:
    """The heading level a numbered line states (第X编 1, 第X章 2, 第X节 3, "4.2" 2, "1" 1), or
    None: 第X条 opens a clause, and a long or sentence-like line is body text."""
    if ARTICLE.match(text) or not looks_like_heading(text):
        return None
    for level, pattern in ((1, PART), (2, CHAPTER), (3, SECTION)):
        if pattern.match(text):
            return level
    number = DECIMAL.match(text) or TOP_NUMBER.match(text)
    return number.group(1).count(".") + 1 if number else None


def is_structure_start(line: str) -> bool:
    """Whether a line opens a chapter, section, clause or numbered item (a paragraph break)."""
    return any(p.match(line) for p in (PART, CHAPTER, SECTION, ARTICLE, DECIMAL, TOP_NUMBER))


def _spaced(char: str) -> bool:
    """Whether words of the character's script are parted by spaces (Latin, Arabic, Hebrew)."""
    return char.isascii() or unicodedata.name(char, "").startswith(("ARABIC", "HEBREW"))


def join_lines(left: str, right: str) -> str:
    """Join a wrapped line: no space between CJK characters, one space between Latin, Arabic
    or Hebrew words."""
    if left and right and _spaced(left[-1]) and _spaced(right[0]):
        return f"{left} {right}"
    return left + right


def sentences(text: str) -> list[str]:
    """A chunk's sentences (of at least 4 characters; the whole text if none is): what search
    compares a question with one by one, and what the embed stage encodes for it."""
    parts = [p.strip() for p in _SENTENCE_BREAK.split(text)]
    return [p for p in parts if len(p) >= 4] or [text]


def content_hash(text: str) -> str:
    return xxhash.xxh64_hexdigest(normalize(text).encode("utf-8"))


def estimate_tokens(text: str) -> int:
    """Wordpiece-like count: one per CJK character, Latin word, number or punctuation mark."""
    return len(_TOKEN.findall(text))
