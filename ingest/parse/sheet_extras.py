"""What an XLSX sheet shows beside its cells: the drawing over it (text boxes and shapes,
charts, pictures, and the embedded objects' previews of its legacy VML drawing), its notes
(those Excel shows on the sheet apart) and its print header and footer, WPS Office's pictures
in cells; and the columns it hides.
Read-only openpyxl reads cells only, so these parts are found in the package by the sheet's
relationships and parsed here with entity expansion off.

A drawing's objects are read in the order of the cell they are anchored at (top to bottom,
then left to right). Print headers and footers keep their text, not their codes (`&P` page,
`&D` date, `&"宋体,加粗"` font …); they are indexed once per workbook, at its end.
"""

from __future__ import annotations

import io
import logging
import posixpath
import re
import zipfile
from collections.abc import Sequence
from typing import TypeVar

from lxml import etree

from ingest.models import Block, BlockKind
from ingest.parse.boilerplate import is_page_number
from ingest.parse.charts import C, chart_lines
from ingest.parse.comments import cell_comments
from ingest.parse.coverage import visible_chars
from ingest.parse.errors import ParseError
from ingest.parse.pictures import Pictures
from ingest.parse.sheet_vml import VmlError, shown_notes, vml_pictures
from ingest.parse.tables import cell_text

T = TypeVar("T")
Span = tuple[int, int, str]  # as ingest.parse.spreadsheet's: first and last column, the value
_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_R_ID, _R_EMBED = _R + "id", _R + "embed"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_ANCHORS = (_XDR + "twoCellAnchor", _XDR + "oneCellAnchor", _XDR + "absoluteAnchor")
_MARGINS = ("oddHeader", "oddFooter", "evenHeader", "evenFooter", "firstHeader", "firstFooter")
# &D date, &T time, &Z path, &F file, &A sheet, &G picture, &B &I &U &E &S &X &Y styles, &K
# colour, &"font,style", &12 size (&P page and &N pages are read as 1, so that a footer that is
# only a page number is known as one); &L &C &R start the left, centre and right parts
_CODE = re.compile(r'&(?:"[^"]*"|K[0-9A-Fa-f]{6}|K\d\d[+-]\d{3}|\d+|[DTZFAGBIUESXY])')
_PAGE_CODE = re.compile(r"&[PN](?:[+-]\d+)?")
_PART = re.compile(r"&[LCR]")
_REF = re.compile(r"\$?([A-Z]{1,3})\$?(\d{1,7})")
MAX_COLUMNS = 16_384  # Excel's last column, XFD
MAX_DRAWING_OBJECTS = 10_000  # objects of one drawing read; more is not a sheet anyone reads
log = logging.getLogger(__name__)
_DISPIMG = re.compile(r'=DISPIMG\("([^"]{1,200})",\s*\d+\)')  # CellPictures
_GENERATED_ALT = re.compile(r".*(?:automatically generated|自动生成).*|[\w\- ]+\.(?:png|jpe?g"
                            r"|gif|bmp|tiff?|emf|wmf|svg)", re.I)


def drawing_blocks(archive: zipfile.ZipFile, sheet_part: str, page: int, pictures: Pictures
                   ) -> list[Block]:
    """The text of the drawing over a sheet: shapes' and text boxes' paragraphs, charts'
    lines (ingest.parse.charts), pictures' alt text and the text OCR reads in them
    (ingest.parse.pictures), with the pictures of its legacy VML drawing (embedded objects'
    previews: ingest.parse.sheet_vml), in anchor order."""
    blocks: list[Block] = []
    objects: list[tuple[tuple[int, int], etree._Element | str, dict[str, str]]] = []
    for kind, _, drawing in _relationships(archive, sheet_part):
        if kind.endswith("/vmlDrawing"):
            objects += [(place, target, {}) for place, target
                        in _legacy_pictures(archive, drawing, pictures)]
        elif kind.endswith("/drawing"):
            related = {rel_id: target for _, rel_id, target in _relationships(archive, drawing)}
            for anchor in _anchors(_xml(archive, drawing)):
                if len(objects) >= MAX_DRAWING_OBJECTS:
                    raise ParseError(f"a sheet's drawing has more than {MAX_DRAWING_OBJECTS:,}"
                                     " objects")
                objects.append((_place(anchor), anchor, related))
    for _, item, related in sorted(objects, key=lambda entry: entry[0]):
        if isinstance(item, str):  # a VML picture's part
            blocks += pictures.blocks(archive.read(item), page)
            continue
        for line in _object_lines(archive, item, related, pictures, page):
            blocks.append(line if isinstance(line, Block) else
                          Block(kind=BlockKind.PARAGRAPH, text=line, page=page))
    return blocks


def chart_sheets(archive: zipfile.ZipFile) -> dict[str, tuple[str, str]]:
    """The workbook's chart sheets (tabs that are one chart, "Chart1") by name: their part and
    state ("hidden" …). openpyxl reads nothing of them but their name, not even their state."""
    workbook = next((target for kind, _, target in _relationships(archive, "/")
                     if kind.endswith("/officeDocument")), None)
    if workbook is None:
        return {}
    parts = {rel_id: target for kind, rel_id, target in _relationships(archive, workbook)
             if kind.endswith("/chartsheet")}
    return {sheet.get("name", ""): (parts[rel_id], sheet.get("state", "visible"))
            for sheet in _xml(archive, workbook).iter(_MAIN + "sheet")
            if (rel_id := sheet.get(_R_ID, "")) in parts}


def without_empty_names(data: bytes) -> bytes:
    """The package with the defined names that name nothing left out of its workbook part:
    LibreOffice writes an .xlsb's named ranges and print titles it cannot convert as empty
    `definedName`s, on which openpyxl fails the whole workbook (kbflow reads no defined name).
    Unchanged bytes when the workbook has none."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        workbook = next((target for kind, _, target in _relationships(archive, "/")
                         if kind.endswith("/officeDocument")), None)
        if workbook is None:
            return data
        root = _xml(archive, workbook)
        empty = [name for name in root.iter(_MAIN + "definedName") if not (name.text or "").strip()]
        if not empty:
            return data
        for name in empty:
            parent = name.getparent()
            if parent is not None:
                parent.remove(name)
        log.info("%d empty defined names left out of %s", len(empty), workbook)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
            for member in archive.infolist():
                target.writestr(member, etree.tostring(root, xml_declaration=True,
                                                       encoding="UTF-8", standalone=True)
                                if member.filename == workbook else archive.read(member))
    return out.getvalue()


def chart_sheet_blocks(archive: zipfile.ZipFile, title: str, part: str, page: int,
                       pictures: Pictures) -> list[Block]:
    """A chart sheet: its name as the heading, then its chart's title, series and categories."""
    return [Block(kind=BlockKind.HEADING, text=cell_text(title), page=page, level=1),
            *drawing_blocks(archive, part, page, pictures)]


def sheet_comments(archive: zipfile.ZipFile, sheet_part: str) -> tuple[list[str], list[str]]:
    """The text of each note (comment) on the sheet (the legacy part, which Excel also writes
    for threaded comments): those Excel shows on the sheet (its VML drawing says which), and the
    others. A drawing not readable shows none (skipped with its reason)."""
    related = _relationships(archive, sheet_part)
    shown: set[tuple[int, int]] = set()
    for kind, _, target in related:
        if kind.endswith("/vmlDrawing"):
            try:
                shown |= shown_notes(archive, target)
            except VmlError as error:
                log.warning("legacy (VML) drawing skipped: %s", error)
    notes = [note for kind, _, target in related if kind.endswith("/comments")
             and target in archive.NameToInfo for note in cell_comments(archive.read(target))]
    on_sheet = [text for ref, text in notes if _cell(ref) in shown]
    return on_sheet, [text for ref, text in notes if _cell(ref) not in shown]


def _cell(ref: str) -> tuple[int, int] | None:
    """A cell reference ("B2") as 0-based (row, column), as VML anchors notes."""
    match = _REF.fullmatch(ref.strip().upper())
    if not match:
        return None
    column = 0
    for letter in match.group(1):
        column = column * 26 + ord(letter) - 64
    return int(match.group(2)) - 1, column - 1


def margin_texts(header_footer: etree._Element) -> list[str]:
    """A sheet's print headers and footers (its `headerFooter` element) as text, each
    without its codes and parts holding only a page number."""
    texts = []
    for element in header_footer:
        if isinstance(element.tag, str) and etree.QName(element).localname in _MARGINS:
            source = (element.text or "").replace("&&", "\0")  # "&&" is a literal "&"
            parts = (cell_text(_CODE.sub(" ", _PAGE_CODE.sub("1", part)).replace("\0", "&"))
                     for part in _PART.split(source))
            text = " ".join(part for part in parts if part and not is_page_number(part))
            if text:
                texts.append(text)
    return texts


def _object_lines(archive: zipfile.ZipFile, anchor: etree._Element, related: dict[str, str],
                  pictures: Pictures, page: int) -> list[str | Block]:
    lines: list[str | Block] = []
    for element in anchor.iter(_XDR + "txBody", C + "chart", _XDR + "pic"):
        if element.tag == _XDR + "txBody":
            paragraphs = ("".join(t.text or "" for t in p.iter(_A + "t"))
                          for p in element.iter(_A + "p"))
            lines += [text for text in map(cell_text, paragraphs) if text]
        elif element.tag == C + "chart":
            target = related.get(element.get(_R_ID, ""))
            if target and target in archive.NameToInfo:
                lines += chart_lines(archive.read(target))
        else:
            alt = cell_text(" ".join(element.xpath("./*[1]/*[1]/@descr")))
            if alt and not _GENERATED_ALT.fullmatch(alt):
                lines.append(f"(图片:{alt})")
            blip = element.find(f".//{_A}blip")
            target = related.get(blip.get(_R_EMBED, "")) if blip is not None else None
            if target and target in archive.NameToInfo:
                lines += pictures.blocks(archive.read(target), page)
    return lines


def _legacy_pictures(archive: zipfile.ZipFile, drawing: str, pictures: Pictures
                     ) -> list[tuple[tuple[int, int], str]]:
    """A VML drawing's pictures and where they are; a drawing not readable (or its
    relationships) is skipped with its reason (logged, counted in the document's skipped
    parts), its hidden pictures counted."""
    try:
        images = {rel_id: target for _, rel_id, target in _relationships(archive, drawing)}
        found, hidden = vml_pictures(archive, drawing, images)
    except (VmlError, ParseError) as error:
        pictures.skipped["legacy_drawings_unreadable"] += 1
        log.warning("legacy (VML) drawing skipped: %s", error)
        return []
    if hidden:
        pictures.skipped["hidden_pictures"] += hidden
    return found


def _anchors(drawing: etree._Element) -> list[etree._Element]:
    """A drawing's anchored objects in file order. Excel wraps those that use a newer feature
    in Markup Compatibility's `mc:AlternateContent` (every form control: a check box's or a
    button's label; shapes with a14 effects): of its branches the first Choice holding an
    object is read, else the Fallback, as a reader that knows DrawingML shows them."""
    found = []
    for child in drawing.iterchildren(_MC + "AlternateContent", *_ANCHORS):
        if child.tag != _MC + "AlternateContent":
            found.append(child)
            continue
        branches = [*child.iterchildren(_MC + "Choice"), *child.iterchildren(_MC + "Fallback")]
        found += next((anchors for branch in branches
                       if (anchors := list(branch.iterchildren(*_ANCHORS)))), [])
    return found


def _place(anchor: etree._Element) -> tuple[int, int]:
    """The row and column an object is anchored at (an absolute anchor: the top left)."""
    start = anchor.find(_XDR + "from")
    if start is None:
        return (0, 0)
    return (cell_index(start.findtext(_XDR + "row"), 0),
            cell_index(start.findtext(_XDR + "col"), 0))


def cell_index(text: str | None, default: int) -> int:
    """A row or column number as a file writes it; anything else a hostile or broken file may
    hold there ("²", which str.isdigit accepts and int refuses, or thousands of digits) is
    `default`, so the object or row keeps a place instead of failing the file."""
    value = (text or "").strip()
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 9 else default


def _relationships(archive: zipfile.ZipFile, part: str) -> list[tuple[str, str, str]]:
    """A part's internal relationships: (type, id, the target part's name)."""
    folder, name = posixpath.split(part.lstrip("/"))
    rels = _member(archive, posixpath.join(folder, "_rels", name + ".rels"))
    if rels is None:
        return []
    out = []
    for rel in _xml(archive, rels).iter(_REL):
        target = rel.get("Target", "")
        if rel.get("TargetMode") == "External" or not target:
            continue
        resolved = _member(archive, target.lstrip("/") if target.startswith("/")
                           else posixpath.normpath(posixpath.join(folder, target)))
        if resolved is not None:
            out.append((rel.get("Type", ""), rel.get("Id", ""), resolved))
    return out


def _member(archive: zipfile.ZipFile, name: str) -> str | None:
    """The archive's member of that part name; part names are case-insensitive (ECMA-376
    Part 2, 6.2.2.3), and writers do mix "Sheet1.xml" with "_rels/sheet1.xml.rels"."""
    if name in archive.NameToInfo:
        return name
    lower = name.lower()
    return next((member for member in archive.NameToInfo if member.lower() == lower), None)


def _xml(archive: zipfile.ZipFile, part: str) -> etree._Element:
    """A part's root, parsed with entity expansion and the network off."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False)
    try:
        with archive.open(part) as source:
            root = etree.parse(source, parser)
    except (etree.XMLSyntaxError, KeyError, OSError) as exc:  # OSError: bytes not of its encoding
        raise ParseError(f"XLSX part {part} is not readable XML: {exc}") from exc
    if root.docinfo.doctype:
        raise ParseError(f"XLSX part {part} declares a DTD, which Office files must not")
    return root.getroot()


class Columns:
    """A sheet's hidden columns (1-based): their cells are taken out of every row, and the
    merged areas over them narrowed to the columns shown."""

    def __init__(self, hidden: set[int]) -> None:
        self.hidden = hidden
        self.order = sorted(hidden)
        self.seen: set[int] = set()  # hidden columns that held text

    def take_hidden(self, cells: list[str]) -> int:
        """The visible characters of the row's hidden cells, noting which columns held any."""
        chars = 0
        for column in self.order:
            if column > len(cells):
                break
            if cells[column - 1]:
                self.seen.add(column)
                chars += visible_chars(cells[column - 1])
        return chars

    def shown(self, cells: Sequence[T]) -> list[T]:
        return [cell for c, cell in enumerate(cells, 1) if c not in self.hidden]

    def spans(self, spans: list[Span]) -> list[Span]:
        out = []
        for first, last, value in spans:
            shown = [c for c in range(first, last + 1) if c not in self.hidden]
            if shown:
                out.append((self._place(shown[0]), self._place(shown[-1]), value))
        return out

    def _place(self, column: int) -> int:
        return column - sum(1 for c in self.hidden if c < column)


def column_range(col: etree._Element) -> range:
    """The columns a <col> element describes, within the sheet's columns."""
    first, last = _bound(col.get("min")), _bound(col.get("max"))
    return range(first, max(first, last) + 1)


def _bound(value: str | None) -> int:
    return min(cell_index(value, 1), MAX_COLUMNS)


class CellPictures:
    """WPS Office's pictures in cells (嵌入单元格图片, its DISPIMG function): the cell shows the
    picture, while the value it stores is the formula's text, `=DISPIMG("ID_…",1)`, which no
    one sees (Excel and LibreOffice show an error there). Such a cell reads "(图片:alt text)",
    as a drawing's picture does, and the pictures met in a sheet are read (OCR,
    ingest.parse.pictures) after its rows. WPS keeps them in `xl/cellimages.xml` of an .xlsx,
    and in that part of the zip an .et or .xls holds in its `ETCellImageData` stream."""

    def __init__(self, archive: zipfile.ZipFile, pictures: Pictures) -> None:
        self.archive, self.pictures = archive, pictures
        self.found: dict[str, tuple[str, str | None]] = {}  # name -> alt text, picture part
        self.met: list[str] = []  # picture parts to read, each once (a logo in 10,000 cells)
        self.taken: set[str] = set()
        part = _member(archive, "xl/cellimages.xml")
        if part is None:
            return
        related = {rel_id: target for _, rel_id, target in _relationships(archive, part)}
        for picture in _xml(archive, part).iter(_XDR + "pic"):
            if len(self.found) >= MAX_DRAWING_OBJECTS:
                raise ParseError(f"more than {MAX_DRAWING_OBJECTS:,} pictures in cells")
            names, blip = picture.find(f"./{_XDR}nvPicPr/{_XDR}cNvPr"), picture.find(f".//{_A}blip")
            if names is not None and names.get("name"):
                alt = cell_text(names.get("descr") or "")
                self.found[names.get("name", "")] = (
                    "" if _GENERATED_ALT.fullmatch(alt) else alt,
                    related.get(blip.get(_R_EMBED, "")) if blip is not None else None)

    def text(self, value: str) -> str:
        """A cell's text: the picture's, for a DISPIMG cell whose picture the file holds."""
        match = _DISPIMG.fullmatch(value) if self.found else None
        if match is None or match[1] not in self.found:
            return value
        alt, target = self.found[match[1]]
        if target and target not in self.taken:
            self.taken.add(target)
            self.met.append(target)
        return f"(图片:{alt})" if alt else "(图片)"

    def blocks(self, page: int) -> list[Block]:
        """The text read in the pictures met since the last call (one sheet's cells)."""
        met, self.met = self.met, []
        return [block for target in met
                for block in self.pictures.blocks(self.archive.read(target), page)]
