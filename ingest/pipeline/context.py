"""One place for a run's state: what every stage needs, instead of long parameter lists."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from ingest.chunk import ChunkParams
from ingest.config import Settings
from ingest.embed import Embedder, Embedding, TokenCounter
from ingest.manifest import ManifestStore
from ingest.models import Chunk, ParsedDocument, StoreRole
from ingest.parse import ParseLimits, ParsePool
from ingest.pipeline.failures import Failure
from ingest.pipeline.job import Planned, Prepared
from ingest.scopes import TenantTree
from ingest.stores import Stores

# Called with (done, total, description) as a run goes through its files, and with
# (chunks encoded, chunks to encode, ENCODING) as it embeds them.
Progress = Callable[[int, int, str], None]
ENCODING = "chunks encoded"

_listeners: list[Progress] = []


@contextmanager
def progress_to(listener: Progress) -> Iterator[None]:
    """Send the progress of the runs started inside the block to `listener` (the CLI's bar):
    the flows run in the caller's process but take no callback argument (Prefect would record
    it as a parameter)."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


def notify_listeners(done: int, total: int, what: str) -> None:
    for listener in list(_listeners):
        listener(done, total, what)


class Clock:
    """Seconds spent per stage (STAGES), summed over the run."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start


class Steps(Protocol):
    """How the heavy steps run: in this process (InProcess), or as Prefect tasks (flows/ingest.py),
    so that each shows up, and is retried, in Prefect."""

    def parse(self, parser: ParsePool, window: Sequence[Prepared]
              ) -> list[ParsedDocument | Failure]: ...

    def chunk(self, docs: Sequence[ParsedDocument], params: ChunkParams, tokens: TokenCounter
              ) -> list[list[Chunk] | Failure]: ...

    def situate(self, chunks: list[Chunk], settings: Settings, tokens: TokenCounter
                ) -> list[Chunk]: ...

    def embed(self, embedder: Embedder, chunks: list[Chunk]
              ) -> tuple[dict[str, Embedding], int]: ...

    def write(self, role: StoreRole, stores: Stores, group: Sequence[Planned],
              vectors: Mapping[str, Embedding]) -> None: ...

    def store_writer(self) -> AbstractContextManager[None]:
        """Held while the stores are open for writing: one writer per store across runs."""
        ...


@dataclass
class Warm:
    """What a long-lived process keeps from run to run (flows/warm.py): the parse processes and
    the embedding model behind its cache. A run without it starts and stops its own."""

    parser: ParsePool
    embedder: Embedder

    def close(self) -> None:
        self.parser.close()
        self.embedder.close()


@dataclass
class RunContext:
    """A run's settings, manifest, id, clock, progress callback and failure sink."""

    settings: Settings
    manifest: ManifestStore
    run_id: str
    steps: Steps
    log: logging.Logger | logging.LoggerAdapter[Any]
    clock: Clock = field(default_factory=Clock)
    progress: Progress = notify_listeners
    failures: list[Failure] = field(default_factory=list)
    warm: Warm | None = None

    def parser(self) -> AbstractContextManager[ParsePool]:
        """The warm parse pool (left open), or a pool of this run's own."""
        if self.warm is not None:
            return nullcontext(self.warm.parser)
        s = self.settings
        return ParsePool(s.parse_workers, s.parse_timeout_s, ParseLimits.of(s), s.parse_memory_mb)

    def tokens(self) -> TokenCounter:
        """The embedding model's tokenizer: the warm embedder's, or loaded for this run."""
        if self.warm is not None:
            return self.warm.embedder.tokens
        return TokenCounter(self.settings.embedding_model)

    def embedder(self) -> AbstractContextManager[Embedder]:
        """The warm embedder (left open), or one of this run's own, closed after it."""
        if self.warm is not None:
            return nullcontext(self.warm.embedder)
        s = self.settings
        return closing(Embedder(s.embedding_model, s.vector_cache_path, s.embedding_batch_size))

    @cached_property
    def scopes(self) -> TenantTree:
        """The tenant tree, read once per run (a sidecar may narrow its folder's tenant to a
        child tenant only)."""
        return TenantTree.load(self.settings)

    def refuse(self, failure: Failure) -> None:
        """A path turned away (or a version left deleted): reported, nothing recorded."""
        self.failures.append(failure)

    def fail(self, failure: Failure) -> None:
        """A version that failed: the manifest records its reason and the next run retries it."""
        self.log.warning("%s@%s failed: %s", failure.doc_id, failure.version_id, failure.reason)
        with self.clock.stage("manifest"):
            self.manifest.fail(failure.key, failure.path, failure.reason, self.run_id,
                               tenant_id=failure.tenant_id, acl=failure.acl)
        self.failures.append(failure)
