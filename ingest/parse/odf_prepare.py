"""An OpenDocument file made ready for LibreOffice's conversion: its fields as the author saw
them when saving, and a spreadsheet's empty tail left out.

A date or time field that is not fixed shows the day it is opened, a file-name field the name
of the file as opened (the conversion's temporary `document.odt`), an author or sender field
the user of the converting profile (nobody): opening the file in the conversion service would
index the conversion's day and name, or nothing, where the author saw and saved "07.03.2013",
"Simple Field 2.docx", "Malte Timmermann". The file stores each field's shown text inside its
element, so each such field is replaced by that text before the file is converted (in the
content and in the styles, which hold headers and footers). Fields that follow the document
itself (page numbers, titles, statistics, metadata) are left to LibreOffice.

A sheet saved by OpenOffice often ends in one row "repeated" 65,531 times over 1,024 styled
empty cells; LibreOffice writes every one of them into the xlsx (28 MB of XML for a 3 x 3
table embedded in a deck, 40 s to read under load). Empty rows and cells after a sheet's last
content are not repeated: nothing before them moves, and an empty cell shows nothing.
"""

from __future__ import annotations

import io
import zipfile

from lxml import etree

from ingest.parse.archive import SAFE_XML, check_archive

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_VALUE_TYPE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}value-type"
_VOLATILE = {"date", "time", "file-name", "author-name", "author-initials", "template-name",
             *(f"sender-{part}" for part in (
                 "firstname", "lastname", "initials", "title", "position", "email",
                 "phone-private", "fax", "company", "phone-work", "street", "city",
                 "postal-code", "country", "state-or-province"))}
_PARTS = ("content.xml", "styles.xml")


def prepared(data: bytes) -> bytes:
    """The ODF file `data` with its volatile fields replaced by the text they showed when it was
    saved and its sheets' empty tails not repeated; `data` unchanged when there is neither or
    it cannot be read so (encrypted, damaged: the conversion reports those)."""
    try:
        check_archive(data, "OpenDocument")
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            parts = {info.filename: archive.read(info) for info in infos}
        changed = False
        for name in _PARTS:
            if name in parts:
                rewritten = _rewrite(parts[name])
                if rewritten is not None:
                    parts[name], changed = rewritten, True
    except (ValueError, OSError, zipfile.BadZipFile, etree.XMLSyntaxError):
        return data
    if not changed:
        return data
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info in infos:  # the order kept: `mimetype` first and stored, as ODF requires
            archive.writestr(info, parts[info.filename], compress_type=info.compress_type)
    return out.getvalue()


def _rewrite(part: bytes) -> bytes | None:
    """The part with volatile fields unwrapped and empty tails trimmed; None when unchanged."""
    root = etree.fromstring(part, SAFE_XML)
    trimmed = _trim_tails(root)
    unwrapped = _unwrap_fields(root)
    if not (trimmed or unwrapped):
        return None
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def _unwrap_fields(root: etree._Element) -> bool:
    """Each volatile field element replaced by its text; whether there was one."""
    fields = [e for e in root.iter(f"{{{_TEXT}}}*")
              if etree.QName(e).localname in _VOLATILE]
    for field in fields:
        parent = field.getparent()
        if parent is None:
            continue
        shown = "".join(field.itertext()) + (field.tail or "")
        previous = field.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + shown
        else:
            parent.text = (parent.text or "") + shown
        parent.remove(field)
    return bool(fields)


def _trim_tails(root: etree._Element) -> bool:
    """Empty rows after each sheet's last content, and empty cells after each row's, counted
    once instead of repeated; whether any was."""
    trimmed = False
    for table in root.iter(_TABLE + "table"):
        rows = [r for r in table.iter(_TABLE + "table-row")
                if next(r.iterancestors(_TABLE + "table")) is table]
        for row in reversed(rows):
            if not all(_empty(cell) for cell in row):
                break
            trimmed |= _once(row, _TABLE + "number-rows-repeated")
        for row in rows:
            for cell in reversed(row):
                if not _empty(cell):
                    break
                trimmed |= _once(cell, _TABLE + "number-columns-repeated")
    return trimmed


def _empty(cell: etree._Element) -> bool:
    """A cell showing nothing: no value, no paragraph, no drawing or note anchored in it, and
    not covered by a merged cell (whose span counts the cells it covers)."""
    return cell.tag == _TABLE + "table-cell" and len(cell) == 0 and cell.get(_VALUE_TYPE) is None


def _once(element: etree._Element, repeated: str) -> bool:
    if int(element.get(repeated, "1")) > 1:
        element.set(repeated, "1")
        return True
    return False
