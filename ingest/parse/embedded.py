"""Documents embedded in Office files (OLE objects): a Word file inside a Word file, a workbook
inside a deck, a PDF packaged into a spreadsheet — what Chinese offices attach with WPS's
"插入对象". Each is read by the parser of its own format and appended as a section
"附件：name", as a mail's attachments are (ingest.parse.attachments: the same count limit,
and an embedded file's own embedded files are not read: depth 1).

Where they are: an OOXML package keeps them as parts under `*/embeddings/` (an OOXML file as
is, anything else as an OLE compound file); a legacy .doc under the storage `ObjectPool`, a
legacy .xls as root storages `MBD…`, a legacy .ppt as zlib-compressed compound files in
`ExOleObjStg` records of its "PowerPoint Document" stream. LibreOffice keeps a .doc's objects
when it converts it to .docx but drops those of .xls and .ppt, so a legacy file's objects are
read from the original. An OpenDocument file keeps each object as a folder `Object N/` of its
zip, typed in its manifest: a chart (LibreOffice turns it into an OOXML chart, which the OOXML
parsers read), or a spreadsheet, text or presentation, packaged here as an ODF file of its own.
An OLE object is a packaged file (`\\x01Ole10Native`: its name and
bytes), an OOXML file (`package`), or a Word/Excel/PowerPoint 97 storage, which is copied into a
compound file of its own (ingest.parse.cfb) for LibreOffice to read.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from html import escape
from pathlib import PurePosixPath

import olefile

from ingest.parse.archive import check_archive, office_part
from ingest.parse.attachments import add_attachments, inside_attachment
from ingest.parse.cfb import MAX_CFB_BYTES, write_cfb
from ingest.parse.result import ParseLimits, ParseResult

_TARGET = re.compile(r'Target="([^"]+)"')
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_OOXML = {".docx", ".docm", ".xlsx", ".xlsm", ".pptx", ".pptm"}
_LEGACY = {".doc", ".wps", ".xls", ".et", ".ppt", ".dps"}
_ODF_OBJECTS = {"application/vnd.oasis.opendocument.text": ".odt",
                "application/vnd.oasis.opendocument.spreadsheet": ".ods",
                "application/vnd.oasis.opendocument.presentation": ".odp"}
_ODF = set(_ODF_OBJECTS.values())
_ODF_CHART = "application/vnd.oasis.opendocument.chart"
_MANIFEST = "{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}"
_OBJECT_FOLDER = re.compile(r"(?:\./)?Object \d+/")
# a storage holding this stream is a document of this format
_STORAGE_KINDS = {"worddocument": ".doc", "workbook": ".xls", "book": ".xls",
                  "powerpoint document": ".ppt"}
_EX_OLE_OBJ_STG = 0x1011
_MAX_OBJECTS = 100  # objects looked at per file; add_attachments reads at most 20 of them


def add_embedded(result: ParseResult, suffix: str, data: bytes, limits: ParseLimits) -> None:
    """Append the documents embedded in the file `data` (of `suffix`) to its blocks."""
    if suffix not in _OOXML | _LEGACY | _ODF:
        return
    if inside_attachment():  # depth 1: an attachment's or embedded file's objects are not read
        if _has_objects(suffix, data):
            result.skipped["embedded_too_deep"] += 1
        return
    cap = int(limits.max_file_mb * 1024 * 1024)
    try:
        found = (_package_objects(data) if suffix in _OOXML else _odf_objects(data, cap)
                 if suffix in _ODF else _legacy_objects(data, cap))
    except (OSError, ValueError, zipfile.BadZipFile, zlib.error, struct.error):
        result.skipped["embedded_unreadable"] += 1  # the container's own text is read all the same
        return
    files: list[tuple[str, bytes]] = []
    for name, blob in found[:_MAX_OBJECTS]:
        try:
            unwrapped = _unwrap(name, blob, cap)
        except Exception:  # noqa: BLE001 - a damaged object is counted, never the file's failure
            result.skipped["embedded_unreadable"] += 1
            continue
        if unwrapped is None or len(unwrapped[1]) > cap:
            result.skipped["embedded_not_documents"] += 1
        else:
            files.append(unwrapped)
    if len(found) > _MAX_OBJECTS:
        result.skipped["embedded_over_limit"] += len(found) - _MAX_OBJECTS
    add_attachments(result, files, limits, kind="embedded")


def _has_objects(suffix: str, data: bytes) -> bool:
    if suffix in _ODF:
        return bool(_odf_folders(data))
    if suffix in _OOXML:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return any("/embeddings/" in name for name in archive.namelist())
    return data.startswith(_OLE) and (b"O\x00b\x00j\x00e\x00c\x00t\x00P\x00o\x00o\x00l" in data
                                      or b"M\x00B\x00D\x00" in data)


def _package_objects(data: bytes) -> list[tuple[str, bytes]]:
    """The parts under word/, xl/ or ppt/embeddings/ (sizes checked with the package), except
    a chart's data workbook: the chart is already read from its own part (ingest.parse.charts)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()[:10_000]
        chart_data = {PurePosixPath(target).name for info in infos
                      if "/charts/_rels/" in info.filename and info.file_size <= 1 << 20
                      for target in _TARGET.findall(archive.read(info).decode("utf-8", "replace"))}
        return [(PurePosixPath(info.filename).name, archive.read(info)) for info in infos
                if PurePosixPath(info.filename).parent.name == "embeddings"
                and PurePosixPath(info.filename).name not in chart_data]


def _odf_folders(data: bytes) -> dict[str, str]:
    """An OpenDocument file's embedded objects other than charts: folder -> media type."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if "META-INF/manifest.xml" not in archive.namelist():
            return {}
        check_archive(data, "OpenDocument")  # sizes and DTDs, before any part is unpacked
        manifest = office_part(archive.read("META-INF/manifest.xml"), "an ODF manifest")
    folders = {}
    for entry in manifest.iter(_MANIFEST + "file-entry"):
        path = entry.get(_MANIFEST + "full-path", "")
        kind = entry.get(_MANIFEST + "media-type", "")
        if _OBJECT_FOLDER.fullmatch(path) and kind != _ODF_CHART:
            folders[path.removeprefix("./")] = kind
    return folders


def _odf_objects(data: bytes, cap: int) -> list[tuple[str, bytes]]:
    """Each object folder as an ODF file of its own (its mimetype first, as ODF requires, then
    its parts and a manifest of them); an object of no format kbflow reads keeps its folder
    name without a known suffix, so it is counted as such."""
    out: list[tuple[str, bytes]] = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        for folder, kind in _odf_folders(data).items():
            name = folder.rstrip("/") + _ODF_OBJECTS.get(kind, "")
            parts = [i for i in infos if i.filename.startswith(folder) and not i.is_dir()
                     and not _OBJECT_FOLDER.match(i.filename[len(folder):])]
            if kind not in _ODF_OBJECTS or sum(i.file_size for i in parts) > cap:
                out.append((name, b""))
                continue
            package = io.BytesIO()
            with zipfile.ZipFile(package, "w", zipfile.ZIP_DEFLATED) as sub:
                sub.writestr("mimetype", kind, zipfile.ZIP_STORED)
                for info in parts:
                    sub.writestr(info.filename[len(folder):], archive.read(info))
                sub.writestr("META-INF/manifest.xml", _manifest(
                    kind, [i.filename[len(folder):] for i in parts]))
            out.append((name, package.getvalue()))
    return out


def _manifest(kind: str, paths: list[str]) -> str:
    entries = "".join(f'<manifest:file-entry manifest:full-path="{escape(path, quote=True)}" '
                      f'manifest:media-type="{"text/xml" if path.endswith(".xml") else ""}"/>'
                      for path in paths)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest='
            '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
            f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{kind}"/>'
            f"{entries}</manifest:manifest>")


def _legacy_objects(data: bytes, cap: int) -> list[tuple[str, bytes]]:
    """A .doc's ObjectPool storages, a .xls's MBD storages (each as a compound file of its
    own) and a .ppt's ExOleObjStg compound files."""
    if not data.startswith(_OLE):
        return []
    with olefile.OleFileIO(data) as ole:
        if ole.exists("PowerPoint Document"):
            return _ppt_objects(ole.openstream("PowerPoint Document").read(), cap)
        entries = ole.listdir(streams=True, storages=True)
        storages = sorted({tuple(path[:2]) for path in entries
                           if len(path) > 2 and path[0] == "ObjectPool"}
                          | {tuple(path[:1]) for path in entries
                             if len(path) > 1 and path[0].startswith("MBD")})
        out: list[tuple[str, bytes]] = []
        for storage in storages:
            streams = {path[-1]: ole.openstream(list(path)).read() for path in entries
                       if len(path) == len(storage) + 1 and tuple(path[:-1]) == storage
                       and ole.get_type(list(path)) == olefile.STGTY_STREAM
                       and ole.get_size(list(path)) <= cap}
            if sum(map(len, streams.values())) <= MAX_CFB_BYTES:
                out.append((storage[-1], write_cfb(streams)))
        return out


def _ppt_objects(stream: bytes, cap: int) -> list[tuple[str, bytes]]:
    """The ExOleObjStg records of a PowerPoint 97 stream, walked as its records nest
    (a container record, version 0xF, holds records; others are skipped over)."""
    out: list[tuple[str, bytes]] = []
    pos = number = 0
    while pos + 8 <= len(stream) and len(out) < _MAX_OBJECTS:
        version_instance, kind, length = struct.unpack_from("<HHI", stream, pos)
        if version_instance & 0xF == 0xF:
            pos += 8
            continue
        if kind == _EX_OLE_OBJ_STG:
            body = stream[pos + 8:pos + 8 + length]
            number += 1
            if version_instance >> 4 == 1:  # compressed: its unpacked size, then zlib data
                body = zlib.decompressobj().decompress(body[4:], min(cap, MAX_CFB_BYTES) + 1)
            out.append((f"object{number}", body))
        pos += 8 + length
    return out


def _unwrap(name: str, blob: bytes, cap: int) -> tuple[str, bytes] | None:
    """The embedded file's name and bytes, or None when it is no document kbflow reads."""
    suffix = PurePosixPath(name).suffix.lower()
    if not blob.startswith(_OLE):
        return (name, blob) if suffix in _OOXML | _ODF | {".pdf"} else None
    with olefile.OleFileIO(blob) as ole:
        if ole.exists("\x01Ole10Native"):
            return _ole10_native(ole.openstream("\x01Ole10Native").read(cap))
        if ole.exists("package"):
            package = ole.openstream("package").read(cap)
            return f"{PurePosixPath(name).stem}{_ooxml_suffix(package)}", package
        for stream, kind in _STORAGE_KINDS.items():
            if ole.exists(stream):
                return f"{PurePosixPath(name).stem}{kind}", blob
    return None


def _ole10_native(stream: bytes) -> tuple[str, bytes] | None:
    """A packaged file (Object Packager): size, flags, label, source path, 4 bytes, the temp
    path with its length, then the file's size and bytes. Its name is the label's."""
    pos = 6
    label_end = stream.index(b"\0", pos)
    label = stream[pos:label_end].decode("gb18030", "replace")  # the ANSI code page of its maker
    pos = stream.index(b"\0", label_end + 1) + 1 + 4  # the source path, then 4 unknown bytes
    (temp_length,) = struct.unpack_from("<I", stream, pos)
    pos += 4 + temp_length
    (size,) = struct.unpack_from("<I", stream, pos)
    data = stream[pos + 4:pos + 4 + size]
    return (PurePosixPath(label.replace("\\", "/")).name or "object", data) \
        if len(data) == size else None


def _ooxml_suffix(package: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        names = archive.namelist()
    for folder, suffix in (("word/", ".docx"), ("xl/", ".xlsx"), ("ppt/", ".pptx")):
        if any(name.startswith(folder) for name in names):
            return suffix
    return ".zip"
