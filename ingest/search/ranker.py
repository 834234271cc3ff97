"""Step 4 of a search: the reader model rescores the fused top N.

Every other signal reads the question and the passage apart; the reader model (ingest/rerank, a
cross-encoder) reads them together and gives each passage a probability of answering. The
fused top `depth` are rescored, each cut to its prefix and best window; the new order is the
reader model's, or its rank fused with the fused rank (`blend`). Chunks carrying a code or
clause number the query names keep their place in front. The model is opened once, on the first
search that asks for it (the warm API keeps its onnxruntime session). A missing or damaged
model, or one that fails while scoring, never fails the search: the fused order is kept and the
note says why, for the verdict's reason.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ingest.models import Chunk
from ingest.rerank import MODEL_DIR, Reader, ReaderUnavailable

RRF_K = 60  # as the fusion's: a reader rank and a fused rank weigh alike
BATCH = 8  # pairs per onnxruntime call: two cores stay busy, padding stays short


@dataclass(frozen=True)
class Reranked:
    order: list[str]  # chunk ids, best first
    probability: dict[str, float] = field(default_factory=dict)  # of those the model read
    fused_rank: dict[str, int] = field(default_factory=dict)
    floor: float | None = None  # no passage at or above it: nothing answers
    note: str | None = None  # why the fused order was kept


def kept(order: list[str], note: str | None = None) -> Reranked:
    """The fused order unchanged (reranking off, or the model unavailable)."""
    return Reranked(order=order, note=note)


class Ranker:
    """The reader model over one folder, opened lazily and kept."""

    def __init__(self, folder: Path | None = None, *, depth: int = 20,
                 blend: Literal["reader", "fused"] = "fused", floor: float | None = None,
                 threads: int = 2) -> None:
        self.folder = folder or MODEL_DIR
        self.depth, self.blend, self._floor, self._threads = depth, blend, floor, threads
        self._lock = threading.Lock()
        self._reader: Reader | None = None
        self._problem: str | None = None

    def reader(self) -> Reader | None:
        """The open model, or None (see `problem`); a failed open is not retried."""
        with self._lock:
            if self._reader is None and self._problem is None:
                try:
                    self._reader = Reader(self.folder, threads=self._threads)
                except ReaderUnavailable as error:
                    self._problem = str(error)
            return self._reader

    @property
    def problem(self) -> str | None:
        return self._problem

    @property
    def floor(self) -> float | None:
        """The setting's floor, else the one fitted for this model (its card's answer_floor)."""
        if self._floor is not None or self._reader is None:
            return self._floor
        fitted = self._reader.card.get("answer_floor")
        return float(fitted) if isinstance(fitted, int | float) and 0 <= fitted <= 1 else None

    def run(self, query: str, order: list[str], chunks: Mapping[str, Chunk],
            exact: Mapping[str, int]) -> Reranked:
        """`order` reranked: its first `depth` rescored, the `exact` ones (chunk id → count of
        the query's identifiers it carries; empty when exact-first is off) kept in front."""
        reader = self.reader()
        if reader is None:
            return kept(order, f"reader model unavailable, fused order kept: {self._problem}")
        head = order[:self.depth]
        try:
            scores = reader.score(query, [(chunks[c].prefix, chunks[c].text) for c in head],
                                  batch=BATCH)
        except Exception as error:  # noqa: BLE001 - onnxruntime's errors are untyped
            return kept(order, f"reader model failed, fused order kept: {error}")
        probability = {c: float(p) for c, p in zip(head, scores, strict=True)}
        fused_rank = {c: r for r, c in enumerate(head, start=1)}
        by_reader = {c: r for r, c in enumerate(
            sorted(head, key=lambda c: (-probability[c], fused_rank[c])), start=1)}

        def key(c: str) -> tuple[int, float, int]:
            if self.blend == "reader":
                blended = -1.0 / by_reader[c]
            else:
                blended = -(1.0 / (RRF_K + by_reader[c]) + 1.0 / (RRF_K + fused_rank[c]))
            return (-exact.get(c, 0), blended, fused_rank[c])

        return Reranked(order=sorted(head, key=key) + order[self.depth:],
                        probability=probability, fused_rank=fused_rank, floor=self.floor)
