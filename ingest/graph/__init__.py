"""Graph extraction stage: triples from chunk text, each tied to the chunk it came from.

The rule-based extractor finds three things policies state in fixed phrasing: references to
other documents (《…》) and to clauses (《公司法》第十条, 本法第五条, 第X条, 本规范3.2), each
resolved to the document and clause it names through the corpus's titles (citations.py,
titles.py; the triple keeps the surface form and the rule), and who approves what
(部门负责人审批, or an approver column in a table row). Names are canonical (normalize.py), so
部门主管 and 部门负责人 are one entity. A citation nothing resolves stays a relation to its
written title, its rule saying why it dangles.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from ingest.graph.citations import citations
from ingest.graph.normalize import canonical
from ingest.graph.titles import Resolution, TitleIndex
from ingest.models import Chunk, ChunkKind, Triple
from ingest.text import ARTICLE

EXTRACTOR = "rules@0.4"  # 0.2: canonical entity names; 0.3: citations resolved through titles;
# 0.4: laws named without 《》 or article, titles cut by a chunk boundary, issuers before 《关于…》
DOCUMENT_CONFIDENCE = 0.9  # a 《title》 citation, before its resolution rule's factor
CLAUSE_CONFIDENCE = 0.8
_ROLES = (
    "部门负责人|部门主管|分管副总经理|分管副总|副总经理|总经理|财务总监|财务负责人|董事长|董事会"
    "|采购委员会|信息安全管理委员会|人力资源部|财务部|直属上级|直接上级|总裁"
)
_ROLE = re.compile(rf"({_ROLES})")
_APPROVAL = re.compile(r"审批|批准|审核|审议|签批|核准")
_CLAUSE_BREAK = re.compile(r"[。；;，,：:]")


def extract_triples(chunks: Iterable[Chunk], title: str, titles: TitleIndex | None = None,
                    articles: Collection[str] | None = None) -> list[Triple]:
    """Triples from one document's indexed chunks (parents repeat their children's text);
    citations resolve through `titles` (the corpus's; None: only the document itself), bare
    article numbers against the version's own `articles` (None: every one taken as its own)."""
    chunks = [c for c in chunks if c.kind != ChunkKind.PARENT]
    index = titles or TitleIndex([title])
    aliases = index.aliases("\n".join(c.text for c in chunks), title)
    triples: dict[tuple[str, str, str, str], Triple] = {}
    for chunk, after in zip(chunks, [*chunks[1:], None][:len(chunks)], strict=True):
        for t in _from_chunk(chunk, title, index, aliases, articles, after.text if after else ""):
            triples.setdefault((t.subject, t.predicate, t.object, t.source_chunk_id), t)
    return list(triples.values())


def _from_chunk(chunk: Chunk, title: str, index: TitleIndex, aliases: dict[str, Resolution],
                articles: Collection[str] | None, after: str) -> Iterable[Triple]:
    def triple(s: str, st: str, p: str, o: str, ot: str, confidence: float,
               surface: str = "", rule: str = "") -> Triple:
        return Triple(
            subject=canonical(s), subject_type=st, predicate=p, object=canonical(o),
            object_type=ot,
            source_chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, version_id=chunk.version_id,
            extractor=EXTRACTOR, confidence=confidence, surface=surface, rule=rule,
        )

    text = chunk.text
    here = f"《{title}》{chunk.clause_no}" if chunk.clause_no else f"《{title}》"
    for cite in citations(text, title, index, aliases, articles, after):
        found = cite.resolution
        target = found.title or cite.name
        if not target:
            continue  # a bare article number the text does not have, naming nothing
        if cite.article is None:
            if found.rule != "self" and canonical(target) != canonical(title):
                yield triple(title, "Document", "引用", target, "Document",
                             DOCUMENT_CONFIDENCE * found.confidence, cite.surface, found.rule)
        elif not (found.rule == "self" and cite.article == chunk.clause_no):
            yield triple(here, "Clause" if chunk.clause_no else "Document", "引用条款",
                         f"《{target}》{cite.article}", "Clause",
                         CLAUSE_CONFIDENCE * found.confidence, cite.surface, found.rule)
    topic = _topic(chunk, title)
    if chunk.kind == ChunkKind.TABLE_ROW:
        for role in _table_approvers(text):
            yield triple(role, "Role", "审批", topic, "Matter", 0.8)
        return
    for verb in _APPROVAL.finditer(text):
        window = _CLAUSE_BREAK.split(text[max(0, verb.start() - 24) : verb.start()])[-1]
        for role in dict.fromkeys(_ROLE.findall(window)):
            yield triple(role, "Role", "审批", topic, "Matter", 0.7)


def _topic(chunk: Chunk, title: str) -> str:
    """What a clause is about: its caption (第十条 市内交通费 …), a table row's first value,
    or its innermost heading; the document title as a last resort."""
    if chunk.kind == ChunkKind.TABLE_ROW:
        first = chunk.text.split(";")[0]
        return first.split(": ", 1)[-1].strip()
    match = ARTICLE.match(chunk.text)
    if match:
        caption = chunk.text[match.end():].strip().split(" ", 1)
        if len(caption) == 2 and 1 < len(caption[0]) <= 12:
            return caption[0]
    if chunk.title_path:
        return re.sub(r"^\S*\d\S*\s+|^第\S+[章节编]\s*", "", chunk.title_path[-1]) or title
    return title


def _table_approvers(row: str) -> list[str]:
    for pair in row.split("; "):
        header, _, value = pair.partition(": ")
        if _APPROVAL.search(header) or "审批人" in header:
            return list(dict.fromkeys(_ROLE.findall(value)))
    return []
