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
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from ingest.cache import lookup
from ingest.embed.encoders import (
    USE_DIMENSION,
    USE_MODEL,
    Encoder,
    TokenCounter,
    open_encoder,
    resolve_model,
)
from ingest.embed.fetch import ONNX_MODELS
from ingest.models import Chunk
from ingest.text import sentences

__all__ = ["DEFAULT_MODEL", "Embedder", "Embedding", "TokenCounter", "resolve_model"]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "bge-small-zh-v1.5-q"
SENTENCE_TEXTS_KEPT = 5_000  # candidates' texts; ~3 sentences each, ~30 MB at 512 dimensions
SENTENCE_TEXTS_PER_WRITE = 2_000  # texts encoded and written at a time (~6,000 sentences)
# Sentence vectors are kept in half precision: a cosine needs no more, and there are about
# three per chunk.
SENTENCE_DTYPE = np.float16


class Embedding(BaseModel):
    values: list[float]
    coverage: float


class Embedder:
    """An encoder behind a vector cache; the encoder loads on first use, so runs whose text is
    all cached never load a model."""

    def __init__(self, model_name: str, cache_path: Path, batch_size: int = 32, *,
                 prefixed: bool = True, sentences: bool = True) -> None:
        self.name = model_name
        self.batch_size = batch_size
        self._prefixed = prefixed  # chunk vectors of prefix + text (else of the text alone)
        # embed_chunks also encodes and keeps each chunk's sentence vectors (search reads them)
        self.sentences = sentences
        self._encoder: Encoder | None = None
        self._sentences: OrderedDict[str, np.ndarray] = OrderedDict()  # content hash → rows
        self._sentences_lock = threading.Lock()
        self.encoded: Counter[str] = Counter()  # texts and sentences run through the model
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        # Not bound to its thread: the warm worker (flows/warm.py) keeps one Embedder for runs
        # on its task threads, one run at a time.
        self._cache = sqlite3.connect(cache_path, isolation_level=None, timeout=30,
                                      check_same_thread=False)
        self._cache.executescript(
            """CREATE TABLE IF NOT EXISTS vectors (model TEXT, content_hash TEXT, coverage REAL,
                   vector BLOB, PRIMARY KEY (model, content_hash));
               CREATE TABLE IF NOT EXISTS sentences (model TEXT, content_hash TEXT,
                   vectors BLOB, PRIMARY KEY (model, content_hash));
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
        if self.name == USE_MODEL:
            return USE_DIMENSION
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

    def sentence_vectors(self, texts: Mapping[str, str]) -> dict[str, np.ndarray]:
        """Per content hash, the passage vectors of its text's sentences (float32, one row a
        sentence): the most recent texts are kept in memory (a warm searcher meets the same
        clauses query after query), the others read from the cache the embed stage filled. A
        text missing there (indexed before sentence vectors were kept) is encoded here, alone:
        the quantised model scales its activations per batch, so a vector depends on its batch,
        and this way only on its own text, never on which searches came before."""
        found: dict[str, np.ndarray] = {}
        with self._sentences_lock:
            for h in texts:
                if h in self._sentences:
                    self._sentences.move_to_end(h)
                    found[h] = self._sentences[h]
        rows = lookup(self._cache, "SELECT content_hash, vectors FROM sentences "
                      "WHERE model=? AND content_hash IN ({keys})",
                      [h for h in texts if h not in found], self.name)
        for h, blob in rows:
            found[h] = np.frombuffer(blob, SENTENCE_DTYPE).reshape(-1, self.dimension).astype(
                np.float32)
        for h, text in texts.items():
            if h not in found:
                found[h] = self.encoder.encode(sentences(text))
        with self._sentences_lock:
            self._sentences.update(found)
            while len(self._sentences) > SENTENCE_TEXTS_KEPT:
                self._sentences.popitem(last=False)
        return found

    def _store_sentences(self, texts: Mapping[str, str],
                         whole: Mapping[str, np.ndarray]) -> None:
        """Encode and keep the sentences of texts the cache lacks, many texts to a batch as
        chunk vectors are (a sentence's vector moves by about 0.007 cosine with its batch;
        encoding each text alone took three times as long). A sentence is encoded once per
        batch however many texts hold it, and not at all when its chunk's vector was just
        computed from that very string (`whole`: content hash → that vector; a one-sentence
        text with no stop after it, encoded without a prefix as the cross-lingual index does).
        Only the same string: a stop or a prefix moves a vector too far (bench/RESULTS.md,
        "Real-corpus ingest")."""
        known = {h for (h,) in lookup(self._cache, "SELECT content_hash FROM sentences "
                                      "WHERE model=? AND content_hash IN ({keys})",
                                      texts, self.name)}
        missing = [(h, sentences(t)) for h, t in texts.items() if h not in known]
        for start in range(0, len(missing), SENTENCE_TEXTS_PER_WRITE):
            part = missing[start : start + SENTENCE_TEXTS_PER_WRITE]
            todo = list(dict.fromkeys(s for h, parts in part if h not in whole for s in parts))
            vectors = dict(zip(todo, self.encoder.encode(todo), strict=True)) if todo else {}
            self.encoded["sentences"] += len(todo)
            rows = [(self.name, h, (whole[h][None, :] if h in whole else np.stack(
                        [vectors[s] for s in parts])).astype(SENTENCE_DTYPE).tobytes())
                    for h, parts in part]
            self._write("INSERT OR REPLACE INTO sentences VALUES (?,?,?)", rows)

    def _write(self, statement: str, rows: Sequence[tuple[object, ...]]) -> None:
        """Rows in one transaction: in autocommit mode each row would be its own commit (an
        fsync apiece, which was most of the embed stage's overhead on a busy disk)."""
        self._cache.execute("BEGIN")
        try:
            self._cache.executemany(statement, rows)
        except BaseException:
            if self._cache.in_transaction:  # a full disk has rolled it back already
                self._cache.execute("ROLLBACK")
            raise
        self._cache.execute("COMMIT")

    @staticmethod
    def _embeddings(vectors: np.ndarray, coverage: list[float]) -> list[Embedding]:
        return [Embedding(values=v.tolist(), coverage=c)
                for v, c in zip(vectors, coverage, strict=True)]

    def embed_chunks(self, chunks: Sequence[Chunk]) -> tuple[dict[str, Embedding], int]:
        """Vectors for the chunks' prefixed text, or their text alone for an embedder made with
        `prefixed=False` (and, unless made with `sentences=False`, their sentences' vectors,
        kept in the cache); returns the chunk vectors and how many were computed."""
        cached = self.cached({c.content_hash for c in chunks})
        missing: dict[str, str] = {}
        for c in chunks:
            if c.content_hash not in cached:
                missing.setdefault(c.content_hash, c.embed_text if self._prefixed else c.text)
        if missing:
            vectors, coverage = self.encoder.encode_passages(list(missing.values()))
            self.encoded["texts"] += len(missing)
            self._write("INSERT OR REPLACE INTO vectors VALUES (?,?,?,?)",
                        [(self.name, h, c, v.astype(np.float32).tobytes())
                         for h, c, v in zip(missing, coverage, vectors, strict=True)])
            cached.update(zip(missing, self._embeddings(vectors, coverage), strict=True))
        if not self.sentences:
            return {c.chunk_id: cached[c.content_hash] for c in chunks}, len(missing)
        # Search ranks candidates by their best sentence too (ingest.search): kept here so a
        # search only reads them.
        texts = {c.content_hash: c.text for c in chunks}
        self._store_sentences(texts, {h: np.asarray(cached[h].values, np.float32)
                                      for h, text in missing.items()
                                      if sentences(texts[h]) == [text]})
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
