"""Pictures of an XLSX sheet's legacy VML drawing (`xl/drawings/vmlDrawingN.vml`). Excel keeps
there the preview picture of each embedded object (an OLE chart, a Word document shown as its
first page or as an icon with its name; mostly EMF/WMF, whose text ingest.parse.pictures reads),
and no DrawingML part shows them. Each picture is listed once, at the cell its anchor names, for
ingest.parse.sheet_extras to read in turn with the drawing's other objects.

Only shapes Excel marks `ObjectType="Pict"` are pictures on the sheet: notes are the comments
(read from their own part), form controls hold none, and print header and footer pictures (a VML
part of their own, without ClientData) are not on the sheet. A hidden picture is counted. The
note shapes say which notes Excel shows on the sheet (`shown_notes`).

VML is legacy and not always well-formed (Excel 2003 left `<br>` unclosed in notes), and
hostile like any part: it is streamed with libxml2's recovery, entities and the network off,
refused if it declares a DTD (entities in attributes are expanded even then) or is over
MAX_BYTES; one that cannot be read is skipped with its reason, the sheet read all the same.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator

from lxml import etree

MAX_BYTES = 64 * 1024 * 1024  # a drawing of 20,000 notes is about 14 MB
MAX_PROLOG_BYTES = 64 * 1024  # what may come before the root element (as ingest.parse.archive)
_V = "{urn:schemas-microsoft-com:vml}"
_O = "{urn:schemas-microsoft-com:office:office}"
_X = "{urn:schemas-microsoft-com:office:excel}"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_ROOT_START = re.compile(rb"<(?![?!])")
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
_HIDDEN = re.compile(r"visibility\s*:\s*hidden", re.IGNORECASE)
_CELL = re.compile(r"\s*(\d{1,7})\s*")  # a row or column number (Excel's last row: 1,048,576)


class VmlError(Exception):
    """A VML drawing not read, with the reason."""


def vml_pictures(archive: zipfile.ZipFile, part: str, images: dict[str, str]
                 ) -> tuple[list[tuple[tuple[int, int], str]], int]:
    """The pictures of one VML drawing: ((row, column) of their anchor, the picture's part
    name) in the drawing's order, each part once; and how many are hidden. `images` maps the
    drawing's relationship ids to part names."""
    found: dict[str, tuple[int, int]] = {}
    hidden = 0
    for shape in _shapes(archive, part):
        target = _picture(shape, images)
        if target and _HIDDEN.search(shape.get("style", "")):
            hidden += 1
        elif target and target not in found:
            found[target] = _anchor(shape.findtext(f"{_X}ClientData/{_X}Anchor"))
    return [(place, target) for target, place in found.items()], hidden


def shown_notes(archive: zipfile.ZipFile, part: str) -> set[tuple[int, int]]:
    """The cells (0-based row, column) whose note Excel shows on the sheet ("Show Comment":
    `<x:Visible/>`, not hidden by style): a box of text on the page like a text box, where
    other notes appear only when the pointer rests on their cell."""
    shown = set()
    for shape in _shapes(archive, part):
        data = shape.find(_X + "ClientData")
        if (data is not None and data.get("ObjectType") == "Note"
                and data.find(_X + "Visible") is not None
                and not _HIDDEN.search(shape.get("style", ""))):
            row, column = (_CELL.fullmatch(data.findtext(_X + name) or "")
                           for name in ("Row", "Column"))
            if row and column:
                shown.add((int(row.group(1)), int(column.group(1))))
    return shown


def _shapes(archive: zipfile.ZipFile, part: str) -> Iterator[etree._Element]:
    """The drawing's shapes in order, each let go once the caller has read it."""
    info = archive.NameToInfo[part]
    if info.file_size > MAX_BYTES:
        raise VmlError(f"{part} unpacks to {info.file_size >> 20} MB, over {MAX_BYTES >> 20} MB")
    try:
        with archive.open(info) as source:
            head = source.read(MAX_PROLOG_BYTES)
        root = _ROOT_START.search(head)
        if _DOCTYPE.search(head[:root.start()] if root else head):
            raise VmlError(f"{part} declares a DTD, which Office files must not")
        with archive.open(info) as source:
            for _, shape in etree.iterparse(source, tag=_V + "shape", recover=True,
                                            resolve_entities=False, no_network=True,
                                            load_dtd=False, huge_tree=False):
                yield shape
                shape.clear()  # what was read is let go (a shape a recovery nested in
                while shape.getprevious() is not None:  # this one was read before it)
                    del shape.getparent()[0]  # type: ignore[union-attr]
    except (etree.LxmlError, zipfile.BadZipFile, OSError) as exc:  # OSError: bad encoding
        raise VmlError(f"{part} is not readable: {exc}") from exc


def _picture(shape: etree._Element, images: dict[str, str]) -> str | None:
    """The picture part an `ObjectType="Pict"` shape shows (None for any other shape, or a
    relationship the drawing does not have)."""
    data = shape.find(_X + "ClientData")
    picture = shape.find(_V + "imagedata")
    if data is None or picture is None or data.get("ObjectType") != "Pict":
        return None
    return images.get(picture.get(_O + "relid") or picture.get(_R_ID) or "")


def _anchor(text: str | None) -> tuple[int, int]:
    """The row and column an anchor ("LeftColumn, LeftOffset, TopRow, TopOffset, RightColumn,
    …", 0-based as DrawingML's) starts at; (0, 0) if it is not one."""
    values = (text or "").split(",", 3)[:3]
    cells = [int(match.group(1)) if (match := _CELL.fullmatch(value)) else 0 for value in values]
    return (cells[2], cells[0]) if len(cells) == 3 else (0, 0)
