"""Stores behind three protocols (vector, lexical, graph); `open_embedded` gives the defaults."""

from __future__ import annotations

from dataclasses import dataclass

from ingest.config import Settings
from ingest.stores.ladybug_graph import LadybugGraphStore
from ingest.stores.milvus import MilvusVectorStore
from ingest.stores.protocols import GraphStore, LexicalStore, VectorStore
from ingest.stores.sqlite_lexical import SqliteLexicalStore


@dataclass
class Stores:
    vectors: VectorStore
    lexical: LexicalStore
    graph: GraphStore

    def close(self) -> None:
        for store in (self.vectors, self.lexical, self.graph):
            store.close()


    def activate(self) -> None:
        """Switch every role's alias to this generation (vectors last: search follows them)."""
        self.graph.activate()
        self.lexical.activate()
        self.vectors.activate()

    def drop(self) -> None:
        for store in (self.vectors, self.lexical, self.graph):
            store.drop()


def open_embedded(settings: Settings, model: str, dimension: int, generation: str) -> Stores:
    """Milvus Lite, SQLite FTS5 and LadybugDB files under the data directory."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return Stores(
        vectors=MilvusVectorStore(str(settings.milvus_path), dimension, model, generation),
        lexical=SqliteLexicalStore(settings.lexical_path, generation),
        graph=LadybugGraphStore(settings.graph_path, generation),
    )
