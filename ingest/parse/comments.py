"""Review comments of Excel sheets and PowerPoint slides (Word's: ingest.parse.word_notes).

Comments are notes about a document, not its content: they are counted in the parse report
(`skipped["comments"]` and their characters) and indexed only with the include_comments
setting, as "批注: …" after the sheet or slide they are on. An Excel note its author set to be
shown ("Show Comment") is a box of text on the sheet a reader sees like a text box: it is indexed
always (ingest.parse.sheet_extras).
"""

from __future__ import annotations

from lxml import etree

from ingest.models import Block, BlockKind
from ingest.parse.archive import office_part
from ingest.parse.tables import cell_text

# an Excel note (<comment>), a PowerPoint comment, legacy (<p:cm>) or modern (<p188:cm>)
_COMMENTS = {"comment", "cm"}


def comment_texts(xml: bytes) -> list[str]:
    """The text of each comment of a comments part, in order."""
    root = office_part(xml, "a comments part")
    texts = (cell_text("".join(element.itertext())) for element in root.iter(etree.Element)
             if etree.QName(element).localname in _COMMENTS)
    return [text for text in texts if text]


def cell_comments(xml: bytes) -> list[tuple[str, str]]:
    """An Excel comments part's notes: (the cell they are on, "B2"; their text), in order."""
    root = office_part(xml, "a comments part")
    notes = ((element.get("ref", ""), cell_text("".join(element.itertext())))
             for element in root.iter(etree.Element) if etree.QName(element).localname == "comment")
    return [(ref, text) for ref, text in notes if text]


def comment_blocks(texts: list[str], page: int) -> list[Block]:
    return [Block(kind=BlockKind.PARAGRAPH, text=f"批注: {text}", page=page) for text in texts]
