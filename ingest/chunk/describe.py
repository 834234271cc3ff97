"""Inspection: each chunk's boundaries and why it is there, as `kbflow chunks` shows them."""

from __future__ import annotations

from pydantic import BaseModel

from ingest.chunk.split import CountTokens
from ingest.models import Chunk, ChunkKind


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
