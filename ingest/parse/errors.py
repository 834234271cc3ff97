"""What every parser raises for a document it cannot read, and how it names unreadable bytes."""

from __future__ import annotations


class ParseError(ValueError):
    """A document that cannot be read; the reason goes to the manifest."""


def describe_content(data: bytes) -> str:
    """What a file's first bytes say it is, for a reason a person can act on."""
    signatures = {
        b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image",
        b"II*\x00": "a TIFF image", b"MM\x00*": "a TIFF image", b"PK\x03\x04": "a ZIP archive",
        b"\xd0\xcf\x11\xe0": "a legacy Office (OLE) file", b"{\\rtf": "an RTF document",
        b"%!PS": "a PostScript file",
    }
    for magic, name in signatures.items():
        if data.startswith(magic):
            return f"the content is {name}"
    if data.lstrip()[:1] == b"<":
        return "the content is HTML or XML"
    return f"the content starts with bytes {data[:8].hex(' ')}"
