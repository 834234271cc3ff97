"""Which encoding a text file (.txt, .md, .csv, .tsv, an .html page without a charset) is in.

A byte-order mark decides (UTF-8, UTF-16, UTF-32); else 7-bit text that switches character
sets with ISO 2022 escapes is ISO-2022-JP or -KR (Japanese and Korean mail and old Unix text:
valid UTF-8 too, so read as such it indexed its escape codes as words); else bytes that are
valid UTF-8 are UTF-8; else charset-normalizer ranks the encodings that decode the start of
the file by how messy the text comes out. GB18030 wins every tie, as it did before detection:
GBK and GB2312 files from Chinese Windows editors read exactly as they always have (GB18030
maps almost any bytes, so it was also reading Big5 and Shift-JIS files, as mojibake). The
choice and its confidence (1 minus charset-normalizer's mess ratio) go into the parse report,
and a low one is a warning there rather than text indexed as if it were sure.
"""

from __future__ import annotations

import codecs
import contextlib
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes

from ingest.parse.errors import ParseError

SAMPLE_BYTES = 256 * 1024  # what the encoding is told from
LOW_CONFIDENCE = 0.9  # below it the parse report warns that the text may be misread
_BOMS = (  # UTF-32 first: its little-endian mark starts with UTF-16's
    (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"))
# The Windows supersets of what detection names: what the editors that write these files use.
_SUPERSETS = {"gbk": "gb18030", "gb2312": "gb18030", "hz": "gb18030", "big5": "cp950",
              "shift_jis": "cp932", "euc_kr": "cp949"}
# ISO 2022 designations: Korean's announcer (RFC 1557), else the Japanese ones (JIS X 0208 of
# 1978 and 1983, JIS X 0212) and the others ISO-2022-JP-2 carries (GB 2312, KS C 5601)
_ISO2022_KR = b"\x1b$)C"
_ISO2022_JP = re.compile(rb"\x1b\$[@BA]|\x1b\$\([CD]")
_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9_-]+)", re.IGNORECASE)
_CONTROL = frozenset(chr(c) for c in range(32)) - set("\t\n\r\f")


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # a Python codec name
    confidence: float  # 1.0 for a byte-order mark or valid UTF-8

    @property
    def warning(self) -> str | None:
        return warning(self.encoding, self.confidence)


def warning(encoding: str | None, confidence: float | None) -> str | None:
    """The parse report's warning about a decode too unsure to index silently."""
    if encoding is None or confidence is None or confidence >= LOW_CONFIDENCE:
        return None
    return (f"encoding guessed as {encoding} with confidence {confidence:.2f}: "
            "the text may be misread (save the file as UTF-8)")


def decode(data: bytes) -> Decoded:
    """The text of `data` and how it was read; a ParseError when no encoding reads it as text
    (binary, or an encoding nothing recognises)."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            text = data.decode(name) if name == "utf-8-sig" else _checked(data, name)
            return Decoded(text, name, 1.0)
    if (iso2022 := _iso2022(data)) is not None:
        return iso2022
    try:
        return Decoded(data.decode("utf-8"), "utf-8", 1.0)
    except UnicodeDecodeError:
        pass
    errors = []
    for name, confidence in _ranked(data):
        try:
            return Decoded(_checked(data, name), name, confidence)
        except (UnicodeDecodeError, ParseError) as exc:
            errors.append(f"not {name}: {exc}")
    raise ParseError("text file is in an unknown encoding: "
                     + ("; ".join(errors) or "not UTF-8, and no other encoding reads it as text"))


def html_encoding(data: bytes) -> tuple[str, float]:
    """A page's encoding, named for lxml (which would otherwise assume Latin-1), and the
    confidence: its byte-order mark, else its declared charset (GB2312 and GBK widened to
    GB18030, as browsers do), else detected as a text file's is. A page whose bytes beyond
    ASCII are valid UTF-8 is UTF-8 whatever it declares: a page saved or converted to UTF-8
    keeps its old `charset=gb2312` (readability's qq.com test page), and text in another
    encoding is practically never valid UTF-8."""
    declared = _CHARSET.search(data[:4096])
    name, confidence = "", 1.0
    if declared and not data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE,
                                         codecs.BOM_UTF16_BE)):
        with contextlib.suppress(LookupError):
            name = codecs.lookup(declared.group(1).decode("ascii")).name
        if name and not name.startswith("utf") and not data.isascii():
            with contextlib.suppress(UnicodeDecodeError):
                data.decode("utf-8")
                name = "utf-8"
    if not name:
        decoded = decode(data)
        name, confidence = decoded.encoding, decoded.confidence
    name = _SUPERSETS.get(name, name)
    return ("utf-8" if name == "utf-8-sig" else name.replace("_", "-")), confidence


def _iso2022(data: bytes) -> Decoded | None:
    """7-bit text with an ISO 2022 designation, read in that encoding; None when it is not
    such text or does not decode as it (then it is read as any other text)."""
    head = data[:SAMPLE_BYTES]
    if b"\x1b" not in head or not data.isascii():
        return None
    name = ("iso2022_kr" if _ISO2022_KR in head
            else "iso2022_jp_2" if _ISO2022_JP.search(head) else None)
    if name is None:
        return None
    try:
        return Decoded(data.decode(name), name, 1.0)
    except UnicodeDecodeError:
        return None


def _ranked(data: bytes) -> list[tuple[str, float]]:
    """The encodings that read a sample of `data`, best first, with their confidence."""
    sample = data[:SAMPLE_BYTES]
    if len(data) > SAMPLE_BYTES:  # cut where no multibyte character can be cut in two
        wide = sample.count(0) > len(sample) // 8  # UTF-16 or UTF-32
        sample = sample[:len(sample) // 4 * 4] if wide else sample[:sample.rfind(b"\n") + 1]
    ranked: dict[str, float] = {}
    for match in from_bytes(sample, threshold=0.5):
        name = _SUPERSETS.get(match.encoding, match.encoding)
        ranked.setdefault(name, round(1 - match.chaos, 3))
    best = max(ranked.values(), default=0.0)
    # a tie, or nothing reads it cleanly: GB18030 first, as before detection (flagged if messy)
    gb18030 = ranked.get("gb18030", 0.0)
    return [("gb18030", gb18030), *ranked.items()] if gb18030 >= best else list(ranked.items())


def _checked(data: bytes, name: str) -> str:
    """The text, if it is text. A wide encoding's last incomplete unit (a sample cut at a
    newline byte) is left out rather than failing."""
    wide = name.replace("_", "-").startswith(("utf-16", "utf-32"))
    text = codecs.getincrementaldecoder(name)().decode(data) if wide else data.decode(name)
    if any(c in _CONTROL for c in text):
        raise ParseError("control characters: binary, or another encoding")
    return text
