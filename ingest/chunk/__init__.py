"""Chunk stage: clause-aware chunks with stable ids, parent sections and contextual prefixes.

Structure first: 第X编/章/节 and short numbered lines ("2.2 口令要求") or Markdown/HTML/DOCX
headings open sections; every 第X条 and "4.2"/"4.2.1" clause starts a unit of its own (and so
does every item 一、二、… of an amendment or decision without 第X条, items.py); list items
((一), (1), 1.) and unnumbered paragraphs (款) stay in the clause they follow; each table row is
a unit that is never split. A unit that fits the token budget is one chunk, and so is a numbered
Chinese clause over the budget that the embedding model still reads whole (a question asks about
a clause: whole, it ranks better than its pieces). A longer unit becomes a parent with "#n"
pieces cut at line (list-item, paragraph) boundaries first, then at sentence ends with an
overlap, a run-on sentence last of all by tokens.

A chunk's id comes from doc_id, version and its structural path (the clause number, a table row's
key cells, or a paragraph run anchored on the unit before it), never from a position counter over
the document, so an edit to clause 4.2 changes only the chunks of clause 4.2 (and its
neighbours' prev/next links). A path that repeats (two slides with one title, a scanned book's
running headings) takes an ordinal ("销售情况~2"), so ids are unique by construction and a
document whose paths are unique keeps the ids it always had.

Parents (a section "…/§", or the whole of a clause that was cut into pieces) are not embedded:
they are usually far over the model's token limit, so a vector would describe only a truncated
head of them, and their children already put every sentence in the vector index. They are stored
in the manifest and the lexical store, so a hit on a child can be widened to its clause or
section when an answer is assembled.

units.py reads the structure (blocks into units under their headings), this module builds the
chunks from the units, describe.py says where each boundary is and why (`kbflow chunks`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import xxhash
from pydantic import BaseModel, ConfigDict

from ingest.chunk.split import CountTokens, Seg, Splitter, piece_text
from ingest.chunk.units import Heading, Unit, document_units
from ingest.config import Settings
from ingest.models import Chunk, ChunkKind, ParsedDocument, Region, embed_text
from ingest.text import content_hash, estimate_tokens

log = logging.getLogger(__name__)

CHUNKER_VERSION = "kbflow-chunk@0.4"  # 0.4: a heading that heads nothing is chunked as text


class ChunkParams(BaseModel):
    """Everything that decides where chunks are cut; its hash is part of `version`."""

    model_config = ConfigDict(frozen=True)

    token_cap: int = 200  # prefix + text, in the counter's tokens (clamped to the model's limit)
    # a numbered clause (第X条, 4.2) over token_cap stays whole while it fits the model's input:
    # a reader asks about a clause, and its vector ranks it better whole than in pieces (STARD
    # over LawRefBook, dense alone: Recall@5 0.405 → 0.451, Recall@100 0.754 → 0.810)
    whole_clauses: bool = True
    min_tokens: int = 48  # pieces of a long clause are merged up to this size
    overlap_sentences: int = 1  # sentences repeated when a long paragraph is cut by sentence
    tokenizer: str = "heuristic"  # what counts tokens: the embedding model's name, or heuristic
    prefixes: bool = True  # the deterministic "《title》version / headings / clause" prefix
    context_model: str = ""  # the LLM writing situating contexts ("" when off)

    @property
    def version(self) -> str:
        """Stored on every chunk: a parameter change makes the flow re-chunk the document."""
        digest = xxhash.xxh64_hexdigest(self.model_dump_json().encode())[:8]
        return f"{CHUNKER_VERSION}+{digest}"


def chunk_params(settings: Settings) -> ChunkParams:
    return ChunkParams(
        token_cap=settings.chunk_token_cap, min_tokens=settings.chunk_min_tokens,
        overlap_sentences=settings.chunk_overlap_sentences, tokenizer=settings.embedding_model,
        prefixes=settings.chunk_prefixes, whole_clauses=settings.chunk_whole_clauses,
        context_model=settings.llm_model_name if settings.llm_situates else "",
    )


def chunk_id(doc_id: str, version_id: str, path: str) -> str:
    return xxhash.xxh64_hexdigest(f"{doc_id}\x1f{version_id}\x1f{path}".encode())


def over_budget(chunks: Iterable[Chunk], count_tokens: CountTokens, limit: int) -> int:
    """Embedded chunks whose text the model would truncate (expected 0; table rows may not be
    split, so an oversized row is the one way to get here)."""
    return sum(
        1 for c in chunks if c.kind != ChunkKind.PARENT and count_tokens(c.embed_text) > limit
    )


def chunk_document(doc: ParsedDocument, params: ChunkParams | None = None,
                   count_tokens: CountTokens = estimate_tokens,
                   max_tokens: int | None = None) -> list[Chunk]:
    """Parents first, then children in reading order with prev/next links.

    `count_tokens` should be the embedding model's tokenizer (with special tokens) and
    `max_tokens` its limit; the heuristic default keeps the chunker usable without the model.
    """
    params = params or ChunkParams()
    limit = min(params.token_cap, max_tokens or params.token_cap)
    builder = _Builder(doc, params, count_tokens, limit, max_tokens or limit)
    for unit in document_units(doc):
        builder.add(unit)
    return builder.finish()


# ---- units → chunks ---------------------------------------------------------------------------

class _Builder:
    def __init__(self, doc: ParsedDocument, params: ChunkParams, count: CountTokens,
                 limit: int, model_limit: int) -> None:
        self.doc, self.params, self.count, self.limit = doc, params, count, limit
        self.model_limit = model_limit
        self.parents: dict[tuple[Heading, ...], Unit] = {}
        self.children: list[Chunk] = []
        self.extra_parents: list[Chunk] = []
        # Each placed block's character range (offsets as document_units counts them) and region.
        self.placed: list[tuple[int, int, Region]] = []
        offset = 0
        for block in doc.blocks:
            if block.bbox is not None:
                region = Region(page=block.page, box=block.bbox)
                self.placed.append((offset, offset + len(block.text), region))
            offset += len(block.text) + 1

    def prefix(self, headings: tuple[Heading, ...], clause_no: str | None) -> str:
        if not self.params.prefixes:
            return ""
        meta = self.doc.meta
        version = meta.version_id if meta.version_id[:1].isalpha() else f"v{meta.version_id}"
        parts = [f"《{meta.title or meta.doc_id}》{version}", *(h.text for h in headings)]
        if clause_no and not any(h.label == clause_no for h in headings):
            parts.append(clause_no)
        return " / ".join(parts)

    def add(self, unit: Unit) -> None:
        section_parent = self._parent_id(unit.headings)
        prefix = self.prefix(unit.headings, unit.clause_no)
        if unit.kind == ChunkKind.PARENT:  # a whole table: kept for reading, never split
            whole = [Seg(line, 0, len(line.text)) for line in unit.lines]
            self.extra_parents.append(self._chunk(unit, unit.path, whole, prefix, section_parent))
            return
        self._add_to_sections(unit)
        if unit.table is not None:
            meta = self.doc.meta
            section_parent = chunk_id(meta.doc_id, meta.version_id, unit.table.path)
        whole = [Seg(line, 0, len(line.text)) for line in unit.lines]
        splitter = Splitter(self._budgeted(prefix, unit), self.count, self.limit,
                            self.params.min_tokens, self.params.overlap_sentences)
        if (unit.kind == ChunkKind.TABLE_ROW or splitter.fits(whole)
                or self._whole_clause(prefix, unit, whole)):
            if unit.kind == ChunkKind.TABLE_ROW and not splitter.fits(whole):
                log.warning("%s: table row %.80s is over the %d-token budget and is kept whole",
                            self.doc.meta.doc_id, unit.path, self.limit)
            self.children.append(self._chunk(unit, unit.path, whole, prefix, section_parent))
            return
        parent = self._chunk(unit, unit.path, whole, prefix, section_parent, ChunkKind.PARENT)
        self.extra_parents.append(parent)
        for i, piece in enumerate(splitter.split(unit.lines), start=1):
            self.children.append(
                self._chunk(unit, f"{unit.path}#{i}", piece, prefix, parent.chunk_id)
            )

    def _whole_clause(self, prefix: str, unit: Unit, whole: list[Seg]) -> bool:
        """A numbered Chinese clause over the budget that the model still reads whole. (Long
        English clauses stay cut: whole, their vectors drifted from Chinese questions, -0.08
        Recall@5 on the cross-lingual gold cases.)"""
        if not (self.params.whole_clauses and unit.kind == ChunkKind.CLAUSE and unit.clause_no):
            return False
        text = "".join(line.text for line in unit.lines)
        if sum("\u4e00" <= ch <= "\u9fff" for ch in text) < len(text) / 2:
            return False
        return Splitter(self._budgeted(prefix, unit), self.count, self.model_limit,
                        self.params.min_tokens, self.params.overlap_sentences).fits(whole)

    def _budgeted(self, prefix: str, unit: Unit) -> str:
        """The prefix the text is budgeted with: none when it alone fills the budget (a long
        title or heading), since no text would fit beside it; such chunks are over the budget
        and `over_budget` counts them, where pieces of one character each would be useless."""
        if self.count(prefix) < self.limit:
            return prefix
        log.warning("%s: the prefix of %.80s is over the %d-token budget; its text is cut as if "
                    "there were none", self.doc.meta.doc_id, unit.path, self.limit)
        return ""

    def _add_to_sections(self, unit: Unit) -> None:
        """Every enclosing section's parent gets the unit's lines (and nested headings)."""
        chain: list[Unit] = []
        for depth in range(1, len(unit.headings) + 1):
            section = unit.headings[:depth]
            parent = self.parents.get(section)
            if parent is None:
                path = section[-1].path + "/§"
                parent = self.parents[section] = Unit(ChunkKind.PARENT, section[:-1], None, path)
                for enclosing in [*chain, parent]:
                    enclosing.lines.append(section[-1].line)
            chain.append(parent)
        for parent in chain:
            parent.lines.extend(unit.lines)

    def _parent_id(self, headings: tuple[Heading, ...]) -> str | None:
        if not headings:
            return None
        meta = self.doc.meta
        return chunk_id(meta.doc_id, meta.version_id, headings[-1].path + "/§")

    def _chunk(self, unit: Unit, path: str, piece: list[Seg], prefix: str, parent: str | None,
               kind: ChunkKind | None = None) -> Chunk:
        meta = self.doc.meta
        text = piece_text(piece)
        start = min(s.line.start + s.lo for s in piece)
        end = max(s.line.start + s.hi for s in piece)
        kind = kind or unit.kind
        # Where on its pages the text is (parents span whole sections: their children show it)
        regions = [] if kind == ChunkKind.PARENT else [
            region for lo, hi, region in self.placed if lo < end and start < hi]
        return Chunk(
            doc_id=meta.doc_id, version_id=meta.version_id,
            chunk_id=chunk_id(meta.doc_id, meta.version_id, path), parent_chunk_id=parent,
            kind=kind, text=text, prefix=prefix,
            title_path=[h.text for h in unit.headings], clause_no=unit.clause_no,
            structural_path=path, page_start=min(s.line.page for s in piece),
            page_end=max(s.line.page for s in piece),
            char_start=start, char_end=end, regions=regions, tenant_id=meta.tenant_id,
            acl=meta.acl, authority=meta.authority, source_uri=meta.source_uri,
            effective_from=meta.effective_from, effective_to=meta.effective_to,
            parser_version=self.doc.parser_version,
            chunker_version=self.params.version,
            content_hash=content_hash(embed_text(prefix, text)),
        )

    def finish(self) -> list[Chunk]:
        for prev, nxt in zip(self.children, self.children[1:], strict=False):
            prev.next_chunk_id, nxt.prev_chunk_id = nxt.chunk_id, prev.chunk_id
        sections = [
            self._chunk(unit, unit.path, [Seg(line, 0, len(line.text)) for line in unit.lines],
                        self.prefix(unit.headings, None), self._parent_id(unit.headings))
            for unit in self.parents.values()
        ]
        return sections + self.extra_parents + self.children
