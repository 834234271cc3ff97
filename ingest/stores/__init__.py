"""Stores behind three protocols (vector, lexical, graph); `open_stores` opens one generation
of them for the configured profile: embedded files, or Milvus/Elasticsearch/Neo4j servers. The
cross-lingual index (ingest.stores.crosslingual) is a second vector store, written and cleaned
with the first.

Embedded, readers never wait for writers: vectors and BM25 are SQLite files in WAL mode, and the
LadybugDB graph, which admits one read-write process per file, is held only while written
(SharedGraph). Store modules are imported when a profile needs them, so a search loads no client
it does not use.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ingest.config import Settings
from ingest.stores import tokens
from ingest.stores.crosslingual import CrossLingualIndex
from ingest.stores.protocols import GraphStore, LexicalStore, VectorStore

log = logging.getLogger(__name__)


@dataclass
class Stores:
    vectors: VectorStore
    lexical: LexicalStore
    graph: GraphStore
    crosslingual: CrossLingualIndex | None = None  # None: KBFLOW_CROSSLINGUAL is off

    def _all(self) -> list[VectorStore | LexicalStore | GraphStore | CrossLingualIndex]:
        extra = [self.crosslingual] if self.crosslingual is not None else []
        return [self.vectors, self.lexical, self.graph, *extra]

    def close(self) -> None:
        for store in self._all():
            store.close()

    def activate(self) -> None:
        """Switch every role's alias to this generation (vectors last: search follows them)."""
        for store in reversed(self._all()):
            store.activate()

    def drop(self) -> None:
        for store in self._all():
            store.drop()


# What a search's graph read answers while a writer holds the file: no graph evidence.
_UNAVAILABLE: dict[str, Callable[[], Any]] = {"paths": list, "entities": list,
                                              "clause_chunks": dict, "count": int}
_WRITES = ("upsert", "delete_chunks", "activate", "drop")


class SharedGraph:
    """An embedded graph store that holds its file only while it writes.

    LadybugDB lets one process open a file read-write, so a search that kept the graph open (a
    warm `kbflow serve`) would lock every ingest out of it. Reads open the file, read and close
    it; the first write opens it for good (until `close`). A search's read that finds the file
    held by a writer answers as if the graph had nothing (search goes on from BM25 and vectors)
    and logs it; other reads and writes wait up to `wait` seconds for the file. The reads of one
    search can share one open (`reading`): opening and closing the file costs ~40 ms."""

    def __init__(self, opener: Callable[[], GraphStore], wait: float = 60.0) -> None:
        self._opener = opener
        self._wait = wait
        self._store: GraphStore | None = None
        self._reading: GraphStore | None = None

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Reads inside the block use one open of the file, closed at its end; if a writer
        holds the file, each read answers as it would alone."""
        if self._store is not None or self._reading is not None:
            yield
            return
        try:
            self._reading = self._open(0.0)
        except RuntimeError as exc:
            if "lock" not in str(exc).lower():
                raise
            yield
            return
        try:
            yield
        finally:
            store, self._reading = self._reading, None
            store.close()

    def _open(self, patience: float) -> GraphStore:
        deadline = time.monotonic() + patience
        while True:
            try:
                return self._opener()
            except RuntimeError as exc:
                if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)

    def __getattr__(self, name: str) -> Any:
        if self._store is not None:
            return getattr(self._store, name)
        if name in _WRITES:
            self._store = self._open(self._wait)
            return getattr(self._store, name)

        def read(*args: Any, **kwargs: Any) -> Any:
            if self._reading is not None:
                return getattr(self._reading, name)(*args, **kwargs)
            try:
                store = self._open(0.0 if name in _UNAVAILABLE else self._wait)
            except RuntimeError as exc:
                if name not in _UNAVAILABLE or "lock" not in str(exc).lower():
                    raise
                log.warning("graph busy (being written); %s answered without it", name)
                return _UNAVAILABLE[name]()
            try:
                return getattr(store, name)(*args, **kwargs)
            finally:
                store.close()

        return read

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def open_stores(settings: Settings, model: str, dimension: int, generation: str) -> Stores:
    tokens.use_dictionaries(settings)  # the user's glossary terms segment as words, in and out
    if settings.profile == "servers":
        stores = _open_servers(settings, model, dimension, generation)
    else:
        stores = _open_embedded(settings, model, dimension, generation)
    if settings.crosslingual:
        try:
            stores.crosslingual = _open_crosslingual(settings, generation)
        except BaseException:
            stores.close()
            raise
    return stores


def _open_crosslingual(settings: Settings, generation: str) -> CrossLingualIndex:
    """The cross-lingual index of one generation, beside the dense path's vectors."""
    from ingest.embed import Embedder
    from ingest.embed.encoders import USE_DIMENSION, USE_MODEL

    store: VectorStore
    if settings.profile == "servers":
        from ingest.stores.milvus import MilvusVectorStore

        store = MilvusVectorStore(settings.milvus_uri, USE_DIMENSION, USE_MODEL, generation,
                                  collection=f"{settings.namespace}_crosslingual")
    else:
        from ingest.stores.sqlite_vectors import SqliteVectorStore

        store = SqliteVectorStore(settings.vectors_path, USE_DIMENSION, USE_MODEL, generation,
                                  alias="kbflow_crosslingual")
    # The text alone: a shared title prefix pulled a document's chunks together in this
    # encoder's space (blind set, bench/RESULTS.md).
    return CrossLingualIndex(store, Embedder(USE_MODEL, settings.vector_cache_path,
                                             prefixed=False,
                                             sentences=settings.crosslingual_sentences))


def _open_servers(settings: Settings, model: str, dimension: int, generation: str) -> Stores:
    """Milvus, Elasticsearch and Neo4j; names carry the namespace, so installations can share."""
    from ingest.stores.elasticsearch import ElasticsearchLexicalStore
    from ingest.stores.milvus import MilvusVectorStore

    ns = settings.namespace
    return Stores(
        vectors=MilvusVectorStore(settings.milvus_uri, dimension, model, generation,
                                  collection=f"{ns}_chunks"),
        lexical=ElasticsearchLexicalStore(settings.es_url, alias=f"{ns}_chunks",
                                          generation=generation, analyzer=settings.es_analyzer),
        graph=open_graph(settings, generation),
    )


def _open_embedded(settings: Settings, model: str, dimension: int, generation: str) -> Stores:
    """SQLite vectors, SQLite FTS5 and LadybugDB files under the data directory."""
    from ingest.stores.sqlite_lexical import SqliteLexicalStore
    from ingest.stores.sqlite_vectors import SqliteVectorStore

    if (settings.data_dir / "milvus.db").exists() and not settings.vectors_path.exists():
        log.warning("%s holds Milvus Lite vectors, which kbflow no longer reads: run a full "
                    "rebuild once (vectors come from the embedding cache)",
                    settings.data_dir / "milvus.db")
    vectors = SqliteVectorStore(settings.vectors_path, dimension, model, generation)
    return Stores(
        vectors=vectors,
        lexical=SqliteLexicalStore(settings.lexical_path, generation),
        graph=SharedGraph(lambda: open_graph(settings, generation)),
    )


def open_graph(settings: Settings, generation: str) -> GraphStore:
    """The graph store of one generation alone (reading the graph needs no model or vectors)."""
    if settings.profile == "servers":
        from ingest.stores.neo4j_graph import Neo4jGraphStore

        auth = (settings.neo4j_user, settings.neo4j_password) if settings.neo4j_user else None
        return Neo4jGraphStore(settings.neo4j_uri, auth=auth,
                               generation=f"{settings.namespace}_{generation}",
                               alias=settings.namespace)
    from ingest.stores.ladybug_graph import LadybugGraphStore

    return LadybugGraphStore(settings.graph_path, generation)
