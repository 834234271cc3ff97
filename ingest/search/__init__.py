"""Hybrid retrieval: BM25 and dense ranks fused by reciprocal rank (RRF).

Both paths filter inside their store's query: published versions only, tenant, ACL groups and
the business date. The dense path joins only when the embedding model can read the query (the
share of its tokens that the model's own vocabulary knows reaches the configured coverage) and
only over chunks it can read. The default bge-small-zh model reads Chinese and English alike; an
English-only model (all-MiniLM) sees Chinese as [UNK], and its noise would push BM25's correct
hits down. `mode` runs one path alone, or plain RRF, so evaluation can judge each step. Final
search adds a third list: the two paths' candidates ranked by their best single sentence (the
embed stage keeps sentence vectors), which finds the answering sentence a clause's vector blurs.

The graph (search/graph_channel.py) is a third ranked list in `final`: relation and multi-hop
questions ("哪些制度引用了《审批权限表》") routed to it return the clauses whose relations answer
them, each with the path that led there (`graph_rank`, `graph_path`), weighted by the route.

An index's query adapter (search/adapter.py, fitted by `kbflow tune` on its own labelled
questions) moves the query vector the dense and sentence lists rank with; the confidence
signals read the raw one, on which the abstention floors were set.

Both paths filter by the reader's tenant and its ancestors (scopes). Each answer ends with a
verdict (search/verdict.py): sufficient, conflict (both sides shown, ordered by the declared
precedence) or no_answer (search/confidence.py). `SearchOptions` switches final search's rules
off one at a time, so bench/rules.py and bench/realworld.py can judge each.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ingest.config import Settings
from ingest.embed import Embedder
from ingest.manifest import ManifestStore
from ingest.models import Chunk, GraphPath, SearchFilter
from ingest.parse.metadata import unscoped_doc_id
from ingest.scopes import TenantTree, TenantTreeError, file_stamp
from ingest.search.adapter import ADAPTER_FILE, QueryAdapter
from ingest.search.confidence import (
    Signals,
    abstains,
    answer_reason,
    confidence,
    term_cover,
    term_weights,
)
from ingest.search.crosslingual import (
    OWN_LANGUAGE_DEPTH,
    CrossLingualRanks,
    crosslingual_ranks,
    own_language_cover,
)
from ingest.search.fusion import (
    Identifiers,
    amount_matches,
    exact_matches,
    identifiers,
    is_english,
    missing_codes,
    order,
    rrf,
)
from ingest.search.graph_channel import SEEDS, GraphChannel, GraphHit, Route, seed_clauses
from ingest.search.rewrite import QueryRewrite, Vocabulary, rewrite
from ingest.search.verdict import Conflict, Precedence, Verdict, conflicts, decide
from ingest.stores import open_stores
from ingest.stores.crosslingual import CrossLingualIndex
from ingest.stores.protocols import LexicalStore, VectorStore
from ingest.stores.tokens import query_tokens


class SearchResult(BaseModel):
    rank: int
    chunk_id: str
    doc_id: str = Field(description="the document's id as its tenant named it")
    document_key: str = Field(description="the id the index keeps: \"<tenant>:<doc id>\" for a "
                              "tenant other than the default one (kbflow chunks, trace)")
    version_id: str
    title_path: list[str]
    clause_no: str | None
    page_start: int
    page_end: int
    source_uri: str
    prefix: str
    text: str
    tenant_id: str = Field(description="the tenant whose document this is")
    scope_depth: int = Field(description="how far up the reader's tenant tree that tenant is: "
                             "0 the reader's own, 1 its parent, …")
    authority: str | None = Field(description="the document's authority level, if declared")
    effective_from: date | None = Field(None, description="the version is in force from")
    effective_to: date | None = Field(None, description="and until (None: still in force)")
    score: float
    confidence: float | None = Field(description="calibrated probability that this result "
                                     "answers (None below the options' signal_depth)")
    exact_match: bool = Field(description="carries an identifier the query names")
    bm25_rank: int | None
    dense_rank: int | None
    sentence_rank: int | None = Field(None, description="rank among the candidates by their "
                                      "best sentence (final search)")
    crosslingual_rank: int | None = Field(None, description="rank in the cross-lingual index's "
                                          "list, when the query got it (final search)")
    signals: Signals | None = Field(description="what the query and this result share (None "
                                    "below the options' signal_depth)")
    graph_rank: int | None = None
    graph_path: GraphPath | None = Field(None, description="the best graph path that led here")


# bm25 / dense / graph: one path alone; hybrid: BM25 and dense, equal-weight RRF; final: what
# `kbflow search` does (language-aware weights, the graph's list, exact identifiers first).
Retriever = Literal["bm25", "dense", "graph", "hybrid", "final"]
RETRIEVERS: tuple[Retriever, ...] = ("bm25", "dense", "graph", "hybrid", "final")
# Weighted RRF: the dense model (bge-small-zh) reads Chinese well, English poorly; the
# sentence list is that model's too.
WEIGHTS_CHINESE = {"bm25": 1.0, "dense": 1.0, "sentence": 1.0}
WEIGHTS_ENGLISH = {"bm25": 1.0, "dense": 0.25, "sentence": 0.25}
CONFLICT_DEPTH = 10  # results searched for the two sides of a conflict
# Candidates each path ranks: 4k, and never fewer than 50, so a k=5 search fuses what a k=12
# one sees (at a floor of 20, the top 5 changed with k in 20 of 60 fresh cases; eval/fresh Recall@5
# 0.78 → 0.80, sample 0.987 → 1.00).
CANDIDATE_FLOOR = 50
# Per authority level above undeclared, added to the fused score: about one rank near the top
# (1/61 - 1/62 at rrf_k 60), so a policy passes an FAQ saying the same, not a better answer.
AUTHORITY_STEP = 0.0003


class SearchOptions(BaseModel):
    """Which of final search's rules run: each can be switched off to judge what it does
    (bench/realworld.py, `kbflow eval`); the defaults are what `kbflow search` does."""

    model_config = ConfigDict(frozen=True)
    typo_correction: bool = Field(True, description="fix homophone typos against the corpus's "
                                  "own vocabulary")
    synonyms: bool = Field(True, description="add synonym-group terms the corpus uses")
    language_weights: bool = Field(True, description="weigh the dense path down for English "
                                   "queries (the default model reads English poorly)")
    exact_first: bool = Field(True, description="chunks carrying a code or clause number the "
                              "query names rank first")
    graph: bool = Field(True, description="add the graph's list when the query asks a relation")
    authority: bool = Field(True, description="a document of higher declared authority ranks "
                            "a little higher (policy > notice > faq > chat by default)")
    sentences: bool = Field(True, description="the two paths' candidates, ranked by their best "
                            "single sentence against the query, join the fusion as a third "
                            "list")
    crosslingual: bool = Field(True, description="add the cross-lingual index's lists for an "
                               "English question or a clearly other-language best match")
    signal_depth: int = Field(10, ge=0, le=100, description="how many results, from the top, "
                              "get confidence signals (term cover, cosines; the costly part of "
                              "a deep search); the abstention reads these")


class SearchResponse(BaseModel):
    query: str
    tenant_id: str
    groups: list[str]
    as_of: date
    dense_used: bool
    query_coverage: float
    identifiers: Identifiers
    rewrite: QueryRewrite | None = Field(None, description="typo fix and synonym expansions")
    verdict: Verdict = Field(description="sufficient: the results answer; conflict: results "
                             "of different documents state different values for one thing "
                             "(see conflicts); no_answer: nothing here answers")
    reason: str = Field(description="why the verdict, in one line")
    conflicts: list[Conflict] = Field(default_factory=list, description="each with both sides; "
                                      "side a is the one the precedence rule puts first")
    abstained: bool = Field(description="verdict == no_answer (kept for older callers); the "
                            "results are still returned so a caller can choose")
    graph_route: str | None = Field(None, description="the intent the graph channel walked "
                                    "(None: the query did not ask the graph)")
    results: list[SearchResult]


def hybrid_search(
    query: str,
    *,
    manifest: ManifestStore,
    lexical: LexicalStore,
    vectors: VectorStore,
    embedder: Embedder,
    tenant_id: str,
    groups: list[str],
    as_of: date,
    ancestors: Sequence[str] = (),
    k: int = 5,
    rrf_k: int = 60,
    min_coverage: float = 0.7,
    mode: Retriever = "final",
    graph: GraphChannel | None = None,
    vocabulary: Vocabulary | None = None,
    options: SearchOptions | None = None,
    precedence: Precedence | None = None,
    crosslingual: CrossLingualIndex | None = None,
    adapter: QueryAdapter | None = None,
) -> SearchResponse:
    flt = SearchFilter(tenant_id=tenant_id, ancestors=list(ancestors), groups=groups,
                       as_of=as_of, hidden_keys=manifest.hidden_keys())
    opts = options or SearchOptions()
    depth = max(k * 4, CANDIDATE_FLOOR)
    final = mode == "final"
    # The vocabulary as this reader sees it: no typo is fixed to another tenant's word.
    reader = (vocabulary.seen_by(lambda terms: lexical.term_counts(terms, flt))
              if vocabulary is not None else None)
    rewritten = (rewrite(query, reader, typos=opts.typo_correction, synonyms=opts.synonyms)
                 if reader is not None and final else None)
    bm25_text = rewritten.bm25_text if rewritten else query
    dense_text = rewritten.dense_text if rewritten else query
    fixed = (rewritten.corrected or query) if rewritten else query
    ranked: dict[str, list[str]] = {}
    if mode not in ("dense", "graph"):
        ranked["bm25"] = [h.chunk_id for h in lexical.search(bm25_text, flt, depth)]
    encoded = embedder.encode_query(dense_text)
    query_vector = np.asarray(encoded.values, dtype=np.float32)
    # The index's own query adapter ranks; the raw vector scores (the abstention floors were
    # set on raw cosines).
    ranking_vector = adapter.apply(query_vector) if adapter is not None else query_vector
    dense_used = mode not in ("bm25", "graph") and encoded.coverage >= min_coverage
    if dense_used:
        hits = vectors.search(ranking_vector.tolist(), flt, depth, min_coverage)
        ranked["dense"] = [h.chunk_id for h in hits]
    # A version republished between the store query and this read is skipped, not half-shown.
    chunks = manifest.chunks({c for ids_ in ranked.values() for c in ids_})
    if reader is not None:
        reader.prefetch(query_tokens(fixed))
    rarity = term_weights(fixed, reader.terms if reader else {},
                          reader.largest_df if reader else 0)
    across = CrossLingualRanks()
    if crosslingual is not None and final and opts.crosslingual:
        leading = {c for ids_ in ranked.values() for c in ids_[:OWN_LANGUAGE_DEPTH]}
        own = own_language_cover(query, [chunks[c] for c in leading if c in chunks],
                                 lambda text: term_cover(rarity, text)[1])
        across = crosslingual_ranks(crosslingual, query, flt, manifest, depth, own)
    chunks |= {c: chunk for c, chunk in across.chunks.items() if c not in chunks}
    closest: dict[str, float] = {}  # chunk id → its best sentence's cosine with the query
    if dense_used and final and opts.sentences:
        # A whole chunk's vector blurs the one sentence that answers among several that do
        # not; the best single sentence does not (STARD: Recall@5 +1.4 to +1.7 points at
        # every candidate depth, bench/RESULTS.md).
        by_sentence = _best_sentences(embedder, ranking_vector, list(chunks.values()))
        ranked["sentence"] = sorted(by_sentence, key=lambda c: (-by_sentence[c], c))
        if adapter is None:
            closest = by_sentence
    weights = ({} if not (final and opts.language_weights)
               else WEIGHTS_ENGLISH if is_english(query) else WEIGHTS_CHINESE)
    scores = rrf(ranked, weights, rrf_k)
    for chunk_id, share in across.scores(rrf_k).items():
        scores[chunk_id] = scores.get(chunk_id, 0.0) + share

    def seeds() -> list[tuple[str, str]]:
        """BM25's best hits: a clause question names its clause by identifiers (SEC-2001)."""
        return seed_clauses(manifest, ranked.get("bm25", [])[:SEEDS])

    route: Route | None = None
    graph_ranks: dict[str, tuple[int, GraphPath]] = {}
    if graph is not None and (mode == "graph" or (final and opts.graph)):
        route, graph_hits = graph.search(fixed, flt, depth, seeds=seeds)
        # Route weights were set against BM25's and dense's lists alone: the sentence list,
        # a third text list, would otherwise dilute the graph's share of the fused score.
        paths_only = sum(weights.get(p, 1.0) for p in ranked if p != "sentence")
        scale = sum(weights.get(p, 1.0) for p in ranked) / paths_only if paths_only else 1.0
        weight = route.weight * scale if route else 0.0  # no route, no hits
        for rank, hit in _shared_ranks(graph_hits):
            graph_ranks[hit.chunk_id] = (rank, hit.path)
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight / (rrf_k + rank)
        chunks |= manifest.chunks({c for c in graph_ranks if c not in chunks})
    if final and opts.authority:
        rules = precedence or Precedence()
        levels = len(rules.authority_levels)
        for chunk_id, chunk in chunks.items():
            scores[chunk_id] += AUTHORITY_STEP * (levels - rules.level(chunk.authority))
    ids = identifiers(query)
    # The prefix names the chunk's own document: 《信息安全管理规范》是依据哪些法律制定的 is
    # answered by that document's clauses as much as by those citing it.
    exact = {c: exact_matches(ids, chunk.clause_no, f"{chunk.prefix}\n{chunk.text}")
             for c, chunk in chunks.items()}
    ordered = [c for c in order(scores, exact if final and opts.exact_first else {})
               if c in chunks]
    # A conflict's two sides are looked for a little deeper than k: both are shown.
    top = ordered[:max(k, CONFLICT_DEPTH)]
    ranks = {path: {c: r for r, c in enumerate(ids_, start=1)} for path, ids_ in ranked.items()}
    paths = [ranks[p] for p in ("bm25", "dense") if p in ranks]  # the sentence list reorders
    explained = top[:opts.signal_depth]
    cached = embedder.cached({chunks[c].content_hash for c in explained})
    closest |= _best_sentences(embedder, query_vector,
                               [chunks[c] for c in explained if c not in closest])
    answers = ids.without_titles()  # what, carried exactly, answers whatever the wording
    results = []
    for position, chunk_id in enumerate(top, start=1):
        chunk = chunks[chunk_id]
        signals = None
        if position <= len(explained):
            vector = cached.get(chunk.content_hash)
            covers = term_cover(rarity, f"{chunk.prefix} {chunk.text}")
            signals = Signals(
                cosine=float(query_vector @ np.asarray(vector.values)) if vector else 0.0,
                term_cover=covers[0], rare_cover=covers[1],
                both_paths=len(paths) == 2 and all(chunk_id in r for r in paths),
                exact=exact_matches(answers, chunk.clause_no, chunk.text) > 0,
                amount=amount_matches(ids, chunk.text) > 0,
                sentence=round(closest[chunk_id], 4),
                crosslingual=round(across.similarity.get(chunk_id, 0.0), 4),
            )
        results.append(SearchResult(
            rank=position, chunk_id=chunk_id, doc_id=unscoped_doc_id(chunk.doc_id),
            document_key=chunk.doc_id, version_id=chunk.version_id,
            title_path=chunk.title_path, clause_no=chunk.clause_no, page_start=chunk.page_start,
            page_end=chunk.page_end, source_uri=chunk.source_uri, prefix=chunk.prefix,
            text=chunk.text, tenant_id=chunk.tenant_id,
            scope_depth=flt.tenants.index(chunk.tenant_id), authority=chunk.authority,
            effective_from=chunk.effective_from, effective_to=chunk.effective_to,
            score=scores[chunk_id],
            confidence=round(confidence(signals), 4) if signals else None,
            exact_match=exact[chunk_id] > 0, bm25_rank=ranks.get("bm25", {}).get(chunk_id),
            dense_rank=ranks.get("dense", {}).get(chunk_id),
            sentence_rank=ranks.get("sentence", {}).get(chunk_id), signals=signals,
            crosslingual_rank=across.rank_of(chunk_id),
            graph_rank=graph_ranks[chunk_id][0] if chunk_id in graph_ranks else None,
            graph_path=graph_ranks[chunk_id][1] if chunk_id in graph_ranks else None,
        ))
    explained_results = [r.signals for r in results if r.signals]
    no_answer, why = abstains(explained_results), answer_reason(explained_results)
    unknown = missing_codes(ids, (f"{c.prefix}\n{c.text}" for c in chunks.values()))
    if final and unknown:  # every candidate read: BM25 ranks a chunk naming the code first
        no_answer, why = True, f"no candidate carries {', '.join(unknown)}, the code asked about"
    found = ([] if no_answer or not final
             else conflicts(query_tokens(fixed), results, (precedence or Precedence()).first))
    sides = {c for conflict in found for c in (conflict.a.chunk_id, conflict.b.chunk_id)}
    results = [r for r in results if r.rank <= k or r.chunk_id in sides]
    verdict, reason = decide(no_answer, found, why)
    return SearchResponse(
        query=query, tenant_id=tenant_id, groups=groups, as_of=as_of, dense_used=dense_used,
        query_coverage=round(encoded.coverage, 3), identifiers=ids, rewrite=rewritten,
        verdict=verdict, reason=reason, conflicts=found, abstained=verdict == "no_answer",
        graph_route=route.intent if route else None, results=results,
    )





def _best_sentences(embedder: Embedder, query: np.ndarray, chunks: Sequence[Chunk]
                    ) -> dict[str, float]:
    """Per chunk id, the best cosine between the query and one of the chunk's sentences."""
    matrices = embedder.sentence_vectors({c.content_hash: c.text for c in chunks})
    return {c.chunk_id: float((matrices[c.content_hash] @ query).max()) for c in chunks}


def _shared_ranks(hits: list[GraphHit]) -> list[tuple[int, GraphHit]]:
    """Equal path scores share a rank (three clauses citing the same document are equally good
    answers; their chunk ids must not order them)."""
    ranked, rank = [], 0
    for position, hit in enumerate(hits, start=1):
        if position == 1 or hit.score < hits[position - 2].score:
            rank = position
        ranked.append((rank, hit))
    return ranked


class Searcher:
    """An open index (the serving generation, or a given one) searched with the model it was
    built with; keeps the model loaded across queries (evaluation runs many)."""

    def __init__(self, settings: Settings, generation: str | None = None) -> None:
        self._settings = settings
        self._parents_seen = file_stamp(settings.tenant_parents)
        self.scopes = TenantTree.load(settings)  # a bad parents file stops here, with why
        self._scopes_problem: str | None = None
        self._precedence = Precedence(self.scopes.precedence, tuple(settings.authority_levels))
        self._manifest = ManifestStore(settings.manifest, generation)
        name = self._manifest.generation
        record = self._manifest.get_generation(name) if name else None
        self._ready = False
        self.adapter: QueryAdapter | None = None  # `kbflow tune`'s, when it kept one
        self._adapter_file = settings.data_dir / ADAPTER_FILE
        self._adapter_seen: tuple[int, int] | None = None  # the file's mtime and size, read
        self._record = record
        if record is not None and record.dimension is not None:
            self._ready = True
            self._embedder = Embedder(record.embedding_model, settings.vector_cache_path)
            self._stores = open_stores(settings, record.embedding_model, record.dimension,
                                         record.generation)
            self._graph = GraphChannel(self._stores.graph)
            self._vocabulary = Vocabulary.load(settings, self._stores.lexical)
            self.refresh_adapter()

    def refresh_adapter(self) -> None:
        """Read the adapter file again when `kbflow tune` replaced or removed it (the warm
        API keeps one Searcher for many searches; a stat per call)."""
        try:
            stat = self._adapter_file.stat()
            seen: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            seen = None
        record = self._record
        if seen != self._adapter_seen and record is not None and record.dimension is not None:
            self._adapter_seen = seen
            self.adapter = (QueryAdapter.load(self._adapter_file, record.embedding_model,
                                              record.dimension) if seen else None)

    def refresh_scopes(self) -> None:
        """Read the tenant parents file again when it changed (a stat per call), as `kbflow
        search` reads it on every run, so the warm API and the CLI never disagree on whose
        documents a reader sees. While the file is broken or cyclic every search raises
        TenantTreeError (the API answers 503), never serves the tree from before."""
        seen = file_stamp(self._settings.tenant_parents)
        if seen != self._parents_seen:
            self._parents_seen = seen
            try:
                self.scopes, self._scopes_problem = TenantTree.load(self._settings), None
            except TenantTreeError as exc:
                self._scopes_problem = str(exc)
            self._precedence = Precedence(self.scopes.precedence,
                                          tuple(self._settings.authority_levels))
        if self._scopes_problem is not None:
            raise TenantTreeError(self._scopes_problem)

    def search(self, query: str, *, tenant_id: str, groups: list[str], as_of: date,
               k: int = 5, mode: Retriever = "final",
               options: SearchOptions | None = None) -> SearchResponse:
        if not self._ready:
            return SearchResponse(query=query, tenant_id=tenant_id, groups=groups, as_of=as_of,
                                  dense_used=False, query_coverage=0.0,
                                  identifiers=identifiers(query), verdict="no_answer",
                                  reason="nothing is published yet", abstained=True, results=[])
        return hybrid_search(
            query, manifest=self._manifest, lexical=self._stores.lexical,
            vectors=self._stores.vectors, embedder=self._embedder, tenant_id=tenant_id,
            ancestors=self.scopes.ancestors(tenant_id), groups=groups, as_of=as_of, k=k,
            rrf_k=self._settings.rrf_k, min_coverage=self._settings.dense_min_coverage,
            mode=mode, graph=self._graph, vocabulary=self._vocabulary, options=options,
            precedence=self._precedence, crosslingual=self._stores.crosslingual,
            adapter=self.adapter,
        )

    def close(self) -> None:
        if self._ready:
            self._stores.close()
            self._embedder.close()
        self._manifest.close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def search_index(settings: Settings, query: str, *, tenant_id: str, groups: list[str],
                 as_of: date, k: int = 5, generation: str | None = None) -> SearchResponse:
    """One query against the serving generation (or the given one)."""
    with Searcher(settings, generation) as searcher:
        return searcher.search(query, tenant_id=tenant_id, groups=groups, as_of=as_of, k=k)
