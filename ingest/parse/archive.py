"""Office files are ZIP archives: their declared sizes are checked before anything is unpacked.

A 2 MB `.docx` can hold a few GB of XML (a zip bomb) that a parser would build a tree of in
memory. The central directory declares every member's unpacked size, and Python's zipfile never
unpacks more than a member declares (a member that holds more fails its CRC check), so checking
the declared sizes bounds what any parser can be handed. No XML part may declare a DTD, so no
parser is handed an entity to expand.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from collections.abc import Callable
from typing import TypeVar

from lxml import etree

from ingest.parse.errors import ParseError

MAX_MEMBERS = 10_000
MAX_UNPACKED_BYTES = 1024 * 1024 * 1024  # every member together (images are stored compressed)
MAX_XML_BYTES = 128 * 1024 * 1024  # the XML parts together: parsers build trees ~10x this size
MAX_RATIO = 200  # a member this much smaller packed than unpacked (and large) is a bomb
MAX_PROLOG_BYTES = 64 * 1024  # what may come before an XML part's root element
_ROOT_START = re.compile(rb"<(?![?!])")
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)
T = TypeVar("T")
log = logging.getLogger(__name__)


def check_archive(data: bytes, kind: str, check_dtd: bool = True) -> None:
    """ParseError with the reason when the archive declares more than a document could hold.
    `check_dtd=False` for formats whose XML parts may declare one and are read by parsers
    that expand no entity (EPUB's XHTML chapters start with <!DOCTYPE html>)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ParseError(f"not a readable {kind} file: {type(exc).__name__}: {exc}") from None
    if len(members) > MAX_MEMBERS:
        raise ParseError(f"{kind} archive has {len(members)} parts, over {MAX_MEMBERS}")
    if any(m.flag_bits & 0x1 for m in members):
        raise ParseError(f"{kind} file is encrypted (password-protected): not read")
    unpacked = sum(m.file_size for m in members)
    xml = sum(m.file_size for m in members if m.filename.endswith((".xml", ".rels")))
    if unpacked > MAX_UNPACKED_BYTES or xml > MAX_XML_BYTES:
        raise ParseError(
            f"{kind} file unpacks to {unpacked / 1024 / 1024:.0f} MB ({xml / 1024 / 1024:.0f} MB "
            f"of XML), over the {MAX_UNPACKED_BYTES >> 20} MB / {MAX_XML_BYTES >> 20} MB limits: "
            "a zip bomb or not a document")
    if check_dtd:
        _check_prologs(data, kind, [m for m in members if m.filename.endswith((".xml", ".rels"))])
    for m in members:
        if m.file_size > 10 * 1024 * 1024 and m.file_size > MAX_RATIO * max(m.compress_size, 1):
            ratio = m.file_size // max(m.compress_size, 1)
            raise ParseError(f"{kind} part {m.filename} unpacks {ratio} times its packed size "
                             f"({m.file_size >> 20} MB): a zip bomb")


def _check_prologs(data: bytes, kind: str, parts: list[zipfile.ZipInfo]) -> None:
    """ParseError if an XML part declares a DTD. Office files never do (ECMA-376 Part 2 forbids
    it), and a DTD's entities are how a few bytes of XML expand to gigabytes (billion laughs)
    in whichever library reads the part (openpyxl's parser expands them). Only each part's
    prolog, up to its root element, is unpacked."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for member in parts:
            with archive.open(member) as part:
                head = part.read(MAX_PROLOG_BYTES)
            root = _ROOT_START.search(head)
            prolog = head[:root.start()] if root else head
            if _DOCTYPE.search(prolog) or (root is None and len(head) == MAX_PROLOG_BYTES):
                raise ParseError(f"{kind} part {member.filename} declares a DTD (or hides its "
                                 "root element): Office files never do; not read")


# Entities never expanded, nothing loaded: the parser for every XML part kbflow reads itself.
SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           huge_tree=False, remove_comments=True)


# libxml2's recovery: it reads past a broken tag, as Office and LibreOffice open such a part
_RECOVER_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                               huge_tree=False, remove_comments=True, recover=True)


def office_part(data: bytes, what: str, recover: bool = False) -> etree._Element:
    """An Office part's root ("a chart part", "a comments part"), refused as not well-formed or
    when it declares a DTD, which Office files never do. `recover`: a part that is not
    well-formed is read as libxml2 recovers it (logged), as Office and LibreOffice open it,
    and refused only when nothing can be read of it."""
    try:
        root = etree.fromstring(data, SAFE_XML)
    except etree.XMLSyntaxError as exc:
        recovered = _recovered(data) if recover else None
        if recovered is None:
            raise ParseError(f"{what} is not well-formed XML: {exc}") from exc
        log.warning("%s is not well-formed XML, read as recovered: %s", what, exc)
        root = recovered
    if root.getroottree().docinfo.doctype:
        raise ParseError(f"{what} declares a DTD, which Office files must not: not read")
    return root


def _recovered(data: bytes) -> etree._Element | None:
    try:
        return etree.fromstring(data, _RECOVER_XML)
    except etree.XMLSyntaxError:  # nothing to recover (an empty part)
        return None


def open_recovering(data: bytes, open_package: Callable[[bytes], T], kind: str
                    ) -> tuple[T, list[str]]:
    """`open_package(data)`, and the parts that were not well-formed XML. python-pptx and
    python-docx parse every part when they open a file, so one broken part (PHPPresentation
    wrote a master's `<p:nvSpPr` without its `>`) failed a file whose pages PowerPoint, Word
    and LibreOffice show: then the package is opened again with such parts read as libxml2
    recovers them (`recovered_archive`), and they are logged."""
    try:
        return open_package(data), []
    except etree.XMLSyntaxError:
        recovered, repaired = recovered_archive(data)
        if not repaired:
            raise
        log.warning("%s parts not well-formed XML, read as recovered: %s", kind,
                    ", ".join(repaired))
        return open_package(recovered), repaired


def recovered_archive(data: bytes) -> tuple[bytes, list[str]]:
    """The package with each XML part that is not well-formed replaced by what libxml2's
    recovery reads of it (a writer's bug in one master or layout must not cost the deck its
    slides), and the names of those parts. A part recovery cannot read at all is left as is.
    Called after `check_archive`, so sizes are bounded and no part declares a DTD."""
    repaired = []
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            content = source.read(member)
            if member.filename.endswith((".xml", ".rels")):
                try:
                    etree.fromstring(content, SAFE_XML)
                except etree.XMLSyntaxError:
                    root = etree.fromstring(content, _RECOVER_XML)
                    if root is not None:
                        content = etree.tostring(root, xml_declaration=True, encoding="UTF-8",
                                                 standalone=True)
                        repaired.append(member.filename)
            target.writestr(member, content)
    return out.getvalue(), repaired
