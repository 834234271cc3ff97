"""Text repeated from page to page (running headers and footers, slide footers, confidentiality
lines): one rule for PDF pages and PPTX slides, so both formats drop the same kind of line."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence


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
