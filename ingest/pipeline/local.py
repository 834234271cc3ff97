"""The pipeline's steps run in this process, without an orchestrator (tests, scripts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext

from ingest.chunk import ChunkParams, chunk_document
from ingest.chunk.context import situate
from ingest.config import Settings
from ingest.embed import Embedder, Embedding, TokenCounter
from ingest.models import Chunk, ParsedDocument, StoreRole
from ingest.parse import ParsePool
from ingest.pipeline.failures import Failure
from ingest.pipeline.job import Planned, Prepared
from ingest.pipeline.prepare import parse_one
from ingest.pipeline.write import write_role
from ingest.stores import Stores


class InProcess:
    """Steps as plain calls; a window's documents are still parsed side by side."""

    def parse(self, parser: ParsePool, window: Sequence[Prepared]
              ) -> list[ParsedDocument | Failure]:
        if not window:
            return []
        with ThreadPoolExecutor(len(window)) as pool:
            return list(pool.map(lambda item: parse_one(parser, item), window))

    def chunk(self, doc: ParsedDocument, params: ChunkParams, tokens: TokenCounter
              ) -> list[Chunk]:
        return chunk_document(doc, params, tokens.count, tokens.max_tokens)

    def situate(self, chunks: list[Chunk], settings: Settings, tokens: TokenCounter
                ) -> list[Chunk]:
        return situate(chunks, settings, tokens.count, tokens.max_tokens)

    def embed(self, embedder: Embedder, chunks: list[Chunk]
              ) -> tuple[dict[str, Embedding], int]:
        return embedder.embed_chunks(chunks)

    def write(self, role: StoreRole, stores: Stores, group: Sequence[Planned],
              vectors: Mapping[str, Embedding]) -> None:
        write_role(role, stores, group, vectors)

    def store_writer(self) -> AbstractContextManager[None]:
        return nullcontext()
