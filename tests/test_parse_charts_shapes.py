"""Charts (DOCX, PPTX, XLSX), XLSX drawings (text boxes, shapes) and print headers/footers:
text a reader of the file sees that is not in its body or cells (issue 40, "every visible
part"). Charts are written by python-pptx's and openpyxl's chart writers; XLSX files with
cached chart data and drawn shapes are written by LibreOffice Calc."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import docx
import openpyxl
import pptx
import pytest
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml
from openpyxl.chart import BarChart, Reference
from pptx.chart.data import CategoryChartData
from pptx.chart.xmlwriter import ChartXmlWriter
from pptx.enum.chart import XL_CHART_TYPE
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.util import Inches

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import ParseLimits, parse_document, read_meta

SOFFICE = shutil.which("soffice")
needs_libreoffice = pytest.mark.skipif(SOFFICE is None, reason="needs LibreOffice (soffice)")


def parse(path: Path) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, ParseLimits())


def texts(doc: ParsedDocument) -> list[tuple[int, str]]:
    return [(b.page, b.text) for b in doc.blocks if b.kind != BlockKind.TABLE]


def sales_data() -> CategoryChartData:
    data = CategoryChartData()
    data.categories = ["一季度", "二季度"]
    data.add_series("华东", (120, 150))
    data.add_series("华南", (80, 95.5))
    return data


def test_a_deck_whose_only_text_is_a_chart_is_read(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title, no text
    chart = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1),
                                   Inches(6), Inches(4), sales_data()).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "2024年区域销售额"
    chart.category_axis.has_title = True
    chart.category_axis.axis_title.text_frame.text = "季度"
    chart.value_axis.has_title = True
    chart.value_axis.axis_title.text_frame.text = "万元"
    deck.save(tmp_path / "sales.pptx")
    assert texts(parse(tmp_path / "sales.pptx")) == [
        (1, "图表: 2024年区域销售额"), (1, "坐标轴: 季度 / 万元"),
        (1, "华东: 一季度 120; 二季度 150"), (1, "华南: 一季度 80; 二季度 95.5")]


def test_chart_numbers_as_their_format_shows_them(tmp_path: Path) -> None:
    """A chart's cached values under its number format: a share as the percent the chart
    shows, a score as its rounded figure. The deck of aascu.org (bench/format_corpus/metafiles,
    made by PowerPoint) gave 'Iceland 56.3091219257939' where its chart shows 56."""
    data = CategoryChartData(number_format="0.0%")
    data.categories = ["达标率", "完成率"]
    data.add_series("华东", (0.523, 0.7449))
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(6),
                           Inches(4), data)
    deck.save(tmp_path / "rates.pptx")
    assert texts(parse(tmp_path / "rates.pptx")) == [(1, "华东: 达标率 52.3%; 完成率 74.5%")]
    path = Path(__file__).parents[1] / "bench/format_corpus/metafiles"
    found = [text for _, text in texts(parse(path / "aascu.org_workarea_downloadasset.aspx_id="
                                             "5864.pptx")) if text.startswith("2005: ")]
    assert found and found[0].startswith("2005: Australia 59; Iceland 56; New Zealand 51; ")


def test_docx_chart_is_read_after_its_paragraph(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("第一条 各区域销售额见下图。")
    xml = ChartXmlWriter(XL_CHART_TYPE.BAR_CLUSTERED, sales_data()).xml.encode()
    part = Part(PackURI("/word/charts/chart1.xml"),
                "application/vnd.openxmlformats-officedocument.drawingml.chart+xml", xml,
                document.part.package)
    rel_id = document.part.relate_to(part, RT.CHART)
    run = document.add_paragraph().add_run()
    run._r.append(parse_xml(
        '<w:drawing xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        '<wp:inline><wp:extent cx="5486400" cy="3200400"/><wp:docPr id="1" name="图表 1"/>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart">'
        f'<c:chart r:id="{rel_id}"/></a:graphicData></a:graphic></wp:inline></w:drawing>'))
    document.add_paragraph("第二条 本办法自发布之日起施行。")
    document.save(tmp_path / "report.docx")
    assert [text for _, text in texts(parse(tmp_path / "report.docx"))] == [
        "第一条 各区域销售额见下图。", "华东: 一季度 120; 二季度 150",
        "华南: 一季度 80; 二季度 95.5", "第二条 本办法自发布之日起施行。"]


def sales_workbook(path: Path) -> Path:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "销售"
    sheet.append(["季度", "华东", "华南"])
    sheet.append(["一季度", 120, 80])
    sheet.append(["二季度", 150, 95])
    chart = BarChart()
    chart.title = "2024年区域销售额"
    chart.x_axis.title = "季度"
    chart.y_axis.title = "万元"
    chart.add_data(Reference(sheet, min_col=2, min_row=1, max_col=3, max_row=3),
                   titles_from_data=True)
    chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=3))
    sheet.add_chart(chart, "E2")
    sheet.oddHeader.center.text = "华东区销售部 内部资料"
    sheet.oddFooter.right.text = "第 &P 页"
    sheet.evenHeader.center.text = "华东区销售部 内部资料"
    second = workbook.create_sheet("预算")
    second.append(["项目", "金额"])
    second.append(["差旅", 30])
    second.oddHeader.center.text = "华东区销售部 内部资料"
    workbook.save(path)
    return path


def test_xlsx_chart_titles_and_print_header_once(tmp_path: Path) -> None:
    doc = parse(sales_workbook(tmp_path / "sales.xlsx"))
    found = texts(doc)
    # openpyxl writes no cached values: the series' figures are the cells above
    assert (1, "图表: 2024年区域销售额") in found and (1, "坐标轴: 季度 / 万元") in found
    assert found[-2:] == [(2, "页眉页脚"), (2, "华东区销售部 内部资料")]
    assert not [text for _, text in found if "&P" in text or "第 1 页" in text]


def libreoffice(source: Path, out: Path) -> Path:
    """The file as LibreOffice Calc saves it (a private profile, so runs never share one)."""
    assert SOFFICE is not None
    subprocess.run([SOFFICE, "--headless", f"-env:UserInstallation=file://{out}/profile",
                    "--convert-to", "xlsx", "--outdir", str(out), str(source)],
                   check=True, capture_output=True, timeout=180)
    return out / (source.stem + ".xlsx")


@needs_libreoffice
def test_xlsx_chart_saved_by_calc_gives_its_series(tmp_path: Path) -> None:
    saved = libreoffice(sales_workbook(tmp_path / "sales.xlsx"), tmp_path / "calc")
    found = [text for _, text in texts(parse(saved))]
    assert "华东: 一季度 120; 二季度 150" in found and "华南: 一季度 80; 二季度 95" in found


FODS = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
 xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" office:version="1.2"
 office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:body><office:spreadsheet><table:table table:name="报销"><table:shapes>
<draw:rect svg:x="1cm" svg:y="6cm" svg:width="8cm" svg:height="2cm">
 <text:p>审批流程：部门经理审核后交财务总监</text:p></draw:rect>
<draw:frame svg:x="1cm" svg:y="3cm" svg:width="8cm" svg:height="2cm"><draw:text-box>
 <text:p>注意：报销单须附发票原件</text:p></draw:text-box></draw:frame>
</table:shapes>
<table:table-row><table:table-cell office:value-type="string"><text:p>项目</text:p>
</table:table-cell><table:table-cell office:value-type="string"><text:p>标准</text:p>
</table:table-cell></table:table-row>
<table:table-row><table:table-cell office:value-type="string"><text:p>住宿</text:p>
</table:table-cell><table:table-cell office:value-type="string"><text:p>500元</text:p>
</table:table-cell></table:table-row></table:table></office:spreadsheet></office:body>
</office:document>"""


@needs_libreoffice
def test_xlsx_text_box_and_shape_are_read_top_to_bottom(tmp_path: Path) -> None:
    source = tmp_path / "claims.fods"
    source.write_text(FODS, encoding="utf-8")
    doc = parse(libreoffice(source, tmp_path / "calc"))
    assert [text for _, text in texts(doc)] == [
        "报销", "项目: 住宿; 标准: 500元", "注意:报销单须附发票原件",
        "审批流程:部门经理审核后交财务总监"]
    assert doc.report.coverage == 1.0


def test_master_and_layout_text_once_per_deck_without_prompts(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    layout = deck.slide_layouts[1]
    slides = [deck.slides.add_slide(layout) for _ in range(3)]
    for slide, title in zip(slides, ("休假制度", "加班规定", "考勤要求"), strict=True):
        assert slide.shapes.title is not None
        slide.shapes.title.text = title
    # python-pptx draws shapes on slides only: a text box is drawn, then moved to the template
    templates = ((deck.slide_master, "华东集团 内部资料 严禁外传"), (layout, "人力资源部"))
    for template, text in templates:
        box = slides[0].shapes.add_textbox(Inches(0.3), Inches(7), Inches(4), Inches(0.4))
        box.text_frame.text = text
        template.shapes._spTree.append(box.element)
    footer = next(s for s in deck.slide_master.placeholders
                  if s.placeholder_format.type == PP_PLACEHOLDER.FOOTER)
    footer.text_frame.text = "文件编号：HD-HR-2024-07"
    deck.save(tmp_path / "hr.pptx")
    found = texts(parse(tmp_path / "hr.pptx"))
    assert found[-2:] == [
        (3, "页眉页脚"), (3, "文件编号:HD-HR-2024-07 | 华东集团 内部资料 严禁外传 | 人力资源部")]
    assert len([text for _, text in found if "人力资源部" in text]) == 1
    assert not [text for _, text in found if "Click to edit" in text or "Master" in text]


def test_part_names_are_matched_whatever_their_case(tmp_path: Path) -> None:
    """Some writers name a sheet `Sheet1.xml` and its relationships `_rels/sheet1.xml.rels`
    (Apache POI's 123233_charts.xlsx): part names are case-insensitive in a package."""
    path = sales_workbook(tmp_path / "sales.xlsx")
    with zipfile.ZipFile(path) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in members:
            if info.filename == "xl/worksheets/_rels/sheet1.xml.rels":
                data = data.replace(b"/xl/drawings/drawing1.xml", b"/xl/drawings/Drawing1.xml")
                info.filename = "xl/worksheets/_rels/SHEET1.xml.rels"
            archive.writestr(info, data)
    assert (1, "图表: 2024年区域销售额") in texts(parse(path))
