"""Step 3 of a search: the candidates' lists fused into one order.

Weighted reciprocal-rank fusion of the text lists (the dense model, bge-small-zh, reads Chinese
well and English poorly, and the sentence list is that model's too), plus the cross-lingual
lists' shares, the graph's list weighted by its route, a small lift per declared authority
level, and in final search the chunks carrying a code or clause number the query names first.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.search.candidates import Candidates
from ingest.search.fusion import exact_matches, is_english, order, rrf
from ingest.search.query import Query
from ingest.search.results import SearchOptions
from ingest.search.verdict import Precedence

WEIGHTS_CHINESE = {"bm25": 1.0, "dense": 1.0, "sentence": 1.0}
WEIGHTS_ENGLISH = {"bm25": 1.0, "dense": 0.25, "sentence": 0.25}
# Per authority level above undeclared, added to the fused score: about one rank near the top
# (1/61 - 1/62 at rrf_k 60), so a policy passes an FAQ saying the same, not a better answer.
AUTHORITY_STEP = 0.0003


@dataclass(frozen=True)
class Fused:
    order: list[str]  # chunk ids, best first
    scores: dict[str, float]  # chunk id → fused score
    exact: dict[str, int]  # chunk id → how many of the query's identifiers it carries


def fuse(q: Query, found: Candidates, *, final: bool, options: SearchOptions, rrf_k: int,
         precedence: Precedence) -> Fused:
    weights = ({} if not (final and options.language_weights)
               else WEIGHTS_ENGLISH if is_english(q.text) else WEIGHTS_CHINESE)
    scores = rrf(found.ranked, weights, rrf_k)
    for chunk_id, share in found.across.scores(rrf_k).items():
        scores[chunk_id] = scores.get(chunk_id, 0.0) + share
    # Route weights were set against BM25's and dense's lists alone: the sentence list, a third
    # text list, would otherwise dilute the graph's share of the fused score.
    paths_only = sum(weights.get(p, 1.0) for p in found.ranked if p != "sentence")
    scale = sum(weights.get(p, 1.0) for p in found.ranked) / paths_only if paths_only else 1.0
    weight = found.route.weight * scale if found.route else 0.0  # no route, no hits
    for rank, hit in found.graph:
        scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight / (rrf_k + rank)
    if final and options.authority:
        levels = len(precedence.authority_levels)
        for chunk_id, chunk in found.chunks.items():
            scores[chunk_id] += AUTHORITY_STEP * (levels - precedence.level(chunk.authority))
    # The prefix names the chunk's own document: 《信息安全管理规范》是依据哪些法律制定的 is
    # answered by that document's clauses as much as by those citing it.
    exact = {c: exact_matches(q.ids, chunk.clause_no, f"{chunk.prefix}\n{chunk.text}")
             for c, chunk in found.chunks.items()}
    ordered = [c for c in order(scores, exact if final and options.exact_first else {})
               if c in found.chunks]
    return Fused(order=ordered, scores=scores, exact=exact)
