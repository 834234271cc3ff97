"""Office files are ZIP archives: their declared sizes are checked before anything is unpacked.

A 2 MB `.docx` can hold a few GB of XML (a zip bomb) that a parser would build a tree of in
memory. The central directory declares every member's unpacked size, and Python's zipfile never
unpacks more than a member declares (a member that holds more fails its CRC check), so checking
the declared sizes bounds what any parser can be handed.
"""

from __future__ import annotations

import io
import zipfile

from ingest.parse.errors import ParseError

MAX_MEMBERS = 10_000
MAX_UNPACKED_BYTES = 1024 * 1024 * 1024  # every member together (images are stored compressed)
MAX_XML_BYTES = 128 * 1024 * 1024  # the XML parts together: parsers build trees ~10x this size
MAX_RATIO = 200  # a member this much smaller packed than unpacked (and large) is a bomb


def check_archive(data: bytes, kind: str) -> None:
    """ParseError with the reason when the archive declares more than a document could hold."""
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
    for m in members:
        if m.file_size > 10 * 1024 * 1024 and m.file_size > MAX_RATIO * max(m.compress_size, 1):
            ratio = m.file_size // max(m.compress_size, 1)
            raise ParseError(f"{kind} part {m.filename} unpacks {ratio} times its packed size "
                             f"({m.file_size >> 20} MB): a zip bomb")
