"""Production graph: Neo4j 5 over Bolt, the same Cypher shapes as the embedded LadybugDB store.

Generations without Enterprise features: Community has a single database, so every node and
relation carries a `generation` property that is part of its MERGE key and of its uniqueness
constraint. A rebuild writes a new generation beside the serving one; `activate()` records which
generation serves in one `(:KbflowAlias {name})` node, and `drop()` deletes a generation.

Every write is one managed transaction (`execute_write`, retried by the driver on transient
errors) of batched `UNWIND $rows AS r MERGE …` statements, so an upsert is all-or-nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from neo4j import Driver, GraphDatabase, ManagedTransaction

from ingest.models import Chunk, Triple

_BATCH = 1000
_NAME = re.compile(r"^[A-Za-z0-9_]+$")

_SCHEMA = [
    "CREATE CONSTRAINT kbflow_document IF NOT EXISTS FOR (d:Document) "
    "REQUIRE (d.generation, d.version_key) IS UNIQUE",
    "CREATE CONSTRAINT kbflow_chunk IF NOT EXISTS FOR (c:Chunk) "
    "REQUIRE (c.generation, c.chunk_id) IS UNIQUE",
    "CREATE CONSTRAINT kbflow_entity IF NOT EXISTS FOR (n:Entity) "
    "REQUIRE (n.generation, n.key) IS UNIQUE",
    "CREATE CONSTRAINT kbflow_relates IF NOT EXISTS FOR ()-[e:RELATES]-() "
    "REQUIRE (e.generation, e.key) IS UNIQUE",
    "CREATE CONSTRAINT kbflow_alias IF NOT EXISTS FOR (a:KbflowAlias) REQUIRE a.name IS UNIQUE",
    "CREATE INDEX kbflow_chunk_version IF NOT EXISTS FOR (c:Chunk) "
    "ON (c.generation, c.version_key)",
    "CREATE INDEX kbflow_relates_source IF NOT EXISTS FOR ()-[e:RELATES]-() "
    "ON (e.generation, e.source_chunk_id)",
    "CREATE INDEX kbflow_relates_version IF NOT EXISTS FOR ()-[e:RELATES]-() "
    "ON (e.generation, e.version_key)",
]

_MERGE_CHUNKS = """
UNWIND $rows AS r
MERGE (d:Document {generation: $g, version_key: r.version_key})
SET d.doc_id = r.doc_id, d.version_id = r.version_id
MERGE (c:Chunk {generation: $g, chunk_id: r.chunk_id})
SET c.version_key = r.version_key, c.kind = r.kind, c.clause_no = r.clause_no
MERGE (d)-[:HAS_CHUNK {generation: $g}]->(c)
"""
_MERGE_NEXT = """
UNWIND $rows AS r
MATCH (a:Chunk {generation: $g, chunk_id: r.a}), (b:Chunk {generation: $g, chunk_id: r.b})
MERGE (a)-[:NEXT {generation: $g}]->(b)
"""
_MERGE_TRIPLES = """
UNWIND $rows AS r
MERGE (s:Entity {generation: $g, key: r.skey}) SET s.name = r.subject, s.type = r.subject_type
MERGE (o:Entity {generation: $g, key: r.okey}) SET o.name = r.object, o.type = r.object_type
MERGE (s)-[e:RELATES {generation: $g, key: r.key}]->(o)
SET e.predicate = r.predicate, e.source_chunk_id = r.source_chunk_id,
    e.subject_type = r.subject_type, e.object_type = r.object_type, e.doc_id = r.doc_id,
    e.version_id = r.version_id, e.version_key = r.version_key, e.extractor = r.extractor,
    e.confidence = r.confidence
"""
# Relations sourced by the chunks, then the chunks, then entities and documents left without
# any relation by that (only those touched, not a scan of the whole graph).
_DELETE_CHUNKS = """
OPTIONAL MATCH (s:Entity)-[e:RELATES {generation: $g}]->(o:Entity)
WHERE e.source_chunk_id IN $ids
WITH collect(e) AS rels, collect(s) + collect(o) AS entities
FOREACH (e IN rels | DELETE e)
WITH entities
OPTIONAL MATCH (c:Chunk {generation: $g}) WHERE c.chunk_id IN $ids
OPTIONAL MATCH (d:Document)-[:HAS_CHUNK]->(c)
WITH entities, collect(DISTINCT d) AS documents, collect(DISTINCT c) AS chunks
FOREACH (c IN chunks | DETACH DELETE c)
WITH entities + documents AS touched
UNWIND touched AS n
WITH DISTINCT n WHERE NOT (n)--()
DELETE n
"""
_TRIPLES = """
MATCH (s:Entity)-[e:RELATES {generation: $g, version_key: $key}]->(o:Entity)
RETURN s.name AS subject, e.predicate AS predicate, o.name AS object,
       e.subject_type AS subject_type, e.object_type AS object_type,
       e.source_chunk_id AS source_chunk_id, e.doc_id AS doc_id, e.version_id AS version_id,
       e.extractor AS extractor, e.confidence AS confidence
ORDER BY source_chunk_id, predicate, object
"""


def _entity_key(kind: str, name: str) -> str:
    return f"{kind}:{name}"


def _triple_row(t: Triple) -> dict[str, Any]:
    skey = _entity_key(t.subject_type, t.subject)
    okey = _entity_key(t.object_type, t.object)
    return t.model_dump() | {
        "skey": skey, "okey": okey, "version_key": f"{t.doc_id}@{t.version_id}",
        # A relation's identity: subject, predicate, object and the chunk that states it.
        "key": f"{skey}|{t.predicate}|{okey}|{t.source_chunk_id}",
    }


def _batches(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [rows[i : i + _BATCH] for i in range(0, len(rows), _BATCH)]


class Neo4jGraphStore:
    def __init__(self, uri: str, auth: tuple[str, str] | None = None, database: str | None = None,
                 generation: str = "g1", alias: str = "kbflow") -> None:
        if not _NAME.match(generation):
            raise ValueError("generation: letters, digits and '_' only")
        self.generation = generation
        self.alias = alias
        self._database = database
        self._driver: Driver = GraphDatabase.driver(uri, auth=auth)
        try:
            for statement in _SCHEMA:
                self._driver.execute_query(statement, database_=database)
        except BaseException:
            self._driver.close()
            raise

    def close(self) -> None:
        self._driver.close()

    def _write(self, work) -> None:
        with self._driver.session(database=self._database) as session:
            session.execute_write(work)

    def upsert(self, chunks: Sequence[Chunk], triples: Sequence[Triple]) -> None:
        g = self.generation
        chunk_rows = [
            {"version_key": c.version_key, "doc_id": c.doc_id, "version_id": c.version_id,
             "chunk_id": c.chunk_id, "kind": str(c.kind), "clause_no": c.clause_no or ""}
            for c in chunks
        ]
        links = [{"a": c.chunk_id, "b": c.next_chunk_id} for c in chunks if c.next_chunk_id]
        triple_rows = [_triple_row(t) for t in triples]

        def work(tx: ManagedTransaction) -> None:
            for statement, rows in ((_MERGE_CHUNKS, chunk_rows), (_MERGE_NEXT, links),
                                    (_MERGE_TRIPLES, triple_rows)):
                for batch in _batches(rows):
                    tx.run(statement, rows=batch, g=g).consume()

        self._write(work)

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        ids = list(chunk_ids)

        def work(tx: ManagedTransaction) -> None:
            for start in range(0, len(ids), _BATCH):
                tx.run(_DELETE_CHUNKS, ids=ids[start : start + _BATCH], g=self.generation).consume()

        if ids:
            self._write(work)

    def triples(self, version_key: str) -> list[Triple]:
        records, _, _ = self._driver.execute_query(
            _TRIPLES, key=version_key, g=self.generation, database_=self._database,
            routing_="r",
        )
        return [Triple(**record.data()) for record in records]

    def chunk_ids(self, version_key: str) -> set[str]:
        records, _, _ = self._driver.execute_query(
            "MATCH (c:Chunk {generation: $g}) WHERE c.version_key = $key RETURN c.chunk_id AS id",
            key=version_key, g=self.generation, database_=self._database, routing_="r",
        )
        return {record["id"] for record in records}

    def count(self) -> int:
        records, _, _ = self._driver.execute_query(
            "MATCH ()-[e:RELATES {generation: $g}]->() RETURN count(e) AS n",
            g=self.generation, database_=self._database, routing_="r",
        )
        return int(records[0]["n"])

    def activate(self) -> None:
        """Record this generation as the one readers of `alias` should use."""
        self._driver.execute_query(
            "MERGE (a:KbflowAlias {name: $alias}) SET a.generation = $g, a.activated_at = "
            "datetime()", alias=self.alias, g=self.generation, database_=self._database,
        )

    def serving_generation(self) -> str | None:
        records, _, _ = self._driver.execute_query(
            "MATCH (a:KbflowAlias {name: $alias}) RETURN a.generation AS g", alias=self.alias,
            database_=self._database, routing_="r",
        )
        return records[0]["g"] if records else None

    def drop(self) -> None:
        """Delete this generation's nodes and relations, in bounded transactions."""
        for label in ("Chunk", "Entity", "Document"):
            while True:
                records, _, _ = self._driver.execute_query(
                    f"MATCH (n:{label} {{generation: $g}}) WITH n LIMIT $batch "
                    "DETACH DELETE n RETURN count(*) AS n",
                    g=self.generation, batch=_BATCH, database_=self._database,
                )
                if records[0]["n"] == 0:
                    break
