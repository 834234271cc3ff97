"""Text files in the encodings editors write them in: each detected, read as written, its
choice and confidence in the parse report; GBK read exactly as before detection; a doubtful
decode warned about. The texts are real: Taiwan's 勞動基準法 (Big5), Japan's 労働基準法
(Shift-JIS), a LawRefBook law (GBK); statutes are outside copyright in all three places."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.models import ParsedDocument
from ingest.parse import parse_document, read_meta
from ingest.parse.markdown_text import parse_text
from ingest.text import normalize

BIG5_LAW = (
    "勞動基準法\n"
    "第 1 條\n"
    "為規定勞動條件最低標準，保障勞工權益，加強勞雇關係，促進社會與經濟發展，特制定本"
    "法；本法未規定者，適用其他法律之規定。\n"
    "雇主與勞工所訂勞動條件，不得低於本法所定之最低標準。\n"
    "第 2 條\n"
    "本法用詞，定義如下：\n"
    "一、勞工：指受雇主僱用從事工作獲致工資者。\n"
    "二、雇主：指僱用勞工之事業主、事業經營負責人或代表事業主處理有關勞工事務之人。\n"
)
SJIS_LAW = (
    "労働基準法\n"
    "第一条　労働条件は、労働者が人たるに値する生活を営むための必要を充たすべきもので"
    "なければならない。\n"
    "２　この法律で定める労働条件の基準は最低のものであるから、労働関係の当事者は、こ"
    "の基準を理由として労働条件を低下させてはならないことはもとより、その向上を図るよ"
    "うに努めなければならない。\n"
    "第二条　労働条件は、労働者と使用者が、対等の立場において決定すべきものである。\n"
)
GBK_LAW = (
    "中华人民共和国劳动合同法\n"
    "第一条 为了完善劳动合同制度，明确劳动合同双方当事人的权利和义务，保护劳动者的合"
    "法权益，构建和发展和谐稳定的劳动关系，制定本法。\n"
    "第二条 中华人民共和国境内的企业、个体经济组织、民办非企业单位等组织（以下称用人"
    "单位）与劳动者建立劳动关系，订立、履行、变更、解除或者终止劳动合同，适用本法。\n"
    "第三条 订立劳动合同，应当遵循合法、公平、平等自愿、协商一致、诚实信用的原则。\n"
)
CSV_ROWS = "條文,主管機關,罰則\n第 1 條,勞動部,無\n第 2 條,勞動部,無\n"


def _parse(path: Path, data: bytes) -> ParsedDocument:
    path.write_bytes(data)
    meta, raw = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, raw)


def _text(doc: ParsedDocument) -> str:
    return "\n".join(b.text for b in doc.blocks)


@pytest.mark.parametrize(("name", "text", "codec", "encoding"), [
    ("勞基法.txt", BIG5_LAW, "big5", "cp950"),
    ("勞基法.md", BIG5_LAW, "cp950", "cp950"),  # what Windows editors in Taiwan write
    ("労基法.txt", SJIS_LAW, "shift_jis", "cp932"),
    ("労基法.md", SJIS_LAW, "cp932", "cp932"),
    ("bom16.txt", SJIS_LAW, "utf-16", "utf-16"),  # Notepad's "Unicode": little-endian, a BOM
    ("le16.txt", BIG5_LAW, "utf-16-le", "utf_16_le"),  # no BOM
    ("be16.txt", SJIS_LAW, "utf-16-be", "utf_16_be"),
])
def test_text_files_are_read_in_the_encoding_they_were_written_in(
        tmp_path: Path, name: str, text: str, codec: str, encoding: str) -> None:
    doc = _parse(tmp_path / name, text.encode(codec))
    assert _text(doc).replace("\n", "") == normalize(text).replace("\n", "")
    assert doc.report.encoding == encoding
    assert doc.report.encoding_confidence is not None and doc.report.encoding_confidence >= 0.9
    assert doc.report.warnings == []


@pytest.mark.parametrize(("name", "codec"), [("big5.csv", "big5"), ("utf16.csv", "utf-16"),
                                             ("sjis.tsv", "shift_jis")])
def test_tables_and_pages_are_decoded_the_same_way(tmp_path: Path, name: str,
                                                   codec: str) -> None:
    rows = CSV_ROWS.replace("條", "条") if codec == "shift_jis" else CSV_ROWS
    if name.endswith(".tsv"):
        rows = rows.replace(",", "\t")
    doc = _parse(tmp_path / name, rows.encode(codec))
    assert "主管機關: 勞動部" in _text(doc)
    assert doc.report.encoding_confidence is not None and doc.report.encoding_confidence >= 0.9


def test_a_page_without_a_charset_is_detected(tmp_path: Path) -> None:
    body = "".join(f"<p>{line}</p>" for line in BIG5_LAW.splitlines()[2:])
    page = f"<html><head><title>勞動基準法</title></head><body><main>{body}</main></body></html>"
    doc = _parse(tmp_path / "law.html", page.encode("big5"))
    assert "保障勞工權益" in _text(doc) and doc.meta.title == "勞動基準法"
    assert doc.report.encoding == "cp950"


@pytest.mark.parametrize("declared", ["gb2312", "gbk", "big5", "shift_jis", "iso-8859-1"])
def test_a_page_saved_as_utf8_with_its_old_charset_is_read_as_utf8(tmp_path: Path,
                                                                    declared: str) -> None:
    body = "".join(f"<p>{line}</p>" for line in GBK_LAW.splitlines())
    page = (f'<html><head><meta http-equiv="Content-Type" content="text/html; charset='
            f'{declared}"><title>劳动合同法</title></head><body>{body}</body></html>')
    doc = _parse(tmp_path / "saved.html", page.encode("utf-8"))
    assert "明确劳动合同双方当事人的权利和义务" in _text(doc) and doc.meta.title == "劳动合同法"
    assert doc.report.encoding == "utf-8"


def test_a_declared_charset_still_decides_when_the_bytes_are_not_utf8(tmp_path: Path) -> None:
    body = "".join(f"<p>{line}</p>" for line in GBK_LAW.splitlines())
    page = f'<html><head><meta charset="gb2312"></head><body>{body}</body></html>'
    doc = _parse(tmp_path / "gbk.html", page.encode("gbk"))
    assert "明确劳动合同双方当事人的权利和义务" in _text(doc)
    assert doc.report.encoding == "gb18030"


@pytest.mark.parametrize("lines", [1, 2, 4])  # a one-line note too: GB18030 wins every tie
def test_gbk_files_read_exactly_as_before(tmp_path: Path, lines: int) -> None:
    data = "\n".join(GBK_LAW.splitlines()[:lines]).encode("gbk")
    doc = _parse(tmp_path / "gbk.txt", data)
    assert doc.report.encoding == "gb18030" and doc.report.warnings == []
    assert doc.blocks == [b for b in parse_text(data.decode("gb18030")) if b.text]


def test_a_doubtful_decode_is_a_warning_in_the_report(tmp_path: Path) -> None:
    """Two files joined into one (GBK, then Big5): no single encoding reads it cleanly."""
    joined = GBK_LAW.encode("gbk") + BIG5_LAW.encode("big5")
    doc = _parse(tmp_path / "joined.txt", joined)
    assert doc.report.encoding_confidence is not None and doc.report.encoding_confidence < 0.9
    assert len(doc.report.warnings) == 1 and "encoding guessed as" in doc.report.warnings[0]
    from ingest.pipeline.report import ParseRunReport

    summary = ParseRunReport.of({"joined@1": doc.report.model_dump(mode="json")}, [])
    assert summary.warnings == {"joined@1": doc.report.warnings}  # the run and status show it


@pytest.mark.parametrize(("name", "phrase", "codec"), [
    ("ja_iso-2022-jp.txt", "文字集合を7ビット符号または8ビット符号で表現する", "iso2022_jp_2"),
    ("ko_iso-2022-kr.txt", "문자 집합을 7비트 부호 또는 8비트 부호로 표현하기", "iso2022_kr")])
def test_iso_2022_text_is_read_in_its_escapes_not_as_utf8(tmp_path: Path, name: str,
                                                          phrase: str, codec: str) -> None:
    """uchardet's test texts (bench/format_corpus/PROVENANCE.md): 7-bit ISO 2022 text is valid
    UTF-8 too, and read as UTF-8 it indexed "$BJ8;z=8" as words."""
    data = (Path(__file__).parents[1] / "bench/format_corpus/uchardet" / name).read_bytes()
    doc = _parse(tmp_path / name, data)
    assert phrase in _text(doc) and "\x1b" not in _text(doc)
    assert doc.report.encoding == codec and doc.report.warnings == []


def test_ascii_with_a_stray_escape_stays_utf8(tmp_path: Path) -> None:
    """A terminal log's colour codes are not ISO 2022: such a file is read as before."""
    doc = _parse(tmp_path / "build.log.txt", b"\x1b[31mFAILED\x1b[0m test_login\n")
    assert doc.report.encoding == "utf-8" and "\x1b[31mFAILED\x1b[0m test_login" in _text(doc)
