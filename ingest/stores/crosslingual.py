"""The cross-lingual index: chunks in the vector space of Google's multilingual Universal
Sentence Encoder, where an English question and the Chinese clause that answers it are close.

The dense path's model, bge-small-zh, reads Chinese: an English question about a Chinese policy
(or the reverse) reached its answer only through hand-written zh/en synonym pairs, and every
miss left on the blind set (eval/fresh_cases.jsonl) was such a question. This index is a
VectorStore of the profile's kind (its own SQLite table or Milvus collection), so the query
contract's filters, generations and alias switch are the same as the dense path's. It embeds its
chunks itself when written, through the vector cache (keyed by model: a rebuild embeds nothing
twice), so the embed stage and the writers' signatures stay as they are; a large write encodes
on every core (ingest.embed.use_pool), with the vectors one core gives.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ingest.embed import Embedder, use_pool
from ingest.models import Chunk, Hit, SearchFilter
from ingest.stores.protocols import VectorStore


class CrossLingualIndex:
    def __init__(self, store: VectorStore, embedder: Embedder) -> None:
        self.store = store
        self._embedder = embedder

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        """Embed (cached) and write; each chunk's sentences are kept in the cache for search
        (unless KBFLOW_CROSSLINGUAL_SENTENCES is off)."""
        if chunks:
            vectors, _ = self._embedder.embed_chunks(chunks)
            self.store.upsert(chunks, vectors)

    @property
    def model(self) -> str:
        return self._embedder.name

    @property
    def encoded(self) -> Counter[str]:
        """Texts and sentences its encoder ran on (the embed stage's are counted apart)."""
        return self._embedder.encoded

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self.store.delete(chunk_ids)

    def chunk_ids(self, version_key: str) -> set[str]:
        return self.store.chunk_ids(version_key)

    def chunk_ids_of(self, version_keys: Sequence[str]) -> dict[str, set[str]]:
        return self.store.chunk_ids_of(version_keys)

    def search(self, query: str, flt: SearchFilter, k: int) -> tuple[np.ndarray, list[Hit]]:
        """The query's vector and the `k` closest visible chunks."""
        vector = self._embedder.encode_query(query)
        return np.asarray(vector.values, np.float32), self.store.search(vector.values, flt, k, 0.0)

    def best_sentences(self, query: np.ndarray, chunks: Sequence[Chunk]) -> dict[str, float]:
        """Per chunk id, the best cosine between the query and one of the chunk's sentences;
        none when the index keeps no sentence vectors (KBFLOW_CROSSLINGUAL_SENTENCES=false)."""
        if not self._embedder.sentences:
            return {}
        matrices = self._embedder.sentence_vectors({c.content_hash: c.text for c in chunks})
        return {c.chunk_id: float((matrices[c.content_hash] @ query).max()) for c in chunks}

    def count(self) -> int:
        return self.store.count()

    def activate(self) -> None:
        self.store.activate()

    def drop(self) -> None:
        self.store.drop()

    def close(self) -> None:
        self.store.close()
        self._embedder.close()
        use_pool.shutdown()  # the encoder's workers, if a large write started them
