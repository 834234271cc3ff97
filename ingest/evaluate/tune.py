"""`kbflow tune`: fit the index's query adapter (ingest.search.adapter) on labelled cases, and
say by cross-validation what it does to search on questions it was not fitted on.

The cases are split into folds; each fold's questions are asked with an adapter fitted on the
other folds, through the real search (dense path alone, and final search), so the report is
what a new question would get. The adapter fitted on every case is kept in the data dir only
when final search gains from it (Recall@K up, or level with MRR up); otherwise the file is
removed, and search goes on without one.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from ingest.config import Settings
from ingest.embed import Embedder
from ingest.evaluate import (
    CaseResult,
    EvalCase,
    Expectation,
    Metrics,
    evaluate,
    normalised,
    searcher_fn,
    summarise,
)
from ingest.manifest import ManifestStore
from ingest.models import Chunk, ChunkKind
from ingest.search import Searcher
from ingest.search.adapter import ADAPTER_FILE, QueryAdapter, fit

FOLDS = 5
MIN_CASES = 20  # fewer answerable cases than this teach nothing a fold could check


@dataclass
class Examples:
    """The index's searchable chunks (rows of `chunks`), the cases' question vectors, and per
    case the rows that answer it (chunks matching one of its expectations)."""

    model: str
    chunks: np.ndarray
    questions: np.ndarray
    answers: list[list[int]]


class TuneReport(BaseModel):
    k: int
    folds: int
    cases: int  # answerable cases with at least one answering chunk in the index
    chunks: int
    before: dict[str, Metrics]  # per retriever (dense, final), without an adapter
    after: dict[str, Metrics]  # the same cases, each asked with the adapter of the other folds
    kept: bool
    path: str | None  # where the adapter fitted on every case was saved


def examples(settings: Settings, cases: Sequence[EvalCase]) -> Examples:
    manifest = ManifestStore(settings.manifest)
    try:
        record = manifest.serving()
        if record is None or record.dimension is None:
            raise ValueError("nothing is published yet: ingest before tuning")
        chunks = [c for c in manifest.published_chunks() if c.kind != ChunkKind.PARENT]
    finally:
        manifest.close()
    embedder = Embedder(record.embedding_model, settings.vector_cache_path)
    try:
        vectors = embedder.cached({c.content_hash for c in chunks})
        chunks = [c for c in chunks if c.content_hash in vectors]
        matrix = np.array([vectors[c.content_hash].values for c in chunks], dtype=np.float32)
        questions = embedder.encoder.encode([c.question for c in cases], query=True)
    finally:
        embedder.close()
    finder = _Finder(chunks)
    answers = [sorted({row for e in case.expected for row in finder.rows(e)}) for case in cases]
    return Examples(record.embedding_model, matrix, questions.astype(np.float32), answers)


def tune(settings: Settings, cases: Sequence[EvalCase], k: int = 5, folds: int = FOLDS,
         seed: int = 0) -> TuneReport:
    data = examples(settings, cases)
    usable = [i for i, answers in enumerate(data.answers) if answers]
    if len(usable) < max(MIN_CASES, folds):
        raise ValueError(f"{len(usable)} cases have an answer in the index; tuning needs "
                         f"{max(MIN_CASES, folds)} at least")
    fitted = cross_fitted(data, folds, seed)
    before: dict[str, Metrics] = {}
    after: dict[str, Metrics] = {}
    chosen = [cases[i] for i in usable]
    with Searcher(settings) as searcher:
        for mode in ("dense", "final"):
            searcher.adapter = None
            before[mode] = evaluate(chosen, searcher_fn(searcher, settings, mode), k).overall
            results: list[CaseResult] = []
            for part, adapter in fitted:
                searcher.adapter = adapter
                fold = [cases[i] for i in part]
                results += evaluate(fold, searcher_fn(searcher, settings, mode), k).cases
            after[mode] = summarise(results)
    gain = (after["final"].recall, after["final"].mrr) > (before["final"].recall,
                                                          before["final"].mrr)
    path = settings.data_dir / ADAPTER_FILE
    if gain:
        _fit(data, usable, seed).save(path)
    else:
        path.unlink(missing_ok=True)
    return TuneReport(k=k, folds=folds, cases=len(usable), chunks=len(data.chunks),
                      before=before, after=after, kept=gain, path=str(path) if gain else None)


def cross_fitted(data: Examples, folds: int = FOLDS, seed: int = 0
                 ) -> list[tuple[list[int], QueryAdapter]]:
    """The answered cases in `folds` folds, each with the adapter fitted on the other folds."""
    usable = [i for i, answers in enumerate(data.answers) if answers]
    parts = [part.tolist() for part in
             np.array_split(np.random.default_rng(seed).permutation(usable), folds)]
    return [(part, _fit(data, sorted(set(usable) - set(part)), seed)) for part in parts]


def _fit(data: Examples, rows: Sequence[int], seed: int) -> QueryAdapter:
    return fit(data.model, data.questions[list(rows)], [data.answers[i] for i in rows],
               data.chunks, seed)


class _Finder:
    """Chunks matching an expectation: a phrase is looked up in all chunk texts at once (one
    string search, not one comparison per chunk: STARD has 2,000 phrases and 10,000 chunks)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._chunks = chunks
        texts = [normalised(c.text) for c in chunks]
        self._joined = "\0".join(texts)
        self._starts = list(np.cumsum([0] + [len(t) + 1 for t in texts[:-1]]))

    def rows(self, expectation: Expectation) -> set[int]:
        if expectation.text:
            needle, found = normalised(expectation.text), set()
            at = self._joined.find(needle) if needle else -1
            while at >= 0:
                found.add(bisect.bisect_right(self._starts, at) - 1)
                at = self._joined.find(needle, at + 1)
            candidates: Sequence[int] | set[int] = found
        else:
            candidates = range(len(self._chunks))
        return {row for row in candidates if expectation.matches(self._chunks[row])}
