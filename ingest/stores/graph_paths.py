"""Bounded path search shared by the graph stores: a breadth-first walk, one visibility-filtered
Cypher query per hop and direction (the store's), grown into paths here.

Why hop by hop instead of one variable-length MATCH: the caps then hold exactly and the same way
on both engines. Each hop reads at most `max_paths` relations (best confidence first), a walk
never revisits a node, and no more than `max_nodes` distinct entities (start nodes included) are
ever reached, so a hub with thousands of relations costs one bounded query, not an explosion of
paths through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

from ingest.graph.link import article_spellings
from ingest.models import OPEN_END, OPEN_START, Chunk, GraphNode, GraphPath, Triple, day_number

Direction = Literal["out", "in", "both"]
MAX_HOPS = 4
MAX_PATHS = 1000
MAX_NODES = 5000
# Columns every store's hop query returns, in this order ("a" is the frontier node, "b" the next).
HOP_COLUMNS = ("a_key", "a_name", "a_type", "b_key", "b_name", "b_type", "predicate",
               "source_chunk_id", "doc_id", "version_id", "extractor", "confidence", "surface",
               "rule")
# What a relation whose source chunk is unknown gets: no reader's tenant is ''.
HIDDEN = {"tenant_id": "", "acl": [], "eff_from": 0, "eff_to": 0}


class Step(NamedTuple):
    """One relation leaving a frontier node: where it leads and the relation itself."""

    from_key: str
    to_key: str
    node: GraphNode
    relation: Triple


def visibility_of(chunk: Chunk) -> dict[str, Any]:
    """What a chunk node and every relation it sources store to be filtered on."""
    return {"tenant_id": chunk.tenant_id, "acl": list(chunk.acl),
            "eff_from": day_number(chunk.effective_from, OPEN_START),
            "eff_to": day_number(chunk.effective_to, OPEN_END)}


def check_limits(start: Sequence[str], hops: int, max_nodes: int, max_paths: int,
                 direction: str, predicates: Sequence[str] | None) -> None:
    """A query's limits come from callers (CLI flags, routing): refuse what could run away."""
    if not 1 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be between 1 and {MAX_HOPS}, not {hops}")
    if not 1 <= max_nodes <= MAX_NODES:
        raise ValueError(f"max_nodes must be between 1 and {MAX_NODES}, not {max_nodes}")
    if not 1 <= max_paths <= MAX_PATHS:
        raise ValueError(f"max_paths must be between 1 and {MAX_PATHS}, not {max_paths}")
    if direction not in ("out", "in", "both"):
        raise ValueError(f"direction must be out, in or both, not {direction!r}")
    if any(not isinstance(name, str) for name in start):
        raise ValueError("start entities must be names (strings)")
    if predicates is not None and any(not isinstance(p, str) for p in predicates):
        raise ValueError("predicates must be strings")


def directions(direction: Direction) -> tuple[bool, ...]:
    """Which hop queries to run: True for relations leaving the frontier node."""
    return {"out": (True,), "in": (False,), "both": (True, False)}[direction]


def step(row: Sequence[Any], outgoing: bool) -> Step:
    """A hop query's row (HOP_COLUMNS) as a step; the triple keeps the stored direction."""
    r = dict(zip(HOP_COLUMNS, row, strict=True))
    a, b = (r["a_name"], r["a_type"]), (r["b_name"], r["b_type"])
    (subject, subject_type), (obj, object_type) = (a, b) if outgoing else (b, a)
    relation = Triple(
        subject=subject, subject_type=subject_type, predicate=r["predicate"], object=obj,
        object_type=object_type, source_chunk_id=r["source_chunk_id"], doc_id=r["doc_id"],
        version_id=r["version_id"], extractor=r["extractor"], confidence=r["confidence"],
        surface=r["surface"] or "", rule=r["rule"] or "",
    )
    return Step(r["a_key"], r["b_key"], GraphNode(name=r["b_name"], type=r["b_type"]), relation)


def best_first(steps: list[Step], limit: int) -> list[Step]:
    """Both directions' rows in one order: confidence, then stable identifiers."""
    steps.sort(key=lambda s: (-s.relation.confidence, s.to_key, s.relation.source_chunk_id))
    return steps[:limit]


def bounded_paths(starts: dict[str, GraphNode], expand: Callable[[list[str], int], list[Step]],
                  *, hops: int, max_nodes: int, max_paths: int) -> list[GraphPath]:
    """Every simple path of 1..hops relations from `starts` within the caps, shortest first.

    `expand(frontier_keys, limit)` returns at most `limit` visible relations leaving those
    nodes, best first."""
    seen = set(list(starts)[:max_nodes])
    frontier = [([key], GraphPath(nodes=[starts[key]], relations=[])) for key in seen]
    frontier.sort(key=lambda item: item[0])
    found: list[GraphPath] = []
    for _ in range(hops):
        ends = sorted({keys[-1] for keys, _ in frontier})
        if not ends or len(found) >= max_paths:
            break
        leaving: dict[str, list[Step]] = {}
        for s in expand(ends, max_paths):
            leaving.setdefault(s.from_key, []).append(s)
        grown = []
        for keys, path in frontier:
            for s in leaving.get(keys[-1], []):
                if s.to_key in keys:
                    continue
                if s.to_key not in seen:
                    if len(seen) >= max_nodes:
                        continue
                    seen.add(s.to_key)
                grown.append(([*keys, s.to_key], GraphPath(
                    nodes=[*path.nodes, s.node], relations=[*path.relations, s.relation])))
        grown = grown[: max_paths - len(found)]
        found += [path for _, path in grown]
        frontier = grown
    return found


def clause_numbers(clauses: Sequence[tuple[str, str]]) -> list[str]:
    """Every spelling of the asked-for clause numbers (第12条 finds a clause headed 第十二条)."""
    return sorted({s for _, number in clauses for s in article_spellings(number)})


def by_clause(rows: Sequence[Sequence[Any]], clauses: Sequence[tuple[str, str]],
              ) -> dict[tuple[str, str], list[str]]:
    """(title, clause_no, chunk_id) rows grouped by the asked-for (title, clause_no) pairs
    (the query matched titles and numbers separately; numbers in either spelling)."""
    wanted: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for title, number in clauses:
        for spelling in article_spellings(number):
            wanted.setdefault((title, spelling), []).append((title, number))
    found: dict[tuple[str, str], list[str]] = {}
    for title, number, chunk_id in rows:
        for asked in dict.fromkeys(wanted.get((title, number), [])):
            found.setdefault(asked, []).append(chunk_id)
    return found
