"""Spreadsheets (XLSX) and delimited text (CSV, TSV): sheets as headings, header rows found and
joined, rows as "header: value; …", hidden and empty parts counted, and the limits that make a
huge or broken file fail with a reason instead of hanging."""

from __future__ import annotations

import datetime as dt
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pytest
from openpyxl.chart import BarChart, Reference

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import ParseError, ParseLimits, parse_document, read_meta

CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def parse(path: Path, limits: ParseLimits | None = None) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, limits or ParseLimits())


def save(workbook: openpyxl.Workbook, path: Path) -> Path:
    workbook.save(path)
    return path


def rows_of(doc: ParsedDocument) -> list[tuple[int, str]]:
    return [(b.page, b.text) for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]


def kinds(doc: ParsedDocument) -> list[tuple[str, int, str]]:
    return [(b.kind.value, b.page, b.text) for b in doc.blocks if b.kind != BlockKind.TABLE]


def rewrite_part(path: Path, part: str, change: Callable[[bytes], bytes]) -> None:
    with zipfile.ZipFile(path) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in members:
            archive.writestr(info, change(data) if info.filename == part else data)


# ---- XLSX ---------------------------------------------------------------------------------------


def test_visible_sheets_become_headings_hidden_sheets_are_counted(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    travel = workbook.active
    travel.title = "差旅标准"
    travel.append(["城市", "标准"])
    travel.append(["北京", "600元/天"])
    secret = workbook.create_sheet("薪酬底表")
    secret.append(["姓名", "月薪"])
    secret.append(["张三", "机密" * 500])
    secret.sheet_state = "hidden"
    lookup = workbook.create_sheet("代码表")
    lookup.append(["代码", "含义"])
    lookup.sheet_state = "veryHidden"
    approval = workbook.create_sheet("审批")
    approval.append(["事项", "审批人"])
    approval.append(["采购", "总经理"])
    doc = parse(save(workbook, tmp_path / "book.xlsx"))
    assert kinds(doc) == [
        ("heading", 1, "差旅标准"), ("table_row", 1, "城市: 北京; 标准: 600元/天"),
        ("heading", 2, "审批"), ("table_row", 2, "事项: 采购; 审批人: 总经理"),
    ]
    assert doc.pages == 2
    assert doc.report.skipped == {"hidden_sheets": 2}
    assert not any("机密" in b.text for b in doc.blocks)
    assert doc.report.chars_skipped >= 1000  # the hidden sheet's text was seen, left out
    assert doc.report.chars_seen >= doc.report.chars_indexed + 1000
    assert (doc.meta.title, doc.report.title_source) == ("差旅标准", "heading")


def test_formula_gives_its_cached_value_and_title_comes_from_metadata(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["项目", "金额"])
    sheet.append(["差旅费", 1200])
    sheet.append(["办公费", 300])
    sheet.append(["合计", "=SUM(B2:B3)"])
    workbook.properties.title = "2026年预算"
    path = save(workbook, tmp_path / "budget.xlsx")
    # openpyxl computes no formula: write the result Excel would have cached next to it
    rewrite_part(path, "xl/worksheets/sheet1.xml", lambda xml: xml.replace(
        b"<f>SUM(B2:B3)</f><v></v>", b"<f>SUM(B2:B3)</f><v>1500</v>"))
    doc = parse(path)
    assert rows_of(doc)[-1] == (1, "项目: 合计; 金额: 1500")
    assert not any("SUM" in b.text for b in doc.blocks)
    assert (doc.meta.title, doc.report.title_source) == ("2026年预算", "metadata")


def test_title_line_merged_and_multi_row_header_and_values_as_shown(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "科目"
    sheet.append(["2026年费用科目表"])
    sheet.merge_cells("A1:E1")
    sheet.append(["科目", "预算", None, "生效日期", "备注"])
    sheet.append([None, "金额", "占比", None, None])
    for merged in ("A2:A3", "B2:C2", "D2:D3", "E2:E3"):
        sheet.merge_cells(merged)
    sheet.append(["差旅费", 12000.0, 0.25, dt.datetime(2026, 1, 1), "含住宿"])
    sheet.append(["办公费", 3000, 0.125, dt.date(2026, 3, 15), None])
    sheet["C4"].number_format = "0%"
    sheet["C5"].number_format = "0.0%"
    doc = parse(save(workbook, tmp_path / "fees.xlsx"))
    assert kinds(doc) == [
        ("heading", 1, "科目"),
        ("paragraph", 1, "2026年费用科目表"),
        ("table_row", 1, "2026年费用科目表 | 科目: 差旅费; 预算/金额: 12000; 预算/占比: 25%; "
                         "生效日期: 2026-01-01; 备注: 含住宿"),
        ("table_row", 1, "2026年费用科目表 | 科目: 办公费; 预算/金额: 3000; 预算/占比: 12.5%; "
                         "生效日期: 2026-03-15"),
    ]
    (table,) = [b for b in doc.blocks if b.kind == BlockKind.TABLE]
    assert table.text.split("\n")[1] == "| 科目 | 预算/金额 | 预算/占比 | 生效日期 | 备注 |"


def test_group_row_over_sub_columns_is_part_of_the_header(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["部门", "费用", None])
    sheet.append([None, "差旅", "办公"])
    sheet.merge_cells("B1:C1")
    sheet.append(["财务部", 1200, 300])
    notes = workbook.create_sheet("备注")  # merged across columns, numbers below: one header row
    notes.append(["项目", "数量", None])
    notes.merge_cells("B1:C1")
    notes.append(["差旅", 1, 2])
    assert rows_of(parse(save(workbook, tmp_path / "groups.xlsx"))) == [
        (1, "部门: 财务部; 费用/差旅: 1200; 费用/办公: 300"),
        (2, "项目: 差旅; 数量: 1; 数量: 2")]


def test_title_with_a_note_beside_it_is_no_header(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["2026年差旅费标准", None, None, "单位：元"])
    sheet.append(["城市", "职级", "住宿", "餐补"])
    sheet.append(["北京", "经理", 600, 100])
    doc = parse(save(workbook, tmp_path / "travel.xlsx"))
    assert kinds(doc)[1:] == [("paragraph", 1, "2026年差旅费标准; 单位:元"),
                              ("table_row", 1, "城市: 北京; 职级: 经理; 住宿: 600; 餐补: 100")]


def test_merged_data_cells_fill_every_row_they_cover(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["事项", "金额范围", "审批人"])
    sheet.append(["采购", "5万元以下", "部门负责人"])
    sheet.append([None, "5万元(含)以上", "总经理"])
    sheet.append(["招聘", "按年度编制计划", None])
    sheet.merge_cells("A2:A3")
    sheet.merge_cells("B4:C4")
    doc = parse(save(workbook, tmp_path / "authority.xlsx"))
    assert [text for _, text in rows_of(doc)] == [
        "事项: 采购; 金额范围: 5万元以下; 审批人: 部门负责人",
        "事项: 采购; 金额范围: 5万元(含)以上; 审批人: 总经理",
        "事项: 招聘; 金额范围: 按年度编制计划; 审批人: 按年度编制计划",
    ]


def test_a_note_merged_across_the_table_is_a_paragraph_not_a_row(tmp_path: Path) -> None:
    """A note row merged across every column would otherwise repeat under every header
    ("项目: 注:…; 标准: 注:…"), the same words once per column."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["项目", "物业类型", "收费标准"])
    sheet.append(["翠湖苑", "高层住宅", "2.85"])
    sheet.append(["注:以上标准含公共能耗分摊,不含电梯运行费。"])
    sheet.append(["云栖花园", "多层住宅", "1.95"])
    sheet.merge_cells("A3:C3")
    doc = parse(save(workbook, tmp_path / "fees.xlsx"))
    assert [text for _, text in rows_of(doc)] == [
        "项目: 翠湖苑; 物业类型: 高层住宅; 收费标准: 2.85",
        "项目: 云栖花园; 物业类型: 多层住宅; 收费标准: 1.95",
    ]
    notes = [b.text for b in doc.blocks if "公共能耗" in b.text and b.kind != BlockKind.TABLE]
    assert notes == ["注:以上标准含公共能耗分摊,不含电梯运行费。"]


def test_empty_and_hidden_rows_are_left_out_and_counted(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append([])  # blank lines above the table are layout, not skipped rows
    sheet.append(["姓名", "部门"])
    sheet.append(["张三", "财务部"])
    sheet.append([])
    sheet.append([])
    sheet.append(["李四", "人事部"])
    sheet.append(["王五", "已离职人员名单"])
    sheet.row_dimensions[7].hidden = True
    sheet.append(["赵六", "法务部"])
    doc = parse(save(workbook, tmp_path / "staff.xlsx"))
    assert [text for _, text in rows_of(doc)] == [
        "姓名: 张三; 部门: 财务部", "姓名: 李四; 部门: 人事部", "姓名: 赵六; 部门: 法务部"]
    assert doc.report.skipped == {"empty_rows": 2, "hidden_rows": 1}
    assert not any("王五" in b.text for b in doc.blocks)
    assert doc.report.chars_skipped == len("王五已离职人员名单")


def test_long_sheet_is_cut_into_tables_of_fifty_rows(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["编号", "名称"])
    for n in range(1, 121):
        sheet.append([n, f"物品{n}"])
    doc = parse(save(workbook, tmp_path / "items.xlsx"))
    tables = [i for i, b in enumerate(doc.blocks) if b.kind == BlockKind.TABLE]
    assert [doc.blocks[i].text.count("\n") - 1 for i in tables] == [50, 50, 20]
    assert doc.blocks[tables[1] + 1].text == "编号: 51; 名称: 物品51"  # each table, then its rows
    assert (doc.report.tables, doc.report.table_rows) == (3, 120)


def test_row_limit_fails_as_soon_as_it_is_passed(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["编号", "名称"])
    for n in range(1500):
        sheet.append([n, f"行{n}"])
    path = save(workbook, tmp_path / "long.xlsx")
    with pytest.raises(ParseError, match=r"parse_max_rows") as failure:
        parse(path, ParseLimits(max_rows=1000))
    assert "more than 1,000 rows" in str(failure.value)
    assert "row 1,001" in str(failure.value)  # stopped there, did not read on
    assert len(rows_of(parse(path, ParseLimits(max_rows=1501)))) == 1500


def cfb(*streams: str) -> bytes:
    """An OLE compound file: the magic, a header sector, and directory entries naming streams."""
    entries = b"".join(name.encode("utf-16-le").ljust(64, b"\0")
                       + (2 * len(name) + 2).to_bytes(2, "little") + bytes(62)
                       for name in ("Root Entry", *streams))
    return CFB_MAGIC + bytes(504) + entries.ljust(512, b"\0")


def test_encrypted_workbook_and_renamed_xls_fail_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "salaries.xlsx").write_bytes(cfb("EncryptionInfo", "EncryptedPackage"))
    with pytest.raises(ParseError, match=r"password-protected \(encrypted\) workbook"):
        parse(tmp_path / "salaries.xlsx")
    (tmp_path / "old.xlsx").write_bytes(cfb("Workbook", "\x05SummaryInformation"))
    with pytest.raises(ParseError, match=r"not a XLSX file: the content is a legacy Office"):
        parse(tmp_path / "old.xlsx")


# ---- CSV and TSV --------------------------------------------------------------------------------


def test_csv_utf8_bom_title_line_is_no_header(tmp_path: Path) -> None:
    text = ("2026年费用科目表\r\n科目,金额,备注\r\n"
            "差旅费,12000,\"含住宿,交通\"\r\n\r\n办公费,300,\r\n")
    (tmp_path / "fees.csv").write_bytes(text.encode("utf-8-sig"))
    doc = parse(tmp_path / "fees.csv")
    assert kinds(doc) == [
        ("paragraph", 1, "2026年费用科目表"),
        ("table_row", 1, "2026年费用科目表 | 科目: 差旅费; 金额: 12000; 备注: 含住宿,交通"),
        ("table_row", 1, "2026年费用科目表 | 科目: 办公费; 金额: 300"),
    ]
    assert doc.report.encoding == "utf-8-sig"
    assert doc.report.skipped == {"empty_rows": 1}


def test_csv_gb18030_with_semicolons(tmp_path: Path) -> None:
    text = "姓名;部门;电话\n张三;财务部;8801\n李四;人事部;8802\n"
    (tmp_path / "phones.csv").write_bytes(text.encode("gb18030"))
    doc = parse(tmp_path / "phones.csv")
    assert [t for _, t in rows_of(doc)] == ["姓名: 张三; 部门: 财务部; 电话: 8801",
                                            "姓名: 李四; 部门: 人事部; 电话: 8802"]
    assert doc.report.encoding == "gb18030"


def test_tab_delimited_tsv_and_csv(tmp_path: Path) -> None:
    text = "城市\t等级\t标准\n北京\t一线\t600元\n成都\t二线\t450元\n"
    for name in ("hotels.tsv", "hotels.csv"):
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert [t for _, t in rows_of(parse(tmp_path / name))] == [
            "城市: 北京; 等级: 一线; 标准: 600元", "城市: 成都; 等级: 二线; 标准: 450元"]


def test_csv_header_is_the_first_row_unless_it_is_numbers(tmp_path: Path) -> None:
    (tmp_path / "wide.csv").write_text("编号,名称\n1,办公桌,1200,2026-01-05\n", encoding="utf-8")
    assert rows_of(parse(tmp_path / "wide.csv")) == [
        (1, "编号: 1; 名称: 办公桌; 列3: 1200; 列4: 2026-01-05")]
    (tmp_path / "bare.csv").write_text("1,1200.5,25%\n2,80,5%\n", encoding="utf-8")
    assert rows_of(parse(tmp_path / "bare.csv")) == [
        (1, "列1: 1; 列2: 1200.5; 列3: 25%"), (1, "列1: 2; 列2: 80; 列3: 5%")]


def test_csv_ascii_at_the_start_gb18030_further_on(tmp_path: Path) -> None:
    lines = ["id,name,note"] + [f"{n},item{n},{'x' * 80}" for n in range(14_000)]  # > 1 MB
    data = ("\n".join(lines) + "\n").encode("ascii") + "14000,物品,备注\n".encode("gb18030")
    (tmp_path / "mixed.csv").write_bytes(data)
    doc = parse(tmp_path / "mixed.csv")
    assert rows_of(doc)[-1][1] == "id: 14000; name: 物品; note: 备注"
    assert doc.report.encoding == "gb18030"


def test_csv_row_limit(tmp_path: Path) -> None:
    (tmp_path / "long.csv").write_text("a,b\n" + "1,2\n" * 50, encoding="utf-8")
    with pytest.raises(ParseError, match=r"than 20 rows \(passed at line 21\).*parse_max_rows"):
        parse(tmp_path / "long.csv", ParseLimits(max_rows=20))


def test_csv_with_a_50_mb_line_fails_fast_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / "broken.csv").write_bytes(b"a," * (25 * 1024 * 1024))
    started = time.perf_counter()
    with pytest.raises(ParseError, match=r"line 1 has no line break in its first 1 MB"):
        parse(tmp_path / "broken.csv")
    (tmp_path / "later.csv").write_bytes(b"h1,h2\n" + b"x" * (3 * 1024 * 1024) + b"\n1,2\n")
    with pytest.raises(ParseError, match=r"line 2 is longer than 1,048,576 characters"):
        parse(tmp_path / "later.csv")
    (tmp_path / "field.csv").write_bytes(b'h1,h2\n1,"' + b"y" * 200_000 + b'"\n')
    with pytest.raises(ParseError, match=r"line 2: field larger than field limit"):
        parse(tmp_path / "field.csv")
    assert time.perf_counter() - started < 20


XLRD = Path(__file__).parents[1] / "bench" / "format_corpus" / "xlrd"  # public, PROVENANCE.md


def test_numbers_and_dates_read_as_their_number_format_shows_them() -> None:
    """xlrd's public profiles.xls and Formate.xls (Excel files, read through LibreOffice):
    General floats at the digits a cell shows, not the binary noise a calculation stored;
    "0.000", currency and date formats as written."""
    profiles = "\n".join(b.text for b in parse(XLRD / "profiles.xls").blocks)
    assert "0.20001" in profiles and "2.425140001" in profiles and "265.400" in profiles
    assert "0.200009999999992" not in profiles
    formats = "\n".join(b.text for b in parse(XLRD / "Formate.xls").blocks)
    for shown in ("23/02/2005", "03/07/1907", "5:47:13 PM", "1.20 €", "1,000.30 €"):
        assert shown in formats, shown
    # Tika's LibreOffice-made test-columnar.ods: a date-time stored as 17:46:39.99999 shows :40
    columnar = parse(XLRD.parent / "tika" / "test-columnar.ods").blocks
    assert "25Apr60:17:46:40" in "\n".join(b.text for b in columnar)


def test_an_xls_shows_the_formula_results_its_author_saved() -> None:
    """xlrd's public namesdemo.xls (Excel 2003): LibreOffice recalculates TODAY() on opening, so
    its xlsx holds the conversion day; the result the file stored (7 Dec 2006) is what shows.
    Boolean results stay booleans ("2">2 is TRUE in Excel, not LibreOffice's number 1)."""
    text = "\n".join(b.text for b in parse(XLRD / "namesdemo.xls").blocks)
    today = dt.date.today()
    assert "12/7/2006" in text
    assert f"{today.month}/{today.day}/{today.year}" not in text
    assert "Feb: 579; Apr: TRUE" in text and "列1: ascii; Feb: 123456; Apr: FALSE" in text


def test_a_row_under_a_group_cell_and_a_plain_column_is_data() -> None:
    """easypoi's public exportTemp.xls (a Chinese report template, read through LibreOffice):
    "类 别" merged over two label columns heads the rows below it; the first of them, text only
    ("后勤部门 | {{i1.per}} | …"), fills a column "类 别" does not cover, so it is a row of data,
    not a second header row. "选课学生" over 学生姓名 and 学生性别 still names both."""
    path = XLRD.parent / "easypoi" / "exportTemp.xls"
    doc = parse(path)
    rows = [text for _, text in rows_of(doc)]
    assert "类 别: 后勤部门; 类 别: 后勤部门; 人数: {{i1.per}}; 金额(元): {{i1.mon}}; " \
        "本年累计金额(元): {{i1.summon}}" in rows
    assert not any("类 别/后勤部门" in text for text in rows)
    assert any("选课学生/学生姓名" in block.text for block in doc.blocks)


def test_a_chart_sheet_is_read_with_its_chart() -> None:
    """ExcelJS's public chart-sheet.xlsx (Excel): the tab "Chart1" is a chart sheet, which
    openpyxl reads nothing of but its name; its chart's title and series were lost."""
    doc = parse(XLRD.parent / "exceljs" / "chart-sheet.xlsx")
    assert kinds(doc)[:3] == [("heading", 1, "Chart1"),
                              ("paragraph", 1, "Chart: Wildlife Population"),
                              ("paragraph", 1, "Bears: Jan 8; Feb 54; Mar 93; Apr 116; May 137; "
                                               "Jun 184")]
    assert ("heading", 2, "Sheet1") in kinds(doc)


def test_a_hidden_chart_sheet_is_counted(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "销量"
    for row in (["季度", "销量"], ["一季度", 120], ["二季度", 150]):
        sheet.append(row)
    for name, title in (("图表", "季度销量对比"), ("旧图表", "去年销量")):
        chart = BarChart()
        chart.title = title
        chart.add_data(Reference(sheet, min_col=2, min_row=1, max_row=3), titles_from_data=True)
        workbook.create_chartsheet(name).add_chart(chart)
    workbook["旧图表"].sheet_state = "hidden"
    doc = parse(save(workbook, tmp_path / "sales.xlsx"))
    assert ("heading", 2, "图表") in kinds(doc)
    assert ("paragraph", 2, "图表: 季度销量对比") in kinds(doc)
    assert "去年销量" not in "\n".join(b.text for b in doc.blocks)
    assert doc.report.skipped["hidden_sheets"] == 1
