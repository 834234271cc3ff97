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

The path is a sequence of small steps, each a module testable alone, as a retrievers → joiner →
ranker pipeline reads: query.py (rewrite, vectors) → candidates.py (one ranked list per path)
→ joiner.py (fusion) → ranker.py (the reader model, when switched on) → answer.py (results
explained, the verdict). `Searcher` keeps what they need open across searches.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from ingest.config import Settings
from ingest.embed import Embedder
from ingest.manifest import ManifestStore
from ingest.models import SearchFilter
from ingest.scopes import TenantTree, TenantTreeError, file_stamp
from ingest.search.adapter import ADAPTER_FILE, QueryAdapter
from ingest.search.answer import explain, judge
from ingest.search.candidates import gather
from ingest.search.fusion import identifiers
from ingest.search.graph_channel import GraphChannel
from ingest.search.joiner import fuse
from ingest.search.query import prepare
from ingest.search.ranker import Ranker, kept
from ingest.search.results import (
    RETRIEVERS,
    Retriever,
    SearchOptions,
    SearchResponse,
    SearchResult,
)
from ingest.search.rewrite import Vocabulary
from ingest.search.verdict import Precedence
from ingest.stores import open_stores
from ingest.stores.crosslingual import CrossLingualIndex
from ingest.stores.protocols import LexicalStore, VectorStore

__all__ = ["RETRIEVERS", "Retriever", "SearchOptions", "SearchResponse", "SearchResult",
           "Searcher", "hybrid_search", "search_index"]
CONFLICT_DEPTH = 10  # results searched for the two sides of a conflict
# Candidates each path ranks: 4k, and never fewer than 50, so a k=5 search fuses what a k=12
# one sees (at a floor of 20, the top 5 changed with k in 20 of 60 fresh cases; eval/fresh Recall@5
# 0.78 → 0.80, sample 0.987 → 1.00).
CANDIDATE_FLOOR = 50


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
    ranker: Ranker | None = None,
) -> SearchResponse:
    """rewrite → candidates per path → fuse → rerank (the reader model, when `ranker` is given
    and final search asks for it) → explain → verdict; each step a module of its own."""
    flt = SearchFilter(tenant_id=tenant_id, ancestors=list(ancestors), groups=groups,
                       as_of=as_of, hidden_keys=manifest.hidden_keys())
    opts = options or SearchOptions()
    rules = precedence or Precedence()
    final = mode == "final"
    q = prepare(query, flt, mode=mode, options=opts, embedder=embedder, lexical=lexical,
                vocabulary=vocabulary, adapter=adapter, min_coverage=min_coverage)
    found = gather(q, mode=mode, options=opts, depth=max(k * 4, CANDIDATE_FLOOR),
                   manifest=manifest, lexical=lexical, vectors=vectors, embedder=embedder,
                   crosslingual=crosslingual, graph=graph, min_coverage=min_coverage)
    fused = fuse(q, found, final=final, options=opts, rrf_k=rrf_k, precedence=rules)
    reranked = (ranker.run(query, fused.order, found.chunks,
                           fused.exact if opts.exact_first else {})
                if ranker is not None and final and opts.rerank is not False
                else kept(fused.order))
    # A conflict's two sides are looked for a little deeper than k: both are shown.
    results = explain(q, found, fused, reranked, depth=max(k, CONFLICT_DEPTH),
                      signal_depth=opts.signal_depth, embedder=embedder)
    verdict, reason, conflicts, shown = judge(q, results, found, reranked, final=final, k=k,
                                              precedence=rules)
    return SearchResponse(
        query=query, tenant_id=tenant_id, groups=groups, as_of=as_of,
        dense_used=q.dense_used, query_coverage=round(q.coverage, 3), identifiers=q.ids,
        rewrite=q.rewrite, verdict=verdict, reason=reason, conflicts=conflicts,
        abstained=verdict == "no_answer",
        graph_route=found.route.intent if found.route else None, results=shown,
    )


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
        self.ranker = Ranker(settings.reader_dir, depth=settings.rerank_depth,
                             blend=settings.rerank_blend, floor=settings.rerank_floor)
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
            adapter=self.adapter, ranker=self.ranker if self.reranks(options) else None,
        )

    def reranks(self, options: SearchOptions | None) -> bool:
        """The request's switch, else the KBFLOW_RERANK setting."""
        asked = options.rerank if options is not None else None
        return self._settings.rerank if asked is None else asked

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
                 as_of: date, k: int = 5, generation: str | None = None,
                 options: SearchOptions | None = None) -> SearchResponse:
    """One query against the serving generation (or the given one)."""
    with Searcher(settings, generation) as searcher:
        return searcher.search(query, tenant_id=tenant_id, groups=groups, as_of=as_of, k=k,
                               options=options)
