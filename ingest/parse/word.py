"""DOCX: everything a reader of the document sees, in reading order.

Body paragraphs and tables, with content controls (w:sdt) read like the body around them; text
boxes, charts (ingest.parse.charts), pictures' text read by OCR (ingest.parse.pictures) and
alt text that says something, right after the paragraph they are anchored in; a footnote or
endnote appended to the paragraph that cites it, its mark ("[注1]") left in place, so a clause
and its note land in one chunk; a table nested in a cell as a table of its own after the outer
one; tracked changes read as accepted; the headers' and footers' text once, at the end.
Automatic numbering labels ("第一条", "1.2", "（一）") are put before their paragraph's text
(ingest.parse.docx_numbering). Comments (unless the include_comments setting), text formatted
hidden (w:vanish, unless include_hidden), tables of contents and template placeholder prompts
are counted in chars_seen, not indexed.

Paragraphs are read from the XML: python-docx's `Paragraph.text` reads only the runs directly in
a paragraph, so it loses inserted (w:ins) and moved (w:moveTo) text, inline content controls,
smart tags and text boxes.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from docx.document import Document
from docx.enum.style import WD_STYLE_TYPE
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.part import PartFactory
from docx.package import Package
from docx.parts.document import DocumentPart
from docx.styles.style import CharacterStyle
from lxml import etree

from ingest.models import Block, BlockKind
from ingest.parse.archive import open_recovering
from ingest.parse.boilerplate import margin_blocks
from ingest.parse.charts import C as _C
from ingest.parse.charts import chart_lines
from ingest.parse.coverage import indexed_chars, visible_chars
from ingest.parse.docx_numbering import Numbering
from ingest.parse.pictures import Pictures
from ingest.parse.result import ParseLimits, ParseResult
from ingest.parse.tables import caption_before, cell_text, fill_merged, grid_blocks
from ingest.parse.word_notes import (
    NOTE_LABELS,
    Notes,
    W,
    check_no_dtd,
    comment_texts,
    margin_texts,
    seen_chars,
    unindexed_parts,
)

_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
CHART = _C + "chart"  # a chart drawn in the text (its part is a relationship of the document)
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_R_ID, _R_EMBED = _R + "id", _R + "embed"
# A DrawingML picture's image, and a VML one's (older files, and the fallback of newer ones)
_PICTURES = {"{http://schemas.openxmlformats.org/drawingml/2006/main}blip",
             "{urn:schemas-microsoft-com:vml}imagedata"}
_DOC_PR = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}docPr"
# Marks around content that is read as if it stood in their place.
_WRAPPERS = {W + "ins", W + "moveTo", W + "customXml", W + "sdtContent"}
# Tracked deletions and the old place of moved text (gone once accepted), and properties.
_NOT_READ = {W + "del", W + "moveFrom", W + "pPr", W + "rPr", W + "sdtPr", W + "tblPr",
             W + "trPr", W + "tcPr"}
_CHARACTERS = {W + "tab": "\t", W + "ptab": "\t", W + "cr": "\n", W + "noBreakHyphen": "-"}
_NOTE_REFERENCES = {W + "footnoteReference", W + "endnoteReference"}
_TOC_STYLE = re.compile(r"toc (?:\d|heading)", re.I)
# Alt text Word writes by itself, and names of pictures rather than descriptions of them.
_GENERATED_ALT = re.compile(r"automatically generated|自动生成|ai-generated|ai 生成", re.I)
_PICTURE_NAME = re.compile(
    r"(?:图片|图像|图示|图表|picture|image|img|photo|chart|graphic|diagram|文本框|text ?box"
    r"|组合|group)\s*\d*|[\w\-. ]+\.(?:png|jpe?g|gif|bmp|tiff?|emf|wmf|svg|webp)", re.I)
_MIN_ALT_CHARS = 5  # "logo", "公司徽标": a label, not a description worth a search hit
# Core-property titles a template or a new blank file carries, not the document's title.
_PLACEHOLDER_TITLE = re.compile(
    r"[\[【(<]?\s*(?:(?:document|doc|文档)?\s*(?:title|标题)|untitled|无标题.*"
    r"|(?:document|文档)\s*\d*|新建\s*(?:microsoft\s*)?(?:word\s*)?文档\s*\d*"
    r"|microsoft (?:word|office).*|.*(?:模板|模版|template)"
    r"|.*\.dotx?|normal|空白文档|blank document|(?:click|tap|单击|点击|在此).*)\s*[\]】)>]?",
    re.I)


# The main part of a macro-enabled document or a template (.docm, .dotx, .dotm) is the same
# WordprocessingML as a .docx's; python-docx maps only the .docx type to its document part.
_WORD_MAIN_TYPES = (CT.WML_DOCUMENT_MAIN,
                    "application/vnd.ms-word.document.macroEnabled.main+xml",
                    "application/vnd.openxmlformats-officedocument.wordprocessingml"
                    ".template.main+xml",
                    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml")
for _type in _WORD_MAIN_TYPES:
    PartFactory.part_type_for.setdefault(_type, DocumentPart)


def _open_word(data: bytes) -> Document:
    """The document of a Word package; its macros (a VBA part) are never read or run."""
    part = Package.open(io.BytesIO(data)).main_document_part
    if part.content_type not in _WORD_MAIN_TYPES or not isinstance(part, DocumentPart):
        raise ValueError(f"not a Word document: its main part is {part.content_type}")
    document: Document = part.document
    return document


def parse_docx(data: bytes, limits: ParseLimits) -> ParseResult:
    """Every text part a reader sees, in reading order; heading levels from paragraph styles;
    the title from the core properties unless it is a template's placeholder."""
    document, repaired = open_recovering(data, _open_word, "DOCX")
    check_no_dtd(document.part.package)
    pictures = Pictures(limits)
    reader = _Reader(document.part, Notes.of(document.part), pictures, limits.include_hidden)
    blocks = reader.blocks(document.element.body)
    blocks += margin_blocks(margin_texts(document.part, limits.include_hidden)
                            + _margin_pictures(document.part, pictures), reader.page)
    if limits.include_comments:
        blocks += [Block(kind=BlockKind.PARAGRAPH, text=f"批注：{text}", page=reader.page)
                   for text in comment_texts(document.part)]
    skipped, skipped_chars = unindexed_parts(document.part, limits.include_comments,
                                             limits.include_hidden)
    result = ParseResult(blocks, reader.page, chars_seen=reader.seen + skipped_chars,
                         skipped=reader.skipped + skipped + pictures.skipped,
                         chars_skipped=reader.chars_skipped + skipped_chars,
                         ocr_confidences=pictures.confidences)
    if repaired:
        result.skipped["parts_repaired"] = len(repaired)
    title = cell_text(document.core_properties.title)
    if title and not _PLACEHOLDER_TITLE.fullmatch(title):
        result.title, result.title_source = title, "metadata"
    return result


def _margin_pictures(part: DocumentPart, pictures: Pictures) -> list[str]:
    """The text of the headers' and footers' pictures (a letterhead's EMF with the company's
    name), read once with the margins' text, after the body's pictures."""
    texts = []
    for rel in part.rels.values():
        if rel.is_external or rel.reltype not in (RT.HEADER, RT.FOOTER):
            continue
        images = [image.target_part.blob for image in rel.target_part.rels.values()
                  if not image.is_external and image.reltype == RT.IMAGE]
        texts += [block.text for blob in images for block in pictures.blocks(blob, 1)
                  if block.kind != BlockKind.TABLE]
    return texts


@dataclass
class _Line:
    """What one paragraph holds: its text, the notes it cites, and the blocks anchored in it
    (text boxes, alt text) that follow it."""

    parts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    anchored: list[Block] = field(default_factory=list)
    page_breaks: int = 0
    hidden: bool = False  # it holds text formatted hidden, left out


class _Reader:
    """Reads block-level content into blocks, counting what it sees and what it leaves out."""

    def __init__(self, part: DocumentPart, notes: Notes, pictures: Pictures,
                 include_hidden: bool = False) -> None:
        self.part = part
        self.notes = notes
        self.pictures = pictures
        self.include_hidden = include_hidden
        self.numbering = Numbering.of(part)
        self._hidden_styles: dict[str, bool] = {}
        self.page = 1
        self.seen = 0  # visible characters of all text read or skipped on purpose
        self.skipped: Counter[str] = Counter()
        self.chars_skipped = 0
        self._styles: dict[str | None, str] = {}

    def blocks(self, container: etree._Element) -> list[Block]:
        """The body, a text box, a note or a content control: paragraphs and tables."""
        out: list[Block] = []
        for child in self._children(container):
            if child.tag == W + "p":
                out += self._paragraph(child)
            elif child.tag == W + "tbl":
                out += self._table(child, caption_before(out))
        return out

    def _children(self, element: etree._Element, tag: str | None = None
                  ) -> Iterator[etree._Element]:
        """Block-level children (or those of `tag`) in order, read through the marks around
        them (content controls, custom XML, tracked insertions and moves); deleted and
        moved-away content is left out."""
        for child in element:
            inner: etree._Element | None
            if child.tag in _NOT_READ:
                continue
            if child.tag == W + "sdt":
                inner = self._sdt_content(child)
            elif child.tag == _MC + "AlternateContent":
                inner = _branch(child)
            elif child.tag in _WRAPPERS:
                inner = child
            else:
                if tag is None or child.tag == tag:
                    yield child
                continue
            if inner is not None:
                yield from self._children(inner, tag)

    def _sdt_content(self, sdt: etree._Element) -> etree._Element | None:
        """A content control's content, unless it holds a template's placeholder prompt
        ("单击或点击此处输入文字") or a table of contents (generated from the headings, it would
        repeat every clause number as a clause of its own)."""
        content = sdt.find(W + "sdtContent")
        gallery = sdt.find(f"{W}sdtPr/{W}docPartObj/{W}docPartGallery")
        if content is None:
            return None
        if sdt.find(f"{W}sdtPr/{W}showingPlcHdr") is not None:
            self._skip("placeholder_text", content)
            return None
        if gallery is not None and gallery.get(W + "val") == "Table of Contents":
            self._skip("table_of_contents", content, len(content.findall(f".//{W}p")))
            return None
        return content

    def _skip(self, kind: str, element: etree._Element, count: int = 1) -> None:
        chars = seen_chars(element)
        self.seen += chars
        self.chars_skipped += chars
        self.skipped[kind] += count

    def _paragraph(self, p: etree._Element) -> list[Block]:
        """The paragraph with the notes it cites appended (a heading's notes follow it as a
        paragraph, so the heading stays a heading), then what is anchored in it."""
        style = self._style(p)
        if _TOC_STYLE.fullmatch(style):
            self._skip("table_of_contents", p)
            return []
        page, line = self.page, _Line()
        label = self.numbering.label(p)
        self._inline(p, line)
        self.page += line.page_breaks
        if line.hidden:
            self.skipped["hidden_text"] += 1
        text, notes = cell_text("".join(line.parts)), cell_text("".join(line.notes))
        if text and label:  # Word's automatic number ("第一条", "1.2"): counted even when empty
            self.seen += visible_chars(label)
            text = cell_text(label + text)
        level = _style_level(style)
        blocks = []
        if text and level:
            blocks.append(Block(kind=BlockKind.HEADING, text=text, page=page, level=level))
            text = ""
        if text or notes:
            blocks.append(Block(kind=BlockKind.PARAGRAPH, text=text + notes, page=page))
        return blocks + line.anchored

    def _inline(self, element: etree._Element, line: _Line) -> None:
        """Runs in order, through hyperlinks, fields, smart tags, inline content controls,
        tracked insertions and drawings; a text box or an alt text met on the way is anchored
        to the paragraph."""
        for child in element:
            tag = child.tag
            if not isinstance(tag, str) or tag in _NOT_READ:
                continue
            if tag == W + "t":
                line.parts.append(child.text or "")
                self.seen += visible_chars(child.text or "")
            elif tag in _CHARACTERS:
                line.parts.append(_CHARACTERS[tag])
            elif tag == W + "br":
                if child.get(W + "type") == "page":
                    line.page_breaks += 1
                else:
                    line.parts.append("\n")
            elif tag == W + "r" and not self.include_hidden and self._hidden(child):
                chars = seen_chars(child)
                self.seen += chars
                self.chars_skipped += chars
                line.hidden = line.hidden or chars > 0
            elif tag in _NOTE_REFERENCES:
                self._cite(child, line)
            elif tag == W + "txbxContent":
                line.anchored += self.blocks(child)
            elif tag == _DOC_PR:
                self._alt_text(child.get("descr", ""), line)
            elif tag == CHART:
                self._chart(child.get(_R_ID, ""), line)
            elif tag in _PICTURES:
                self._picture(child.get(_R_EMBED) or child.get(_R_ID) or "", line)
            else:
                inner = (self._sdt_content(child) if tag == W + "sdt" else
                         _branch(child) if tag == _MC + "AlternateContent" else child)
                if inner is not None:
                    self._inline(inner, line)

    def _cite(self, reference: etree._Element, line: _Line) -> None:
        """The mark in place ("[注1]"; none when the author typed a custom one after it) and the
        note's text kept for the end of the paragraph."""
        cited = self.notes.cite(reference)
        if cited is None:
            return
        kind, number, body = cited
        custom_mark = reference.get(W + "customMarkFollows") in ("1", "true", "on")
        label = NOTE_LABELS[kind] + ("" if custom_mark else str(number))
        if not custom_mark:
            line.parts.append(f"[{label}]")
        page = self.page
        text = " ".join(b.text for b in self.blocks(body) if b.kind != BlockKind.TABLE)
        self.page = page  # a break inside a note is not a page of the body
        line.notes.append(f"（{label}：{text}）")

    def _chart(self, rel_id: str, line: _Line) -> None:
        """A chart's title, axis titles and series, anchored like a text box."""
        part = self.part.related_parts.get(rel_id)
        if part is None:
            return
        for text in chart_lines(part.blob):
            self.seen += visible_chars(text)
            line.anchored.append(Block(kind=BlockKind.PARAGRAPH, text=text, page=self.page))

    def _picture(self, rel_id: str, line: _Line) -> None:
        """The text OCR reads in a picture (ingest.parse.pictures), anchored like alt text."""
        part = self.part.related_parts.get(rel_id)
        read = self.pictures.blocks(part.blob, self.page) if part is not None else []
        self.seen += indexed_chars(read)
        line.anchored += read

    def _alt_text(self, description: str, line: _Line) -> None:
        """A picture's description is indexed when it describes (a chart's figures, an org
        chart's departments): Word's own generated captions and file or shape names only
        count as seen, they would match searches for "图片" or "png" and nothing else."""
        text = cell_text(description)
        chars = visible_chars(text)
        self.seen += chars
        if chars >= _MIN_ALT_CHARS and not (_GENERATED_ALT.search(text)
                                             or _PICTURE_NAME.fullmatch(text)):
            line.anchored.append(Block(kind=BlockKind.PARAGRAPH, text=f"(图片:{text})",
                                       page=self.page))
        elif chars:
            self.skipped["alt_text"] += 1
            self.chars_skipped += chars

    def _table(self, tbl: etree._Element, caption: str) -> list[Block]:
        """The table's rows (merged cells copied into every position they cover, deleted rows
        left out), then each table nested in a cell as a table of its own: folded into the cell
        its rows would lose their own headers ("城市: 一线城市; 金额: 600元")."""
        page = self.page
        grid: list[list[str | None]] = []
        nested: list[tuple[int, int, etree._Element]] = []
        for tr in self._children(tbl, W + "tr"):
            if tr.find(f"{W}trPr/{W}del") is not None:
                continue
            row: list[str | None] = [""] * _number(tr.find(f"{W}trPr/{W}gridBefore"), 0)
            for tc in self._children(tr, W + "tc"):
                span = max(1, _number(tc.find(f"{W}tcPr/{W}gridSpan"), 1))
                merge = tc.find(f"{W}tcPr/{W}vMerge")
                if merge is not None and merge.get(W + "val", "continue") == "continue":
                    row += [None] * span  # the cell above covers this one
                    continue
                texts = []
                for child in self._children(tc):
                    if child.tag == W + "p":
                        texts += [block.text for block in self._paragraph(child)]
                    elif child.tag == W + "tbl":
                        nested.append((len(grid), len(row), child))
                row += [cell_text("\n".join(texts))] * span
            grid.append(row)
        blocks = grid_blocks(grid, page, caption)
        filled = fill_merged(grid)
        for r, c, inner in nested:
            blocks += self._table(inner, _nested_caption(filled, r, c, caption))
        return blocks

    def _hidden(self, run: etree._Element) -> bool:
        """A run formatted hidden (Word's Font > Hidden: shown to nobody who has not turned on
        "show hidden text"), directly or by its character style."""
        vanish = run.find(f"{W}rPr/{W}vanish")
        if vanish is not None:
            return _on(vanish)
        style = run.find(f"{W}rPr/{W}rStyle")
        style_id = style.get(W + "val") if style is not None else None
        if not style_id:
            return False
        if style_id not in self._hidden_styles:
            character = self.part.get_style(style_id, WD_STYLE_TYPE.CHARACTER)
            self._hidden_styles[style_id] = (isinstance(character, CharacterStyle)
                                             and bool(character.font.hidden))
        return self._hidden_styles[style_id]

    def _style(self, p: etree._Element) -> str:
        style = p.find(f"{W}pPr/{W}pStyle")
        style_id = style.get(W + "val") if style is not None else None
        if style_id not in self._styles:
            found = self.part.get_style(style_id, WD_STYLE_TYPE.PARAGRAPH)  # None: no default
            self._styles[style_id] = (found.name if found is not None else None) or ""
        return self._styles[style_id]


def _branch(alternate: etree._Element) -> etree._Element | None:
    """Markup Compatibility stores a drawing twice (a DrawingML Choice, a VML Fallback for old
    readers): only the first is read, else every text box would be read twice."""
    choice = alternate.find(_MC + "Choice")
    return choice if choice is not None else alternate.find(_MC + "Fallback")


def _nested_caption(grid: list[list[str]], r: int, c: int, caption: str) -> str:
    """Where a nested table sits: the outer caption, its row's first cell, its column's header
    ("表1 差旅标准 / 住宿费 / 标准")."""
    key = grid[r][0] if c > 0 else ""
    header = grid[0][c] if r > 0 and c < len(grid[0]) else ""
    return " / ".join(dict.fromkeys(part for part in (caption, key, header) if part))


def _on(toggle: etree._Element) -> bool:
    """A WordprocessingML on/off property: on unless its value says off."""
    return toggle.get(W + "val", "true") not in ("0", "false", "off")


def _number(element: etree._Element | None, default: int) -> int:
    value = element.get(W + "val", "") if element is not None else ""
    return min(int(value), 64) if value.isdigit() else default  # a grid has at most 63 columns


def _style_level(style: str) -> int | None:
    if style == "Title":
        return 1
    match = re.fullmatch(r"Heading (\d)", style)
    return int(match.group(1)) if match else None
