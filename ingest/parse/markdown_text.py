"""Markdown (markdown-it) and plain text: headings keep their level, tables become rows, raw
HTML blocks are read as a web page's HTML is (ingest.parse.html_text), code blocks as text files.

Text files are decoded as ingest.parse.encoding detects (UTF-8, GB18030, which Chinese Windows
editors still save by default, Big5, Shift-JIS, UTF-16 …)."""

from __future__ import annotations

import functools
import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ingest.models import Block, BlockKind
from ingest.parse.encoding import decode
from ingest.parse.html_text import fragment_blocks
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.tables import caption_before, grid_blocks
from ingest.text import join_lines, normalize

_BR = re.compile(r"<br\b", re.IGNORECASE)


def parse_markdown_file(data: bytes, limits: ParseLimits) -> ParseResult:
    decoded = decode(data)
    return ParseResult(parse_markdown(decoded.text), 1, encoding=decoded.encoding,
                       encoding_confidence=decoded.confidence)


def parse_text_file(data: bytes, limits: ParseLimits) -> ParseResult:
    decoded = decode(data)
    return ParseResult(parse_text(decoded.text), 1, encoding=decoded.encoding,
                       encoding_confidence=decoded.confidence)


def parse_markdown(text: str) -> list[Block]:
    """Headings keep their level; tables become one block per data row; a raw HTML block is
    read as HTML (a <table>, a nested <ul>, a <div> of text); a code block's lines are
    paragraphs."""
    blocks: list[Block] = []
    heading_level: int | None = None
    table: list[list[str]] | None = None
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        if token.type == "heading_open":
            heading_level = int(token.tag[1])
        elif token.type == "heading_close":
            heading_level = None
        elif token.type == "table_open":
            table = []
        elif token.type == "tr_open" and table is not None:
            table.append([])
        elif token.type == "table_close" and table is not None:
            blocks += grid_blocks(table, caption=caption_before(blocks))
            table = None
        elif token.type == "html_block":
            blocks += fragment_blocks(token.content, blocks)
        elif token.type in ("fence", "code_block"):
            blocks += [block for block in parse_text(token.content) if block.text]
        elif token.type == "inline":
            content = functools.reduce(join_lines, normalize(_plain(token)).split("\n"))
            if table is not None:
                table[-1].append(content)
            elif content and heading_level is not None:
                blocks.append(Block(kind=BlockKind.HEADING, text=content, level=heading_level))
            elif content:
                blocks.append(Block(kind=BlockKind.PARAGRAPH, text=content))
    return _bare_headings(blocks)


def _bare_headings(blocks: list[Block]) -> list[Block]:
    """A heading with nothing under it (the next block is a heading of its level or above, or
    there is none) is that text, not a label over text after it: the heading again as a
    paragraph, so that a chunk holds it, as a title-only slide is read (ingest.parse.slides).
    A heading over deeper ones stays in their chunks' title paths."""
    out: list[Block] = []
    for block, after in zip(blocks, [*blocks[1:], None], strict=True):
        out.append(block)
        if block.kind == BlockKind.HEADING and (after is None or (
                after.kind == BlockKind.HEADING and (after.level or 1) <= (block.level or 1))):
            out.append(Block(kind=BlockKind.PARAGRAPH, text=block.text))
    return out


def _plain(token: Token) -> str:
    parts: list[str] = []
    for child in token.children or []:
        if child.type in {"text", "code_inline"}:
            parts.append(child.content)
        elif child.type in {"softbreak", "hardbreak"} or (
                child.type == "html_inline" and _BR.match(child.content)):
            parts.append("\n")
    return "".join(parts)


def parse_text(text: str) -> list[Block]:
    """One paragraph per non-empty line."""
    return [Block(kind=BlockKind.PARAGRAPH, text=line) for line in normalize(text).split("\n")]
