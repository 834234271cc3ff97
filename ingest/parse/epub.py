"""EPUB (2 and 3): its XHTML chapters in spine order, each read as HTML is (ingest.parse.html_text),
on the page of its place in the spine; the title from the package's dc:title.

An EPUB is a ZIP archive: its declared sizes are checked first (ingest.parse.archive); a DTD
is allowed (XHTML chapters declare one), since nothing here expands an entity: the container
and package files are read by an XML parser that loads no DTD and resolves no entity, the
chapters by libxml2's HTML parser, which reads no DTD. Only chapters the package lists and the
archive holds are read.
"""

from __future__ import annotations

import io
import posixpath
import zipfile

from lxml import etree

from ingest.parse.archive import SAFE_XML, check_archive
from ingest.parse.errors import ParseError
from ingest.parse.html_text import html_blocks, read_html
from ingest.parse.result import ParseLimits, ParseResult
from ingest.text import normalize

_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_CHAPTER_TYPES = ("application/xhtml+xml", "text/html")


def parse_epub(data: bytes, limits: ParseLimits) -> ParseResult:
    check_archive(data, "EPUB", check_dtd=False)  # chapters: no entity expanded (html_text)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())
        container = _xml(archive, "META-INF/container.xml", names)
        rootfile = container.find(f".//{_CONTAINER}rootfile")
        opf_path = rootfile.get("full-path", "") if rootfile is not None else ""
        package = _xml(archive, opf_path, names)
        base = posixpath.dirname(opf_path)
        items = {item.get("id"): item for item in package.iter(f"{_OPF}item")}
        result = ParseResult(blocks=[], pages=0)
        for itemref in package.iter(f"{_OPF}itemref"):
            item = items.get(itemref.get("idref"))
            if item is None or item.get("media-type") not in _CHAPTER_TYPES:
                continue
            path = posixpath.normpath(posixpath.join(base, item.get("href", "").split("#")[0]))
            if path not in names:
                result.skipped["missing_chapters"] += 1
                continue
            result.pages += 1
            if result.pages > limits.max_pages:
                raise ParseError(f"EPUB has over {limits.max_pages:,} chapters (the "
                                 "parse_max_pages setting)")
            body = read_html(archive.read(path)).find("body")
            chapter = html_blocks(body) if body is not None else []
            if not chapter:
                result.empty_pages += 1
            result.blocks += [b.model_copy(update={"page": result.pages}) for b in chapter]
    title = package.findtext(f".//{_DC}title")
    if title and normalize(title):
        result.title, result.title_source = normalize(title), "metadata"
    return result


def _xml(archive: zipfile.ZipFile, path: str, names: set[str]) -> etree._Element:
    if path not in names:
        raise ParseError(f"not a readable EPUB file: {path or 'its package file'} is missing")
    try:
        return etree.fromstring(archive.read(path), SAFE_XML)
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"not a readable EPUB file: {path}: {exc}") from None
