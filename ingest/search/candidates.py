"""Step 2 of a search: each path's ranked candidates.

BM25 and the dense path rank `depth` chunks each, filtered inside their store's query. Final
search adds the cross-lingual index's lists (an English question, or a clearly other-language
best match), the two paths' candidates ranked by their best single sentence (a whole chunk's
vector blurs the one sentence that answers among several that do not; STARD: Recall@5 +1.4 to
+1.7 points at every candidate depth, bench/RESULTS.md) and, for a relation question, the
graph's clauses with the path that led to each. Each path is a function of the query alone and
can be run or replaced on its own; `gather` runs the ones the mode and options ask for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ingest.embed import Embedder
from ingest.manifest import ManifestStore
from ingest.models import Chunk
from ingest.search.confidence import term_cover
from ingest.search.crosslingual import (
    OWN_LANGUAGE_DEPTH,
    CrossLingualRanks,
    crosslingual_ranks,
    own_language_cover,
    written_verbatim,
)
from ingest.search.graph_channel import SEEDS, GraphChannel, GraphHit, Route, seed_clauses
from ingest.search.query import Query
from ingest.search.results import Retriever, SearchOptions
from ingest.stores.crosslingual import CrossLingualIndex
from ingest.stores.protocols import LexicalStore, VectorStore


@dataclass
class Candidates:
    """The ranked lists and every chunk they hold."""

    ranked: dict[str, list[str]] = field(default_factory=dict)  # bm25, dense, sentence
    chunks: dict[str, Chunk] = field(default_factory=dict)
    across: CrossLingualRanks = field(default_factory=CrossLingualRanks)
    closest: dict[str, float] = field(default_factory=dict)  # chunk id → best sentence cosine
    graph: list[tuple[int, GraphHit]] = field(default_factory=list)  # (shared rank, hit)
    route: Route | None = None


def gather(q: Query, *, mode: Retriever, options: SearchOptions, depth: int,
           manifest: ManifestStore, lexical: LexicalStore, vectors: VectorStore,
           embedder: Embedder, crosslingual: CrossLingualIndex | None,
           graph: GraphChannel | None, min_coverage: float) -> Candidates:
    final = mode == "final"
    found = Candidates()
    if mode not in ("dense", "graph"):
        found.ranked["bm25"] = [h.chunk_id for h in lexical.search(q.bm25_text, q.flt, depth)]
    if q.dense_used:
        found.ranked["dense"] = dense_path(q, vectors, depth, min_coverage)
    # A version republished between the store query and this read is skipped, not half-shown.
    found.chunks = manifest.chunks({c for ids in found.ranked.values() for c in ids})
    if crosslingual is not None and final and options.crosslingual:
        found.across = crosslingual_path(q, found, crosslingual, manifest, depth)
        found.chunks |= {c: chunk for c, chunk in found.across.chunks.items()
                         if c not in found.chunks}
    if q.dense_used and final and options.sentences:
        by_sentence = best_sentences(embedder, q.ranking_vector, list(found.chunks.values()))
        found.ranked["sentence"] = sorted(by_sentence, key=lambda c: (-by_sentence[c], c))
        if not q.adapted:
            found.closest = by_sentence
    if graph is not None and (mode == "graph" or (final and options.graph)):
        graph_path(q, found, graph, manifest, depth)
    return found


def dense_path(q: Query, vectors: VectorStore, depth: int, min_coverage: float) -> list[str]:
    """Only over chunks the model reads (their own token coverage reaches min_coverage)."""
    return [h.chunk_id for h in vectors.search(q.ranking_vector.tolist(), q.flt, depth,
                                               min_coverage)]


def crosslingual_path(q: Query, found: Candidates, index: CrossLingualIndex,
                      manifest: ManifestStore, depth: int) -> CrossLingualRanks:
    """The cross-lingual index's lists, when the query's own language covers it poorly and
    no other-language chunk among the leading ones writes all of its terms."""
    leading = {c for ids in found.ranked.values() for c in ids[:OWN_LANGUAGE_DEPTH]}
    chunks = [found.chunks[c] for c in sorted(leading) if c in found.chunks]
    if written_verbatim(q.text, chunks, lambda text: term_cover(q.rarity, text)[0]):
        return CrossLingualRanks()
    own = own_language_cover(q.text, chunks, lambda text: term_cover(q.rarity, text)[1])
    return crosslingual_ranks(index, q.text, q.flt, manifest, depth, own)


def graph_path(q: Query, found: Candidates, graph: GraphChannel, manifest: ManifestStore,
               depth: int) -> None:
    """The graph's clauses for a relation question, seeded by BM25's best hits (a clause
    question names its clause by identifiers: SEC-2001)."""
    found.route, hits = graph.search(
        q.fixed, q.flt, depth,
        seeds=lambda: seed_clauses(manifest, found.ranked.get("bm25", [])[:SEEDS]))
    found.graph = shared_ranks(hits)
    found.chunks |= manifest.chunks({h.chunk_id for _, h in found.graph
                                     if h.chunk_id not in found.chunks})


def best_sentences(embedder: Embedder, query: np.ndarray, chunks: Sequence[Chunk]
                   ) -> dict[str, float]:
    """Per chunk id, the best cosine between the query and one of the chunk's sentences."""
    matrices = embedder.sentence_vectors({c.content_hash: c.text for c in chunks})
    return {c.chunk_id: float((matrices[c.content_hash] @ query).max()) for c in chunks}


def shared_ranks(hits: list[GraphHit]) -> list[tuple[int, GraphHit]]:
    """Equal path scores share a rank (three clauses citing the same document are equally good
    answers; their chunk ids must not order them)."""
    ranked, rank = [], 0
    for position, hit in enumerate(hits, start=1):
        if position == 1 or hit.score < hits[position - 2].score:
            rank = position
        ranked.append((rank, hit))
    return ranked
