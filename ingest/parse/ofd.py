"""OFD (GB/T 33190, China's fixed-layout e-document format: e-invoices, official notices): a ZIP
archive of XML. OFD.xml names each document's Document.xml, which lists its pages (and the
template pages they lay over); a page's Content.xml holds TextObjects, each a box with TextCode
runs at positions inside it. Text is read in reading order: runs on one baseline (within half
the font size) make a line, left to right; lines follow top to bottom, and a vertical gap of
over two lines starts a new paragraph. A page's template text (an invoice's printed labels,
"购买方", "价税合计") is read with the page, at its own positions.

The archive is checked before anything is unpacked (ingest.parse.archive: sizes, ratios, member
count, no DTD in any XML part), and the XML parser loads no DTD and resolves no entity.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from dataclasses import dataclass

from lxml import etree

from ingest.models import Block, BlockKind
from ingest.parse.archive import SAFE_XML, check_archive
from ingest.parse.errors import ParseError
from ingest.parse.result import ParseLimits, ParseResult
from ingest.text import normalize

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE]-?\d+)?")


@dataclass
class _Run:
    x: float
    y: float  # baseline
    size: float
    width: float
    text: str


def parse_ofd(data: bytes, limits: ParseLimits) -> ParseResult:
    check_archive(data, "OFD")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())
        root = _xml(archive, "OFD.xml", names)
        result = ParseResult(blocks=[], pages=0)
        for doc_root in _each(root, "DocRoot"):
            doc_path = _path("", doc_root.text or "")
            document = _xml(archive, doc_path, names)
            base = posixpath.dirname(doc_path)
            templates = {t.get("ID"): _path(base, t.get("BaseLoc", ""))
                         for t in _each(document, "TemplatePage")}
            for page in _each(document, "Page"):
                result.pages += 1
                if result.pages > limits.max_pages:
                    raise ParseError(f"OFD file has over {limits.max_pages:,} pages (the "
                                     "parse_max_pages setting)")
                content = _xml(archive, _path(base, page.get("BaseLoc", "")), names)
                runs = _runs(content)
                for template in _each(content, "Template"):
                    path = templates.get(template.get("TemplateID"))
                    if path in names:
                        runs += _runs(_xml(archive, path, names))
                blocks = _blocks(runs, result.pages)
                result.empty_pages += not blocks
                result.blocks += blocks
        title = next((t.text for t in _each(root, "Title")), None)
    if result.pages == 0:
        raise ParseError("not a readable OFD file: OFD.xml names no document with pages")
    if title and normalize(title):
        result.title, result.title_source = normalize(title), "metadata"
    return result


def _each(root: etree._Element, name: str) -> list[etree._Element]:
    """Elements of a local name in any namespace: producers write both the 2016 namespace of
    GB/T 33190 and the older http://www.ofdspec.org."""
    return [e for e in root.iter() if isinstance(e.tag, str) and etree.QName(e).localname == name]


def _path(base: str, location: str) -> str:
    """A BaseLoc, relative to its document's folder or absolute from the archive's root."""
    location = location.strip()
    joined = location.lstrip("/") if location.startswith("/") else posixpath.join(base, location)
    return posixpath.normpath(joined)


def _xml(archive: zipfile.ZipFile, path: str, names: set[str]) -> etree._Element:
    if path not in names:
        raise ParseError(f"not a readable OFD file: {path or 'a part'} is missing")
    try:
        return etree.fromstring(archive.read(path), SAFE_XML)
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"not a readable OFD file: {path}: {exc}") from None


def _runs(content: etree._Element) -> list[_Run]:
    runs = []
    for obj in _each(content, "TextObject"):
        box = _numbers(obj.get("Boundary", ""))
        left, top = (box[0], box[1]) if len(box) >= 2 else (0.0, 0.0)
        size = float((_numbers(obj.get("Size", "")) or [3.5])[0]) or 3.5
        for code in _each(obj, "TextCode"):
            text = code.text or ""
            if not text.strip():
                continue
            x = left + float(code.get("X") or 0)
            y = top + float(code.get("Y") or 0)
            advance = _deltas(code.get("DeltaX", ""))
            width = sum(advance[:len(text) - 1]) + size if advance else len(text) * size * 0.9
            runs.append(_Run(x, y, size, width, text))
    return runs


def _numbers(value: str) -> list[float]:
    return [float(n) for n in _NUMBER.findall(value)]


def _deltas(value: str) -> list[float]:
    """DeltaX with its "g N d" shorthand (N advances of d) expanded."""
    tokens, out = value.split(), []
    i = 0
    while i < len(tokens):
        if tokens[i] == "g" and i + 2 < len(tokens):
            out += [_float(tokens[i + 2])] * min(int(_float(tokens[i + 1])), 10_000)
            i += 3
        else:
            out.append(_float(tokens[i]))
            i += 1
    return out


def _float(token: str) -> float:
    try:
        return float(token)
    except ValueError:
        return 0.0


def _blocks(runs: list[_Run], page: int) -> list[Block]:
    """Lines in reading order, joined into paragraphs where no wide vertical gap parts them."""
    lines: list[list[_Run]] = []
    for run in sorted(runs, key=lambda r: (r.y, r.x)):
        if lines and abs(lines[-1][0].y - run.y) <= lines[-1][0].size / 2:
            lines[-1].append(run)
        else:
            lines.append([run])
    blocks: list[Block] = []
    previous: list[_Run] | None = None
    for line in lines:
        text = _line_text(sorted(line, key=lambda r: r.x))
        if not text:
            continue
        gap = line[0].y - previous[0].y if previous else 0.0
        if blocks and previous and gap <= 2 * max(line[0].size, previous[0].size) * 1.2:
            blocks[-1] = Block(kind=BlockKind.PARAGRAPH, page=page,
                               text=f"{blocks[-1].text}\n{text}")
        else:
            blocks.append(Block(kind=BlockKind.PARAGRAPH, text=text, page=page))
        previous = line
    return blocks


def _line_text(runs: list[_Run]) -> str:
    """Runs left to right; a space where the gap between two is wider than a character."""
    parts: list[str] = []
    end = None
    for run in runs:
        if end is not None and run.x - end > run.size * 0.8:
            parts.append(" ")
        parts.append(run.text)
        end = run.x + run.width
    return normalize("".join(parts))
