"""EPUB (2 and 3): its XHTML chapters in spine order, each read as HTML is (ingest.parse.html_text),
on the page of its place in the spine; the title from the package's dc:title. The pictures a
chapter shows (`<img>`, SVG `<image>`: a cover with the title, author and publisher drawn on
it) are read after its text, by OCR as Office files' pictures are (ingest.parse.pictures).

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
from urllib.parse import unquote

from lxml import etree

from ingest.models import Block
from ingest.parse.archive import SAFE_XML, check_archive
from ingest.parse.errors import ParseError
from ingest.parse.html_text import html_blocks, read_html
from ingest.parse.pictures import Pictures
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
        pictures, shown = Pictures(limits), set[str]()
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
            markup = archive.read(path)
            body = read_html(markup, _xhtml_encoding(markup)).find("body")
            chapter = html_blocks(body) if body is not None else []
            if not chapter:
                result.empty_pages += 1
            result.blocks += [b.model_copy(update={"page": result.pages}) for b in chapter]
            if body is not None:
                result.blocks += _pictures(body, path, archive, names, pictures, result.pages,
                                           shown)
    result.skipped += pictures.skipped
    result.ocr_confidences = pictures.confidences
    title = package.findtext(f".//{_DC}title")
    if title and normalize(title):
        result.title, result.title_source = normalize(title), "metadata"
    return result


def _pictures(body: etree._Element, chapter: str, archive: zipfile.ZipFile, names: set[str],
              pictures: Pictures, page: int, shown: set[str]) -> list[Block]:
    """What OCR reads in the pictures the chapter shows that the archive holds (an outside
    address or a missing file is left alone), each file read once per book (`shown`), however
    many times the chapters show it."""
    blocks = []
    for element in body.iter("img", "image"):
        source = element.get("src") or element.get("xlink:href") or element.get("href") or ""
        source = unquote(source.split("#")[0].split("?")[0])
        path = posixpath.normpath(posixpath.join(posixpath.dirname(chapter), source))
        if not source or path not in names or path in shown:
            continue
        shown.add(path)
        blocks += pictures.blocks(archive.read(path), page)
    return blocks


def _xhtml_encoding(markup: bytes) -> str | None:
    """UTF-8 for a chapter that names no encoding (no byte-order mark, no declaration, no
    charset): XHTML's default, where an HTML parser would take Latin-1 and index mojibake."""
    head = markup[:1024].lower()
    named = markup.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or (
        b"encoding=" in head or b"charset" in head)
    return None if named else "utf-8"


def _xml(archive: zipfile.ZipFile, path: str, names: set[str]) -> etree._Element:
    if path not in names:
        raise ParseError(f"not a readable EPUB file: {path or 'its package file'} is missing")
    try:
        return etree.fromstring(archive.read(path), SAFE_XML)
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"not a readable EPUB file: {path}: {exc}") from None
