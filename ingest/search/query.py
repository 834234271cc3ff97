"""Step 1 of a search: the question as each path will ask it.

The typo fix and synonym expansions (rewrite.py, against the corpus's vocabulary as this user
sees it: no typo is fixed to another tenant's word), the query's vector (raw, and moved by the
index's adapter for ranking: the abstention floors were set on raw cosines), whether the dense
model reads the query well enough to join, its identifiers and its terms' rarity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ingest.embed import Embedder
from ingest.models import SearchFilter
from ingest.search.adapter import QueryAdapter
from ingest.search.confidence import term_weights
from ingest.search.fusion import Identifiers, identifiers
from ingest.search.results import Retriever, SearchOptions
from ingest.search.rewrite import QueryRewrite, Vocabulary, rewrite
from ingest.stores.protocols import LexicalStore
from ingest.stores.tokens import query_tokens


@dataclass(frozen=True)
class Query:
    """What the later steps read of the question."""

    text: str  # as asked
    fixed: str  # typos fixed: what the graph and the term weights read
    bm25_text: str
    dense_text: str
    rewrite: QueryRewrite | None
    flt: SearchFilter
    vector: np.ndarray  # raw: the confidence signals read it
    ranking_vector: np.ndarray  # the adapter's, when the index has one: the lists rank with it
    coverage: float  # share of the query's tokens the embedding model knows
    dense_used: bool
    ids: Identifiers
    rarity: dict[str, float]  # the query's content terms → their weight by rarity

    @property
    def adapted(self) -> bool:
        return self.ranking_vector is not self.vector


def prepare(query: str, flt: SearchFilter, *, mode: Retriever, options: SearchOptions,
            embedder: Embedder, lexical: LexicalStore, vocabulary: Vocabulary | None,
            adapter: QueryAdapter | None, min_coverage: float) -> Query:
    seen = (vocabulary.seen_by(lambda terms: lexical.term_counts(terms, flt))
            if vocabulary is not None else None)
    rewritten = (rewrite(query, seen, typos=options.typo_correction, synonyms=options.synonyms)
                 if seen is not None and mode == "final" else None)
    fixed = (rewritten.corrected or query) if rewritten else query
    dense_text = rewritten.dense_text if rewritten else query
    encoded = embedder.encode_query(dense_text)
    vector = np.asarray(encoded.values, dtype=np.float32)
    if seen is not None:
        seen.prefetch(query_tokens(fixed))
    return Query(
        text=query, fixed=fixed, bm25_text=rewritten.bm25_text if rewritten else query,
        dense_text=dense_text, rewrite=rewritten, flt=flt, vector=vector,
        ranking_vector=adapter.apply(vector) if adapter is not None else vector,
        coverage=encoded.coverage,
        dense_used=mode not in ("bm25", "graph") and encoded.coverage >= min_coverage,
        ids=identifiers(query),
        rarity=term_weights(fixed, seen.terms if seen else {}, seen.largest_df if seen else 0),
    )
