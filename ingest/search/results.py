"""What a search takes and gives: its options, each result and the whole answer.

These are the search's public shapes (`kbflow search --json`, the API, `kbflow eval`); the steps
that make them live beside this module (query, candidates, joiner, ranker, answer).
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ingest.models import GraphPath
from ingest.search.confidence import Signals
from ingest.search.fusion import Identifiers
from ingest.search.rewrite import QueryRewrite
from ingest.search.verdict import Conflict, Verdict


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
    fused_rank: int | None = Field(None, description="rank in the fused order, before the "
                                   "reader model reordered it (None: not reranked)")
    answer_probability: float | None = Field(None, description="the reader model's probability "
                                             "that this passage answers (None: not reranked)")


# bm25 / dense / graph: one path alone; hybrid: BM25 and dense, equal-weight RRF; final: what
# `kbflow search` does (language-aware weights, the graph's list, exact identifiers first).
Retriever = Literal["bm25", "dense", "graph", "hybrid", "final"]
RETRIEVERS: tuple[Retriever, ...] = ("bm25", "dense", "graph", "hybrid", "final")


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
    rerank: bool | None = Field(None, description="the reader model rescores the fused top N "
                                "(None: the KBFLOW_RERANK setting decides)")
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
