"""Near-duplicate blocks inside one document (boilerplate pasted twice, a page scanned twice).

They are flagged, not dropped: a repeated sentence can be intended, and the reader of the parse
report decides. Candidates come from a bottom-k sketch of character trigrams, so a long document
is not compared pair by pair.
"""

from __future__ import annotations

import re
from collections import defaultdict

import xxhash

from ingest.models import Block, BlockKind

NEAR_DUPLICATE_JACCARD = 0.9
MIN_CHARS = 20  # shorter blocks ("（一）年休假；") repeat legitimately
_SKETCH = 4
_BUCKET = 8  # candidates kept per sketch value: boilerplate-heavy documents stay linear


def flag_near_duplicates(blocks: list[Block]) -> int:
    """Set near_duplicate_of on every block that nearly repeats an earlier one; return how many."""
    grams_of: dict[int, set[int]] = {}
    by_sketch: dict[int, list[int]] = defaultdict(list)
    flagged = 0
    for i, block in enumerate(blocks):
        if block.kind != BlockKind.PARAGRAPH or len(block.text) < MIN_CHARS:
            continue
        grams = _trigrams(block.text)
        sketch = sorted(grams)[:_SKETCH]
        candidates = sorted({j for h in sketch for j in by_sketch[h]})
        match = next((j for j in candidates
                      if _jaccard(grams, grams_of[j]) >= NEAR_DUPLICATE_JACCARD), None)
        if match is not None:
            original = blocks[match].near_duplicate_of
            block.near_duplicate_of = match if original is None else original
            flagged += 1
        grams_of[i] = grams
        for h in sketch:
            by_sketch[h] = [*by_sketch[h][-_BUCKET + 1:], i]
    return flagged


def _trigrams(text: str) -> set[int]:
    compact = re.sub(r"\s+", "", text)
    grams = (compact[i:i + 3] for i in range(max(len(compact) - 2, 1)))
    return {xxhash.xxh32_intdigest(gram.encode()) for gram in grams}


def _jaccard(a: set[int], b: set[int]) -> float:
    return len(a & b) / len(a | b)
