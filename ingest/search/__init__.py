"""Hybrid retrieval: BM25 and dense ranks fused by reciprocal rank (RRF).

Both paths filter inside their store's query: published versions only, tenant, ACL groups and
the business date. The dense path joins only when the embedding model can read the query (the
share of its tokens that the model's own vocabulary knows reaches the configured coverage) and
only over chunks it can read. The default bge-small-zh model reads Chinese and English alike; an
English-only model (all-MiniLM) sees Chinese as [UNK], and its noise would push BM25's correct
hits down. `mode` runs one path alone, so evaluation can judge each retriever by itself.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel

from ingest.config import Settings
from ingest.embed import Embedder
from ingest.manifest import ManifestStore
from ingest.models import SearchFilter
from ingest.stores import open_stores
from ingest.stores.protocols import LexicalStore, VectorStore


class SearchResult(BaseModel):
    rank: int
    chunk_id: str
    doc_id: str
    version_id: str
    title_path: list[str]
    clause_no: str | None
    page_start: int
    page_end: int
    source_uri: str
    prefix: str
    text: str
    score: float
    bm25_rank: int | None
    dense_rank: int | None


Retriever = Literal["hybrid", "bm25", "dense"]
RETRIEVERS: tuple[Retriever, ...] = ("bm25", "dense", "hybrid")


class SearchResponse(BaseModel):
    query: str
    tenant_id: str
    groups: list[str]
    as_of: date
    dense_used: bool
    query_coverage: float
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
    k: int = 5,
    rrf_k: int = 60,
    min_coverage: float = 0.7,
    mode: Retriever = "hybrid",
) -> SearchResponse:
    flt = SearchFilter(
        tenant_id=tenant_id, groups=groups, as_of=as_of, version_keys=manifest.published_keys()
    )
    depth = max(k * 4, 20)
    bm25 = lexical.search(query, flt, depth) if mode != "dense" else []
    encoded = embedder.encode_query(query)
    dense_used = mode != "bm25" and encoded.coverage >= min_coverage
    dense = vectors.search(encoded.values, flt, depth, min_coverage) if dense_used else []

    ranks: dict[str, dict[str, int]] = {}
    for path, hits in (("bm25", bm25), ("dense", dense)):
        for rank, hit in enumerate(hits, start=1):
            ranks.setdefault(hit.chunk_id, {})[path] = rank
    fused = sorted(
        ranks.items(),
        key=lambda item: (-sum(1 / (rrf_k + r) for r in item[1].values()), item[0]),
    )
    chunks = manifest.chunks(chunk_id for chunk_id, _ in fused[: k * 2])
    # A version republished between the store query and this read is skipped, not half-shown.
    fused = [(chunk_id, path_ranks) for chunk_id, path_ranks in fused if chunk_id in chunks][:k]
    results = []
    for position, (chunk_id, path_ranks) in enumerate(fused, start=1):
        chunk = chunks[chunk_id]
        results.append(SearchResult(
            rank=position, chunk_id=chunk_id, doc_id=chunk.doc_id, version_id=chunk.version_id,
            title_path=chunk.title_path, clause_no=chunk.clause_no, page_start=chunk.page_start,
            page_end=chunk.page_end, source_uri=chunk.source_uri, prefix=chunk.prefix,
            text=chunk.text, score=sum(1 / (rrf_k + r) for r in path_ranks.values()),
            bm25_rank=path_ranks.get("bm25"), dense_rank=path_ranks.get("dense"),
        ))
    return SearchResponse(
        query=query, tenant_id=tenant_id, groups=groups, as_of=as_of, dense_used=dense_used,
        query_coverage=round(encoded.coverage, 3), results=results,
    )


class Searcher:
    """An open index (the serving generation, or a given one) searched with the model it was
    built with; keeps the model loaded across queries (evaluation runs many)."""

    def __init__(self, settings: Settings, generation: str | None = None) -> None:
        self._settings = settings
        self._manifest = ManifestStore(settings.manifest, generation)
        name = self._manifest.generation
        record = self._manifest.get_generation(name) if name else None
        self._ready = record is not None and record.dimension is not None
        if self._ready:
            self._embedder = Embedder(record.embedding_model, settings.vector_cache_path)
            self._stores = open_stores(settings, record.embedding_model, record.dimension,
                                         record.generation)

    def search(self, query: str, *, tenant_id: str, groups: list[str], as_of: date,
               k: int = 5, mode: Retriever = "hybrid") -> SearchResponse:
        if not self._ready:
            return SearchResponse(query=query, tenant_id=tenant_id, groups=groups, as_of=as_of,
                                  dense_used=False, query_coverage=0.0, results=[])
        return hybrid_search(
            query, manifest=self._manifest, lexical=self._stores.lexical,
            vectors=self._stores.vectors, embedder=self._embedder, tenant_id=tenant_id,
            groups=groups, as_of=as_of, k=k, rrf_k=self._settings.rrf_k,
            min_coverage=self._settings.dense_min_coverage, mode=mode,
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
