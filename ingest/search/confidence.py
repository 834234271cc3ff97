"""How likely a result answers the query, and when a search should say it has nothing.

RRF scores carry no such signal (they depend on ranks only), and dense similarity alone does not
separate answerable from unanswerable questions. A result's confidence combines what the query
and the chunk share: its cosine with the query, the share of the query's content terms the chunk
contains, whether both retrievers found it, and whether it carries an identifier the query names.
A logistic model over those signals was fitted on the gold set's results (relevant or not;
`scripts/calibrate_confidence.py` refits it and prints the figures in the README); the search
abstains when no result reaches `ABSTAIN_BELOW`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from pydantic import BaseModel

from ingest.stores.tokens import query_tokens, tokens


class Signals(BaseModel):
    cosine: float  # the chunk's vector against the query's (0 when unknown)
    term_cover: float  # share of the query's content terms found in the chunk's prefix + text
    # the same, each term weighted by its rarity in the corpus (IDF; a term the corpus never
    # uses weighs most: its absence says "not here")
    rare_cover: float
    both_paths: bool  # found by BM25 and by the dense path
    exact: bool  # carries an identifier the query names

    def features(self) -> list[float]:
        return [self.cosine, self.term_cover, self.rare_cover, float(self.both_paths),
                float(self.exact)]


# Fitted by scripts/calibrate_confidence.py on eval/sample_cases.jsonl (see README).
WEIGHTS = [0.661, 1.438, 1.422, 0.125, 1.052]
BIAS = -2.941
ABSTAIN_BELOW = 0.112


def term_weights(query: str, df: Mapping[str, int], corpus_chunks: int) -> dict[str, float]:
    """The query's content terms, each weighing log(N / (df + 1)) + 1 by its document
    frequency in the corpus (term → chunks); computed once per query."""
    n = corpus_chunks + 1
    return {t: math.log(n / (df.get(t, 0) + 1)) + 1 for t in query_tokens(query)}


def term_cover(weights: Mapping[str, float], text: str) -> tuple[float, float]:
    """Share of the query's terms found in `text`: plain, and weighted by rarity."""
    if not weights:
        return 0.0, 0.0
    present = set(tokens(text))
    plain = sum(t in present for t in weights) / len(weights)
    return plain, sum(w for t, w in weights.items() if t in present) / sum(weights.values())


def confidence(signals: Signals, weights: list[float] | None = None,
               bias: float | None = None) -> float:
    w = WEIGHTS if weights is None else weights
    b = BIAS if bias is None else bias
    z = b + sum(wi * xi for wi, xi in zip(w, signals.features(), strict=True))
    return 1 / (1 + math.exp(-z))
