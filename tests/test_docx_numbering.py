"""Word's automatic numbering is read as the label a reader sees ("第一条", "1.2", "（一）").

Files come from the applications themselves: LibreOffice writes the .docx/.doc from OpenDocument
sources here (a policy numbered 第X章/第X条/（X）, lists in every CJK and Latin format it knows),
and Word wrote the public test files of Apache Tika (tests/fixtures/formats/PROVENANCE.md), whose
authors typed after each item the label Word shows for it. The oracle for the format lists is
LibreOffice's own plain-text rendering of the same .docx. Hostile numbering parts are written as
OOXML into a python-docx document.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import time
import unicodedata
import zipfile
from pathlib import Path

import docx
import pytest
from docx.oxml import parse_xml

from ingest.chunk import chunk_document
from ingest.models import BlockKind, ParsedDocument
from ingest.parse import parse_document, read_meta
from ingest.parse.docx_numbering import _format

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
needs_soffice = pytest.mark.skipif(shutil.which("soffice") is None,
                                   reason="LibreOffice is installed by `make test` (engines.sh)")
ODF = ('<?xml version="1.0" encoding="UTF-8"?><office:document '
       'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
       'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
       'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
       'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
       'office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">'
       "<office:styles>{styles}</office:styles>"
       "<office:body><office:text>{body}</office:text></office:body></office:document>")
SPACE = ('<style:list-level-properties text:list-level-position-and-space-mode="label-alignment">'
         '<style:list-level-label-alignment text:label-followed-by="space"/>'
         "</style:list-level-properties>")
CHINESE = 'style:num-format="一, 二, 三, ..."'
HEADING = ('<style:style style:name="Heading_20_1" style:display-name="Heading 1" '
           'style:family="paragraph" style:default-outline-level="1"/>')
# (chapter, [(article, [items])]): 第X章 / 第X条 / （X）, numbered across chapters
POLICY: list[tuple[str, list[tuple[str, list[str]]]]] = [
    ("总则", [("为规范公司采购行为，降低采购成本，制定本办法。", []),
              ("本办法适用于公司各部门的下列采购：", ["办公用品采购；", "固定资产采购。"])]),
    ("采购审批", [("单笔金额超过五万元的采购须经分管副总审批。", ["紧急采购可事后补批；"]),
                  ("采购合同由法务部审核后签订。", [])]),
    ("附则", [("本办法由财务部负责解释，自发布之日起施行。", [])]),
]


def soffice(source: Path, target: str) -> Path:
    """LibreOffice writing `target` from `source`, next to it."""
    profile = source.parent / ".profile"
    subprocess.run(["soffice", f"-env:UserInstallation={profile.as_uri()}", "--headless",
                    "--norestore", "--convert-to", target, "--outdir", str(source.parent),
                    str(source)], check=True, capture_output=True, timeout=300)
    return source.with_suffix("." + target.split(":")[0])


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def texts(doc: ParsedDocument) -> list[str]:
    return [b.text for b in doc.blocks if b.kind in (BlockKind.PARAGRAPH, BlockKind.HEADING)]


def numbered_policy() -> str:
    """The policy with every number left to the list styles."""
    styles = (HEADING + '<text:outline-style style:name="Outline"><text:outline-level-style '
              f'text:level="1" style:num-prefix="第" style:num-suffix="章" {CHINESE}>{SPACE}'
              '</text:outline-level-style></text:outline-style><text:list-style style:name="A">'
              '<text:list-level-style-number text:level="1" style:num-prefix="第" '
              f'style:num-suffix="条" {CHINESE}>{SPACE}</text:list-level-style-number>'
              '<text:list-level-style-number text:level="2" style:num-prefix="（" '
              f'style:num-suffix="）" {CHINESE}>{SPACE}</text:list-level-style-number>'
              "</text:list-style>")
    body = ""
    for index, (chapter, articles) in enumerate(POLICY):
        body += f'<text:h text:style-name="Heading_20_1" text:outline-level="1">{chapter}</text:h>'
        body += ('<text:list xml:id="articles" text:style-name="A">' if index == 0 else
                 '<text:list text:continue-list="articles" text:style-name="A">')
        for article, items in articles:
            inner = "".join(f"<text:list-item><text:p>{item}</text:p></text:list-item>"
                            for item in items)
            body += (f"<text:list-item><text:p>{article}</text:p>"
                     + (f"<text:list>{inner}</text:list>" if inner else "") + "</text:list-item>")
        body += "</text:list>"
    return ODF.format(styles=styles, body=body)


def typed_policy() -> str:
    """The same policy with every number typed."""
    cn = "一二三四五六七八九十"
    body, number = "", 0
    for index, (chapter, articles) in enumerate(POLICY):
        body += (f'<text:h text:style-name="Heading_20_1" text:outline-level="1">'
                 f"第{cn[index]}章 {chapter}</text:h>")
        for article, items in articles:
            body += f"<text:p>第{cn[number]}条 {article}</text:p>"
            body += "".join(f"<text:p>（{cn[i]}） {item}</text:p>" for i, item in enumerate(items))
            number += 1
    return ODF.format(styles=HEADING, body=body)


@needs_soffice
# not "rtf": LibreOffice's RTF writer turns the CJK text of a list level into "?" ("?一?")
@pytest.mark.parametrize("target", ["docx", "doc", "odt"])
def test_an_auto_numbered_policy_chunks_exactly_like_the_typed_one(tmp_path: Path,
                                                                    target: str) -> None:
    chunks = []
    for name, source in (("numbered", numbered_policy()), ("typed", typed_policy())):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "policy.fodt").write_text(source, encoding="utf-8")
        doc = parse(soffice(folder / "policy.fodt", target))
        chunks.append([(c.kind, c.title_path, c.text, c.chunk_id) for c in chunk_document(doc)])
    numbered, typed = chunks
    assert numbered == typed
    clauses = [text for kind, _, text, _ in numbered if kind == "clause"]
    assert [c[:3] for c in clauses] == ["第一条", "第二条", "第三条", "第四条", "第五条"]
    assert "(一) 紧急采购可事后补批" in clauses[2]  # the items restart under each article


# LibreOffice's ODF formats and the OOXML numFmt it writes for each
FORMATS = ["1", "a", "A", "i", "I", "①, ②, ③, ...", "一, 二, 三, ...", "壹, 贰, 叁, ...",
           "壹, 貳, 參, ...", "甲, 乙, 丙, ...", "子, 丑, 寅, ...", "01, 02, 03, ..."]


@needs_soffice
def test_every_format_is_rendered_as_libreoffice_renders_it(tmp_path: Path) -> None:
    """28 items per list (past 十, 二十, Z, ⑳ and the 10 heavenly stems) with a second level
    "%1.%2)" restarting under items 2 and 11."""
    styles, body = "", ""
    for index, fmt in enumerate(FORMATS):
        styles += (f'<text:list-style style:name="L{index}">'
                   f'<text:list-level-style-number text:level="1" style:num-suffix="." '
                   f'style:num-format="{fmt}">{SPACE}</text:list-level-style-number>'
                   f'<text:list-level-style-number text:level="2" style:num-suffix=")" '
                   f'style:num-format="{fmt}" text:display-levels="2">{SPACE}'
                   "</text:list-level-style-number></text:list-style>")
        items = "".join(
            f"<text:list-item><text:p>item {n} of list {index}</text:p>"
            + ("<text:list><text:list-item><text:p>sub alpha</text:p></text:list-item>"
               "<text:list-item><text:p>sub beta</text:p></text:list-item></text:list>"
               if n in (2, 11) else "") + "</text:list-item>" for n in range(1, 29))
        body += (f"<text:p>list {index}</text:p>"
                 f'<text:list text:style-name="L{index}">{items}</text:list>')
    (tmp_path / "lists.fodt").write_text(ODF.format(styles=styles, body=body), encoding="utf-8")
    document = soffice(tmp_path / "lists.fodt", "docx")
    with zipfile.ZipFile(document) as package:
        formats = set(re.findall(r'numFmt w:val="(\w+)"', package.read("word/numbering.xml")
                                 .decode()))
    assert {"taiwaneseCountingThousand", "chineseLegalSimplified", "ideographLegalTraditional",
            "ideographTraditional", "ideographZodiac", "decimalEnclosedCircle", "decimalZero",
            "upperRoman", "lowerLetter"} <= formats
    shown = soffice(document, "txt:Text").read_text("utf-8-sig")
    expected = [unicodedata.normalize("NFKC", line).replace(" ", "")
                for line in shown.splitlines() if line.strip()]
    ours = [text.replace(" ", "") for text in texts(parse(document))]
    assert ours == expected
    assert "二十八.item28oflist6" in ours and "贰拾捌.item28oflist7" in ours


def tika_text(name: str) -> str:
    return " ".join("\n".join(b.text for b in parse(FIXTURES / name).blocks).split())


def test_labels_are_what_word_shows_in_a_word_file() -> None:
    """Tika's test file: each item's text is the label Word draws for it, typed by its author."""
    text = tika_text("testWORD_override_list_numbering.docx")
    for shown in ["0th 0th", "1st.2.3someText 1st.2.3someText", "5th 5th",  # no w:start: 0
                  "1.1.1.1...1 1.1.1.1...1",  # bullet levels inside a composite label
                  "1.b.III 1.b.III",  # lvlRestart: level 2 not restarted by level 1
                  "2.a.I 2.a.I", "2.b 2.b",  # restarted by level 0; a skipped level counts
                  "2.17 2.17", "2.18.2.1 2.18.2.1",  # start 17; isLgl: decimal throughout
                  "A A", "B B", "C C", "4 4",  # a format override continues its list
                  "00 00", "01..1 01..1", "02 02"]:  # decimalZero, a "none" level
        assert shown in text
    lists = tika_text("testWORD_numbered_list.docx")
    for shown in ["1) This", "a) Is", "ii) Level", "iii) List", "II. bar", "6. six",
                  "e. seven e", "2. A ii 2", "1.1. 1.2->1.1 //set the value",
                  "1. Within cell 1", "b. Cell b"]:  # a list inside a table cell
        assert shown in lists


@needs_soffice
def test_a_word_97_files_numbering_survives_the_conversion() -> None:
    """The .doc twin goes through LibreOffice: the labels it keeps arrive (its .doc import
    drops lvlRestart, isLgl and format overrides, so those four differ from Word)."""
    text = tika_text("testWORD_override_list_numbering.doc")
    for shown in ["1st.2.3someText 1st.2.3someText", "5th 5th", "2.a.I 2.a.I", "2.17 2.17",
                  "(1)) (1))", "00 00", "01..1 01..1"]:
        assert shown in text


def test_style_numbering_is_rendered_and_bullets_get_no_label(tmp_path: Path) -> None:
    """python-docx's own List Number/List Bullet styles carry their numbering in the style."""
    document = docx.Document()
    for text, style in (("提交申请", "List Number"), ("部门审批", "List Number"),
                        ("附件齐全", "List Bullet")):
        document.add_paragraph(text, style=style)
    document.element.body.sectPr.addprevious(parse_xml(  # the style's numbering turned off
        f'<w:p {W}><w:pPr><w:pStyle w:val="ListNumber"/><w:numPr><w:numId w:val="0"/>'
        "</w:numPr></w:pPr><w:r><w:t>备注</w:t></w:r></w:p>"))
    buffer = io.BytesIO()
    document.save(buffer)
    path = tmp_path / "steps.docx"
    path.write_bytes(buffer.getvalue())
    assert texts(parse(path)) == ["1. 提交申请", "2. 部门审批", "附件齐全", "备注"]


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def with_numbering(tmp_path: Path, numbering: str | None, paragraphs: int = 3) -> Path:
    """A python-docx document whose paragraphs use numId 1, with numbering.xml replaced by
    `numbering` (None: the document's relationship to it dropped)."""
    document = docx.Document()
    for n in range(paragraphs):
        document.element.body.sectPr.addprevious(parse_xml(
            f'<w:p {W}><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'
            f"</w:pPr><w:r><w:t>条款内容{n}</w:t></w:r></w:p>"))
    buffer = io.BytesIO()
    document.save(buffer)
    out = io.BytesIO()
    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/_rels/document.xml.rels" and numbering is None:
                data = re.sub(rb'<Relationship [^>]*numbering[^>]*/>', b"", data)
            elif item.filename == "word/numbering.xml" and numbering is not None:
                data = f'<w:numbering {W}>{numbering}</w:numbering>'.encode()
            target.writestr(item, data)
    path = tmp_path / "hostile.docx"
    path.write_bytes(out.getvalue())
    return path


def level(ilvl: int, fmt: str, text: str, start: str = "1") -> str:
    return (f'<w:lvl w:ilvl="{ilvl}"><w:start w:val="{start}"/><w:numFmt w:val="{fmt}"/>'
            f'<w:lvlText w:val="{text}"/></w:lvl>')


HOSTILE = {
    "no numbering part": None,
    "num without definition": '<w:num w:numId="1"><w:abstractNumId w:val="9"/></w:num>',
    "unknown format": ('<w:abstractNum w:abstractNumId="0">' + level(0, "hebrew2", "%1.")
                       + '</w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'),
    "numStyleLink cycle": (
        '<w:abstractNum w:abstractNumId="0"><w:numStyleLink w:val="S"/>'
        '<w:styleLink w:val="S"/></w:abstractNum><w:abstractNum w:abstractNumId="1">'
        '<w:numStyleLink w:val="S"/></w:abstractNum>'
        '<w:num w:numId="1"><w:abstractNumId w:val="1"/></w:num>'),
    "thousands of levels and a huge level text": (
        '<w:abstractNum w:abstractNumId="0">'
        + "".join(level(i % 12, "decimal", "%1" * 200) for i in range(5000))
        + '</w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'),
    "a huge start value": (
        '<w:abstractNum w:abstractNumId="0">'
        + level(0, "chineseCounting", "第%1条", start="999999999")
        + '</w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_numbering_costs_at_most_the_labels(tmp_path: Path, case: str) -> None:
    path = with_numbering(tmp_path, HOSTILE[case])
    started = time.perf_counter()
    lines = texts(parse(path))
    assert time.perf_counter() - started < 5
    assert [line[-5:] for line in lines] == ["条款内容0", "条款内容1", "条款内容2"]
    assert all(len(line) <= 64 + 6 for line in lines)
    if case == "thousands of levels and a huge level text":
        assert lines[0].startswith("11111")  # the first definition of level 0, cut short
    if case == "a huge start value":  # clamped to Word's own limit; past 9999 in digits
        assert lines[:2] == ["第32767条 条款内容0", "第32768条 条款内容1"]
    if case in ("no numbering part", "num without definition", "unknown format",
                "numStyleLink cycle"):
        assert lines == ["条款内容0", "条款内容1", "条款内容2"]


def test_a_list_style_link_is_followed_to_its_definition(tmp_path: Path) -> None:
    """Word writes a list style's numbering as a numStyleLink to the definition whose
    styleLink names that style; both share one count."""
    numbering = ('<w:abstractNum w:abstractNumId="0"><w:styleLink w:val="PolicyList"/>'
                 + level(0, "chineseCounting", "第%1条") + '</w:abstractNum>'
                 '<w:abstractNum w:abstractNumId="1"><w:numStyleLink w:val="PolicyList"/>'
                 '</w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="1"/></w:num>')
    lines = texts(parse(with_numbering(tmp_path, numbering)))
    assert lines == ["第一条 条款内容0", "第二条 条款内容1", "第三条 条款内容2"]


@pytest.mark.parametrize(("fmt", "shown"), [
    ("chineseCounting", "一 九 十 十一 二十 二十八 一百 一百零一 一百一十"),
    ("chineseCountingThousand", "一 九 十 十一 二十 二十八 一百 一百零一 一百一十"),
    ("japaneseCounting", "一 九 十 十一 二十 二十八 百 百一 百十"),
    ("ideographDigital", "一 九 一〇 一一 二〇 二八 一〇〇 一〇一 一一〇"),
    ("decimalEnclosedCircleChinese", "① ⑨ ⑩ ⑪ ⑳ ㉘ 100 101 110"),
    ("upperRoman", "I IX X XI XX XXVIII C CI CX"),
])
def test_formats_word_writes_for_chinese_templates(fmt: str, shown: str) -> None:
    """Formats Word's Chinese and Japanese list templates use and LibreOffice does not write
    (it writes taiwaneseCountingThousand): ECMA-376 17.18.59's counting systems."""
    assert " ".join(str(_format(n, fmt)) for n in (1, 9, 10, 11, 20, 28, 100, 101, 110)) == shown
