"""Chinese-aware tokens for BM25: jieba's search-mode segmentation, lowercased."""

from __future__ import annotations

import logging
import re

import jieba

jieba.setLogLevel(logging.WARNING)

_WORD = re.compile(r"\w")
# Function words that match almost every chunk and only add noise to an OR query.
_STOPWORDS = """
的 了 吗 呢 吧 啊 么 还 能 可以 是 在 和 与 及 或 把 被 就 都 也 要 会 有 我 你 他 她 我们 这 那 哪
怎么 什么 如何 多少 几 是否 the a an of to and or in on for is are be what how
"""
STOPWORDS = frozenset(_STOPWORDS.split())


def tokens(text: str) -> list[str]:
    return [t.lower() for t in jieba.cut_for_search(text) if _WORD.search(t)]


def query_tokens(text: str) -> list[str]:
    """Distinct query terms without stop words (all of them if nothing else is left)."""
    terms = list(dict.fromkeys(tokens(text)))
    content = [t for t in terms if t not in STOPWORDS]
    return content or terms
