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
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

import xxhash
from pydantic import BaseModel, ConfigDict

from ingest.chunk.items import item_clauses
from ingest.chunk.split import CountTokens, Line, Seg, Splitter, piece_text
from ingest.config import Settings
from ingest.models import (
    Block,
    BlockKind,
    Chunk,
    ChunkKind,
    ParsedDocument,
    Region,
    embed_text,
)
from ingest.text import (
    ARTICLE,
    CHAPTER,
    DECIMAL,
    PART,
    SECTION,
    TOP_NUMBER,
    content_hash,
    estimate_tokens,
)

log = logging.getLogger(__name__)

CHUNKER_VERSION = "kbflow-chunk@0.4"  # 0.4: a heading that heads nothing is chunked as text
_SHORT_HEADING = 40  # a numbered line this short without a full stop is a heading, not a clause


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
    for unit in _units(doc):
        builder.add(unit)
    return builder.finish()


# ---- structure: blocks → units ----------------------------------------------------------------

@dataclass(frozen=True)
class _Heading:
    level: int
    label: str  # the number ("第二章", "4.2") or, without one, the heading text
    line: Line
    path: str  # the labels from the top down, "~n" added where an earlier section had them

    @property
    def text(self) -> str:
        return self.line.text


@dataclass
class _Unit:
    """Consecutive lines that belong together (one clause, a paragraph run, a table row)."""

    kind: ChunkKind
    headings: tuple[_Heading, ...]
    clause_no: str | None
    path: str
    lines: list[Line] = field(default_factory=list)
    table: _Unit | None = None  # a row's table: the table's parent unit

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def _heading_level(block: Block, title: str) -> int | None:
    text = block.text
    if ARTICLE.match(text):
        return None
    short = len(text) <= _SHORT_HEADING and "。" not in text and text[-1] not in ":：;；,，"
    for level, pattern in ((1, PART), (2, CHAPTER), (3, SECTION)):
        if pattern.match(text) and short:
            return level
    number = DECIMAL.match(text) or TOP_NUMBER.match(text)
    if number and short:
        return number.group(1).count(".") + 1
    if block.kind == BlockKind.HEADING and text.strip("《》 ") != title:
        return block.level or 1
    return None


def _label(text: str) -> str:
    for pattern in (PART, CHAPTER, SECTION, ARTICLE, DECIMAL, TOP_NUMBER):
        match = pattern.match(text)
        if match:
            return match.group(1) if pattern.groups else match.group(0)
    return text


def _clause_no(text: str) -> str | None:
    match = ARTICLE.match(text) or DECIMAL.match(text) or TOP_NUMBER.match(text)
    return match.group(1) if match else None


def _is_list_item(block: Block, current: _Unit | None) -> bool:
    """"1. …" inside a clause is one of its list items, not a clause or a heading: always inside
    第X条; inside "4.2" when it is item 1 or follows item n-1 (else it is the next chapter)."""
    match = TOP_NUMBER.match(block.text)
    if (match is None or current is None or current.kind != ChunkKind.CLAUSE
            or block.kind != BlockKind.PARAGRAPH):
        return False
    number = int(match.group(1))
    if ARTICLE.match(current.clause_no or ""):
        return True
    previous = TOP_NUMBER.match(current.lines[-1].text) if len(current.lines) > 1 else None
    return "." in (current.clause_no or "") and (
        number == 1 or (previous is not None and int(previous.group(1)) == number - 1)
    )


def _base(section: tuple[_Heading, ...]) -> str:
    return section[-1].path if section else ""


def _units(doc: ParsedDocument) -> list[_Unit]:
    title = doc.meta.title
    headings: list[_Heading] = []
    sections: dict[str, int] = {}  # section path → how many sections had it
    units: list[_Unit] = []
    current: _Unit | None = None
    table: _Unit | None = None
    items = item_clauses(doc.blocks, title)  # an amendment's 一、二、…: its clauses (items.py)
    for i, (block, start) in enumerate(_starts(doc.blocks)):
        line = Line(block.text, block.page, start)
        item = items.get(i)
        if block.text.strip("《》 ") == title:
            continue  # the title is in every prefix already
        if block.kind == BlockKind.TABLE:
            # The whole table (Markdown) is a parent for reading; its rows follow as TABLE_ROW
            # blocks and point at it.
            section = tuple(headings)
            base = _base(section)
            table = _Unit(ChunkKind.PARENT, section, None, f"{base}/table", [line])
            units.append(table)
            current = None
            continue
        list_item = item is None and _is_list_item(block, current)
        is_row = block.kind == BlockKind.TABLE_ROW
        level = None if is_row or list_item or item else _heading_level(block, title)
        if level is not None:
            units += _headed_nothing(headings, level, units)
            headings = [h for h in headings if h.level < level]
            label = _label(block.text)
            path = f"{headings[-1].path}/{label}" if headings else label
            n = sections[path] = sections.get(path, 0) + 1
            headings.append(_Heading(level, label, line, path if n == 1 else f"{path}~{n}"))
            current = None
            continue
        clause_no = item or (None if is_row or list_item else _clause_no(block.text))
        if (current is not None and clause_no is None and not is_row
                and current.kind != ChunkKind.TABLE_ROW):
            current.lines.append(line)  # a list item or paragraph (款) of the unit before
            continue
        section = tuple(headings)
        base = _base(section)
        if not is_row:
            table = None
        if is_row:
            key = "; ".join(block.text.split("; ")[:2])
            kind, path = ChunkKind.TABLE_ROW, f"{base}/row:{key}"
        elif clause_no and (item or ARTICLE.match(block.text)):
            kind, path = ChunkKind.CLAUSE, clause_no  # 第X条 numbers are unique in a document
        elif clause_no:
            # "4.2"-style numbers are unique in a document; a bare "3" is unique within its section
            path = clause_no if "." in clause_no else f"{base}/{clause_no}"
            kind = ChunkKind.CLAUSE
        else:
            # Anchored on the unit before it in the section, not numbered: a paragraph inserted
            # elsewhere renames nothing.
            before = units[-1] if units and units[-1].headings == section else None
            kind, path = ChunkKind.PARAGRAPH, f"{before.path if before else base}/¶"
        inherited = next((h.label for h in reversed(section) if _clause_no(h.text)), None)
        current = _Unit(kind, section, clause_no or inherited, path, [line],
                        table=table if is_row else None)
        units.append(current)
    units += _headed_nothing(headings, 0, units) if units else []
    if not units and doc.blocks:
        # Only a title and headings (a one-line note whose line became its title, a deck of
        # bare titles): they are the text, not labels of text elsewhere.
        lines = [Line(b.text, b.page, start) for b, start in _starts(doc.blocks)]
        units.append(_Unit(ChunkKind.PARAGRAPH, (), None, "/¶", lines))
    return _unique_paths(units)


def _headed_nothing(headings: list[_Heading], level: int, units: list[_Unit]) -> list[_Unit]:
    """The headings that a heading of `level` closes (0: the document's end) under which no
    unit was made: two headings in a row ("Subchapter 2.1", then "Subchapter 2.2"), list items
    read as numbered headings ("1. List item a", "2. List item b"). Their text would be in no
    chunk: it becomes a paragraph of the section above them, joined to the unit right before
    it in that section."""
    used = {h.path for unit in units for h in unit.headings}
    made: list[_Unit] = []
    for heading in headings:
        if heading.level < level or heading.path in used:
            continue
        section = tuple(h for h in headings if h.level < heading.level)
        last = made[-1] if made else (units[-1] if units else None)
        if (last is not None and last.kind == ChunkKind.PARAGRAPH and last.headings == section
                and last.lines[-1].start + len(last.lines[-1].text) + 1 == heading.line.start):
            last.lines.append(heading.line)
        else:
            made.append(_Unit(ChunkKind.PARAGRAPH, section, None, f"{heading.path}/¶",
                              [heading.line]))
    return made


def _starts(blocks: list[Block]) -> Iterable[tuple[Block, int]]:
    offset = 0
    for block in blocks:
        yield block, offset
        offset += len(block.text) + 1


def _unique_paths(units: list[_Unit]) -> list[_Unit]:
    seen: dict[str, int] = {}
    for unit in units:
        n = seen[unit.path] = seen.get(unit.path, 0) + 1
        if n > 1:
            unit.path = f"{unit.path}~{n}"
    return units


# ---- units → chunks ---------------------------------------------------------------------------

class _Builder:
    def __init__(self, doc: ParsedDocument, params: ChunkParams, count: CountTokens,
                 limit: int, model_limit: int) -> None:
        self.doc, self.params, self.count, self.limit = doc, params, count, limit
        self.model_limit = model_limit
        self.parents: dict[tuple[_Heading, ...], _Unit] = {}
        self.children: list[Chunk] = []
        self.extra_parents: list[Chunk] = []
        # Each placed block's character range (offsets as _units counts them) and region.
        self.placed: list[tuple[int, int, Region]] = []
        offset = 0
        for block in doc.blocks:
            if block.bbox is not None:
                region = Region(page=block.page, box=block.bbox)
                self.placed.append((offset, offset + len(block.text), region))
            offset += len(block.text) + 1

    def prefix(self, headings: tuple[_Heading, ...], clause_no: str | None) -> str:
        if not self.params.prefixes:
            return ""
        meta = self.doc.meta
        version = meta.version_id if meta.version_id[:1].isalpha() else f"v{meta.version_id}"
        parts = [f"《{meta.title or meta.doc_id}》{version}", *(h.text for h in headings)]
        if clause_no and not any(h.label == clause_no for h in headings):
            parts.append(clause_no)
        return " / ".join(parts)

    def add(self, unit: _Unit) -> None:
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

    def _whole_clause(self, prefix: str, unit: _Unit, whole: list[Seg]) -> bool:
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

    def _budgeted(self, prefix: str, unit: _Unit) -> str:
        """The prefix the text is budgeted with: none when it alone fills the budget (a long
        title or heading), since no text would fit beside it; such chunks are over the budget
        and `over_budget` counts them, where pieces of one character each would be useless."""
        if self.count(prefix) < self.limit:
            return prefix
        log.warning("%s: the prefix of %.80s is over the %d-token budget; its text is cut as if "
                    "there were none", self.doc.meta.doc_id, unit.path, self.limit)
        return ""

    def _add_to_sections(self, unit: _Unit) -> None:
        """Every enclosing section's parent gets the unit's lines (and nested headings)."""
        chain: list[_Unit] = []
        for depth in range(1, len(unit.headings) + 1):
            section = unit.headings[:depth]
            parent = self.parents.get(section)
            if parent is None:
                path = section[-1].path + "/§"
                parent = self.parents[section] = _Unit(ChunkKind.PARENT, section[:-1], None, path)
                for enclosing in [*chain, parent]:
                    enclosing.lines.append(section[-1].line)
            chain.append(parent)
        for parent in chain:
            parent.lines.extend(unit.lines)

    def _parent_id(self, headings: tuple[_Heading, ...]) -> str | None:
        if not headings:
            return None
        meta = self.doc.meta
        return chunk_id(meta.doc_id, meta.version_id, headings[-1].path + "/§")

    def _chunk(self, unit: _Unit, path: str, piece: list[Seg], prefix: str, parent: str | None,
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


# ---- inspection -------------------------------------------------------------------------------

class ChunkRow(BaseModel):
    """One chunk as `kbflow chunks` shows it: where its boundaries are and why."""

    chunk_id: str
    path: str
    kind: str
    why: str
    clause_no: str | None
    pages: tuple[int, int]
    chars: tuple[int, int]
    tokens: int
    over_limit: bool
    parent: str | None  # the parent's structural path
    prefix: str
    context: str
    text: str


def describe(chunks: list[Chunk], count_tokens: CountTokens, limit: int) -> list[ChunkRow]:
    """One row per chunk in reading order, a parent before its children: where each boundary is
    and why it is there (for `kbflow chunks`)."""
    paths = {c.chunk_id: c.structural_path for c in chunks}
    ordered = sorted(chunks, key=lambda c: (c.char_start, c.kind != ChunkKind.PARENT,
                                            -c.char_end, c.structural_path))
    rows = []
    for c in ordered:
        tokens = count_tokens(c.embed_text)
        rows.append(ChunkRow(
            chunk_id=c.chunk_id, path=c.structural_path, kind=str(c.kind), why=_why(c),
            clause_no=c.clause_no, pages=(c.page_start, c.page_end),
            chars=(c.char_start, c.char_end), tokens=tokens,
            over_limit=c.kind != ChunkKind.PARENT and tokens > limit,
            parent=paths.get(c.parent_chunk_id or ""), prefix=c.prefix, context=c.context,
            text=c.text,
        ))
    return rows


def _why(chunk: Chunk) -> str:
    if chunk.kind == ChunkKind.PARENT:
        if chunk.structural_path.endswith("/§"):
            return "section parent (not embedded)"
        return "clause over the budget, kept whole as the parent of its pieces (not embedded)"
    if "#" in chunk.structural_path:
        return f"piece {chunk.structural_path.rsplit('#', 1)[1]} of a clause over the budget"
    return {ChunkKind.TABLE_ROW: "table row (never split)", ChunkKind.CLAUSE: "whole clause",
            ChunkKind.PARAGRAPH: "paragraph run"}[chunk.kind]
