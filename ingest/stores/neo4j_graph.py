"""Production graph: Neo4j 5 over Bolt, the same Cypher shapes as the embedded LadybugDB store.

Generations without Enterprise features: Community has a single database, so every node and
relation carries a `generation` property that is part of its MERGE key and of its uniqueness
constraint. A rebuild writes a new generation beside the serving one; `activate()` records which
generation serves in one `(:KbflowAlias {name})` node, and `drop()` deletes a generation.

Every write is one managed transaction (`execute_write`, retried by the driver on transient
errors) of batched `UNWIND $rows AS r MERGE …` statements, so an upsert is all-or-nothing.

Reading (`paths`, `entities`): chunk nodes and relations carry their source chunk's visibility
(tenant, ACL groups, effective days, version key), so the filter is part of every read query;
`_visible` is the one place that says what a reader may see.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from neo4j import Driver, GraphDatabase, ManagedTransaction, Record

from ingest.models import (
    OPEN_END,
    Chunk,
    GraphNode,
    GraphPath,
    SearchFilter,
    Triple,
    day_number,
)
from ingest.stores.graph_paths import (
    HIDDEN,
    Direction,
    Step,
    best_first,
    bounded_paths,
    by_clause,
    check_limits,
    clause_numbers,
    directions,
    step,
    visibility_of,
)

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
    "CREATE INDEX kbflow_entity_name IF NOT EXISTS FOR (n:Entity) ON (n.generation, n.name)",
]
_VISIBILITY_SET = "{v}.tenant_id = r.tenant_id, {v}.acl = r.acl, {v}.eff_from = r.eff_from, " \
                  "{v}.eff_to = r.eff_to"

_MERGE_CHUNKS = """
UNWIND $rows AS r
MERGE (d:Document {generation: $g, version_key: r.version_key})
SET d.doc_id = r.doc_id, d.version_id = r.version_id, d.title = coalesce(r.title, d.title)
MERGE (c:Chunk {generation: $g, chunk_id: r.chunk_id})
SET c.version_key = r.version_key, c.kind = r.kind, c.clause_no = r.clause_no,
    """ + _VISIBILITY_SET.format(v="c") + """
MERGE (d)-[:HAS_CHUNK {generation: $g}]->(c)
"""
# A written chunk's NEXT link is its next_chunk_id alone: the one it had before goes (a clause
# inserted or removed after it changes its successor), then _MERGE_NEXT makes the current one.
_UNLINK_NEXT = """
UNWIND $rows AS r
MATCH (a:Chunk {generation: $g, chunk_id: r.chunk_id})-[n:NEXT]->()
DELETE n
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
    e.confidence = r.confidence, e.surface = r.surface, e.rule = r.rule,
    """ + _VISIBILITY_SET.format(v="e") + """
"""
_CHUNK_VISIBILITY = """
MATCH (c:Chunk {generation: $g}) WHERE c.chunk_id IN $ids
RETURN c.chunk_id AS chunk_id, c.tenant_id AS tenant_id, c.acl AS acl, c.eff_from AS eff_from,
       c.eff_to AS eff_to
"""


def _hop(outgoing: bool, visible: str) -> str:
    """One hop of a path search: relations leaving (or entering) the frontier nodes."""
    return f"""
MATCH (a:Entity {{generation: $g}}){'-[e:RELATES]->' if outgoing else '<-[e:RELATES]-'}(b:Entity)
WHERE a.key IN $frontier AND e.generation = $g
  AND ($all_predicates OR e.predicate IN $predicates) AND {visible}
RETURN a.key, a.name, a.type, b.key, b.name, b.type, e.predicate, e.source_chunk_id, e.doc_id,
       e.version_id, e.extractor, e.confidence, coalesce(e.surface, ''), coalesce(e.rule, '')
ORDER BY e.confidence DESC, b.key, e.source_chunk_id LIMIT $limit
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
_TRIPLES_OF = {
    "version": "MATCH (s:Entity)-[e:RELATES {generation: $g, version_key: $key}]->(o:Entity)",
    "predicates": "MATCH (s:Entity)-[e:RELATES {generation: $g}]->(o:Entity) "
                  "WHERE e.predicate IN $predicates",
}
_TRIPLES = """
RETURN s.name AS subject, e.predicate AS predicate, o.name AS object,
       e.subject_type AS subject_type, e.object_type AS object_type,
       e.source_chunk_id AS source_chunk_id, e.doc_id AS doc_id, e.version_id AS version_id,
       e.extractor AS extractor, e.confidence AS confidence,
       coalesce(e.surface, '') AS surface, coalesce(e.rule, '') AS rule
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

_CLAUSE_CHUNKS = """
MATCH (d:Document {generation: $g})-[:HAS_CHUNK]->(c:Chunk {generation: $g})
WHERE d.title IN $titles AND c.clause_no IN $numbers AND c.kind <> 'parent' AND VISIBLE
RETURN d.title, c.clause_no, c.chunk_id ORDER BY c.chunk_id
"""


def _visible(var: str, flt: SearchFilter) -> tuple[str, dict[str, Any]] | None:
    """The Cypher predicate (and its parameters) a chunk or relation `var` must meet to be
    seen under `flt`; None when nothing can be (no groups)."""
    if not flt.groups:
        return None
    day = day_number(flt.as_of, OPEN_END)
    return (f"{var}.tenant_id IN $tenants AND any(g IN {var}.acl WHERE g IN $groups) "
            f"AND {var}.eff_from <= $day AND {var}.eff_to >= $day "
            f"AND NOT {var}.version_key IN $hidden",
            {"tenants": list(flt.tenants), "groups": list(flt.groups), "day": day,
             "hidden": list(flt.hidden_keys)})


# (uri, database) whose schema statements this process ran: they cost ~0.2 s per open, which a
# one-file edit paid on every store open; a database whose schema is dropped while the process
# runs gets it back at the next process start (the statements are idempotent).
_SCHEMA_DONE: set[tuple[str, str | None]] = set()
_SCHEMA_LOCK = threading.Lock()


def _ensure_schema(driver: Driver, uri: str, database: str | None) -> None:
    """Run the schema statements once per process and database."""
    with _SCHEMA_LOCK:
        if (uri, database) in _SCHEMA_DONE:
            return
        for statement in _SCHEMA:
            driver.execute_query(statement, database_=database)
        _SCHEMA_DONE.add((uri, database))


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
            _ensure_schema(self._driver, uri, database)
        except BaseException:
            self._driver.close()
            raise

    def close(self) -> None:
        self._driver.close()

    def _write(self, work: Callable[[ManagedTransaction], None]) -> None:
        with self._driver.session(database=self._database) as session:
            session.execute_write(work)

    def upsert(self, chunks: Sequence[Chunk], triples: Sequence[Triple],
               titles: Mapping[str, str] | None = None) -> None:
        g = self.generation
        chunk_rows = [
            {"version_key": c.version_key, "doc_id": c.doc_id, "version_id": c.version_id,
             "chunk_id": c.chunk_id, "kind": str(c.kind), "clause_no": c.clause_no or "",
             "title": (titles or {}).get(c.version_key)}
            | visibility_of(c)
            for c in chunks
        ]
        # and the link into each: a changed chunk is deleted first, with the link from an
        # unchanged predecessor, which is not written again
        links = [{"a": a, "b": b} for a, b in sorted(
            {(c.chunk_id, c.next_chunk_id) for c in chunks if c.next_chunk_id}
            | {(c.prev_chunk_id, c.chunk_id) for c in chunks if c.prev_chunk_id})]
        found = {c.chunk_id: visibility_of(c) for c in chunks}

        def work(tx: ManagedTransaction) -> None:
            # Each triple's visibility is its source chunk's: from this upsert, else the stored
            # chunk node; a triple whose chunk is nowhere is stored invisible (tenant '').
            missing = sorted({t.source_chunk_id for t in triples} - set(found))
            for record in tx.run(_CHUNK_VISIBILITY, ids=missing, g=g) if missing else []:
                found[record["chunk_id"]] = record.data()
            triple_rows = [_triple_row(t) | {k: v for k, v in
                                             found.get(t.source_chunk_id, HIDDEN).items()
                                             if k != "chunk_id"}
                           for t in triples]
            for statement, rows in ((_MERGE_CHUNKS, chunk_rows), (_UNLINK_NEXT, chunk_rows),
                                    (_MERGE_NEXT, links),
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
        return self._triples("version", key=version_key)

    def relations(self, predicates: Sequence[str]) -> list[Triple]:
        return self._triples("predicates", predicates=list(predicates))

    def _triples(self, of: str, **params: Any) -> list[Triple]:
        records, _, _ = self._driver.execute_query(
            _TRIPLES_OF[of] + _TRIPLES, parameters_=params, g=self.generation,
            database_=self._database, routing_="r",
        )
        return [Triple(**record.data()) for record in records]

    def chunk_ids(self, version_key: str) -> set[str]:
        records, _, _ = self._driver.execute_query(
            "MATCH (c:Chunk {generation: $g}) WHERE c.version_key = $key RETURN c.chunk_id AS id",
            key=version_key, g=self.generation, database_=self._database, routing_="r",
        )
        return {record["id"] for record in records}

    def reading(self) -> AbstractContextManager[object]:
        """Always connected: nothing to share."""
        return nullcontext()

    def count(self) -> int:
        records, _, _ = self._driver.execute_query(
            "MATCH ()-[e:RELATES {generation: $g}]->() RETURN count(e) AS n",
            g=self.generation, database_=self._database, routing_="r",
        )
        return int(records[0]["n"])

    def paths(self, start: Sequence[str], flt: SearchFilter, *,
              predicates: Sequence[str] | None = None, hops: int = 2,
              direction: Direction = "both", max_nodes: int = 200,
              max_paths: int = 100) -> list[GraphPath]:
        check_limits(start, hops, max_nodes, max_paths, direction, predicates)
        visible = _visible("e", flt)
        if visible is None or not start:
            return []
        predicate, params = visible
        records = self._read(
            "MATCH (n:Entity {generation: $g}) WHERE n.name IN $names "
            "RETURN n.key AS key, n.name AS name, n.type AS type ORDER BY n.key LIMIT $limit",
            names=list(start), limit=max_nodes)
        starts = {r["key"]: GraphNode(name=r["name"], type=r["type"]) for r in records}
        params |= {"all_predicates": predicates is None, "predicates": list(predicates or [])}

        def expand(frontier: list[str], limit: int) -> list[Step]:
            steps = []
            for outgoing in directions(direction):
                records = self._read(_hop(outgoing, predicate),
                                     frontier=frontier, limit=limit, **params)
                steps += [step(record.values(), outgoing) for record in records]
            return best_first(steps, limit)

        return bounded_paths(starts, expand, hops=hops, max_nodes=max_nodes, max_paths=max_paths)

    def clause_chunks(self, clauses: Sequence[tuple[str, str]],
                      flt: SearchFilter) -> dict[tuple[str, str], list[str]]:
        visible = _visible("c", flt)
        if visible is None or not clauses:
            return {}
        predicate, params = visible
        records = self._read(
            _CLAUSE_CHUNKS.replace("VISIBLE", predicate),
            titles=sorted({t for t, _ in clauses}), numbers=clause_numbers(clauses),
            **params)
        return by_clause([r.values() for r in records], clauses)

    def entities(self, tenants: Sequence[str],
                 flt: SearchFilter | None = None) -> list[GraphNode]:
        """Entities with at least one relation of these tenants (for linking query text), and
        one `flt` lets the reader see when given."""
        where, params = "e.tenant_id IN $tenants", {"tenants": list(tenants)}
        if flt is not None:
            visible = _visible("e", flt)
            if visible is None:
                return []
            where, params = visible
        records = self._read(
            "MATCH (n:Entity {generation: $g})-[e:RELATES {generation: $g}]-(:Entity) "
            f"WHERE {where} RETURN DISTINCT n.name AS name, n.type AS type "
            "ORDER BY name, type", **params)
        return [GraphNode(name=r["name"], type=r["type"]) for r in records]

    def _read(self, query: str, **params: Any) -> list[Record]:
        records: list[Record]
        records, _, _ = self._driver.execute_query(
            query, g=self.generation, database_=self._database, routing_="r", **params)
        return records

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
