"""Text repeated from page to page (running headers and footers, slide footers, confidentiality
lines): one rule for PDF pages and PPTX slides, so both formats drop the same kind of line.

Dropped from the pages, such a line is still kept once (`margin_blocks`): a document number or
version printed only in the footer (文件编号:JL-GC-005) is what a reader asks for, and once it
pollutes no chunk."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from ingest.models import Block, BlockKind

_PAGE_NUMBER = re.compile(
    r"[-–—~_\s]*\d{1,4}[-–—~_\s]*"  # "3", "- 3 -"
    r"|第\s*\d{1,4}\s*页(?:\s*[,，/]?\s*共\s*\d{1,4}\s*页)?"  # "第 3 页", "第 3 页 共 10 页"
    r"|共\s*\d{1,4}\s*页\s*[,，]?\s*第\s*\d{1,4}\s*页"  # "共 10 页 第 3 页"
    r"|\d{1,4}\s*/\s*\d{1,4}"  # "3/10"
    r"|(?:page|p\.)\s*\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?",  # "Page 3 of 10"
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3400-\u9fff]")


def line_shape(text: str) -> str:
    """Page numbers and dates differ from page to page; the rest of a running line does not,
    so digits count as one "#" and whitespace not at all."""
    return re.sub(r"\d+", "#", re.sub(r"\s+", "", text))


def repeated_shapes(texts_per_page: Sequence[Iterable[str]], min_pages: int = 2) -> set[str]:
    """Shapes (see line_shape) of the texts found on at least half of the pages, and on two
    at the least; none when the document has fewer than `min_pages` pages."""
    pages = len(texts_per_page)
    if pages < min_pages:
        return set()
    per_shape = Counter(shape for texts in texts_per_page
                        for shape in {line_shape(text) for text in texts})
    return {shape for shape, n in per_shape.items() if n >= max(2, pages // 2)}


def is_page_number(text: str) -> bool:
    return bool(_PAGE_NUMBER.fullmatch(text.strip()))


def margin_blocks(texts: Iterable[str], page: int = 1) -> list[Block]:
    """The page margins' texts, each shape once and page numbers left out, as a section of
    their own for the end of the document: a heading naming them (they are not body text),
    then one paragraph. Not the start: the opening lines are read for the document's identity
    (its amendment dates), and a running header often repeats the title. Their own section,
    so the last clause's chunk does not take them in."""
    kept: dict[str, str] = {}
    for text in texts:
        text = " ".join(text.split())
        if text and not is_page_number(text):
            kept.setdefault(line_shape(text), text)
    if not kept:
        return []
    label = "页眉页脚" if any(_CJK.search(t) for t in kept.values()) else "Header and footer"
    return [Block(kind=BlockKind.HEADING, text=label, page=page, level=1),
            Block(kind=BlockKind.PARAGRAPH, text=" | ".join(kept.values()), page=page)]
