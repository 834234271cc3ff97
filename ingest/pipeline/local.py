"""The pipeline's steps run in this process, without an orchestrator (tests, scripts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext

from ingest.chunk import ChunkParams
from ingest.chunk.context import situate
from ingest.config import Settings
from ingest.embed import Embedder, Embedding, TokenCounter
from ingest.models import Chunk, ParsedDocument, StoreRole
from ingest.parse import ParsePool
from ingest.pipeline.failures import Failure
from ingest.pipeline.job import Planned, Prepared
from ingest.pipeline.prepare import chunk_one, parse_many
from ingest.pipeline.write import write_role
from ingest.stores import Stores


class InProcess:
    """Steps as plain calls; a window's documents are still parsed side by side."""

    def parse(self, parser: ParsePool, window: Sequence[Prepared]
              ) -> list[ParsedDocument | Failure]:
        return parse_many(parser, window)

    def chunk(self, docs: Sequence[ParsedDocument], params: ChunkParams, tokens: TokenCounter
              ) -> list[list[Chunk] | Failure]:
        return [chunk_one(doc, params, tokens) for doc in docs]

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
