"""Steps 5 and 6 of a search: each result explained, then the verdict on them all.

`explain` turns the final order into results, the top `signal_depth` with what the query and the
chunk share (search/confidence.py's signals) and a confidence: the reader model's probability
when it read the chunk, else the logistic model over the signals. `judge` says whether they
answer (search/verdict.py): no_answer when the reader model judged no passage answering (or,
without it, when no sentence is close enough), or when no candidate carries a code the query
asks about; a conflict between two results the reader model judged answering (any two, without
it); else sufficient.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ingest.embed import Embedder
from ingest.parse.metadata import unscoped_doc_id
from ingest.search.candidates import Candidates, best_sentences
from ingest.search.confidence import (
    Signals,
    abstains,
    answer_reason,
    confidence,
    term_cover,
)
from ingest.search.fusion import amount_matches, exact_matches, missing_codes
from ingest.search.joiner import Fused
from ingest.search.query import Query
from ingest.search.ranker import Reranked
from ingest.search.results import SearchResult
from ingest.search.verdict import Conflict, Precedence, Verdict, conflicts, decide
from ingest.stores.tokens import query_tokens


def explain(q: Query, found: Candidates, fused: Fused, reranked: Reranked, *, depth: int,
            signal_depth: int, embedder: Embedder) -> list[SearchResult]:
    """The first `depth` results of the reranked order, the first `signal_depth` explained."""
    chunks = found.chunks
    top = reranked.order[:depth]
    ranks = {path: {c: r for r, c in enumerate(ids, start=1)} for path, ids in found.ranked.items()}
    paths = [ranks[p] for p in ("bm25", "dense") if p in ranks]  # the sentence list reorders
    graph_ranks = {hit.chunk_id: (rank, hit.path) for rank, hit in found.graph}
    explained = top[:signal_depth]
    cached = embedder.cached({chunks[c].content_hash for c in explained})
    closest = found.closest | best_sentences(
        embedder, q.vector, [chunks[c] for c in explained if c not in found.closest])
    answers = q.ids.without_titles()  # what, carried exactly, answers whatever the wording
    results = []
    for position, chunk_id in enumerate(top, start=1):
        chunk = chunks[chunk_id]
        signals = None
        if position <= len(explained):
            vector = cached.get(chunk.content_hash)
            covers = term_cover(q.rarity, f"{chunk.prefix} {chunk.text}")
            signals = Signals(
                cosine=float(q.vector @ np.asarray(vector.values)) if vector else 0.0,
                term_cover=covers[0], rare_cover=covers[1],
                both_paths=len(paths) == 2 and all(chunk_id in r for r in paths),
                exact=exact_matches(answers, chunk.clause_no, chunk.text) > 0,
                amount=amount_matches(q.ids, chunk.text) > 0,
                sentence=round(closest[chunk_id], 4),
                crosslingual=round(found.across.similarity.get(chunk_id, 0.0), 4),
            )
        probability = reranked.probability.get(chunk_id)
        shown = (probability if probability is not None
                 else confidence(signals) if signals else None)
        results.append(SearchResult(
            rank=position, chunk_id=chunk_id, doc_id=unscoped_doc_id(chunk.doc_id),
            document_key=chunk.doc_id, version_id=chunk.version_id,
            title_path=chunk.title_path, clause_no=chunk.clause_no, page_start=chunk.page_start,
            page_end=chunk.page_end, source_uri=chunk.source_uri, prefix=chunk.prefix,
            text=chunk.text, tenant_id=chunk.tenant_id,
            scope_depth=q.flt.tenants.index(chunk.tenant_id), authority=chunk.authority,
            effective_from=chunk.effective_from, effective_to=chunk.effective_to,
            score=fused.scores[chunk_id],
            confidence=round(shown, 4) if shown is not None else None,
            exact_match=fused.exact[chunk_id] > 0, bm25_rank=ranks.get("bm25", {}).get(chunk_id),
            dense_rank=ranks.get("dense", {}).get(chunk_id),
            sentence_rank=ranks.get("sentence", {}).get(chunk_id), signals=signals,
            crosslingual_rank=found.across.rank_of(chunk_id),
            graph_rank=graph_ranks[chunk_id][0] if chunk_id in graph_ranks else None,
            graph_path=graph_ranks[chunk_id][1] if chunk_id in graph_ranks else None,
            fused_rank=reranked.fused_rank.get(chunk_id) if reranked.probability else None,
            answer_probability=(round(probability, 4) if probability is not None else None),
        ))
    return results


def judge(q: Query, results: list[SearchResult], found: Candidates, reranked: Reranked, *,
          final: bool, k: int, precedence: Precedence
          ) -> tuple[Verdict, str, list[Conflict], list[SearchResult]]:
    """The verdict, its reason, the conflicts, and the results shown: the top k and every
    conflict's two sides."""
    explained = [r.signals for r in results if r.signals]
    no_answer, why = _abstains(explained, reranked)
    unknown = missing_codes(q.ids, (f"{c.prefix}\n{c.text}" for c in found.chunks.values()))
    if final and unknown:  # every candidate read: BM25 ranks a chunk naming the code first
        no_answer, why = True, f"no candidate carries {', '.join(unknown)}, the code asked about"
    found_conflicts = ([] if no_answer or not final
                       else conflicts(query_tokens(q.fixed), _answering(results, reranked),
                                      precedence.first))
    sides = {c for conflict in found_conflicts for c in (conflict.a.chunk_id, conflict.b.chunk_id)}
    shown = [r for r in results if r.rank <= k or r.chunk_id in sides]
    verdict, reason = decide(no_answer, found_conflicts, why)
    if reranked.note:
        reason = f"{reason}; {reranked.note}"
    return verdict, reason, found_conflicts, shown


def _abstains(explained: Sequence[Signals], reranked: Reranked) -> tuple[bool, str]:
    floor = reranked.floor
    if not reranked.probability or floor is None:
        return abstains(explained), answer_reason(explained)
    if any(s.exact for s in explained):
        return False, "a result carries the code or clause number the query names"
    best = max(reranked.probability.values())
    return (best < floor,
            f"best reader model probability {best:.2f} (answers from {floor:.2f})")


def _answering(results: list[SearchResult], reranked: Reranked) -> list[SearchResult]:
    """The results a conflict may be drawn from: those the reader model judged answering."""
    floor = reranked.floor
    if not reranked.probability or floor is None:
        return results
    return [r for r in results if reranked.probability.get(r.chunk_id, 0.0) >= floor]
