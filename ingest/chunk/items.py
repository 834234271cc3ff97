"""Documents numbered by items (一、二、三、…) instead of 第N条: amendments (刑法修正案(九)) and
decisions (关于修改《X》的决定) are itemised so, and cited by item as if by article:
《刑法修正案(九)》第三十八条 means its item 三十八、. Each item is a clause numbered 第N条 by its
ordinal, so such a reference finds it like any other article.

Only an amendment or a decision (its title ends in 修正案(…) or 决定) without a single 第N条
article line is read so: a law's or a policy's 一、 lines are its section headings, and a
company notice's 一、二、 cut into items ranked worse on the blind set (eval/fresh_cases.jsonl,
final MRR 0.790 → 0.780, version questions 1.000 → 0.875). Only items in order from 一、
count: a list restarting at 一、 inside an item stays that item's text.
"""

from __future__ import annotations

import re
import unicodedata

from ingest.graph.link import chinese_number
from ingest.models import Block, BlockKind
from ingest.text import ARTICLE

_ITEMISED = re.compile(r"(?:修正案|决定)(?:\([^()]*\))?$")  # of an NFKC title
_ITEM = re.compile(r"^([一二三四五六七八九十百千零〇]+)、")
MIN_ITEMS = 2  # one 一、 line is a numbered heading or a lone note, not an itemised document


def item_clauses(blocks: list[Block], title: str) -> dict[int, str]:
    """Block index → clause number (第三十八条) of every block opening an item; empty unless the
    document titled `title` is an amendment or decision without 第N条 articles, with at least
    MIN_ITEMS items."""
    if (not _ITEMISED.search(unicodedata.normalize("NFKC", title).strip())
            or any(ARTICLE.match(block.text) for block in blocks)):
        return {}
    found: dict[int, str] = {}
    for i, block in enumerate(blocks):
        match = _ITEM.match(block.text) if block.kind == BlockKind.PARAGRAPH else None
        if match and chinese_number(match.group(1)) == len(found) + 1:
            found[i] = f"第{match.group(1)}条"
    return found if len(found) >= MIN_ITEMS else {}
