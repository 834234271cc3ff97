"""Text of EMF and WMF vector pictures, read from their drawing records: Visio diagrams, Excel
charts and org charts pasted into Word, OLE objects' previews, and the drawings a .doc or .ppt
keeps after LibreOffice converts it. Their text is stored as characters, so it is read exactly,
without OCR (no PyPI package reads it; renderers only draw it). Written from Microsoft's
[MS-EMF], [MS-EMFPLUS] and [MS-WMF] specifications.

Records draw runs of glyphs in any order: a run is kept with its position, and runs side by
side (about the same y, near on x) make a line, read left to right (see `_lines`).
ANSI runs (EMF's ...A records, WMF's) are decoded with the charset of the font selected when
they are drawn (GB2312 134 as GBK, Big5 136, Shift-JIS 128 …). A file with EMF+ records (GDI+:
DrawString) draws the same text again as plain EMF records for older readers: those twins are
not read again; a plain run is kept where EMF+ hands drawing over to it (GetDC) or where EMF+
drew no such text (a picture EMF+ draws as an image, whose text only the plain records hold).

The bytes are hostile: every length, offset and count is checked against its record, a record
against the file; a damaged file raises MetafileError with the reason. Reading stops after
MAX_RECORDS records or MAX_CHARS characters (`capped` says so).
"""

from __future__ import annotations

import heapq
import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_RECORDS = 500_000
MAX_CHARS = 100_000

_EMF_SIGNATURE = b" EMF"
_WMF_PLACEABLE = b"\xd7\xcd\xc6\x9a"
_EMF_PLUS = 0x2B464D45  # "EMF+": an EMR_COMMENT holding EMF+ records
_NO_RECT, _GLYPH_INDEX, _PDY = 0x100, 0x10, 0x2000  # ExtTextOut options
_SYMBOL = 2
# Windows font charsets -> Python codecs (ANSI and DEFAULT: Windows-1252)
_CODECS = {0: "cp1252", 1: "cp1252", 77: "mac_roman", 128: "cp932", 129: "cp949",
           130: "johab", 134: "gbk", 136: "cp950", 161: "cp1253", 162: "cp1254",
           163: "cp1258", 177: "cp1255", 178: "cp1256", 186: "cp1257", 204: "cp1251",
           222: "cp874", 238: "cp1250", 255: "cp437"}
_HIGH_BYTES = re.compile(rb"[\x80-\xff]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")
# WMF records that add an object to the object table (MS-WMF 2.3.4)
_WMF_CREATES = {0x00F7, 0x01F9, 0x0142, 0x02FA, 0x02FB, 0x02FC, 0x06FF}


class MetafileError(ValueError):
    """The picture is damaged: why it was not read."""

    records = 0  # records read before the damage was found


@dataclass
class Metafile:
    lines: list[str]
    records: int  # records read (what reading cost)
    capped: bool = False  # stopped at max_records or MAX_CHARS


def kind(blob: bytes) -> str | None:
    """"emf", "wmf", or None for any other data (its header, not its name, tells)."""
    if len(blob) >= 44 and blob[:4] == b"\x01\x00\x00\x00" and blob[40:44] == _EMF_SIGNATURE:
        return "emf"
    if blob[:4] == _WMF_PLACEABLE or (len(blob) >= 6 and blob[:2] in (b"\x01\x00", b"\x02\x00")
                                      and blob[2:6] in (b"\x09\x00\x00\x01", b"\x09\x00\x00\x03")):
        return "wmf"
    return None


def read(blob: bytes, max_records: int = MAX_RECORDS) -> Metafile:
    """The picture's lines of text, top to bottom (none for a drawing without text), from at
    most `max_records` records."""
    found = kind(blob)
    if found is None:
        raise MetafileError("not an EMF or WMF picture")
    reader = _Reader(max_records=min(max_records, MAX_RECORDS))
    try:
        if found == "emf":
            reader.emf(blob)
        else:
            reader.wmf(blob)
    except MetafileError as error:
        error.records = reader.records
        raise
    return Metafile(reader.lines(), reader.records, reader.capped)


@dataclass
class _Run:
    x: float
    y: float
    end: float | None  # where the run's last glyph ends, when its advances are stored
    height: float
    text: str


def _unpack(fmt: str, data: bytes, at: int) -> tuple[int, ...]:
    if at < 0 or at + struct.calcsize(fmt) > len(data):
        raise MetafileError(f"a field at byte {at} lies past the end of its record")
    return struct.unpack_from(fmt, data, at)


def _floats(fmt: str, data: bytes, at: int) -> tuple[float, ...]:
    """EMF+ floats; NaN and infinities (hostile, never drawn) read as 0."""
    return tuple(v if math.isfinite(v) else 0.0 for v in _unpack(fmt, data, at))


def _slice(data: bytes, at: int, size: int) -> bytes:
    if at < 0 or size < 0 or at + size > len(data):
        raise MetafileError(f"{size} bytes at {at} lie past the end of their record")
    return data[at:at + size]


def _decode(raw: bytes, charset: int) -> str:
    """ANSI text in the font's charset. With the ANSI or DEFAULT charset the bytes are in the
    code page of the Windows that drew them: GBK on a Chinese one, where runs of two or more
    characters ("新建文本文档", an OLE icon's label) decode as GBK; a Western accent is one byte
    between ASCII letters (café), an odd run that GBK does not make."""
    codec = _CODECS.get(charset, "cp1252")
    if charset in (0, 1) and _gbk_like(raw):
        codec = "gbk"
    return raw.decode(codec, "replace").replace("\ufffd", "")


def _gbk_like(raw: bytes) -> bool:
    runs = [len(run) for run in _HIGH_BYTES.findall(raw)]
    if not runs or any(size % 2 for size in runs) or sum(runs) < 4 * len(runs):
        return False
    try:
        raw.decode("gbk")
    except UnicodeDecodeError:
        return False
    return True


def _utf16(raw: bytes) -> str:
    """UTF-16 text; half a surrogate pair (a label wrapped inside a character) is dropped."""
    return raw.decode("utf-16-le", "replace").replace("\ufffd", "")


@dataclass
class _Reader:
    gdi: list[_Run] = field(default_factory=list)  # every EMF/WMF text run
    twins: list[_Run] = field(default_factory=list)  # … those drawn while EMF+ draws
    plus: list[_Run] = field(default_factory=list)  # EMF+ text runs
    charset: int = 1  # of the selected font
    height: float = 0.0  # of the selected font, in logical units
    map_mode: int = 1
    window: tuple[int, int] = (1, 1)
    viewport: tuple[int, int] = (1, 1)
    plus_fonts: dict[int, float] = field(default_factory=dict)  # EMF+ font id -> em size
    in_plus: bool = False  # EMF+ draws: its GDI twins are not read again
    chars: int = 0
    records: int = 0
    max_records: int = MAX_RECORDS
    capped: bool = False

    def lines(self) -> list[str]:
        if not self.plus:
            return _lines(self.gdi)
        drawn = "".join("".join(run.text.split()) for run in self.plus)
        twins = {id(run) for run in self.twins if "".join(run.text.split()) in drawn}
        return _lines(self.plus) + _lines([run for run in self.gdi if id(run) not in twins])

    def _add(self, run: _Run, plus: bool = False) -> None:
        text = run.text.replace("\x00", "")
        if not text.strip() or self.capped:
            return
        if self.chars + len(text) > MAX_CHARS:
            self.capped = True
            return
        self.chars += len(text)
        run.text = text
        if plus:
            self.plus.append(run)
            return
        # map modes 2-6 count y upwards; isotropic/anisotropic ones as their extents say
        up = 2 <= self.map_mode <= 6 or (self.map_mode in (7, 8)
                                          and self.window[1] * self.viewport[1] < 0)
        if up:
            run.y = -run.y
        self.gdi.append(run)
        if self.in_plus:
            self.twins.append(run)

    def _records(self, blob: bytes, start: int, wmf: bool) -> Iterator[tuple[int, bytes]]:
        """(type, record) of each record up to the end-of-file one: EMF's (type, size in
        bytes) or WMF's (size in 16-bit words, function)."""
        header, eof = (6, 0) if wmf else (8, 14)
        offset = start
        while offset < len(blob):
            if self.records >= self.max_records:
                self.capped = True
                return
            self.records += 1
            if offset + header > len(blob):
                raise MetafileError(f"the file ends inside record {self.records}")
            if wmf:
                size, rtype = struct.unpack_from("<IH", blob, offset)
                size *= 2
            else:
                rtype, size = struct.unpack_from("<II", blob, offset)
            if size < header or offset + size > len(blob):
                raise MetafileError(f"record {self.records} (type {rtype:#x}) claims "
                                    f"{size} bytes, {len(blob) - offset} are left")
            yield rtype, blob[offset:offset + size]
            offset += size
            if rtype == eof:
                return

    def emf(self, blob: bytes) -> None:
        fonts: dict[int, tuple[int, float]] = {}
        for rtype, rec in self._records(blob, 0, wmf=False):
            if rtype in (83, 84):  # EMR_EXTTEXTOUTA / W
                self._emr_text(rec, 36, rtype == 84)
            elif rtype in (96, 97):  # EMR_POLYTEXTOUTA / W
                (count,) = _unpack("<I", rec, 36)
                at = 40
                for _ in range(min(count, len(rec) // 24)):
                    at = self._emr_text(rec, at, rtype == 97)
            elif rtype == 82:  # EMR_EXTCREATEFONTINDIRECTW: handle, LOGFONT
                handle, height = _unpack("<Ii", rec, 8)
                fonts[handle] = (_unpack("<B", rec, 35)[0], abs(height))
            elif rtype == 37 and (handle := _unpack("<I", rec, 8)[0]) in fonts:  # SELECTOBJECT
                self.charset, self.height = fonts[handle]
            elif rtype == 40:  # EMR_DELETEOBJECT
                fonts.pop(_unpack("<I", rec, 8)[0], None)
            elif rtype == 17:  # EMR_SETMAPMODE
                self.map_mode = _unpack("<I", rec, 8)[0]
            elif rtype in (9, 11):  # EMR_SETWINDOWEXTEX, EMR_SETVIEWPORTEXTEX
                cx, cy = _unpack("<ii", rec, 8)
                extent = (cx, cy)
                if rtype == 9:
                    self.window = extent
                else:
                    self.viewport = extent
            elif rtype == 70 and len(rec) >= 16 and _unpack("<I", rec, 12)[0] == _EMF_PLUS:
                (size,) = _unpack("<I", rec, 8)
                self._emf_plus(_slice(rec, 16, min(size, len(rec) - 12) - 4))

    def _emr_text(self, rec: bytes, at: int, wide: bool) -> int:
        """Read the EmrText at `at`; the offset of the one after it (EMR_POLYTEXTOUT)."""
        x, y, count, off_string, options = _unpack("<iiIII", rec, at)
        after_rect = at + 20 + (0 if options & _NO_RECT else 16)
        (off_dx,) = _unpack("<I", rec, after_rect)
        if count and not options & _GLYPH_INDEX:  # glyph indices are not characters
            if count > MAX_CHARS:
                raise MetafileError(f"a text record claims {count} characters")
            raw = _slice(rec, off_string, count * (2 if wide else 1))
            text = _utf16(raw) if wide else _decode(raw, self.charset)
            if not wide and self.charset == _SYMBOL:
                text = ""  # Wingdings, Symbol: pictures drawn with a font
            end = None
            step = 2 if options & _PDY else 1
            if off_dx and off_dx + 4 * count * step <= len(rec):
                advances = struct.unpack_from(f"<{count * step}i", rec, off_dx)[::step]
                end = x + sum(advances)
            self._add(_Run(x, y, end, self.height, text))
        return after_rect + 4

    def _emf_plus(self, data: bytes) -> None:
        """EMF+ records inside one EMR_COMMENT: fonts, DrawString, DrawDriverString."""
        offset = 0
        while offset + 12 <= len(data):
            rtype, flags, size, data_size = struct.unpack_from("<HHII", data, offset)
            if size < 12 or offset + size > len(data) or data_size > size - 12:
                raise MetafileError(f"an EMF+ record (type {rtype:#x}) claims {size} bytes, "
                                    f"{len(data) - offset} are left")
            body = data[offset + 12:offset + 12 + data_size]
            offset += size
            self.in_plus = rtype != 0x4004  # EmfPlusGetDC: the next GDI records are drawn
            if rtype == 0x4008 and (flags >> 8) & 0x7F == 6 and not flags & 0x8000:  # a font
                self.plus_fonts[flags & 0xFF] = abs(_floats("<f", body, 4)[0])
            elif rtype == 0x401C:  # DrawString: brush, format, length, layout rectangle
                count, (left, top) = _unpack("<I", body, 8)[0], _floats("<ff", body, 12)
                if count > MAX_CHARS:
                    raise MetafileError(f"an EMF+ string claims {count} characters")
                text = _utf16(_slice(body, 28, 2 * count))
                self._add(_Run(left, top, None, self.plus_fonts.get(flags & 0xFF, 0.0), text),
                          plus=True)
            elif rtype == 0x4036:  # DrawDriverString: brush, options, matrix?, glyph count
                options, _, count = _unpack("<III", body, 4)
                if count > MAX_CHARS:
                    raise MetafileError(f"an EMF+ string claims {count} glyphs")
                glyphs = _slice(body, 16, 2 * count)
                positions = _slice(body, 16 + 2 * count, 8 * count)
                if count and options & 1:  # CmapLookup: the glyphs are characters
                    left, top = _floats("<ff", positions, 0)
                    (right,) = _floats("<f", positions, 8 * (count - 1))
                    height = self.plus_fonts.get(flags & 0xFF, 0.0)
                    self._add(_Run(left, top, right + height / 2, height,
                                   _utf16(glyphs)), plus=True)

    def wmf(self, blob: bytes) -> None:
        start = 22 if blob[:4] == _WMF_PLACEABLE else 0
        if _unpack("<H", blob, start + 2)[0] != 9:
            raise MetafileError("the WMF header is not 9 words long")
        objects: dict[int, tuple[int, float] | None] = {}  # slot -> font, or another object
        free: list[int] = []  # emptied slots below len(objects): the lowest is used first
        for rtype, rec in self._records(blob, start + 18, wmf=True):
            if rtype in _WMF_CREATES:
                font: tuple[int, float] | None = None
                if rtype == 0x02FB:  # META_CREATEFONTINDIRECT: height, …, charset
                    font = (_unpack("<B", rec, 19)[0], abs(_unpack("<h", rec, 6)[0]))
                slot = heapq.heappop(free) if free else len(objects)
                objects[slot] = font
            elif rtype == 0x01F0:  # META_DELETEOBJECT
                slot = _unpack("<H", rec, 6)[0]
                if slot in objects:
                    del objects[slot]
                    heapq.heappush(free, slot)
            elif rtype == 0x012D and (font := objects.get(_unpack("<H", rec, 6)[0])):
                self.charset, self.height = font  # META_SELECTOBJECT of a font
            elif rtype == 0x0521:  # META_TEXTOUT: length, string (even), y, x
                (length,) = _unpack("<H", rec, 6)
                raw = _slice(rec, 8, length)
                y, x = _unpack("<hh", rec, 8 + length + length % 2)
                self._wmf_text(x, y, raw, None)
            elif rtype == 0x0A32:  # META_EXTTEXTOUT: y, x, length, options, [rect], string, dx
                y, x, length, options = _unpack("<hhhH", rec, 6)
                at = 14 + (8 if options & 0x0006 else 0)
                raw = _slice(rec, at, max(length, 0))
                at += length + length % 2
                end = None
                if length > 0 and at + 2 * length <= len(rec):
                    end = x + sum(struct.unpack_from(f"<{length}h", rec, at))
                self._wmf_text(x, y, raw, end)
            elif rtype == 0x0103:  # META_SETMAPMODE
                self.map_mode = _unpack("<H", rec, 6)[0]
            elif rtype in (0x020C, 0x020E):  # META_SETWINDOWEXT, META_SETVIEWPORTEXT: y, x
                y, x = _unpack("<hh", rec, 6)
                if rtype == 0x020C:
                    self.window = (x, y)
                else:
                    self.viewport = (x, y)

    def _wmf_text(self, x: int, y: int, raw: bytes, end: int | None) -> None:
        if self.charset != _SYMBOL:
            self._add(_Run(x, y, end, self.height, _decode(raw, self.charset)))


def _lines(runs: list[_Run]) -> list[str]:
    """Runs make a line where they stand side by side: about the same y (half a font height
    apart at most) and at most two font heights apart on x, whatever order they were drawn
    in; a line's runs are read by x. Lines come in the order they were begun, which keeps the
    text of one shape (a box of a flowchart) together, as the drawing program wrote it."""
    heights = sorted(run.height for run in runs if run.height > 0)
    usual = heights[len(heights) // 2] if heights else 1.0
    lines: list[_Line] = []
    rows: dict[int, list[_Line]] = {}  # lines by y in steps of half the usual height
    for run in runs:
        height = run.height or usual
        right = run.end if run.end is not None else run.x + _width(run.text, height)
        row = round(run.y / (usual / 2))
        near = (line for r in (row - 1, row, row + 1) for line in rows.get(r, [])[-8:])
        line = next((line for line in near if abs(line.y - run.y) <= height / 2
                     and line.left - 2 * height <= right and run.x <= line.right + 2 * height),
                    None)
        if line is None:
            line = _Line(run.y, run.x, right)
            lines.append(line)
            rows.setdefault(row, []).append(line)
        line.runs.append(run)
        line.left, line.right = min(line.left, run.x), max(line.right, right)
    return [text for line in lines if (text := _join(sorted(line.runs, key=lambda r: r.x)))]


@dataclass
class _Line:
    y: float
    left: float
    right: float
    runs: list[_Run] = field(default_factory=list)


def _width(text: str, height: float) -> float:
    """A run's width when its advances are not stored: CJK glyphs are square, others half."""
    return sum(height if _CJK.match(char) else height / 2 for char in text)


def _join(row: list[_Run]) -> str:
    """A line's runs: a space where a gap separates words, none inside a word or CJK text."""
    text, end = "", None
    for run in row:
        piece = run.text.strip("\r\n")
        touching = end is not None and run.x - end <= (run.height or 1) / 4
        cjk = bool(_CJK.match(text[-1:])) and bool(_CJK.match(piece[:1]))
        if text and not (touching or cjk or text[-1].isspace() or piece[:1].isspace()):
            text += " "
        text += piece
        end = run.end
    return text.strip()
