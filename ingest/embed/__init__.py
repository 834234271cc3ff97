"""Embed stage: vectors from the configured encoder, cached by (model, content_hash).

The default model, bge-small-zh-v1.5 (ONNX), reads Chinese and English; any sentence-transformers
model by local path still works (`ingest.embed.encoders`). Unchanged text is never embedded twice,
also across full rebuilds. Each vector carries the model's coverage of its text (the share of
tokens that are not [UNK]), so that search can leave the dense path out where a model cannot read
the language (an English-only model on Chinese text).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from ingest.cache import lookup
from ingest.embed.encoders import Encoder, TokenCounter, open_encoder, resolve_model
from ingest.embed.fetch import ONNX_MODELS
from ingest.models import Chunk

__all__ = ["DEFAULT_MODEL", "Embedder", "Embedding", "TokenCounter", "resolve_model"]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "bge-small-zh-v1.5-q"
SENTENCE_TEXTS_KEPT = 5_000  # results' texts; ~8 sentences each, ~80 MB at 512 dimensions


class Embedding(BaseModel):
    values: list[float]
    coverage: float


class Embedder:
    """An encoder behind a vector cache; the encoder loads on first use, so runs whose text is
    all cached never load a model."""

    def __init__(self, model_name: str, cache_path: Path, batch_size: int = 32) -> None:
        self.name = model_name
        self.batch_size = batch_size
        self._encoder: Encoder | None = None
        self._sentences: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()
        self._sentences_lock = threading.Lock()
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        # Not bound to its thread: the warm worker (flows/warm.py) keeps one Embedder for runs
        # on its task threads, one run at a time.
        self._cache = sqlite3.connect(cache_path, isolation_level=None, timeout=30,
                                      check_same_thread=False)
        self._cache.executescript(
            """CREATE TABLE IF NOT EXISTS vectors (model TEXT, content_hash TEXT, coverage REAL,
                   vector BLOB, PRIMARY KEY (model, content_hash));
               CREATE TABLE IF NOT EXISTS models (model TEXT PRIMARY KEY, dimension INTEGER);"""
        )

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = open_encoder(self.name, self.batch_size)
        return self._encoder

    @property
    def dimension(self) -> int:
        """Known without loading the model for packaged models, or once it was loaded before."""
        if self.name in ONNX_MODELS:
            return ONNX_MODELS[self.name].dimension
        row = self._cache.execute("SELECT dimension FROM models WHERE model=?", (self.name,))
        known = row.fetchone()
        if known:
            return int(known[0])
        dimension = self.encoder.dimension
        self._cache.execute("INSERT OR REPLACE INTO models VALUES (?, ?)", (self.name, dimension))
        return dimension

    @cached_property
    def tokens(self) -> TokenCounter:
        return TokenCounter(self.name)

    def count_tokens(self, text: str) -> int:
        """Tokens the model sees for `text`, special tokens included (the chunk budget unit)."""
        return self.tokens.count(text)

    def close(self) -> None:
        self._cache.close()

    def coverage(self, texts: Sequence[str]) -> list[float]:
        return self.encoder.coverage(texts)

    def encode(self, texts: Sequence[str]) -> list[Embedding]:
        """Passage vectors (no query instruction)."""
        return self._embeddings(*self.encoder.encode_passages(texts))

    def encode_query(self, query: str) -> Embedding:
        """A query's vector, with the model's query recipe (BGE's retrieval instruction)."""
        vectors = self.encoder.encode([query], query=True)
        return self._embeddings(vectors, self.coverage([query]))[0]

    def sentence_vectors(self, sentences: tuple[str, ...]) -> np.ndarray:
        """Passage vectors of one text's sentences, the most recent texts kept in memory: a
        warm searcher meets the same clauses query after query, and encoding their sentences
        again was most of a search's time (~100 ms of 120 ms on sample_docs). One text's
        sentences are encoded together and apart from other texts: the quantised model scales
        its activations per batch, so a vector depends on its batch, and this way only on its
        own text, never on which searches came before."""
        with self._sentences_lock:
            vectors = self._sentences.get(sentences)
            if vectors is None:
                vectors = self._sentences[sentences] = self.encoder.encode(sentences)
                while len(self._sentences) > SENTENCE_TEXTS_KEPT:
                    self._sentences.popitem(last=False)
            self._sentences.move_to_end(sentences)
        return vectors

    @staticmethod
    def _embeddings(vectors: np.ndarray, coverage: list[float]) -> list[Embedding]:
        return [Embedding(values=v.tolist(), coverage=c)
                for v, c in zip(vectors, coverage, strict=True)]

    def embed_chunks(self, chunks: Sequence[Chunk]) -> tuple[dict[str, Embedding], int]:
        """Vectors for the chunks' prefixed text; returns them and how many were computed."""
        cached = self.cached({c.content_hash for c in chunks})
        missing: dict[str, str] = {}
        for c in chunks:
            if c.content_hash not in cached:
                missing.setdefault(c.content_hash, c.embed_text)
        if missing:
            vectors, coverage = self.encoder.encode_passages(list(missing.values()))
            rows = [(self.name, h, c, v.astype(np.float32).tobytes())
                    for h, c, v in zip(missing, coverage, vectors, strict=True)]
            # One transaction: in autocommit mode each row would be its own commit (an fsync
            # apiece, which was most of the embed stage's overhead on a busy disk).
            self._cache.execute("BEGIN")
            try:
                self._cache.executemany("INSERT OR REPLACE INTO vectors VALUES (?,?,?,?)", rows)
            except BaseException:
                if self._cache.in_transaction:  # a full disk has rolled it back already
                    self._cache.execute("ROLLBACK")
                raise
            self._cache.execute("COMMIT")
            cached.update(zip(missing, self._embeddings(vectors, coverage), strict=True))
        return {c.chunk_id: cached[c.content_hash] for c in chunks}, len(missing)

    def cached(self, hashes: set[str]) -> dict[str, Embedding]:
        """Vectors already computed for these content hashes (search reads them for scoring)."""
        found: dict[str, Embedding] = {}
        rows = lookup(self._cache, "SELECT content_hash, coverage, vector FROM vectors "
                      "WHERE model=? AND content_hash IN ({keys})", hashes, self.name)
        for h, coverage, blob in rows:
            values = np.frombuffer(blob, dtype=np.float32).tolist()
            found[h] = Embedding(values=values, coverage=coverage)
        return found
