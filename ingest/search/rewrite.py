"""Query rewriting before retrieval: homophone typo correction and synonym expansion.

Why: questions typed on a pinyin keyboard carry homophone typos (报消 for 报销) that match nothing
in BM25 and mislead the encoder; users and documents name one thing differently (报账/报销,
打车/出租车), and a question in one language about a document in the other matches neither path.

- Typos are corrected only against the corpus's own vocabulary (the terms the lexical store
  indexed, with their document frequency) as the reader sees it: a search counts each term in
  the chunks its filter lets through (`Vocabulary.seen_by`), so a query is never corrected to,
  nor protected or expanded by, a word of another tenant's, group's or unpublished version's
  document. Corrections happen only where a Chinese span of the query is not a
  corpus term itself but reads like one (toneless pinyin, a character's reading in context or
  its most common one; near-homophones z/zh, c/ch, s/sh, n/l, an/ang, en/eng, in/ing rank after
  exact ones).
  Characters of query words the corpus knows are never changed; numbers, identifiers (第十二条,
  SEC-3001, 4.2) and Latin text are never touched.
- Synonyms come from plain files of equivalence groups (`tokens.dictionary_files`); a group
  whose term the query contains adds its other terms that the corpus uses more. The files'
  mtimes are checked on every rewrite, so an edit applies to the next query without
  re-ingesting or re-embedding anything.
"""

from __future__ import annotations

import copy
import itertools
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel
from pypinyin import Style, lazy_pinyin, pinyin

from ingest.config import Settings
from ingest.stores import tokens as tokenizer
from ingest.stores.protocols import LexicalStore

log = logging.getLogger(__name__)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
# Numerals and ordinal/unit characters: spans holding one are identifiers or amounts, never typos.
_NUMERALS = set("零〇一二三四五六七八九十百千万亿两壹贰叁肆伍陆柒捌玖拾佰仟第")
# Characters that are mostly grammar: a span made of them alone (会被, 有几) is no typo.
_FUNCTION_CHARS = set("的了吗呢吧啊么还能是在和与及或把被就都也要会有我你他她这那哪几由"
                      "谁从按向对为给让上下中内外前后时去来到又再才很最更等个次每各该其此"
                      "之以于而并且但如若则即已将应需须得地着过可多少什怎没不")
_LATIN_TERM = re.compile(r"^[a-z0-9][a-z0-9 .&/+'-]*$")
_MAX_READINGS = 16
# Places a query's typos are looked for: more than any typed question has. Each costs pinyin
# readings and store counts (a 1,000-character pasted text took 5 s), so the rest of a longer
# query is searched as typed.
MAX_TYPO_PLACES = 64
_FUZZY = ((r"^zh", "z"), (r"^ch", "c"), (r"^sh", "s"), (r"^l", "n"),
          (r"ang$", "an"), (r"eng$", "en"), (r"ing$", "in"))


class Correction(BaseModel):
    wrong: str
    right: str
    exact: bool  # same toneless pinyin (False: a near-homophone)


class QueryRewrite(BaseModel):
    """What search sends to each retriever, and why (shown in search JSON)."""

    original: str
    corrected: str | None  # the typo-fixed query; None when nothing was corrected
    corrections: list[Correction]
    expansions: list[str]  # synonym-group terms added to the query
    bm25_text: str
    dense_text: str


def _readings(text: str) -> list[tuple[str, ...]]:
    """Toneless readings of `text`: per character its reading in context and its most common
    one (差旅 reads chai lv, and also cha lv as a pinyin keyboard user may type it). Rare
    readings are left out: they would make unrelated words homophones."""
    in_context = lazy_pinyin(text, style=Style.NORMAL)
    common = [r[0] for r in pinyin(text, style=Style.NORMAL, heteronym=True)]
    if len(in_context) != len(text) or len(common) != len(text):
        return []
    per_char = [sorted({a, b}) for a, b in zip(in_context, common, strict=True)]
    return list(itertools.islice(itertools.product(*per_char), _MAX_READINGS))


def _fuzzy(syllables: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for s in syllables:
        for pattern, repl in _FUZZY:
            s = re.sub(pattern, repl, s)
        out.append(s)
    return tuple(out)


def _is_chinese_term(term: str) -> bool:
    return bool(_CJK.fullmatch(term)) and not (set(term) & _NUMERALS)


class _Visible(Mapping[str, int]):
    """The corpus's term counts as one reader sees them: a corpus term counts the chunks the
    reader may see (asked of the store once, in batches); a term none of them holds is absent."""

    def __init__(self, corpus: Mapping[str, int],
                 count: Callable[[list[str]], Mapping[str, int]]) -> None:
        self._corpus, self._count = corpus, count
        self._seen: dict[str, int] = {}

    def fetch(self, terms: Iterable[str]) -> None:
        """Count, in one store call, the corpus terms among `terms` not counted yet."""
        new = [t for t in dict.fromkeys(terms) if t in self._corpus and t not in self._seen]
        if new:
            counts = self._count(new)
            self._seen.update((t, counts.get(t, 0)) for t in new)

    def __getitem__(self, term: str) -> int:
        self.fetch([term])
        if not self._seen.get(term):
            raise KeyError(term)
        return self._seen[term]

    def __iter__(self) -> Iterator[str]:
        self.fetch(self._corpus)
        return (t for t in self._corpus if self._seen[t])

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass
class Vocabulary:
    """Corpus terms (term -> number of chunks) indexed by pinyin, and the synonym groups of the
    settings' files, re-read whenever a file appears, disappears or changes."""

    terms: Mapping[str, int]
    settings: Settings
    _exact: dict[tuple[str, ...], list[str]] = field(default_factory=dict, repr=False)
    _near: dict[tuple[str, ...], list[str]] = field(default_factory=dict, repr=False)
    _groups: list[list[tuple[str, re.Pattern[str]]]] = field(default_factory=list, repr=False)
    _stamp: tuple[tuple[Path, int], ...] = field(default=(), repr=False)
    largest_df: int = field(default=0, init=False)  # the most chunks one term is in
    _broken: str | None = field(default=None, repr=False)  # the reason last logged

    def __post_init__(self) -> None:
        self.largest_df = max(self.terms.values(), default=0)
        for term, df in self.terms.items():
            if df >= self.settings.typo_min_df and 2 <= len(term) <= 4 and _is_chinese_term(term):
                for reading in _readings(term):
                    self._exact.setdefault(reading, []).append(term)
                    self._near.setdefault(_fuzzy(reading), []).append(term)
        self.refresh()

    @classmethod
    def load(cls, settings: Settings, source: LexicalStore | Mapping[str, int]) -> Vocabulary:
        """From a lexical store (its `vocabulary()`, listed once) or a term -> count mapping."""
        terms = source.vocabulary() if isinstance(source, LexicalStore) else source
        return cls(dict(terms), settings)

    def seen_by(self, count: Callable[[list[str]], Mapping[str, int]]) -> Vocabulary:
        """This vocabulary for one reader: `count` gives, per term, the chunks holding it that
        the reader may see (the lexical store's `term_counts` under the search's filter).
        Corrections, protected words, expansions and term weights then draw on the reader's
        documents alone; the pinyin index and synonym groups are shared."""
        self.refresh()
        view = copy.copy(self)
        view.terms = _Visible(self.terms, count)
        return view

    def prefetch(self, terms: Iterable[str]) -> None:
        """Count `terms` for the reader in one store call (nothing to do on corpus counts)."""
        if isinstance(self.terms, _Visible):
            self.terms.fetch(terms)

    def refresh(self) -> None:
        """Re-read the synonym files if any changed (cheap: a stat per file). A broken edit
        fails the first load; later, it is logged once and the previous groups stay in use, so
        a typo in the file never stops search."""
        try:
            files = tokenizer.dictionary_files(self.settings)
            stamp = tuple((p, os.stat(p).st_mtime_ns) for p in files)
            if stamp == self._stamp:
                return
            groups = [g for p in files for g in tokenizer.read_groups(p)]
        except (OSError, ValueError) as exc:
            if not self._stamp:
                raise
            if str(exc) != self._broken:
                log.warning("synonym files not reloaded, the previous ones stay in use: %s", exc)
                self._broken = str(exc)
            return
        self._broken = None
        tokenizer.add_words(t for g in groups for t in g)
        self._groups = [[(t, _matcher(t)) for t in g] for g in groups]
        self._stamp = stamp

    @property
    def groups(self) -> list[list[tuple[str, re.Pattern[str]]]]:
        """Each synonym group as (term, matcher) pairs."""
        return self._groups

    def _common(self, term: str) -> bool:
        """A correction's target: in `typo_min_df` chunks at least (of the reader's own)."""
        return self.terms.get(term, 0) >= self.settings.typo_min_df

    def candidates(self, span: str) -> list[tuple[str, bool]]:
        """Corpus terms that read like `span`: exact homophones first, then near ones, each by
        falling frequency."""
        readings = _readings(span)
        exact = {t for r in readings for t in self._exact.get(r, ())}
        near = {t for r in readings for t in self._near.get(_fuzzy(r), ())} - exact
        self.prefetch(sorted(exact | near))
        order = [(t, True) for t in exact if self._common(t)]
        order += [(t, False) for t in near if self._common(t)]
        return sorted(order, key=lambda c: (not c[1], -self.terms[c[0]], c[0]))


def correct(query: str, vocab: Vocabulary) -> tuple[str, list[Correction]]:
    """Replace a run of whole words that is neither a corpus term nor a dictionary word by a
    homophone corpus term. Characters of real words (jieba's dictionary, the glossary, the
    corpus) never change, nor do numerals, units after a digit, function words alone, and
    non-Chinese text. At most MAX_TYPO_PLACES places are tried."""
    out = list(query)
    corrections: list[Correction] = []
    budget = MAX_TYPO_PLACES
    for run in _CJK.finditer(query):
        text, offset = run.group(), run.start()
        words = tokenizer.segment(text)
        starts = [0, *itertools.accumulate(len(w) for w in words)]
        vocab.prefetch([*words, *(text[s:s + n] for s in starts for n in (2, 3, 4))])
        protected = [False] * len(text)
        for start, word in zip(starts, words, strict=False):
            if len(word) >= 2 and (tokenizer.is_word(word) or word in vocab.terms):
                protected[start:start + len(word)] = [True] * len(word)
        protected[0] = protected[0] or query[offset - 1:offset].isdigit()
        position = 0
        while position < len(text) - 1 and budget > 0:
            budget -= 1
            fix = _fix_at(text, position, set(starts), protected, vocab)
            if fix is None:
                position = min(s for s in starts if s > position)
                continue
            span, term, exact = fix
            out[offset + position:offset + position + len(span)] = term
            corrections.append(Correction(wrong=span, right=term, exact=exact))
            position += len(span)
    return "".join(out), corrections


def _fix_at(text: str, i: int, bounds: set[int], protected: list[bool],
            vocab: Vocabulary) -> tuple[str, str, bool] | None:
    """The longest span of whole words from `i` that a corpus term can replace."""
    for length in (4, 3, 2):
        span, keep = text[i:i + length], protected[i:i + length]
        if (len(span) < length or i + length not in bounds or not _is_chinese_term(span)
                or span in vocab.terms or tokenizer.is_word(span) or all(keep)
                or set(span) <= _FUNCTION_CHARS):
            continue
        for term, exact in vocab.candidates(span):
            if all(a == b for a, b, p in zip(span, term, keep, strict=True) if p):
                return span, term, exact
    return None


def _matcher(term: str) -> re.Pattern[str]:
    """A Chinese term matches as a substring; an English one as whole words, plural allowed."""
    if _LATIN_TERM.match(term):
        return re.compile(rf"(?<![a-z0-9]){re.escape(term)}(?:s|es)?(?![a-z0-9])")
    return re.compile(re.escape(term))


def _frequency(term: str, vocab: Vocabulary) -> int:
    """Chunks that can match `term`: its own count, else that of its rarest token (0 when the
    lexical store never indexed one of them)."""
    if term in vocab.terms:
        return vocab.terms[term]
    words = tokenizer.query_tokens(term)
    return min((vocab.terms.get(w, 0) for w in words), default=0)


def expand(text: str, vocab: Vocabulary) -> list[str]:
    """For each synonym group the text names, the group's terms the corpus uses more often than
    the text's own (all it uses when the text's term is absent): a question is widened only
    towards the names the documents prefer, e.g. 报账 -> 报销, or "marriage leave" -> 婚假 in a
    Chinese corpus, while 报销 in a Chinese corpus adds nothing."""
    lowered = text.lower()
    named_groups = [(group, [t for t, matcher in group if matcher.search(lowered)])
                    for group in vocab.groups]
    named_groups = [(group, named) for group, named in named_groups if named]
    vocab.prefetch(w for group, _ in named_groups for t, _ in group
                   for w in (t, *tokenizer.query_tokens(t)))
    added: list[str] = []
    for group, named in named_groups:
        floor = max(_frequency(t, vocab) for t in named)
        added += [t for t, _ in group if t not in named and _frequency(t, vocab) > floor]
    return list(dict.fromkeys(added))


def _latin(text: str) -> bool:
    return _CJK.search(text) is None


def rewrite(query: str, vocab: Vocabulary, *, typos: bool = True,
            synonyms: bool = True) -> QueryRewrite:
    """The corrected query and its expansions. BM25 gets all expansions; the encoder only those
    in the other language (it reads synonyms of the question's own language already, and extra
    words of that language blur it), which bridge a question to documents in the other one.
    `typos` / `synonyms` off skip that step (to judge each alone)."""
    vocab.refresh()
    fixed, corrections = correct(query, vocab) if typos else (query, [])
    expansions = expand(fixed, vocab) if synonyms else []
    bridging = [e for e in expansions if _latin(e) != _latin(fixed)]
    return QueryRewrite(
        original=query, corrected=fixed if corrections else None, corrections=corrections,
        expansions=expansions, bm25_text=" ".join([fixed, *expansions]),
        dense_text=" ".join([fixed, *bridging]),
    )
