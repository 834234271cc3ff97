"""The parts of a DOCX outside its body: footnotes and endnotes (indexed with the paragraph
that cites them), headers/footers (indexed once, at the end: ingest.parse.boilerplate), comments
and page-number-only footers (counted, not indexed), and the check that no part of the package
carries a DTD.

python-docx has no API for notes: their parts are found by relationship type from the main
document part and parsed here with entity expansion off.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.package import OpcPackage
from docx.opc.part import Part, XmlPart
from lxml import etree

from ingest.parse.boilerplate import is_page_number
from ingest.parse.coverage import visible_chars
from ingest.parse.errors import ParseError

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_NAMESPACES = {"w": W[1:-1], "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006"}
# Text a reader of the document sees: not deleted or moved away, and only the first copy of a
# drawing that Markup Compatibility stores twice.
_SEEN_TEXT = etree.XPath(
    ".//w:t[not(ancestor::w:del or ancestor::w:moveFrom or ancestor::mc:Fallback)]/text()",
    namespaces=_NAMESPACES)
# The same runs' pieces in order, tabs and breaks among them (a header's "Title<tab>Page" is two
# words), optionally without text formatted hidden (w:vanish without w:val="0"/"false"/"off").
_RUN_PIECES = "/*[self::w:t or self::w:tab or self::w:br or self::w:cr]"
_SEEN_PIECES = etree.XPath(
    ".//w:r[not(ancestor::w:del or ancestor::w:moveFrom or ancestor::mc:Fallback)]"
    + _RUN_PIECES, namespaces=_NAMESPACES)
_SHOWN_PIECES = etree.XPath(
    ".//w:r[not(ancestor::w:del or ancestor::w:moveFrom or ancestor::mc:Fallback"
    " or ancestor-or-self::w:r/w:rPr/w:vanish[not(@w:val='0' or @w:val='false'"
    " or @w:val='off')])]"
    + _RUN_PIECES, namespaces=_NAMESPACES)
_NOTE_KINDS = {RT.FOOTNOTES: "footnote", RT.ENDNOTES: "endnote"}
NOTE_LABELS = {"footnote": "注", "endnote": "尾注"}


def check_no_dtd(package: OpcPackage) -> None:
    """ECMA-376 Part 2 (M1.18) forbids DTDs in a package because internal entities are how
    "billion laughs" payloads expand: a part that declares one fails the document. (python-docx
    parses its parts with entity expansion off, so nothing was expanded to get here.)"""
    for part in package.iter_parts():
        if isinstance(part, XmlPart):
            _refuse_dtd(part.element, part)


def part_root(part: Part) -> etree._Element:
    """The XML of a part python-docx has parsed, or parses here the same safe way."""
    if isinstance(part, XmlPart):
        element: etree._Element = part.element
        return element
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    try:
        root = etree.fromstring(part.blob, parser)
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"DOCX part {part.partname} is not well-formed XML: {exc}") from exc
    return _refuse_dtd(root, part)


def _refuse_dtd(root: etree._Element, part: Part) -> etree._Element:
    if root.getroottree().docinfo.doctype:
        raise ParseError(f"DOCX part {part.partname} declares a DTD, which Office files must "
                         "not (a way to smuggle in entity expansion): not read")
    return root


def seen_chars(element: etree._Element) -> int:
    """Visible characters of the text a reader sees in an element."""
    texts = _SEEN_TEXT(element)
    return sum(visible_chars(str(text)) for text in texts) if isinstance(texts, list) else 0


@dataclass
class Notes:
    """Footnotes and endnotes by (kind, id). Word numbers them in the order they are cited;
    each is cited once, so a note citing itself cannot loop."""

    bodies: dict[tuple[str, str], etree._Element]
    numbers: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, document_part: Part) -> Notes:
        bodies: dict[tuple[str, str], etree._Element] = {}
        for rel in document_part.rels.values():
            kind = _NOTE_KINDS.get(rel.reltype)
            if kind is None or rel.is_external:
                continue
            for note in part_root(rel.target_part).iterchildren(W + kind):
                # separator and continuation notes draw the line above the notes: no text
                if note.get(W + "type") in (None, "normal"):
                    bodies[(kind, note.get(W + "id", ""))] = note
        return cls(bodies)

    def cite(self, reference: etree._Element) -> tuple[str, int, etree._Element] | None:
        """The kind, number and body of the note a w:footnoteReference/w:endnoteReference
        points at; None when it points at none or at one already cited."""
        kind = "footnote" if reference.tag == W + "footnoteReference" else "endnote"
        body = self.bodies.pop((kind, reference.get(W + "id", "")), None)
        if body is None:
            return None
        self.numbers[kind] += 1
        return kind, self.numbers[kind], body


def unindexed_parts(document_part: Part, comments_indexed: bool = False,
                    include_hidden: bool = False) -> tuple[Counter[str], int]:
    """Comments (review notes, not the document's content, unless `comments_indexed`),
    headers/footers holding only a page number, and hidden text in the others (unless
    `include_hidden`): how many there are and the characters they hold, for chars_seen."""
    skipped: Counter[str] = Counter()
    chars = 0
    for rel in _parts(document_part):
        if rel.reltype == RT.COMMENTS and not comments_indexed:
            comments = list(part_root(rel.target_part).iterchildren(W + "comment"))
            skipped["comments"] += len(comments)
            chars += sum(seen_chars(comment) for comment in comments)
        elif rel.reltype in (RT.HEADER, RT.FOOTER):
            text = _part_text(rel.target_part)
            root = part_root(rel.target_part)
            if text and is_page_number(text):
                skipped["headers_footers"] += 1
                chars += seen_chars(root)
            elif not include_hidden and (hidden := seen_chars(root) - _shown_chars(root)):
                skipped["hidden_text"] += 1
                chars += hidden
    return +skipped, chars


def comment_texts(document_part: Part) -> list[str]:
    """Each review comment's text, in the order the comments part lists them."""
    texts = []
    for rel in _parts(document_part):
        if rel.reltype == RT.COMMENTS:
            for comment in part_root(rel.target_part).iterchildren(W + "comment"):
                text = " ".join("".join(str(t) for t in _texts(comment)).split())
                if text:
                    texts.append(text)
    return texts


def margin_texts(document_part: Part, include_hidden: bool = False) -> list[str]:
    """The text of each header and footer that says more than a page number (without its
    hidden text, unless `include_hidden`)."""
    texts = (_part_text(rel.target_part, include_hidden) for rel in _parts(document_part)
             if rel.reltype in (RT.HEADER, RT.FOOTER))
    return [text for text in texts if text and not is_page_number(text)]


def _parts(document_part: Part) -> list[Any]:
    """The document's internal relationships, each target once (sections share headers)."""
    seen: set[str] = set()
    rels = []
    for rel in document_part.rels.values():
        if not rel.is_external and rel.target_ref not in seen:
            seen.add(rel.target_ref)
            rels.append(rel)
    return rels


def _part_text(part: Part, include_hidden: bool = True) -> str:
    """A header's or footer's paragraphs, joined by spaces."""
    outer = (p for p in part_root(part).iter(W + "p")
             if not any(a.tag == W + "p" for a in p.iterancestors()))  # a text box's once
    paragraphs = ("".join(str(t) for t in _texts(p, include_hidden)) for p in outer)
    return " ".join(" ".join(p.split()) for p in paragraphs if p.strip())


def _shown_chars(element: etree._Element) -> int:
    return sum(visible_chars(str(text)) for text in _texts(element, include_hidden=False))


def _texts(element: etree._Element, include_hidden: bool = True) -> list[str]:
    found = (_SEEN_PIECES if include_hidden else _SHOWN_PIECES)(element)
    if not isinstance(found, list):
        return []
    return [(piece.text or "") if piece.tag == W + "t" else " "
            for piece in found if isinstance(piece, etree._Element)]
