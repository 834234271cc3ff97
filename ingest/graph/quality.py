"""How good is the graph a run wrote? Three numbers every run summary carries.

- triples per extractor: a rule change or an LLM outage shows as a drop in one extractor's count;
- the share of entities that more than one document mentions: the graph connects documents only
  through those (near 0 means every document is an island: names are not canonical);
- dangling references: a cited 《…》 that resolves to no ingested title, counted by reason
  (graph/titles.py: ambiguous, generic, form, not_in_corpus); a relation without a resolution
  rule (the LLM extractor's) dangles when its object is no ingested title.
With the LLM extractor, `llm` adds what happened to its requests and replies: chunks asked and
cached, failed requests, unusable replies, triples kept, and triples dropped by reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, Field

from ingest.graph.normalize import canonical
from ingest.models import Triple

MAX_LISTED = 50  # dangling titles listed by name (the count covers all of them)


class GraphQuality(BaseModel):
    triples_per_extractor: dict[str, int] = Field(default_factory=dict)
    entities: int = 0
    multi_document_entities: int = 0
    multi_document_share: float = 0.0
    dangling_count: int = 0  # distinct cited titles that match no ingested title
    dangling_references: dict[str, int] = Field(default_factory=dict)  # title → citing relations
    dangling_kinds: dict[str, int] = Field(default_factory=dict)  # reason → citing relations
    llm: dict[str, int] = Field(default_factory=dict)  # the LLM extractor's tally, by event


def graph_quality(triples: Iterable[Triple], titles: Iterable[str | None],
                  llm: Mapping[str, int] | None = None) -> GraphQuality:
    """Quality of `triples` (a run's written relations) against every ingested title."""
    triples = list(triples)
    known = {canonical(t) for t in titles if t}
    documents: dict[tuple[str, str], set[str]] = {}
    for t in triples:
        documents.setdefault((t.subject_type, t.subject), set()).add(t.doc_id)
        documents.setdefault((t.object_type, t.object), set()).add(t.doc_id)
    shared = sum(1 for docs in documents.values() if len(docs) > 1)
    # a title ingested after the citing document was extracted no longer dangles
    unresolved = [t for t in triples if t.predicate == "引用" and t.object_type == "Document"
                  and t.object not in known and (not t.rule or t.rule.startswith("dangling:"))]
    dangling = Counter(t.object for t in unresolved)
    kinds = Counter(t.rule.partition(":")[2] or "not_in_corpus" for t in unresolved)
    return GraphQuality(
        triples_per_extractor=dict(sorted(Counter(t.extractor for t in triples).items())),
        entities=len(documents), multi_document_entities=shared,
        multi_document_share=round(shared / len(documents), 4) if documents else 0.0,
        dangling_count=len(dangling), dangling_kinds=dict(sorted(kinds.items())),
        llm=dict(sorted((llm or {}).items())),
        dangling_references=dict(sorted(dangling.items(), key=lambda i: (-i[1], i[0]))
                                 [:MAX_LISTED]),
    )
