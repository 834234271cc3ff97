"""Legacy Office, OpenDocument, RTF and Kingsoft files, written by LibreOffice itself from
documents python-docx/openpyxl/python-pptx made, read back through the conversion service
(ingest.parse.convert): every phrase arrives; a missing LibreOffice, a hung conversion and a
document's auto-run macro fail or stay harmless with a reason, never a crash."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import docx
import openpyxl
import pptx
import pytest

from ingest.models import ParsedDocument
from ingest.parse import ParseError, ParseWorker, parse_document, read_meta
from ingest.parse.convert import convert

pytestmark = pytest.mark.skipif(shutil.which("soffice") is None,
                                reason="LibreOffice is installed by `make test` (engines.sh)")

TEXT = ["采购管理办法", "第一条 为规范公司采购行为，降低采购成本，制定本办法。",
        "Suppliers are reviewed every quarter by the purchasing committee."]
CELLS = [("科目编码", "科目名称", "审批层级"), ("660201", "办公用品", "部门经理"),
         ("660203", "业务招待", "分管副总")]
SLIDE = ("年度经营计划", "提升客户满意度至九十五分", "先讲背景再讲目标")


def soffice_convert(sources: list[Path], target: str, out: Path) -> None:
    """LibreOffice writing its own formats (the test's source of legacy files)."""
    profile = out / ".profile"
    subprocess.run(["soffice", f"-env:UserInstallation={profile.as_uri()}", "--headless",
                    "--norestore", "--convert-to", target, "--outdir", str(out),
                    *map(str, sources)], check=True, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("legacy")
    document = docx.Document()
    document.core_properties.title = "采购管理办法（2026年修订）"
    document.add_heading(TEXT[0], 1)
    for line in TEXT[1:]:
        document.add_paragraph(line)
    document.save(folder / "policy.docx")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "费用科目"
    for row in CELLS:
        sheet.append(row)
    workbook.save(folder / "accounts.xlsx")
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = SLIDE[0]
    slide.placeholders[1].text = SLIDE[1]
    slide.notes_slide.notes_text_frame.text = SLIDE[2]
    deck.save(folder / "plan.pptx")
    for target in ("doc", "rtf", "odt"):
        soffice_convert([folder / "policy.docx"], target, folder)
    for target in ("xls", "ods"):
        soffice_convert([folder / "accounts.xlsx"], target, folder)
    for target in ("ppt", "odp"):
        soffice_convert([folder / "plan.pptx"], target, folder)
    # Kingsoft WPS Office saves its .wps/.et/.dps in the Word/Excel/PowerPoint 97 formats
    for source, kingsoft in (("policy.doc", "policy.wps"), ("accounts.xls", "accounts.et"),
                             ("plan.ppt", "plan.dps")):
        shutil.copy(folder / source, folder / kingsoft)
    return folder


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data)


def text_of(doc: ParsedDocument) -> str:
    return "\n".join(block.text for block in doc.blocks)


@pytest.mark.parametrize(("target", "suffix"), [("dotx:MS Word 2007 XML Template", ".dotx"),
                                                 ("docm:MS Word 2007 XML VBA", ".docm")])
def test_a_word_template_or_macro_enabled_document_is_read_as_word(
        legacy: Path, tmp_path: Path, target: str, suffix: str) -> None:
    """A template (.dotx: the 公文 a department fills in) and a macro-enabled document (.docm)
    hold the same WordprocessingML as a .docx: the Word parser reads them directly, written
    here by LibreOffice; macros are never read or run."""
    soffice_convert([legacy / "policy.docx"], target, tmp_path)
    doc = parse(tmp_path / f"policy{suffix}")
    assert doc.blocks[0].text == TEXT[0] and doc.blocks[0].level == 1
    assert "降低采购成本" in text_of(doc) and "purchasing committee" in text_of(doc)


@pytest.mark.parametrize("name", ["policy.doc", "policy.rtf", "policy.odt", "policy.wps"])
def test_word_processor_files_are_read_through_libreoffice(legacy: Path, name: str) -> None:
    doc = parse(legacy / name)
    text = text_of(doc)
    assert TEXT[0] in text and "降低采购成本" in text and "purchasing committee" in text
    assert doc.blocks[0].text == TEXT[0] and doc.blocks[0].level == 1
    assert doc.report.chars_indexed > 40


@pytest.mark.parametrize("name", ["accounts.xls", "accounts.ods", "accounts.et"])
def test_spreadsheets_are_read_as_sheets_with_rows(legacy: Path, name: str) -> None:
    doc = parse(legacy / name)
    assert doc.blocks[0].text == "费用科目"
    rows = [b.text for b in doc.blocks if b.kind.value == "table_row"]
    assert any("科目名称: 业务招待" in row and "审批层级: 分管副总" in row for row in rows)


@pytest.mark.parametrize("name", ["plan.ppt", "plan.odp", "plan.dps"])
def test_decks_keep_titles_bodies_and_speaker_notes(legacy: Path, name: str) -> None:
    text = text_of(parse(legacy / name))
    for phrase in SLIDE:
        assert phrase in text


def test_without_libreoffice_each_file_fails_alone_with_the_reason(
        legacy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine where LibreOffice is not installed
    with pytest.raises(ParseError, match="needs LibreOffice"):
        parse(legacy / "policy.doc")
    assert TEXT[0] in text_of(parse(legacy / "policy.docx"))  # the formats it does not need


def test_a_conversion_over_its_time_is_stopped_with_its_whole_process_group(
        legacy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # this conversion's work folder under tmp_path: other conversions on the machine don't count
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    data = (legacy / "plan.ppt").read_bytes()
    with pytest.raises(ParseError, match=r"took longer than 0\.5 s"):
        convert(data, ".ppt", "pptx", timeout_s=0.5)
    left = [p for p in os.listdir("/proc") if p.isdigit() and str(tmp_path) in _cmdline(p)]
    assert left == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def test_an_auto_run_macro_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "macro-ran.txt"
    path = tmp_path / "macro.odt"
    write_macro_odt(path, marker)
    doc = parse(path)
    assert "宏文档正文仍被读取" in text_of(doc)
    assert not marker.exists()


def write_macro_odt(path: Path, marker: Path) -> None:
    """An OpenDocument text whose Basic macro, bound to the document's load event, would write
    `marker` (the way a malicious document drops a file when opened)."""
    office = "urn:oasis:names:tc:opendocument:xmlns"
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content '
        f'xmlns:office="{office}:office:1.0" xmlns:text="{office}:text:1.0" '
        f'xmlns:script="{office}:script:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" '
        'office:version="1.2"><office:scripts><office:event-listeners><script:event-listener '
        'script:language="ooo:script" script:event-name="dom:load" xlink:href="vnd.sun.star.'
        'script:Standard.Module1.Main?language=Basic&amp;location=document"/>'
        "</office:event-listeners></office:scripts><office:body><office:text>"
        "<text:p>宏文档正文仍被读取</text:p></office:text></office:body></office:document-content>")
    parts = ["content.xml", "Basic/script-lc.xml", "Basic/Standard/script-lb.xml",
             "Basic/Standard/Module1.xml"]
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="'
        f'{office}:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path'
        '="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>'
        + "".join(f'<manifest:file-entry manifest:full-path="{p}" manifest:media-type="text/xml"/>'
                  for p in parts) + "</manifest:manifest>")
    library = "http://openoffice.org/2000/library"
    module = (
        '<?xml version="1.0" encoding="UTF-8"?><script:module xmlns:script="http://openoffice.org'
        '/2000/script" script:name="Module1" script:language="StarBasic">Sub Main\n'
        f'  Open &quot;{marker}&quot; For Output As #1\n  Print #1, &quot;ran&quot;\n'
        "  Close #1\nEnd Sub\n</script:module>")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
        archive.writestr("META-INF/manifest.xml", manifest)
        archive.writestr("content.xml", content)
        archive.writestr("Basic/script-lc.xml", f'<library:libraries xmlns:library="{library}">'
                         '<library:library library:name="Standard" library:link="false"/>'
                         "</library:libraries>")
        archive.writestr("Basic/Standard/script-lb.xml",
                         f'<library:library xmlns:library="{library}" library:name="Standard">'
                         '<library:element library:name="Module1"/></library:library>')
        archive.writestr("Basic/Standard/Module1.xml", module)


def test_a_word_97_file_whose_conversion_has_no_default_style(tmp_path: Path) -> None:
    shutil.copy(Path(__file__).parent / "fixtures" / "formats" / "testWORD_various.doc", tmp_path)
    text = text_of(parse(tmp_path / "testWORD_various.doc"))
    assert "Here is a numbered list:" in text


def test_a_legacy_file_converts_inside_a_parse_worker_under_its_memory_limit(
        legacy: Path) -> None:
    meta, data = read_meta(legacy / "plan.ppt", legacy, "default", ["all-staff"])
    with ParseWorker(timeout_s=120) as worker:  # LibreOffice inherits the worker's RLIMIT_DATA
        doc = worker.parse(meta, data)
    assert SLIDE[1] in text_of(doc)


def test_html_exports_named_xls_and_doc_are_read_as_what_they_hold(tmp_path: Path) -> None:
    """Office-automation systems export "Excel" and "Word" files that are HTML pages."""
    head = '<html><head><meta charset="utf-8"></head><body>'
    (tmp_path / "名单.xls").write_text(
        f"{head}<table><tr><td>姓名</td><td>部门</td></tr><tr><td>张三</td><td>财务部</td></tr>"
        "</table></body></html>", "utf-8")
    (tmp_path / "纪要.doc").write_text(
        f"{head}<h1>会议纪要</h1><p>下周一召开年度预算评审会。</p></body></html>", "utf-8")
    assert "姓名: 张三; 部门: 财务部" in text_of(parse(tmp_path / "名单.xls"))
    assert "下周一召开年度预算评审会。" in text_of(parse(tmp_path / "纪要.doc"))


TIKA = Path(__file__).parents[1] / "bench" / "format_corpus" / "tika"  # public, PROVENANCE.md


def test_an_odp_masters_footer_is_read_once_and_its_field_stand_ins_never() -> None:
    """Tika's LibreOffice-made decks: the footer typed into a master is read once; the stand-ins
    a master shows for each slide's own number, date or footer ("<number>", "<date/time>",
    "<#>", LibreOffice's layout "Footer") are not text of the deck."""
    footer = [b.text for b in parse(TIKA / "testMasterFooter.odp").blocks]
    beehive = [b.text for b in parse(TIKA / "LibreOfficeImpress_odp_1.3.odp").blocks]
    assert sum("Master footer is here" in text for text in footer) == 1
    assert "An example Impress file" in beehive
    for text in footer + beehive:
        for stand_in in ("<number>", "<date/time>", "<footer>", "<#>", "Footer"):
            assert stand_in not in text, (stand_in, text)


@pytest.mark.parametrize(("name", "target", "text", "macro"), [
    ("testWORD_macros.doc", "docx", "The quick brown fox.", b"Embolden"),
    ("testEXCEL_macro.xls", "xlsx", "However, a macro is about to be created", b"Dirty"),
    ("testPPT_macros.ppt", "pptx", "The quick", b"Module1")])
def test_an_office_file_with_a_vba_project_is_read_without_its_macros(
        name: str, target: str, text: str, macro: bytes) -> None:
    """Tika's Word, Excel and PowerPoint 97 files with VBA projects: their text is read, and
    LibreOffice neither loads their macros nor carries them into its OOXML (it would by
    default: word/vbaProject.bin)."""
    source = Path(__file__).parent / "fixtures" / "formats" / name
    assert text in text_of(parse(source))
    with zipfile.ZipFile(io.BytesIO(convert(source.read_bytes(), source.suffix, target))) as zf:
        names = zf.namelist()
        assert not [n for n in names if "vba" in n.lower() or n.endswith(".bin")]
        assert macro not in b"".join(zf.read(n) for n in names)
