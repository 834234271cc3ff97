"""The graph as a retrieval channel: relation and multi-hop questions answered by paths.

    query ─► link entities (ingest/graph/link.py) ─► route: relation intent → allowed relations,
    direction, hops ─► bounded, visibility-filtered path search (GraphStore.paths) ─► score each
    path ─► its relations' source chunks, ranked, each with the path that led to it

A query with no linked entity reaches the store only when it asks about a clause another text
mentions ("SEC-2001 的处理方式里提到的那条规定"): the walk then starts from the clauses the text
rankings found best (their own 引用条款 relations). A query without relation intent never
reaches the store, whatever entities it names: measured on the eval, a one-hop walk from a bare
entity mention ("部门负责人住宿标准") found nothing new and pushed right answers down (MRR −0.02).
Every chunk returned is the source of a relation the reader may see: a relation never stands
alone as a fact, it always leads back to the clause that states it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import NamedTuple

from pydantic import BaseModel

from ingest.config import Settings
from ingest.graph.link import EntityIndex, Link
from ingest.graph.normalize import canonical
from ingest.manifest import ManifestStore
from ingest.models import GraphPath, SearchFilter
from ingest.scopes import TenantTree
from ingest.stores import open_graph
from ingest.stores.graph_paths import Direction
from ingest.stores.protocols import GraphStore


@dataclass(frozen=True)
class Route:
    """What the graph channel is asked to walk for one query."""

    intent: str  # cited_by, cites, clause_ref, approves or related
    predicates: tuple[str, ...] | None  # None: every relation type
    direction: Direction
    hops: int
    weight: float  # the graph list's RRF weight (BM25 and dense have 1)


# First match wins: the more specific phrasings come first. Weights from the per-tag eval on
# eval/sample_cases.jsonl (Recall@5): an explicit relation question at 2 lifts relation and
# multi-hop with no tag lower than without the graph (1 lifts nothing, 1.5 less, 3 no more).
_INTENTS: list[tuple[re.Pattern[str], Route]] = [
    (re.compile(r"条款|哪条|那条|哪一条|第\S{1,6}条.{0,10}(提到|引用|援引|所指|规定)"),
     Route("clause_ref", ("引用条款",), "both", 2, 2.0)),
    (re.compile(r"(哪些|什么|哪个|哪份|谁).{0,10}(引用|援引|提到|参照)|被.{0,12}(引用|援引)"),
     Route("cited_by", ("引用",), "in", 2, 2.0)),
    (re.compile(r"(引用|援引|参照)了?(哪些|什么|哪)|依据|根据(哪|什么)|上位"),
     Route("cites", ("引用",), "out", 2, 2.0)),
    (re.compile(r"谁.{0,4}(审批|批准|审核|签批|核准|批)|审批人|审批权限|由谁|"
                r"(审批|批准|审核)(哪些|什么)|(需要|要|须|需).{0,6}(审批|批准)"),
     Route("approves", ("审批",), "both", 1, 2.0)),
    (re.compile(r"相关|有关|关联|哪些(制度|文件|规定|办法)"),
     Route("related", None, "both", 2, 1.6)),
]
PRIORS = {"引用": 1.0, "引用条款": 1.0, "审批": 0.9}  # relation types the extractors state best
LENGTH_DECAY = 0.5  # each hop past the first halves a path's score
CLAUSE_TEXT = 0.9  # a reached clause's own text, just below the clause that cites it
SEEDS = 3  # text hits a clause question starts from
SEED_SCORE = 0.9  # a seed's entity match: text rank 1 as sure as a named title, then 1/rank
_CLAUSE_NAME = re.compile(r"^《(.+)》(.+)$")


# (chunk_id, clause entity name) of the best text hits, best first; called only when needed.
Seeds = Callable[[], list[tuple[str, str]]]


class GraphHit(NamedTuple):
    chunk_id: str
    score: float
    path: GraphPath


def route(query: str, links: list[Link], seeded: bool = False) -> Route | None:
    """The walk a query asks for, or None: no relation intent, or no linked entity to start
    from (a clause question may start from `seeded` text hits instead)."""
    text = unicodedata.normalize("NFKC", query)
    for link in sorted(links, key=lambda link: -len(link.surface)):
        if link.type != "Clause":  # 审批权限表 names a document, not an approval question
            text = text.replace(link.surface, "□")
    for pattern, intent in _INTENTS:
        if pattern.search(text):
            return intent if links or (seeded and intent.intent == "clause_ref") else None
    return None


def score_path(path: GraphPath, link: Link, intent: Route) -> float:
    """Entity match × relation prior × extractor confidence × intent weight, halved per hop."""
    score = link.score * intent.weight * LENGTH_DECAY ** (len(path.relations) - 1)
    for relation in path.relations:
        score *= PRIORS.get(relation.predicate, 0.6) * relation.confidence
    return score


class GraphChannel:
    """Graph retrieval over one open graph store (one generation). A reader links its query
    against the entities of the relations it may see (tenant, groups, date, published
    versions), never the tenant's whole vocabulary: whether a guessed name links (and a graph
    route is taken) would otherwise tell whether a restricted document states it. The last
    MAX_READERS readers' indexes are kept until the graph changes (its relation count)."""

    MAX_READERS = 32

    def __init__(self, graph: GraphStore, max_paths: int = 100, max_nodes: int = 200) -> None:
        self._graph = graph
        self._max_paths = max_paths
        self._max_nodes = max_nodes
        self._indexes: dict[tuple[object, ...], tuple[int, EntityIndex]] = {}

    def entity_index(self, flt: SearchFilter) -> EntityIndex:
        size = self._graph.count()
        reader = (tuple(flt.tenants), tuple(sorted(flt.groups)), flt.as_of,
                  frozenset(flt.hidden_keys))
        cached = self._indexes.pop(reader, None)
        if cached is None or cached[0] != size:
            cached = (size, EntityIndex(self._graph.entities(flt.tenants, flt)))
        self._indexes[reader] = cached  # the most recent last
        while len(self._indexes) > self.MAX_READERS:
            del self._indexes[next(iter(self._indexes))]
        return cached[1]

    def search(self, query: str, flt: SearchFilter, k: int = 20,
               seeds: Seeds | None = None) -> tuple[Route | None, list[GraphHit]]:
        """The route taken (None: skipped) and up to k chunks, best first, each with the
        best-scoring path that reached it. A query without relation words costs nothing."""
        text = unicodedata.normalize("NFKC", query)
        if not any(pattern.search(text) for pattern, _ in _INTENTS):
            return None, []
        with self._graph.reading():  # one open of an embedded graph file for all reads
            return self._search(query, flt, k, seeds)

    def _search(self, query: str, flt: SearchFilter, k: int,
                seeds: Seeds | None) -> tuple[Route | None, list[GraphHit]]:
        links = self.entity_index(flt).link(query)
        intent = route(query, links, seeded=seeds is not None)
        if intent is None:
            return None, []
        start = {link.name: link for link in links}
        paths = self._graph.paths(
            sorted(start), flt, predicates=intent.predicates, hops=intent.hops,
            direction=intent.direction, max_nodes=self._max_nodes, max_paths=self._max_paths,
        ) if start else []
        scored = [(path, score_path(path, start[path.nodes[0].name], intent)) for path in paths]
        if intent.intent == "clause_ref" and seeds is not None:
            scored += self._from_seeds(seeds()[:SEEDS], flt, intent)
        clauses = self._graph.clause_chunks(
            sorted({ref for path, _ in scored for ref in _clause_refs(path)}), flt)
        best: dict[str, GraphHit] = {}

        def keep(chunk_id: str, score: float, path: GraphPath) -> None:
            if chunk_id not in best or score > best[chunk_id].score:
                best[chunk_id] = GraphHit(chunk_id, score, path)

        for path, score in scored:
            for relation in path.relations:
                keep(relation.source_chunk_id, score, path)
            # A clause the path reaches (《差旅费管理办法》第十条) is answered by its own text.
            for ref in _clause_refs(path):
                for chunk_id in clauses.get(ref, []):
                    keep(chunk_id, score * CLAUSE_TEXT, path)
        ranked = sorted(best.values(), key=lambda hit: (-hit.score, hit.chunk_id))
        return intent, ranked[:k]

    def _from_seeds(self, seeds: Sequence[tuple[str, str]], flt: SearchFilter,
                    intent: Route) -> list[tuple[GraphPath, float]]:
        """One hop of 引用条款 from each seed clause, over the relations the seed chunk itself
        states (a table's other rows share its clause entity, not its references)."""
        rank: dict[tuple[str, str], int] = {}
        for position, (chunk_id, name) in enumerate(seeds, start=1):
            rank.setdefault((name, chunk_id), position)
        if not rank:
            return []
        paths = self._graph.paths(sorted({name for name, _ in rank}), flt,
                                  predicates=("引用条款",), direction="out", hops=1,
                                  max_nodes=self._max_nodes, max_paths=self._max_paths)
        scored = []
        for path in paths:
            seat = rank.get((path.nodes[0].name, path.relations[0].source_chunk_id))
            if seat:
                seed = Link(path.nodes[0].name, "Clause", "", SEED_SCORE / seat)
                scored.append((path, score_path(path, seed, intent)))
        return scored


def seed_clauses(manifest: ManifestStore, chunk_ids: Sequence[str]) -> list[tuple[str, str]]:
    """The clause entity each chunk is (《title》clause_no, as the extractors name it)."""
    chunks = manifest.chunks(chunk_ids)
    seeds = []
    for chunk_id in chunk_ids:
        chunk = chunks.get(chunk_id)
        record = manifest.get(chunk.doc_id, chunk.version_id) if chunk and chunk.clause_no else None
        if chunk and record and record.title:
            seeds.append((chunk_id, canonical(f"《{record.title}》{chunk.clause_no}")))
    return seeds


def _clause_refs(path: GraphPath) -> list[tuple[str, str]]:
    """(title, clause number) of every clause entity on the path past its start."""
    refs = []
    for node in path.nodes[1:]:
        match = _CLAUSE_NAME.match(node.name) if node.type == "Clause" else None
        if match:
            refs.append((match.group(1), match.group(2)))
    return refs


def describe(path: GraphPath) -> str:
    """One readable line: 审批权限表 ←引用― 差旅费管理办法 [chunk …, travel-expense@2026]."""
    parts = [path.nodes[0].name]
    for before, node, relation in zip(path.nodes, path.nodes[1:], path.relations, strict=False):
        forward = (relation.subject, relation.object) == (before.name, node.name)
        arrow = f"―{relation.predicate}→" if forward else f"←{relation.predicate}―"
        parts.append(f"{arrow} {node.name} [{relation.source_chunk_id} "
                     f"{relation.doc_id}@{relation.version_id}]")
    return " ".join(parts)


class SourceClause(BaseModel):
    """Where a relation was stated: the chunk, its document version and clause."""

    chunk_id: str
    doc_id: str
    version_id: str
    clause_no: str | None
    text: str


class EntityRelations(BaseModel):
    """`kbflow graph ENTITY`: the entity's visible paths and the clauses they came from."""

    entity: str
    start: list[str]  # the entity names the walk started from
    hops: int
    paths: list[GraphPath]
    sources: dict[str, SourceClause]  # source chunk id → its clause


def entity_relations(settings: Settings, entity: str, *, tenant_id: str, groups: list[str],
                     as_of: date, hops: int = 2, max_paths: int = 200) -> EntityRelations:
    """Every relation path of an entity the reader may see in the serving generation. The name
    is taken canonically (《审批权限表》 = 审批权限表); a name the graph does not hold is linked
    (部门主管 → 部门负责人, 差旅费管理办法第16条 → its clause)."""
    manifest = ManifestStore(settings.manifest)
    try:
        if manifest.generation is None:
            return EntityRelations(entity=entity, start=[], hops=hops, paths=[], sources={})
        flt = SearchFilter(tenant_id=tenant_id, groups=groups, as_of=as_of,
                           ancestors=TenantTree.load(settings).ancestors(tenant_id),
                           hidden_keys=manifest.hidden_keys())
        graph = open_graph(settings, manifest.generation)
        try:
            index = EntityIndex(graph.entities(flt.tenants, flt))
            start = [canonical(entity)] if canonical(entity) in index.by_name else sorted(
                {link.name for link in index.link(entity)})
            paths = graph.paths(start, flt, hops=hops, max_paths=max_paths) if start else []
        finally:
            graph.close()
        chunks = manifest.chunks({r.source_chunk_id for p in paths for r in p.relations})
    finally:
        manifest.close()
    sources = {cid: SourceClause(chunk_id=cid, doc_id=c.doc_id, version_id=c.version_id,
                                 clause_no=c.clause_no, text=c.text)
               for cid, c in chunks.items()}
    return EntityRelations(entity=entity, start=start, hops=hops, paths=paths, sources=sources)
