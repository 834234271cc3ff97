"""Chinese-aware tokens for BM25: jieba's search-mode segmentation, lowercased.

jieba also loads the terms of the synonym files (the packaged glossary, and a user's file, see
`dictionary_files`) as user words, so that domain terms (陪产假, 网约车) segment as one word at
ingest and at query time alike. Adding words only adds tokens in search mode (the sub-words a
dictionary knows are still emitted), so an index built before an edit still matches.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable
from pathlib import Path

import jieba

from ingest.config import Settings

jieba.setLogLevel(logging.WARNING)

PACKAGED_DICTIONARY = Path(__file__).parents[1] / "search" / "synonyms.txt"
_WORD = re.compile(r"\w")
TEXTS_KEPT = 5_000  # texts whose tokens stay in memory (a few MB)
_CJK_TERM = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")
# Function words that match almost every chunk and only add noise to an OR query.
_STOPWORDS = """
的 了 吗 呢 吧 啊 么 还 能 可以 是 在 和 与 及 或 把 被 就 都 也 要 会 有 我 你 他 她 我们 这 那 哪
怎么 什么 如何 多少 几 是否 the a an of to and or in on for is are be what how
"""
STOPWORDS = frozenset(_STOPWORDS.split())
_added: set[str] = set()


def read_groups(path: Path) -> list[list[str]]:
    """Groups of equivalent terms: one group per line, terms separated by whitespace or commas
    (the words of an English phrase joined by '_': `annual_leave`), `#` starts a comment.
    A line with a single term fails with its file and line number."""
    groups: list[list[str]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        content = line.split("#", 1)[0]
        terms = [t.replace("_", " ").strip().lower() for t in re.split(r"[\s,，、;；]+", content)]
        terms = list(dict.fromkeys(t for t in terms if t))
        if len(terms) == 1:
            raise ValueError(f"{path}:{number}: a synonym group needs at least two terms")
        if terms:
            groups.append(terms)
    return groups


def dictionary_files(settings: Settings) -> list[Path]:
    """The packaged glossary, then `<data_dir>/synonyms.txt` if present, then
    KBFLOW_SYNONYMS_FILE (which must exist when set). Later files add groups."""
    files = [PACKAGED_DICTIONARY]
    local = settings.data_dir / "synonyms.txt"
    if local.is_file():
        files.append(local)
    if settings.synonyms_file is not None:
        if not settings.synonyms_file.is_file():
            raise FileNotFoundError(f"KBFLOW_SYNONYMS_FILE: no such file {settings.synonyms_file}")
        files.append(settings.synonyms_file)
    return files


def add_words(words: Iterable[str]) -> None:
    """Teach jieba the Chinese terms among `words` (idempotent); texts cut before a new word
    are cut again."""
    for word in words:
        if word not in _added and _CJK_TERM.fullmatch(word):
            jieba.add_word(word)
            _added.add(word)
            cached_tokens.cache_clear()


def use_dictionaries(settings: Settings) -> None:
    """Load the user's synonym files as jieba words (the packaged one loads by itself)."""
    for path in dictionary_files(settings)[1:]:
        add_words(t for group in read_groups(path) for t in group)


@functools.cache
def _ensure_packaged() -> None:
    """Once per process, whatever words were added before."""
    add_words(t for group in read_groups(PACKAGED_DICTIONARY) for t in group)


def tokens(text: str) -> list[str]:
    _ensure_packaged()
    return [t.lower() for t in jieba.cut_for_search(text) if _WORD.search(t)]


@functools.lru_cache(maxsize=TEXTS_KEPT)
def cached_tokens(text: str) -> tuple[str, ...]:
    """`tokens` of a text searches cut again and again: a result's text (its term cover, its
    stated values), a synonym group's terms, a repeated question. The same chunks come back
    from search to search, and cutting them took most of a warm search over a corpus that
    shares the query's words."""
    return tuple(tokens(text))


def segment(text: str) -> list[str]:
    """jieba's precise segmentation by its dictionary alone (no HMM guesses, so an unknown
    word stays as single characters), lowercased."""
    _ensure_packaged()
    return [t.lower() for t in jieba.cut(text, HMM=False)]


def is_word(word: str, min_freq: int = 20) -> bool:
    """A word jieba's dictionary knows as more than a rarity, or a glossary term."""
    _ensure_packaged()
    return word in _added or jieba.dt.FREQ.get(word, 0) >= min_freq


def query_tokens(text: str) -> list[str]:
    """Distinct query terms without stop words (all of them if nothing else is left)."""
    terms = list(dict.fromkeys(cached_tokens(text)))
    content = [t for t in terms if t not in STOPWORDS]
    return content or terms
