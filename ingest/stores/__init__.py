"""Stores behind three protocols (vector, lexical, graph); `open_stores` opens one generation
of them for the configured profile: embedded files, or Milvus/Elasticsearch/Neo4j servers."""

from __future__ import annotations

from dataclasses import dataclass

from ingest.config import Settings
from ingest.stores import tokens
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


def open_stores(settings: Settings, model: str, dimension: int, generation: str) -> Stores:
    tokens.use_dictionaries(settings)  # the user's glossary terms segment as words, in and out
    if settings.profile == "servers":
        return _open_servers(settings, model, dimension, generation)
    return _open_embedded(settings, model, dimension, generation)


def _open_servers(settings: Settings, model: str, dimension: int, generation: str) -> Stores:
    """Milvus, Elasticsearch and Neo4j; names carry the namespace, so installations can share."""
    from ingest.stores.elasticsearch import ElasticsearchLexicalStore

    ns = settings.namespace
    return Stores(
        vectors=MilvusVectorStore(settings.milvus_uri, dimension, model, generation,
                                  collection=f"{ns}_chunks"),
        lexical=ElasticsearchLexicalStore(settings.es_url, alias=f"{ns}_chunks",
                                          generation=generation, analyzer=settings.es_analyzer),
        graph=open_graph(settings, generation),
    )


def _open_embedded(settings: Settings, model: str, dimension: int, generation: str) -> Stores:
    """Milvus Lite, SQLite FTS5 and LadybugDB files under the data directory."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return Stores(
        vectors=MilvusVectorStore(str(settings.milvus_path), dimension, model, generation),
        lexical=SqliteLexicalStore(settings.lexical_path, generation),
        graph=open_graph(settings, generation),
    )


def open_graph(settings: Settings, generation: str) -> GraphStore:
    """The graph store of one generation alone (reading the graph needs no model or vectors)."""
    if settings.profile == "servers":
        from ingest.stores.neo4j_graph import Neo4jGraphStore

        auth = (settings.neo4j_user, settings.neo4j_password) if settings.neo4j_user else None
        return Neo4jGraphStore(settings.neo4j_uri, auth=auth,
                               generation=f"{settings.namespace}_{generation}",
                               alias=settings.namespace)
    return LadybugGraphStore(settings.graph_path, generation)
