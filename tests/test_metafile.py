"""EMF and WMF pictures' text read from their records (issue 40, "every visible part"): real
files written by LibreOffice, Word, Visio and Japanese Office (tests/fixtures/formats/
PROVENANCE.md), Chinese in UTF-16 and in GB2312 bytes, and damaged ones skipped with a reason."""

from __future__ import annotations

import random
import struct
import time
import zipfile
from pathlib import Path

import pytest

from ingest.chunk import chunk_document
from ingest.models import ParsedDocument
from ingest.parse import ParseLimits, parse_document, read_meta
from ingest.parse.metafile import MAX_RECORDS, MetafileError, kind, read
from ingest.parse.pictures import VECTOR_RECORDS, Pictures

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
FLOWCHART = ["采购审批流程图", "部门经理审核", "金额超过五万元报财务总监", "Approval by CFO"]


def records(blob: bytes) -> list[bytes]:
    """An EMF's records, as they are in the file."""
    out, offset = [], 0
    while offset < len(blob):
        size = struct.unpack_from("<I", blob, offset + 4)[0]
        out.append(blob[offset:offset + size])
        offset += size
    return out


def test_libreoffice_emf_and_wmf_give_their_chinese_lines() -> None:
    """The EMF draws UTF-16 runs; the WMF GB2312 bytes, decoded by its font's charset (134)."""
    emf = (FIXTURES / "flowchart_zh.emf").read_bytes()
    wmf = (FIXTURES / "flowchart_zh.wmf").read_bytes()
    assert (kind(emf), kind(wmf)) == ("emf", "wmf")
    assert read(emf).lines == FLOWCHART
    assert read(wmf).lines == FLOWCHART
    assert kind(b"\x89PNG\r\n\x1a\n" + bytes(40)) is None


def test_wmf_shift_jis_runs_by_font_charset() -> None:
    lines = read((FIXTURES / "60677.wmf").read_bytes()).lines
    assert "航\u3000空\u3000情\u3000報\u3000高\u3000度\u3000化\u3000計\u3000画" in lines
    assert {"フェーズⅠ", "航空情報業務へのＧＩＳ", "２００５年度"} <= set(lines)


def test_flowchart_boxes_keep_their_own_lines() -> None:
    """Boxes side by side share a y: each box's text stays together, as Visio drew it."""
    lines = read((FIXTURES / "vector_image.emf").read_bytes()).lines
    assert lines[:5] == ["Analyse", "Behaviour and", "Pattern", "Activities of", "emails"]
    assert lines.count("Analyse") == 4


def test_glyphs_drawn_one_by_one_and_backwards_make_one_line() -> None:
    """Some programs draw each glyph as its own record in any order: the line is rebuilt by
    position. The fixture's third run is cut into one record per character, last first."""
    parts = records((FIXTURES / "flowchart_zh.emf").read_bytes())
    index = next(i for i, rec in enumerate(parts)
                 if struct.unpack_from("<I", rec)[0] == 84
                 and "金额".encode("utf-16-le") in rec)
    rec = parts[index]
    x, y, count, off_string, options = struct.unpack_from("<iiIII", rec, 36)
    off_dx = struct.unpack_from("<I", rec, 36 + 20 + (0 if options & 0x100 else 16))[0]
    advances = struct.unpack_from(f"<{count}i", rec, off_dx)
    text = rec[off_string:off_string + 2 * count].decode("utf-16-le")
    glyphs = []
    for i, char in enumerate(text):
        left = x + sum(advances[:i])
        body = (rec[8:36] + struct.pack("<iiIII", left, y, 1, 76, 0) + bytes(16)
                + struct.pack("<I", 80) + char.encode("utf-16-le").ljust(4, b"\0")
                + struct.pack("<i", advances[i]))
        glyphs.append(struct.pack("<II", 84, 8 + len(body)) + body)
    parts[index:index + 1] = glyphs[::-1]
    rebuilt = b"".join(parts)
    assert read(rebuilt).lines == FLOWCHART


def test_damaged_and_hostile_metafiles_fail_with_a_reason() -> None:
    emf = (FIXTURES / "flowchart_zh.emf").read_bytes()
    with pytest.raises(MetafileError, match="bytes"):
        read(emf[: len(emf) // 2])  # truncated inside a record
    with pytest.raises(MetafileError, match="4294902055 bytes"):
        read((FIXTURES / "61294.emf").read_bytes())  # POI's: a record claims 4 GB
    header = records(emf)[0]
    huge = bytearray(records(emf)[next(i for i, r in enumerate(records(emf))
                                       if struct.unpack_from("<I", r)[0] == 84)])
    struct.pack_into("<I", huge, 44, 2**31)  # a run claiming two billion characters
    with pytest.raises(MetafileError, match="characters"):
        read(header + bytes(huge))
    started = time.perf_counter()  # a flood of empty records stops at the cap, quickly
    flood = read(header + struct.pack("<II", 10, 8) * (MAX_RECORDS + 10))
    assert flood.capped and flood.lines == []
    assert time.perf_counter() - started < 20


def parse(path: Path, limits: ParseLimits | None = None) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, limits or ParseLimits())


def test_chart_pasted_as_emf_in_word_reaches_chunks() -> None:
    """POI's stress010.docx: a bar chart pasted as an EMF; its title is in no XML part."""
    path = FIXTURES / "stress010.docx"
    with zipfile.ZipFile(path) as archive:
        assert not any(b"female coverage" in archive.read(name) for name in archive.namelist()
                       if not name.endswith(".emf"))
    doc = parse(path)
    chunks = " ".join(chunk.text for chunk in chunk_document(doc))
    assert "Percentage of female coverage by Programs" in chunks
    assert "pictures_damaged" not in doc.report.skipped


def test_damaged_emf_in_word_is_skipped_and_counted(tmp_path: Path) -> None:
    source = FIXTURES / "stress010.docx"
    damaged = tmp_path / "damaged.docx"
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(damaged, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename == "word/media/image2.emf":
                data = data[:200]  # cut inside its records
            new.writestr(info, data)
    doc = parse(damaged)
    text = " ".join(block.text for block in doc.blocks)
    assert "female coverage" not in text and len(text) > 10_000
    assert doc.report.skipped["pictures_damaged"] == 1


def test_vector_picture_needs_no_ocr_budget() -> None:
    """A vector picture costs no OCR: a document allowed no OCR'd picture still reads it."""
    doc = parse(FIXTURES / "stress010.docx", ParseLimits(max_pictures=0))
    [block] = [block for block in doc.blocks if "Percentage of female" in block.text]
    assert not block.ocr and block.text.startswith("图片文字: ")


def test_mutated_real_metafiles_never_crash() -> None:
    """Bytes of the real fixtures overwritten at random places (fixed seed): each one reads or
    fails with MetafileError, never another exception."""
    rng = random.Random(40)
    sources = [(FIXTURES / name).read_bytes() for name in (
        "flowchart_zh.emf", "flowchart_zh.wmf", "vector_image.emf", "60677.wmf")]
    outcomes = {"read": 0, "damaged": 0}
    for round_ in range(400):
        blob = bytearray(sources[round_ % len(sources)])
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(blob))
            blob[at:at + 4] = rng.choice([b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80",
                                          b"\x00\x00\xc0\x7f", rng.randbytes(4)])
        try:
            read(bytes(blob))
            outcomes["read"] += 1
        except MetafileError:
            outcomes["damaged"] += 1
    assert outcomes["read"] > 0 and outcomes["damaged"] > 0


def emf_plus_comment(*records: bytes) -> bytes:
    """An EMR_COMMENT holding EMF+ records (MS-EMFPLUS 2.3), as GDI+ writes them."""
    data = struct.pack("<I", 0x2B464D45) + b"".join(records)
    return struct.pack("<III", 70, 12 + len(data), len(data)) + data


def emf_plus_record(rtype: int, flags: int, data: bytes) -> bytes:
    data += bytes(-len(data) % 4)
    return struct.pack("<HHII", rtype, flags, 12 + len(data), len(data)) + data


def test_emf_plus_drawstring_is_read_and_its_gdi_twin_is_not() -> None:
    """No real EMF+ file with DrawString was at hand (LibreOffice writes plain EMF): GDI+'s
    records are built here by the spec into the LibreOffice flowchart (whose own EMF+ comments
    hand all drawing to GDI). The title drawn by DrawString is read once although the plain
    record after it draws it again; the other lines, which EMF+ does not draw, are still read
    from the plain records, also after a GetDC."""
    title = FLOWCHART[0]
    parts = records((FIXTURES / "flowchart_zh.emf").read_bytes())
    header = emf_plus_record(0x4001, 1, struct.pack("<IIII", 0xDBC01002, 1, 96, 96))
    family = "宋体".encode("utf-16-le")
    font = emf_plus_record(0x4008, 6 << 8, struct.pack("<IfIiII", 0xDBC01002, 24.0, 2, 0, 0,
                                                       len(family) // 2) + family)
    draw = emf_plus_record(0x401C, 0x8000, struct.pack("<IIIffff", 0xFF000000, 0, len(title),
                                                       10.0, 10.0, 400.0, 40.0)
                           + title.encode("utf-16-le"))
    first_text = next(i for i, rec in enumerate(parts) if struct.unpack_from("<I", rec)[0] == 84)
    parts.insert(first_text, emf_plus_comment(header, font, draw))  # GDI+: EMF+, then its twin
    assert read(b"".join(parts)).lines == FLOWCHART
    parts.insert(first_text + 2, emf_plus_comment(emf_plus_record(0x4004, 0, b"")))  # GetDC
    assert read(b"".join(parts)).lines == FLOWCHART


def test_pptx_ole_object_previews_are_read() -> None:
    """POI's bug62513.pptx shows embedded objects as WMF previews (labels of linked decks, an
    icon's caption); bug64693.pptx an icon labelled on a Chinese Windows, in GBK bytes under a
    font of DEFAULT charset (Tika prints it as cp1252 mojibake "ÐÂ½¨ÎÄ±¾ÎÄµµ"). Their raster
    pictures are not OCR'd here (no OCR budget), which vector ones do not need."""
    corpus = Path(__file__).parents[1] / "bench/format_corpus/metafiles"
    no_ocr = ParseLimits(max_pictures=0)
    texts = [block.text for block in parse(corpus / "bug62513.pptx", no_ocr).blocks]
    assert {"图片文字: Treasurer Report 2011", "图片文字: Microsoft Word Document"} <= set(texts)
    texts = [block.text for block in parse(corpus / "bug64693.pptx", no_ocr).blocks]
    assert "图片文字: 新建文本文档" in texts


def test_default_charset_bytes_decode_as_gbk_only_in_pairs() -> None:
    """ANSI runs under the DEFAULT charset: a Chinese Windows's GBK label becomes Chinese, a
    Western Windows's accented words stay Windows-1252 (an accent is one byte, odd)."""
    from ingest.parse.metafile import _decode

    assert _decode("新建文本文档".encode("gbk"), 1) == "新建文本文档"
    assert _decode("café naïve Größe".encode("cp1252"), 1) == "café naïve Größe"
    assert _decode("採購".encode("cp950"), 136) == "採購"
    assert _decode("新建".encode("gbk"), 0) == "新建"


def test_docx_header_picture_is_read_with_the_margins() -> None:
    """A letterhead: LibreOffice's .docx with the flowchart EMF in its page header (stored as
    image1.wmf). Its text is read once, in the page-margins section, after the body."""
    doc = parse(FIXTURES / "letterhead_zh.docx")
    texts = [block.text for block in doc.blocks]
    assert texts[0] == "关于调整差旅费报销标准的通知"
    [read] = [text for text in texts if "采购审批流程图" in text]
    assert texts.index(read) > texts.index("各部门:自下月起,差旅住宿费按新标准执行。")


def test_document_budget_of_vector_records() -> None:
    """Pictures of half a million empty records each spend a document's budget, whether they
    end damaged or not: then the real flowchart is counted over the limit, not read."""
    emf = (FIXTURES / "flowchart_zh.emf").read_bytes()
    header = records(emf)[0]
    empty = struct.pack("<II", 10, 8)
    pictures = Pictures(ParseLimits())
    assert pictures.blocks(header + empty * (MAX_RECORDS - 10) + empty[:4], 1) == []
    assert pictures.skipped == {"pictures_damaged": 1}
    assert pictures.vector_records > MAX_RECORDS - 10  # what reading it cost counts
    assert pictures.blocks(header + empty * MAX_RECORDS, 1) == []
    assert pictures.blocks(header + empty * (MAX_RECORDS + 1), 1) == []  # another picture
    assert pictures.vector_records >= VECTOR_RECORDS
    assert pictures.blocks(emf, 1) == []
    assert pictures.skipped == {"pictures_damaged": 1, "pictures_text_capped": 2,
                                "pictures_over_limit": 1}
    assert Pictures(ParseLimits()).blocks(emf, 1) != []
