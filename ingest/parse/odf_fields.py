"""OpenDocument fields that LibreOffice would fill anew when it converts the file, kept as the
author saw them when saving.

A date or time field that is not fixed shows the day it is opened, a file-name field the name
of the file as opened (the conversion's temporary `document.odt`), an author or sender field
the user of the converting profile (nobody): opening the file in the conversion service would
index the conversion's day and name, or nothing, where the author saw and saved "07.03.2013",
"Simple Field 2.docx", "Malte Timmermann". The file stores each field's shown text inside its
element, so each such field is replaced by that text before the file is converted (in the
content and in the styles, which hold headers and footers). Fields that follow the document
itself (page numbers, titles, statistics, metadata) are left to LibreOffice.
"""

from __future__ import annotations

import io
import zipfile

from lxml import etree

from ingest.parse.archive import SAFE_XML, check_archive

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_VOLATILE = {"date", "time", "file-name", "author-name", "author-initials", "template-name",
             *(f"sender-{part}" for part in (
                 "firstname", "lastname", "initials", "title", "position", "email",
                 "phone-private", "fax", "company", "phone-work", "street", "city",
                 "postal-code", "country", "state-or-province"))}
_PARTS = ("content.xml", "styles.xml")


def saved_fields(data: bytes) -> bytes:
    """The ODF file `data` with its volatile fields replaced by the text they showed when it was
    saved; `data` unchanged when it has none or cannot be read so (encrypted, damaged: the
    conversion reports those)."""
    try:
        check_archive(data, "OpenDocument")
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            parts = {info.filename: archive.read(info) for info in infos}
        changed = False
        for name in _PARTS:
            if name in parts:
                rewritten = _unwrap_fields(parts[name])
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


def _unwrap_fields(part: bytes) -> bytes | None:
    """The part with each volatile field element replaced by its text; None when it has none."""
    root = etree.fromstring(part, SAFE_XML)
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
    if not fields:
        return None
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")
