"""The Citations part of a document's console page: `kbflow graph --citations`'s own answer
(ingest/search/citations.py, read for the key's tenant and groups), with a link for each
document and clause the reader may open.

The graph store filters every relation it reads by tenant and groups; each listed document is
checked again here by the rule the console's document pages apply (views.versions), so a
citing document the reader could not open is not listed at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flows.console import views
from ingest.config import Settings
from ingest.graph.normalize import canonical
from ingest.manifest import ManifestStore
from ingest.manifest.records import DocumentRecord
from ingest.models import SearchFilter
from ingest.search.citations import CitedTarget, CitingDocument, citations_for

DANGLING = "dangling:"


@dataclass
class Cite:
    """One citation the document writes: where the cited text is (None: not one the reader
    may open, or dangling, then `dangling` says why)."""

    target: CitedTarget
    dangling: str | None = None
    doc_id: str | None = None
    version_id: str | None = None
    chunk_id: str | None = None


@dataclass
class Citations:
    title: str  # the document the page's title resolved to in the graph
    rule: str
    cited_by: list[CitingDocument]
    cites: list[Cite]
    truncated: bool


def citations(settings: Settings, manifest: ManifestStore, reader: SearchFilter,
              record: DocumentRecord) -> Citations | None:
    """Who cites `record`'s document and what it cites, as its reader sees them on their
    business date; None when its title names no document in the graph."""
    if not record.title:
        return None
    found = citations_for(settings, record.title, tenant_id=reader.tenant_id,
                          groups=list(reader.groups), as_of=reader.as_of)
    if found.title is None:
        return None

    opens: dict[str, dict[str, DocumentRecord]] = {}

    def may_open(doc_id: str, version_id: str) -> bool:
        if doc_id not in opens:
            opens[doc_id] = {r.version_id: r for r in views.versions(manifest, reader, doc_id)}
        return version_id in opens[doc_id]

    cited_by = []
    for doc in found.incoming:
        clauses = [c for c in doc.clauses if c.doc_id != record.doc_id
                   and may_open(c.doc_id, c.version_id)]
        if clauses:  # titled as its page is (the graph's name is canonical: no spaces)
            title = opens[doc.doc_id].get(clauses[0].version_id)
            cited_by.append(doc.model_copy(update={
                "clauses": clauses, "title": title.title if title and title.title else doc.title}))
    titled: dict[str, DocumentRecord] = {}

    def by_title(title: str) -> DocumentRecord | None:
        """The newest version the reader may open of the document the graph calls `title`
        (a document entity is its version's title, canonical)."""
        if not titled:
            for r in sorted(manifest.documents(), key=views.in_force_order):
                if r.title and reader.admits(r.tenant_id, r.acl):
                    titled[canonical(r.title)] = r  # newest last: it stays
        return titled.get(canonical(title))

    cites = [_cite(manifest, t, may_open, by_title) for t in found.outgoing
             if t.citation.doc_id == record.doc_id]
    return Citations(title=found.title, rule=found.rule, cited_by=cited_by, cites=cites,
                     truncated=found.truncated)


def _cite(manifest: ManifestStore, target: CitedTarget, may_open: Callable[[str, str], bool],
          by_title: Callable[[str], DocumentRecord | None]) -> Cite:
    """Where a citation leads: the cited clause's chunk, else the cited document."""
    if target.citation.rule.startswith(DANGLING):
        return Cite(target, dangling=target.citation.rule.removeprefix(DANGLING))
    chunks = manifest.chunks(set(target.target_chunks))
    for chunk_id in target.target_chunks:
        chunk = chunks.get(chunk_id)
        if chunk is not None and may_open(chunk.doc_id, chunk.version_id):
            return Cite(target, doc_id=chunk.doc_id, version_id=chunk.version_id,
                        chunk_id=chunk_id)
    found = by_title(target.document)
    return Cite(target, doc_id=found.doc_id, version_id=found.version_id) if found \
        else Cite(target)
