"""Citation questions over the graph: who cites a document (or one of its articles), and what
it cites, each answer with the clause that states it and the graph path.

    asked title ─► resolved through the graph's document titles (graph/titles.py: 《公司法》 finds
    中华人民共和国公司法) ─► the document's entity and its clause entities (《T》第N条)
    ─► one hop of 引用/引用条款 in (who cites) and out (what it cites), read per start entity
    so a much-cited law is not cut at a path cap ─► incoming grouped by citing document, each
    citing clause with its surface form and resolution rule; outgoing with the cited clause's
    own text (two hops: a clause → the cited clause → what it says)

Every relation read is visibility-filtered by the store, as every graph read is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Literal

from pydantic import BaseModel

from ingest.config import Settings
from ingest.graph.link import article_spellings
from ingest.graph.titles import COUNTRY, TitleIndex, loose, loose_brackets
from ingest.manifest import ManifestStore
from ingest.models import Chunk, GraphPath, SearchFilter
from ingest.scopes import TenantTree
from ingest.stores import open_graph
from ingest.stores.graph_paths import MAX_NODES, MAX_PATHS
from ingest.stores.protocols import GraphStore

PREDICATES = ("引用", "引用条款")
_CLAUSE = re.compile(r"^《(.+)》(.+)$")
_ASKED = re.compile(r"\s*(第[^第]+条)$")  # 《title》第N条: the article asked about
SNIPPET = 160  # characters of a clause's text shown with a citation
BATCH = 50  # start entities read together


class CitingClause(BaseModel):
    """One citation: where it is written and what it says it cites."""

    chunk_id: str
    doc_id: str
    version_id: str
    clause_no: str | None  # the citing clause (None: a chunk outside any numbered clause)
    cited: str  # the cited document or clause entity (《T》第N条)
    surface: str  # as the text wrote it
    rule: str  # how its title resolved (graph/titles.py)
    confidence: float
    text: str = ""  # the citing chunk's text, shortened


class CitingDocument(BaseModel):
    title: str
    doc_id: str
    clauses: list[CitingClause]


class CitedTarget(BaseModel):
    """Something the asked document cites, with the cited clause's own text when it has one."""

    cited: str  # document title or clause entity
    document: str  # the cited document's title (or the written title when it dangles)
    citation: CitingClause
    target_chunks: list[str] = []
    target_text: str = ""


class CitationAnswer(BaseModel):
    asked: str
    title: str | None  # the document the asked name resolved to (None: none in the graph)
    rule: str  # how it resolved
    article: str | None
    incoming: list[CitingDocument]
    outgoing: list[CitedTarget]
    truncated: bool = False  # a start entity had more relations than one read returns

    @property
    def citing_titles(self) -> list[str]:
        return [d.title for d in self.incoming]


# The published chunks by id (ManifestStore.chunks): the citing and cited clauses' text.
ChunkLookup = Callable[[set[str]], Mapping[str, Chunk]]


def citation_answer(graph: GraphStore, chunks_of: ChunkLookup, asked: str,
                    flt: SearchFilter) -> CitationAnswer:
    """Who cites `asked` (a title, 《title》, or 《title》第N条) and what it cites; a title no
    document holds is answered by the citations that name it (a repealed law)."""
    text = unicodedata.normalize("NFKC", asked).strip()
    match = _ASKED.search(text)
    article = match.group(1) if match else None
    name = loose_brackets(text[:match.start()] if match else text)
    entities = graph.entities(flt.tenants)
    titles = TitleIndex([e.name for e in entities if e.type == "Document"]
                        + [m.group(1) for e in entities if (m := _CLAUSE.match(e.name))])
    found = titles.resolve(name)
    if found.title is None:
        return CitationAnswer(asked=asked, title=None, rule=found.rule, article=article,
                              incoming=[], outgoing=[])
    title = found.title
    # every spelling of the title the graph holds: 〈〉 or 《》 nested inside it, with or without
    # the country name (a law no corpus title resolves, a repealed one, is cited both as
    # 《物权法》 and as 《中华人民共和国物权法》)
    same = {e.name for e in entities if e.type == "Document" and _key(e.name) == _key(title)}
    wanted = article_spellings(article) if article else None
    clauses = sorted(e.name for e in entities if e.type == "Clause"
                     and (m := _CLAUSE.match(e.name)) and _key(m.group(1)) == _key(title)
                     and (wanted is None or m.group(2) in wanted))
    starts = clauses if article else [*sorted(same | {title}), *clauses]
    incoming, cut_in = _walk(graph, starts, flt, "in")
    # what an article cites includes the documents it names without an article: 引用 edges
    # leave the document entity, from that article's chunks
    outgoing, cut_out = _walk(graph, [*sorted(same | {title}), *clauses], flt, "out")
    chunks = chunks_of({p.relations[0].source_chunk_id for p in incoming + outgoing})
    if article:
        outgoing = [p for p in outgoing if p.relations[0].predicate == "引用条款"
                    or ((c := chunks.get(p.relations[0].source_chunk_id)) is not None
                    and c.clause_no in (wanted or ()))]

    def citation(path: GraphPath, cited: str) -> CitingClause:
        r = path.relations[0]
        chunk = chunks.get(r.source_chunk_id)
        return CitingClause(
            chunk_id=r.source_chunk_id, doc_id=r.doc_id, version_id=r.version_id,
            clause_no=chunk.clause_no if chunk else None, cited=cited, surface=r.surface,
            rule=r.rule, confidence=r.confidence,
            text=" ".join(chunk.text.split())[:SNIPPET] if chunk else "")

    by_doc: dict[str, CitingDocument] = {}
    for path in incoming:
        r = path.relations[0]
        citing = _document(r.subject)
        if _key(citing) == _key(title):
            continue  # the document's own article references
        entry = by_doc.setdefault(r.doc_id, CitingDocument(title=citing, doc_id=r.doc_id,
                                                           clauses=[]))
        entry.clauses.append(citation(path, path.nodes[0].name))
    targets = [CitedTarget(cited=p.nodes[1].name, document=_document(p.nodes[1].name),
                           citation=citation(p, p.nodes[1].name)) for p in outgoing]
    _cited_text(graph, chunks_of, targets, flt)
    for entry in by_doc.values():
        entry.clauses.sort(key=lambda c: (c.clause_no or "", c.chunk_id, c.cited))
    return CitationAnswer(
        asked=asked, title=title, rule=found.rule, article=article,
        incoming=sorted(by_doc.values(), key=lambda d: (-len(d.clauses), d.title)),
        outgoing=sorted(targets, key=lambda t: (t.citation.clause_no or "", t.cited)),
        truncated=cut_in or cut_out)


def _walk(graph: GraphStore, starts: Sequence[str], flt: SearchFilter,
          direction: Literal["in", "out"]) -> tuple[list[GraphPath], bool]:
    """One hop of citations from the start entities, read a batch at a time; a batch that
    fills a read is read again one entity at a time, so no entity is cut by its neighbours."""
    found: list[GraphPath] = []
    truncated = False

    def read(names: Sequence[str]) -> list[GraphPath]:
        return graph.paths(names, flt, predicates=PREDICATES, hops=1, direction=direction,
                           max_nodes=MAX_NODES, max_paths=MAX_PATHS)

    for at in range(0, len(starts), BATCH):
        batch = starts[at:at + BATCH]
        paths = read(batch)
        if len(paths) >= MAX_PATHS:
            paths = [p for name in batch for p in read([name])]
            truncated |= any(len(read([name])) >= MAX_PATHS for name in batch)
        found += paths
    return found, truncated


def _cited_text(graph: GraphStore, chunks_of: ChunkLookup, targets: list[CitedTarget],
                flt: SearchFilter) -> None:
    """The cited clauses' own chunks and text, in the versions `flt` sees (its business date)."""
    refs = sorted({(m.group(1), m.group(2)) for t in targets
                   if (m := _CLAUSE.match(t.cited))})
    if not refs:
        return
    found = graph.clause_chunks(refs, flt)
    chunks = chunks_of({c for ids in found.values() for c in ids})
    for target in targets:
        match = _CLAUSE.match(target.cited)
        ids = found.get((match.group(1), match.group(2)), []) if match else []
        target.target_chunks = ids
        target.target_text = " ".join(" ".join(chunks[c].text.split()) for c in ids
                                      if c in chunks)[:SNIPPET * 2]


def _key(title: str) -> str:
    return loose(loose_brackets(title)).removeprefix(COUNTRY)


def _document(name: str) -> str:
    """The document an entity belongs to: a clause's title, or the title itself."""
    match = _CLAUSE.match(name)
    return match.group(1) if match else name


def citations_for(settings: Settings, asked: str, *, tenant_id: str, groups: list[str],
                  as_of: date) -> CitationAnswer:
    """`kbflow graph --citations`: the answer over the serving generation, as the reader sees
    it on the business date `as_of`."""
    manifest = ManifestStore(settings.manifest)
    try:
        if manifest.generation is None:
            return CitationAnswer(asked=asked, title=None, rule="dangling:not_in_corpus",
                                  article=None, incoming=[], outgoing=[])
        flt = SearchFilter(tenant_id=tenant_id, groups=groups, as_of=as_of,
                           ancestors=TenantTree.load(settings).ancestors(tenant_id),
                           hidden_keys=manifest.hidden_keys())
        graph = open_graph(settings, manifest.generation)
        try:
            with graph.reading():
                return citation_answer(graph, manifest.chunks, asked, flt)
        finally:
            graph.close()
    finally:
        manifest.close()
