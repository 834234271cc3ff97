"""Chunk stage: clause-aware chunks with stable ids, parent sections and contextual prefixes.

A chunk's id comes from doc_id, version and its structural path (the clause number, or the
heading path plus a paragraph ordinal), never from a position counter over the whole document,
so an edit to clause 4.2 changes only the chunks of clause 4.2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import xxhash

from ingest.models import Block, BlockKind, Chunk, ChunkKind, ParsedDocument
from ingest.text import (
    ARTICLE,
    CHAPTER,
    DECIMAL,
    PART,
    SECTION,
    TOP_NUMBER,
    content_hash,
    estimate_tokens,
    split_sentences,
)

CHUNKER_VERSION = "kbflow-chunk@0.1"
_SHORT_HEADING = 40  # a numbered line this short without a full stop is a heading, not a clause


@dataclass(frozen=True)
class _Heading:
    level: int
    label: str  # the number ("第二章", "4.2") or, without one, the heading text
    text: str


@dataclass
class _Unit:
    """Consecutive blocks that belong together (one clause, a paragraph run, a table row)."""

    kind: ChunkKind
    headings: tuple[_Heading, ...]
    clause_no: str | None
    path: str
    texts: list[str]
    page_start: int
    page_end: int
    char_start: int
    char_end: int
    children: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


def chunk_id(doc_id: str, version_id: str, path: str) -> str:
    return xxhash.xxh64_hexdigest(f"{doc_id}\x1f{version_id}\x1f{path}".encode())


def chunk_document(doc: ParsedDocument, token_cap: int) -> list[Chunk]:
    """Parents first, then children in reading order with prev/next links."""
    units = _units(doc)
    builder = _Builder(doc, token_cap)
    for unit in units:
        builder.add(unit)
    return builder.finish()


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


def _units(doc: ParsedDocument) -> list[_Unit]:
    title = doc.meta.title
    headings: list[_Heading] = []
    units: list[_Unit] = []
    current: _Unit | None = None
    offset = 0
    for block in doc.blocks:
        start, offset = offset, offset + len(block.text) + 1
        if block.text.strip("《》 ") == title:
            continue  # the title is in every prefix already
        level = None if block.kind == BlockKind.TABLE_ROW else _heading_level(block, title)
        if level is not None:
            headings = [h for h in headings if h.level < level]
            headings.append(_Heading(level, _label(block.text), block.text))
            current = None
            continue
        section = tuple(headings)
        base = "/".join(h.label for h in section)
        clause_no = None if block.kind == BlockKind.TABLE_ROW else _clause_no(block.text)
        joins_current = (
            current is not None and clause_no is None and block.kind != BlockKind.TABLE_ROW
            and current.kind != ChunkKind.TABLE_ROW
        )
        if joins_current:
            current.texts.append(block.text)
            current.page_end, current.char_end = block.page, start + len(block.text)
            continue
        if block.kind == BlockKind.TABLE_ROW:
            kind, path = ChunkKind.TABLE_ROW, f"{base}/row:{block.text.split(';')[0]}"
        elif clause_no and ARTICLE.match(block.text):
            kind, path = ChunkKind.CLAUSE, clause_no  # 第X条 numbers are unique in a document
        elif clause_no:
            # "4.2"-style numbers are unique in a document; a bare "3" is unique within its section
            path = clause_no if "." in clause_no else f"{base}/{clause_no}"
            kind = ChunkKind.CLAUSE
        else:
            kind, path = ChunkKind.PARAGRAPH, f"{base}/¶"
        inherited = next((h.label for h in reversed(section) if _clause_no(h.text)), None)
        current = _Unit(
            kind=kind, headings=section, clause_no=clause_no or inherited, path=path,
            texts=[block.text], page_start=block.page, page_end=block.page,
            char_start=start, char_end=start + len(block.text),
        )
        units.append(current)
    return _unique_paths(units)


def _unique_paths(units: list[_Unit]) -> list[_Unit]:
    """Paragraph runs are numbered per section; any other repeated path gets a ~n suffix."""
    seen: dict[str, int] = {}
    for unit in units:
        n = seen.get(unit.path, 0) + 1
        seen[unit.path] = n
        if unit.path.endswith("/¶"):
            unit.path = f"{unit.path}{n}"
        elif n > 1:
            unit.path = f"{unit.path}~{n}"
    return units


class _Builder:
    def __init__(self, doc: ParsedDocument, token_cap: int) -> None:
        self.doc = doc
        self.cap = token_cap
        self.parents: dict[tuple[_Heading, ...], _Unit] = {}
        self.children: list[Chunk] = []
        self.extra_parents: list[Chunk] = []

    def prefix(self, headings: tuple[_Heading, ...], clause_no: str | None) -> str:
        meta = self.doc.meta
        version = meta.version_id if meta.version_id[:1].isalpha() else f"v{meta.version_id}"
        parts = [f"《{meta.title or meta.doc_id}》{version}", *(h.text for h in headings)]
        if clause_no and not any(h.label == clause_no for h in headings):
            parts.append(clause_no)
        return " / ".join(parts)

    def add(self, unit: _Unit) -> None:
        for depth in range(1, len(unit.headings) + 1):
            section = unit.headings[:depth]
            parent = self.parents.get(section)
            if parent is None:
                heading = section[-1]
                parent = self.parents[section] = _Unit(
                    kind=ChunkKind.PARENT, headings=section[:-1], clause_no=None,
                    path="/".join(h.label for h in section) + "/§", texts=[heading.text],
                    page_start=unit.page_start, page_end=unit.page_end,
                    char_start=unit.char_start, char_end=unit.char_end,
                )
            parent.texts.append(unit.text)
            parent.page_end, parent.char_end = unit.page_end, unit.char_end
        section_parent = self._parent_id(unit.headings)
        prefix = self.prefix(unit.headings, unit.clause_no)
        budget = self.cap - estimate_tokens(prefix) - 1
        if estimate_tokens(unit.text) <= budget:
            self.children.append(self._chunk(unit, unit.path, unit.text, prefix, section_parent))
            return
        whole = self._chunk(unit, unit.path, unit.text, prefix, section_parent, ChunkKind.PARENT)
        self.extra_parents.append(whole)
        for i, piece in enumerate(_pieces(unit.text, budget), start=1):
            self.children.append(self._chunk(unit, f"{unit.path}#{i}", piece, prefix,
                                             whole.chunk_id))

    def _parent_id(self, headings: tuple[_Heading, ...]) -> str | None:
        if not headings:
            return None
        meta = self.doc.meta
        return chunk_id(meta.doc_id, meta.version_id, "/".join(h.label for h in headings) + "/§")

    def _chunk(self, unit: _Unit, path: str, text: str, prefix: str, parent: str | None,
               kind: ChunkKind | None = None) -> Chunk:
        meta = self.doc.meta
        return Chunk(
            doc_id=meta.doc_id, version_id=meta.version_id,
            chunk_id=chunk_id(meta.doc_id, meta.version_id, path), parent_chunk_id=parent,
            kind=kind or unit.kind, text=text, prefix=prefix,
            title_path=[h.text for h in unit.headings], clause_no=unit.clause_no,
            structural_path=path, page_start=unit.page_start, page_end=unit.page_end,
            char_start=unit.char_start, char_end=unit.char_end, tenant_id=meta.tenant_id,
            acl=meta.acl, source_uri=meta.source_uri, effective_from=meta.effective_from,
            effective_to=meta.effective_to, parser_version=self.doc.parser_version,
            chunker_version=CHUNKER_VERSION, content_hash=content_hash(f"{prefix}\n{text}"),
        )

    def finish(self) -> list[Chunk]:
        for prev, nxt in zip(self.children, self.children[1:], strict=False):
            prev.next_chunk_id, nxt.prev_chunk_id = nxt.chunk_id, prev.chunk_id
        sections = [
            self._chunk(unit, unit.path, unit.text, self.prefix(unit.headings, None),
                        self._parent_id(unit.headings))
            for unit in self.parents.values()
        ]
        return sections + self.extra_parents + self.children


def _pieces(text: str, budget: int) -> list[str]:
    """Paragraphs packed under the budget; an oversized paragraph is cut at sentence ends, each
    piece repeating the previous piece's last sentence."""
    pieces: list[str] = []
    for paragraph in text.split("\n"):
        joined = f"{pieces[-1]}\n{paragraph}" if pieces else paragraph
        if pieces and estimate_tokens(joined) <= budget:
            pieces[-1] = joined
        elif estimate_tokens(paragraph) <= budget:
            pieces.append(paragraph)
        else:
            pieces += _sentence_pieces(paragraph, budget)
    return pieces


def _sentence_pieces(text: str, budget: int) -> list[str]:
    pieces: list[list[str]] = [[]]
    for sentence in split_sentences(text):
        while estimate_tokens(sentence) > budget:  # a run-on sentence: cut it hard
            head, sentence = _cut(sentence, budget)
            pieces.append([head])
        current = pieces[-1]
        if current and estimate_tokens("".join(current) + sentence) > budget:
            overlap = current[-1:] if estimate_tokens(current[-1] + sentence) <= budget else []
            pieces.append([*overlap, sentence])
        else:
            current.append(sentence)
    return ["".join(p) for p in pieces if p]


def _cut(sentence: str, budget: int) -> tuple[str, str]:
    end = len(sentence)
    while estimate_tokens(sentence[:end]) > budget:
        end = end * budget // max(estimate_tokens(sentence[:end]), 1) or 1
    return sentence[:end], sentence[end:]
