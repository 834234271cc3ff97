"""How much of what a file holds was indexed: the parse report's chars_seen / chars_indexed.

Counted in visible characters (no whitespace, no table markup), so a table written as Markdown
and a paragraph joined from wrapped lines compare with the text they came from.

For Word and PowerPoint files the text seen is also counted independently of the parser: every
text run (`w:t`, `a:t`) of every part that a reader sees, whether or not a parser knows the part.
A part no parser reads (SmartArt, a chart title, an embedded kind of box) then shows up as
coverage below 1 instead of silently missing. Masters, layouts, themes and glossaries hold
template text ("Click to edit Master title style") nobody sees: they are not counted, and of
the two copies of a drawing (`mc:Choice`, `mc:Fallback`) only the first is.
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import IO

from lxml import etree

from ingest.models import Block, BlockKind

_TABLE_RULE = re.compile(r"^\|(?:\s*-{3,}\s*\|)+$", re.MULTILINE)
_TEMPLATE_PARTS = re.compile(
    r"^(?:ppt/(?:slideMasters|slideLayouts|notesMasters|handoutMasters|theme)/"
    r"|word/(?:glossary|theme)/)")
_TEXT_RUN = "t"
_NOT_SEEN = {"Fallback", "moveFrom", "del"}  # a drawing's second copy; text moved or deleted


def visible_chars(text: str) -> int:
    """Characters a reader sees: not whitespace, not Markdown table markup."""
    text = _TABLE_RULE.sub("", text)
    return sum(1 for c in text if not c.isspace() and c != "|")


def indexed_chars(blocks: list[Block]) -> int:
    """The text that goes on to be chunked; a table counts once (its Markdown block), not
    again for its `header: value` rows, which repeat the headers on purpose."""
    return sum(visible_chars(b.text) for b in blocks if b.kind != BlockKind.TABLE_ROW)


def reached_chars(blocks: list[Block], spans: list[tuple[int, int]], title: str) -> int:
    """`indexed_chars` of the blocks that reached a chunk: `spans` are the chunks' character
    ranges over the blocks' texts joined by newlines (the chunker's offsets). A block equal to
    the title is in every chunk's prefix, so it counts once any chunk exists; a block the
    chunker dropped (or a parser returned empty of chunks) is not indexed, whatever it held."""
    ordered = sorted(spans)
    total, start, i, reach = 0, 0, 0, -1  # reach: the furthest end of the spans begun so far
    for block in blocks:
        end = start + len(block.text)
        while i < len(ordered) and ordered[i][0] < end:
            reach = max(reach, ordered[i][1])
            i += 1
        if block.kind != BlockKind.TABLE_ROW and (
                reach > start or (ordered and block.text.strip("《》 ") == title)):
            total += visible_chars(block.text)
        start = end + 1
    return total


def package_chars(data: bytes) -> int:
    """Visible characters of every text run in an Office (OOXML) package's content parts.
    The archive has passed ingest.parse.archive.check_archive; entities are never expanded."""
    total = 0
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for member in archive.infolist():
            if member.filename.endswith(".xml") and not _TEMPLATE_PARTS.match(member.filename):
                with archive.open(member) as part:
                    total += _part_chars(part)
    return total


def _part_chars(part: IO[bytes]) -> int:
    total, hidden = 0, 0
    events = etree.iterparse(part, events=("start", "end"), resolve_entities=False,
                             no_network=True, huge_tree=False, load_dtd=False,
                             recover=True)  # as its parser read a part not well-formed
    for event, element in events:
        name = etree.QName(element).localname if isinstance(element.tag, str) else ""
        if event == "start":
            hidden += name in _NOT_SEEN
            continue
        if name in _NOT_SEEN:
            hidden -= 1
        elif name == _TEXT_RUN and not hidden and element.text:
            total += visible_chars(element.text)
        element.clear(keep_tail=True)  # the part is streamed, never held whole
    return total
