"""Published citations resolved again when the corpus's titles change (issue #44).

A citation is resolved when its chunk is written, through the titles the corpus has then. A
document that arrives later makes the earlier dangling citations of it resolvable; a document
deleted leaves the edges to it naming a title no document holds. Either way the citing document
has not changed, so it is not ingested again: the versions with such a citation have their rule
triples extracted again from their manifest chunk records through the current titles (no parse,
no embedding), and the chunks whose citations come out otherwise are rewritten in the graph,
other extractors' triples of them kept. A citation of a deleted document dangles again
(not_in_corpus) under the name it was written with.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ingest.graph import EXTRACTOR, extract_triples
from ingest.graph.normalize import canonical
from ingest.graph.titles import TitleIndex
from ingest.manifest import ManifestStore
from ingest.models import ChunkKind, State, Triple, version_key
from ingest.stores.protocols import GraphStore

CITES = ("引用", "引用条款")  # the rule extractor's citation predicates
_CLAUSE = re.compile(r"^《(.+)》")


def cited_name(triple: Triple) -> str:
    """The title a citation's object names: 《X》第N条 → X, a document X → X."""
    match = _CLAUSE.match(triple.object) if triple.predicate == "引用条款" else None
    return match.group(1) if match else triple.object


def stale(triples: Sequence[Triple], titles: TitleIndex, gone: Collection[str]) -> set[str]:
    """Version keys with a citation the current `titles` may resolve otherwise: a dangling one
    whose name now resolves, or one resolved to a title in `gone` (canonical titles that no
    document holds any more)."""
    keys = set()
    for t in triples:
        if t.extractor != EXTRACTOR or t.predicate not in CITES:
            continue
        name, dangling = cited_name(t), t.rule.startswith("dangling:")
        if (titles.resolve(name).title is not None) if dangling else name in gone:
            keys.add(version_key(t.doc_id, t.version_id))
    return keys


def relink(manifest: ManifestStore, graph: GraphStore, before: set[str],
           skip: Collection[str] = (), also: Collection[str] = ()) -> list[str]:
    """Re-resolve the published citations that the change from the titles `before` to the
    manifest's titles now affects, except in the versions `skip` (written through the new
    titles already), and those of the versions `also` (that may name a new title without 《》
    or article: such a mention that resolved to nothing left no triple to find); returns the
    version keys whose graph rows changed."""
    after = manifest.titles()
    gone = {canonical(t) for t in before} - {canonical(t) for t in after}
    if after <= before and not gone and not also:
        return []
    titles = TitleIndex(after)
    keys = (stale(graph.relations(CITES), titles, gone) | set(also)) - set(skip)
    published = {r.version_key: r for r in manifest.documents()
                 if r.version_key in keys and r.state == State.READY}
    changed = []
    for key, record in sorted(published.items()):
        if _rewrite(manifest, graph, record.doc_id, record.version_id, record.title or "",
                    titles):
            changed.append(key)
    return changed


def _rewrite(manifest: ManifestStore, graph: GraphStore, doc_id: str, version_id: str,
             title: str, titles: TitleIndex) -> bool:
    """One version's chunks whose rule triples differ through `titles`, rewritten."""
    chunks = sorted(manifest.version_chunks(doc_id, version_id),
                    key=lambda c: (c.char_start, c.char_end))  # reading order: cut titles
    articles = {c.clause_no for c in chunks if c.clause_no}
    stored = graph.triples(version_key(doc_id, version_id))
    fresh = extract_triples(chunks, title, titles, articles)

    def rules(triples: Sequence[Triple], chunk_id: str) -> set[tuple[str, ...]]:
        return {(t.subject, t.predicate, t.object, t.rule) for t in triples
                if t.source_chunk_id == chunk_id and t.extractor == EXTRACTOR}

    ids = {c.chunk_id for c in chunks if c.kind != ChunkKind.PARENT
           and rules(stored, c.chunk_id) != rules(fresh, c.chunk_id)}
    if not ids:
        return False
    kept = [t for t in stored if t.source_chunk_id in ids and t.extractor != EXTRACTOR]
    # the chunks before the rewritten ones too: their NEXT link to them goes with the delete
    rewritten = [c for c in chunks if c.chunk_id in ids or c.next_chunk_id in ids]
    graph.delete_chunks(sorted(ids))
    graph.upsert(rewritten, kept + [t for t in fresh if t.source_chunk_id in ids],
                 {version_key(doc_id, version_id): canonical(title)} if title else None)
    return True
