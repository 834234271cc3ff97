"""PDF parsing on real files: the sample PDFs (text, scanned, a table across pages, two columns)
and awkward PDFs generated here (encrypted, corrupt, rotated, empty, huge, not a PDF at all)."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pymupdf
import pytest

from ingest.models import BlockKind, ParsedDocument
from ingest.parse import ParseError, ParseLimits, parse_document, read_meta
from ingest.text import join_lines, normalize

SAMPLE_DOCS = Path(__file__).resolve().parents[1] / "sample_docs"
CN_FONT = "china-s"
RUNNING = re.compile(r"内部制度文件|第\s*\d+\s*页")
CN_NUMERALS = ["一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二"]


def parse(path: Path, **options) -> ParsedDocument:
    meta, data = read_meta(path, path.parent, "default", ["all-staff"])
    return parse_document(meta, data, ParseLimits(**options))


@pytest.fixture(scope="module")
def scanned() -> ParsedDocument:
    """The two-page scanned sample, OCR'd once for the module (several seconds per page)."""
    return parse(SAMPLE_DOCS / "seal_policy_scanned.pdf")


def pdf_bytes(pages: list[list[tuple[float, float, str, float]]]) -> bytes:
    """A PDF whose pages hold the given (x, y, text, size) lines in the built-in CJK font."""
    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page(width=595, height=842)
        for x, y, text, size in lines:
            page.insert_text((x, y), text, fontname=CN_FONT, fontsize=size)
    return doc.tobytes()


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ---- scanned pages ----------------------------------------------------------------------------


def test_scanned_clauses_come_out_of_ocr_with_confidence(scanned: ParsedDocument) -> None:
    clauses = [b for b in scanned.blocks if b.text.startswith("第") and "条" in b.text[:5]]
    assert [b.text[: b.text.index("条") + 1] for b in clauses] == [
        f"第{n}条" for n in CN_NUMERALS[:8]]
    assert all(b.ocr and b.ocr_confidence is not None and b.ocr_confidence > 0.8
               for b in clauses)
    assert [b.page for b in clauses] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert "合同专用章、财务专用章和法定代表人名章" in clauses[1].text  # wrapped line rejoined
    assert scanned.meta.title == "印章使用管理规定"
    assert scanned.blocks[0].kind == BlockKind.HEADING
    report = scanned.report
    assert (report.pages, report.ocr_pages, report.empty_pages) == (2, 2, 0)
    assert report.ocr_mean_confidence is not None and report.ocr_mean_confidence > 0.9
    assert report.headers_footers_removed == 4  # a header and a footer on each page


def test_no_running_header_or_footer_in_any_sample_pdf(scanned: ParsedDocument) -> None:
    docs = [parse(path) for path in sorted(SAMPLE_DOCS.glob("*.pdf"))
            if path.name != "seal_policy_scanned.pdf"]
    assert len(docs) >= 4
    for doc in [*docs, scanned]:
        *body, heading, margins = doc.blocks
        leaked = [b.text for b in body if RUNNING.search(b.text)]
        assert not leaked, (doc.meta.doc_id, leaked)
        assert doc.report.headers_footers_removed == 2 * doc.pages
        # kept once, in a section of their own at the end, without the page numbers
        assert (heading.kind, heading.text) == (BlockKind.HEADING, "页眉页脚"), doc.meta.doc_id
        assert "内部制度文件" in margins.text and margins.page == doc.pages
        assert not re.search(r"第\s*\d+\s*页", margins.text)


# ---- tables -----------------------------------------------------------------------------------


def test_table_rows_on_page_two_carry_the_page_one_header() -> None:
    doc = parse(SAMPLE_DOCS / "expense_standards.pdf")
    rows = [b for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    page2 = [b.text for b in rows if b.page == 2]
    assert len(rows) == 18 and len(page2) == 6
    for text in page2:
        assert text.startswith("表1 费用报销标准表 | 费用类型: ")
        assert all(f"{h}: " in text for h in ("城市等级", "职级", "标准金额", "备注"))
    assert page2[1] == ("表1 费用报销标准表 | 费用类型: 通讯费; 城市等级: 不限; 职级: 其他员工; "
                        "标准金额: 150元/月; 备注: 销售岗位可上浮50%")
    # merged cells: 住宿费 spans nine rows; one 伙食补助 cell spans 城市等级 and 职级
    assert sum(t.text.startswith("表1 费用报销标准表 | 费用类型: 住宿费;") for t in rows) == 9
    assert "城市等级: 不区分城市等级和职级; 职级: 不区分城市等级和职级;" in rows[9].text
    assert "费用类型: 市内交通费; 城市等级: 其他城市" in rows[11].text
    assert (doc.report.tables, doc.report.table_rows) == (1, 18)


def test_table_text_is_not_repeated_as_paragraphs_and_kept_whole_as_markdown() -> None:
    doc = parse(SAMPLE_DOCS / "expense_standards.pdf")
    prose = " ".join(b.text for b in doc.blocks if b.kind in {BlockKind.PARAGRAPH,
                                                               BlockKind.HEADING})
    for cell in ("凭发票据实报销", "副总经理及以上", "加班餐费", "5000元/年", "费用类型"):
        assert cell not in prose
    assert "第三条 同一行程涉及多个城市的" in prose  # the text after the table is still there
    (table,) = [b for b in doc.blocks if b.kind == BlockKind.TABLE]
    lines = table.text.split("\n")
    assert table.page == 1 and lines[0] == "表1 费用报销标准表"
    assert lines[1] == "| 费用类型 | 城市等级 | 职级 | 标准金额 | 备注 |"
    assert len(lines) == 1 + 2 + 18 and lines[-1].startswith("| 加班餐费 | 不限 | 全体员工 |")


def ruled_table_pdf(pages: list[list[list[str]]], widths: list[list[float]]) -> bytes:
    """One ruled table at the top of each page, with the given rows and column widths."""
    doc = pymupdf.open()
    for rows, cols in zip(pages, widths, strict=True):
        page = doc.new_page(width=595, height=842)
        for r, row in enumerate(rows):
            x = 72.0
            for text, width in zip(row, cols, strict=True):
                rect = pymupdf.Rect(x, 100 + 22 * r, x + width, 122 + 22 * r)
                page.draw_rect(rect, color=(0, 0, 0), width=0.6)
                page.insert_text((x + 4, rect.y1 - 6), text, fontname=CN_FONT, fontsize=10)
                x += width
    return doc.tobytes()


def test_repeated_header_row_is_not_a_data_row(tmp_path: Path) -> None:
    header = ["事项", "金额", "审批人"]
    page1 = [header, ["采购", "5万元以下", "部门负责人"]]
    page2 = [header, ["借款", "2万元以下", "财务总监"]]
    data = ruled_table_pdf([page1, page2], [[100, 100, 100]] * 2)
    doc = parse(write(tmp_path / "repeat.pdf", data))
    rows = [(b.page, b.text) for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert rows == [(1, "事项: 采购; 金额: 5万元以下; 审批人: 部门负责人"),
                    (2, "事项: 借款; 金额: 2万元以下; 审批人: 财务总监")]
    assert doc.report.tables == 1


def test_a_different_table_on_the_next_page_keeps_its_own_header(tmp_path: Path) -> None:
    page1 = [["事项", "金额"], ["采购", "5万元以下"]]
    page2 = [["姓名", "部门", "电话"], ["张三", "财务部", "8110"]]
    data = ruled_table_pdf([page1, page2], [[150, 150], [100, 100, 100]])
    doc = parse(write(tmp_path / "two_tables.pdf", data))
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert rows == ["事项: 采购; 金额: 5万元以下", "姓名: 张三; 部门: 财务部; 电话: 8110"]
    assert doc.report.tables == 2


# ---- layout: columns, headings, page numbers --------------------------------------------------


def test_two_column_page_is_read_column_by_column() -> None:
    path = SAMPLE_DOCS / "employee_handbook.pdf"
    with pymupdf.open(path) as pdf:
        page = pdf[0]
        mid = page.rect.width / 2
        lines = [(normalize("".join(s["text"] for s in line["spans"])), line["bbox"])
                 for block in page.get_text("dict")["blocks"] for line in block.get("lines", [])]
    body = [(text, box) for text, box in lines if 100 < box[1] < 780]
    left_bottom = max((x for x in body if x[1][2] < mid), key=lambda x: x[1][1])[0]
    right_top = min((x for x in body if x[1][0] > mid), key=lambda x: x[1][1])[0]
    doc = parse(path)
    texts = [b.text for b in doc.blocks]
    assert any(join_lines(left_bottom, right_top) in text for text in texts)
    clauses = [t for t in texts if t.startswith("第") and "条 " in t[:6]]
    assert [t.split(" ")[0] for t in clauses] == [f"第{n}条" for n in CN_NUMERALS]
    assert "确需带离的,应经部门负责人批准并办理登记手续。" in clauses[9]  # across the page break
    assert clauses[-1].endswith("自2025年9月1日起施行。")


def test_headings_from_font_size_and_numbering_keep_pages() -> None:
    doc = parse(SAMPLE_DOCS / "information_security.pdf")
    headings = {b.text: (b.level, b.page) for b in doc.blocks if b.kind == BlockKind.HEADING}
    assert headings["信息安全管理规范"] == (1, 1)  # the largest font: the title
    assert headings["2.2 口令要求"] == (2, 1)
    assert headings["4 终端与网络安全"] == (1, 2)
    assert not any(text.startswith(("SEC-", "2.2.1", "第")) for text in headings)
    handbook = parse(SAMPLE_DOCS / "employee_handbook.pdf")
    chapters = [(b.text, b.level) for b in handbook.blocks if b.kind == BlockKind.HEADING]
    assert chapters[0] == ("员工手册(节选)", 1)
    assert [t for t, level in chapters if level == 2] == [
        "第一章 入职与试用", "第二章 工作时间与考勤", "第三章 行为规范", "第四章 附则"]


def test_heading_levels_rank_by_font_size_then_bold(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for y, text, font, size in [
        (120, "Remote Work Policy", "hebo", 18), (160, "Eligibility", "helv", 14),
        (190, "Employees may work from home two days a week after probation.", "helv", 11),
        (215, "Equipment", "hebo", 11),
        (240, "The company lends one laptop and one monitor to each employee.", "helv", 11),
        (265, "It must be returned at the end of the arrangement.", "helv", 11),
    ]:
        page.insert_text((72, y), text, fontname=font, fontsize=size)
    parsed = parse(write(tmp_path / "en.pdf", doc.tobytes()))
    assert [(b.kind, b.level) for b in parsed.blocks] == [
        (BlockKind.HEADING, 1), (BlockKind.HEADING, 2), (BlockKind.PARAGRAPH, None),
        (BlockKind.HEADING, 3), (BlockKind.PARAGRAPH, None)]
    assert parsed.blocks[-1].text == (
        "The company lends one laptop and one monitor to each employee. "
        "It must be returned at the end of the arrangement.")


def test_a_larger_label_and_value_line_is_text_not_a_heading(tmp_path: Path) -> None:
    """A signature line set larger (a seal stamped over it widens its box when scanned) keeps
    its words in the text; a larger line without a label is still a heading."""
    parsed = parse(write(tmp_path / "notice.pdf", pdf_bytes([[
        (72, 100, "消防联动测试安排", 16),
        (72, 140, "测试期间消防广播将反复启动,请租户提前告知员工。", 11),
        (300, 200, "项目经理:韩立峰(签字)", 14),
        (300, 230, "2026年6月2日", 11),
    ]])))
    assert [(b.kind, b.text) for b in parsed.blocks if b.kind == BlockKind.HEADING] == [
        (BlockKind.HEADING, "消防联动测试安排")]
    assert any("韩立峰" in b.text for b in parsed.blocks if b.kind == BlockKind.PARAGRAPH)


@pytest.mark.parametrize("footer", ["- 1 -", "第 1 页", "1/3", "Page 1 of 3", "共 3 页 第 1 页"])
def test_page_number_lines_go_even_on_a_single_page(tmp_path: Path, footer: str) -> None:
    data = pdf_bytes([[(72, 120, "第一条 本规定适用于全体员工。", 11), (280, 810, footer, 9)]])
    doc = parse(write(tmp_path / "one.pdf", data))
    assert [b.text for b in doc.blocks] == ["第一条 本规定适用于全体员工。"]
    assert doc.report.headers_footers_removed == 1


def test_spaced_full_width_clause_numbers_are_tidied(tmp_path: Path) -> None:
    data = pdf_bytes([[(72, 120, "第 4．2 条　报销时限为３０天。", 11)]])
    (block,) = parse(write(tmp_path / "spaced.pdf", data)).blocks
    assert block.text == "第4.2条 报销时限为30天。"


# ---- awkward PDFs -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def awkward(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of PDFs that real crawls turn up; each must parse or fail with a reason."""
    folder = tmp_path_factory.mktemp("awkward")
    valid = (SAMPLE_DOCS / "travel_expense_2025.pdf").read_bytes()
    text = pymupdf.open(stream=valid, filetype="pdf")
    text.save(folder / "encrypted.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256,
              owner_pw="owner-secret", user_pw="user-secret")
    text.save(folder / "owner_password_only.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256,
              owner_pw="owner-secret", permissions=pymupdf.PDF_PERM_PRINT)
    for page in text:
        page.set_rotation(90)
    text.save(folder / "rotated.pdf")
    write(folder / "truncated.pdf", valid[: len(valid) // 2])
    start = valid.rindex(b"startxref")
    write(folder / "bad_xref.pdf", valid[:start] + b"startxref\n999999\n%%EOF\n")
    write(folder / "cut_before_trailer.pdf", valid[:start])
    write(folder / "zero_pages.pdf", b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
          b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
    write(folder / "empty.pdf", b"")
    write(folder / "image_renamed.pdf", text[0].get_pixmap(dpi=30).tobytes("png"))
    write(folder / "random_bytes.pdf", random.Random(7).randbytes(4096))
    write(folder / "header_then_garbage.pdf", b"%PDF-1.7\n" + random.Random(8).randbytes(4096))
    big = pymupdf.open()
    for n in range(300):
        big.new_page().insert_text((72, 100), f"第{n + 1}条 这是第{n + 1}页的正文内容。",
                                   fontname=CN_FONT, fontsize=11)
    big.save(folder / "many_pages.pdf")
    return folder


EXPECTED = {  # file → None (parses) or a phrase its ParseError reason contains
    "encrypted.pdf": "encrypted with a password",
    "owner_password_only.pdf": None,
    "rotated.pdf": None,
    # MuPDF rebuilds the cross-reference table of a file that ends whole: published, warned
    "bad_xref.pdf": None,
    # cut off before its end: published only with KBFLOW_ALLOW_REPAIRED_PDF
    "cut_before_trailer.pdf": "damaged PDF: repaired by PyMuPDF, 3 of 3 pages read",
    "zero_pages.pdf": "PDF has no pages",
    "empty.pdf": "empty (0 bytes)",
    "image_renamed.pdf": "not a PDF file: the content is a PNG image",
    "random_bytes.pdf": "not a PDF file",
    "many_pages.pdf": None,
}


def test_awkward_pdfs_parse_or_fail_with_a_reason(awkward: Path) -> None:
    outcomes = {}
    for path in sorted(awkward.iterdir()):
        try:
            doc = parse(path)
            outcomes[path.name] = None
            assert doc.blocks and doc.report.pages == doc.pages
        except ParseError as exc:  # anything else is a crash and fails the test
            assert len(str(exc)) > 10
            outcomes[path.name] = str(exc)
    assert set(outcomes) == {*EXPECTED, "truncated.pdf", "header_then_garbage.pdf"}
    for name, phrase in EXPECTED.items():
        assert (outcomes[name] is None) if phrase is None else phrase in (outcomes[name] or ""), (
            name, outcomes[name])
    assert outcomes["header_then_garbage.pdf"] is not None  # a PDF header alone is no PDF


def test_a_repaired_pdf_is_flagged(awkward: Path) -> None:
    doc = parse(awkward / "bad_xref.pdf")
    assert doc.report.repaired and (doc.report.pages_read, doc.report.pages) == (3, 3)
    assert any("cross-reference table was rebuilt" in w for w in doc.report.warnings)
    cut = parse(awkward / "cut_before_trailer.pdf", allow_repaired_pdf=True)
    assert cut.report.repaired and not any("ends whole" in w for w in cut.report.warnings)


def test_rotated_and_huge_pdfs_keep_their_text(awkward: Path) -> None:
    rotated = parse(awkward / "rotated.pdf")
    assert rotated.meta.title == "差旅费管理办法"
    assert sum(b.text.startswith("第") and "条 " in b.text[:6] for b in rotated.blocks) == 18
    big = parse(awkward / "many_pages.pdf")
    assert big.pages == 300 and big.blocks[-1].text == "第300条 这是第300页的正文内容。"
    assert big.blocks[-1].page == 300


def test_size_limit_is_a_reason_not_a_crash(awkward: Path) -> None:
    size_mb = (awkward / "many_pages.pdf").stat().st_size / 1024 / 1024
    with pytest.raises(ParseError, match=r"over the 0.01 MB limit \(the max_file_mb setting\)"):
        parse(awkward / "many_pages.pdf", max_file_mb=0.01)
    assert size_mb > 0.01


def test_vertical_japanese_is_read_down_the_columns_right_to_left() -> None:
    """pdfminer.six's jo.pdf (bench/format_corpus): Miyazawa Kenji's preface set vertically, in
    two tiers; PyMuPDF gives each character as a line of its own."""
    doc = parse(Path(__file__).parents[1] / "bench/format_corpus/pdfminer/jo.pdf")
    text = "".join(block.text for block in doc.blocks).replace(" ", "")
    assert "わたくしといふ現象は假定された有機交流電燈のひとつの青い照明です" in text
    assert "けれどもこれら新世代沖積世の巨大に明るい時間の集積の" in text


LAB_ROWS = [("项目", "检验方法", "结果", "单位", "参考范围"),
            ("白细胞计数(WBC)", "仪器法", "3.9", "E+9/L", "[4.0-10.0]"),
            ("红细胞计数(RBC)", "仪器法", "5.37", "E+12/L", "[4.3-5.8]"),
            ("血红蛋白(HGB)", "仪器法", "159", "g/L", "[130-175]")]


def test_upright_text_on_a_turned_page_is_read_by_rows(tmp_path: Path) -> None:
    """A lab report laid out as pdfplumber's issue-461-example.pdf is (a page with /Rotate 90
    whose text is drawn turned, so it shows upright): each row's cells stay together, item
    name first, though the unrotated page holds them as columns (main read them column by
    column, the last first)."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.set_rotation(90)
    for r, row in enumerate(LAB_ROWS):
        for c, cell in enumerate(row):
            at = pymupdf.Point(60 + 150 * c, 100 + 20 * r) * page.derotation_matrix
            page.insert_text(at, cell, fontname=CN_FONT, fontsize=10, rotate=90)
    doc.save(tmp_path / "lab.pdf")
    text = " ".join(b.text for b in parse(tmp_path / "lab.pdf").blocks).replace(" ", "")
    for row in LAB_ROWS:  # unit and range, set apart, are read after (taken for a column)
        assert "".join(row[:3]) in text


def test_a_ruled_table_on_a_turned_page_keeps_its_rows() -> None:
    """pdfplumber's issue-140-example.pdf (tests/fixtures/formats): a ruled table on a page
    with /Rotate 90 and text drawn turned; its rows stay a table's rows."""
    doc = parse(Path(__file__).parent / "fixtures/formats/issue-140-example.pdf")
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert any("LILYS 40% SLTD ALMND CHOC" in row and "388.57" in row for row in rows)


def test_a_landscape_table_on_a_page_turned_by_rotate_is_read_by_its_rows() -> None:
    """pdfplumber's nics-background-checks-2015-11-rotated.pdf (bench/format_corpus): a
    landscape table whose page /Rotate 90 shows it sideways. pdfplumber reads it as shown, so
    its cells came out column by column ("Wyoming Wisconsin West Washington Virginia Virginia"
    one cell). Read where its text runs left to right: a band of five states between two rules
    is five rows (a number does not wrap), the column names under a cell drawn across them
    are each their column's, and the title across every column is the caption."""
    path = Path(__file__).parents[1] / "bench/format_corpus/pdfplumber"
    doc = parse(path / "nics-background-checks-2015-11-rotated.pdf")
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    title = "NICS Firearm Background Checks November - 2015 | "
    assert title + ("State / Territory: Alabama; Permit: 18,870; Handgun: 23,022; "
                    "Long Gun: 22,650; *Other: 859; **Multiple: 1,178; Admin: 0;") in rows[0]
    assert rows[0].endswith("Totals: 71,137")
    assert any(row.startswith(title + "State / Territory: Mariana Islands; Permit: 0;")
               for row in rows)
    assert any(row.startswith(title + "State / Territory: District of Columbia; Permit: 8; "
                              "Handgun: 54; Long Gun: 2;") for row in rows)
    states = [row for row in rows if "State / Territory: " in row]
    assert len(states) == 57  # 55 states and territories, Totals, the notes drawn in the table
    assert "Totals: 2,236,457" in states[-2] and "NOTES:" in states[-1]


def test_a_header_of_two_rows_names_each_column_by_both() -> None:
    """A LibreOffice table (tests/fixtures/formats/expense_table_two_row_header.pdf): 费用 drawn
    across 交通费(元) and 住宿费(元). The second header row was taken for data, and every row
    read "费用: 1,280.00; 费用: 2,400.00", which fee is which lost. A wrapped cell stays one
    cell, and an empty cell leaves the others in their columns. The Markdown keeps the header
    as drawn."""
    doc = parse(Path(__file__).parent / "fixtures/formats/expense_table_two_row_header.pdf")
    table = next(b.text for b in doc.blocks if b.kind == BlockKind.TABLE)
    assert table.startswith("| 序号 | 部门 | 出差事由 | 费用 | 费用 | 备注 |\n| --- |")
    assert "\n| 序号 | 部门 | 出差事由 | 交通费(元) | 住宿费(元) | 备注 |\n| 1 |" in table
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert rows == [
        "序号: 1; 部门: 市场部; 出差事由: 参加上海国际医疗器械博览会并拜访华东区三家经销商; "
        "费用 交通费(元): 1,280.00; 费用 住宿费(元): 2,400.00",
        "序号: 2; 出差事由: 北京总部季度经营分析会; 费用 交通费(元): 960.00; 备注: 住宿由总部安排",
        "序号: 3; 部门: 研发部; 出差事由: 广州; 费用 住宿费(元): 1,150.00; "
        "备注: 高铁二等座改签两次,差额自理",
        "序号: 4; 部门: Finance Departme nt; 出差事由: Annual audit with the external auditors "
        "in Shenzhen; 费用 交通费(元): 2,030.50; 费用 住宿费(元): 3,600.00; "
        "备注: Receipts attached"]


def test_rows_drawn_without_rules_between_them_stay_rows() -> None:
    """A LibreOffice table ruled between its columns only (tests/fixtures/formats/
    sales_table_no_row_rules.pdf): pdfplumber gives its five data rows as one, and every name
    and figure was read against every other ("门店: 徐汇旗舰店天河体育中心店…"). A number does
    not wrap, so each line of the figures starts a row; a wrapped store name stays in its row."""
    doc = parse(Path(__file__).parent / "fixtures/formats/sales_table_no_row_rules.pdf")
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert rows == [
        "门店: 徐汇旗舰店; 城市: 上海; 销售额(万元): 1,286.40; 同比增长: 12.5%",
        "门店: 天河体育中心店; 城市: 广州; 销售额(万元): 986.75; 同比增长: 8.1%",
        "门店: 南山科技园店; 城市: 深圳; 销售额(万元): 1,042.10; 同比增长: -3.2%",
        "门店: Chaoyang Joy City Outlet Store; 城市: 北京; 销售额(万元): 874.30; 同比增长: 5.6%",
        "门店: 春熙路店; 城市: 成都; 销售额(万元): 655.00; 同比增长: 21.0%"]
    boxes = [b.bbox for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert all(box is not None for box in boxes)
    assert all(a[3] <= b[1] for a, b in itertools.pairwise(boxes)  # each row its own lines'
               if a is not None and b is not None)


def test_a_ruled_table_shown_sideways_keeps_its_rows(tmp_path: Path) -> None:
    """The same page with its /Rotate taken away, so that the table shows sideways (as
    pdfplumber's nics-background-checks-2015-11-rotated.pdf does): pdfplumber read it as shown
    and each cell came out as a column of single words; it now gets the page turned upright."""
    with pymupdf.open(Path(__file__).parent / "fixtures/formats/issue-140-example.pdf") as doc:
        doc[0].set_rotation(0)
        doc.save(tmp_path / "sideways.pdf")
    rows = [b.text for b in parse(tmp_path / "sideways.pdf").blocks
            if b.kind == BlockKind.TABLE_ROW]
    assert any("LILYS 40% SLTD ALMND CHOC" in row and "388.57" in row for row in rows)


def test_arabic_and_hebrew_cells_read_in_logical_order() -> None:
    """A LibreOffice table with right-to-left cells (tests/fixtures/formats/
    rtl_table_arabic_hebrew.pdf): pdfplumber reads glyphs in the order drawn, so every Arabic
    and Hebrew cell came out with its letters reversed ("ناطلس يمسا" for "اسمي سلطان") and
    could not be found. A number or a Latin word inside keeps its own order, a lam-alef
    ligature stays whole ("الاسم"), and a wrapped Arabic line keeps its space."""
    doc = parse(Path(__file__).parent / "fixtures/formats/rtl_table_arabic_hebrew.pdf")
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert rows == [
        "Name: Sultan; الاسم: اسمي سلطان; Address: شارع الملك فهد 42، الرياض; Amount: 1,250",
        "Name: Fatima; الاسم: فاطمة الزهراء; Address: رقم الهوية ID 7781 القاهرة; Amount: 980",
        "Name: David; الاسم: דוד כהן; Address: רחוב הרצל 15 תל אביב; Amount: 2,400",
        "Name: Miriam; الاسم: מרים לוי; Address: ירושלים; Amount: 1,175"]


def test_a_table_drawn_turned_on_an_upright_page_keeps_its_characters_in_order() -> None:
    """MinerU's unittest_test.pdf (bench/format_corpus): a table whose text is drawn turned
    90° on a page without /Rotate. Read as pdfplumber sees the page, each cell's characters
    came out reversed ("2.1231" for 1321.2, "noissergeR raeniL"): wrong numbers indexed."""
    doc = parse(Path(__file__).parents[1] / "bench/format_corpus/mineru/unittest_test.pdf")
    rows = [b.text for b in doc.blocks if b.kind == BlockKind.TABLE_ROW]
    assert rows == ["Table 1: Table Caption | Model: Linear Regression; R2: 0.98740; "
                    "Testing Error: 1321.2"] * 2 + [
        "Table 1: Table Caption | Model: Gray Prediction; R2: 0.00617; Testing Error: 687"]


def test_an_unruled_table_is_read_row_by_row() -> None:
    """A LibreOffice table drawn without any rule (tests/fixtures/formats/lab_table_unruled.pdf):
    each cell is a line of its own. The names and the figures were taken for two columns and
    read one after the other ("Test Haemoglobin … C-reactive protein Result Unit …"), bold-free
    figures became headings ("13.0 - 17.0"). Each row is now one paragraph in its cells' order,
    a name wrapped onto a second line kept in its cell."""
    doc = parse(Path(__file__).parent / "fixtures/formats/lab_table_unruled.pdf")
    texts = [b.text for b in doc.blocks]
    start = texts.index("Test Result Unit Reference range")
    assert texts[start + 1:start + 10] == [
        "Haemoglobin 13.1 g/dL 13.0 - 17.0",
        "White blood cells 11.8 H 10^9/L 4.0 - 10.0",
        "Platelets 245 10^9/L 150 - 400",
        "Neutrophils 8.9 H 10^9/L 2.0 - 7.0",
        "Lymphocytes 1.6 10^9/L 1.0 - 3.0",
        "Mean cell volume 79 L fL 83 - 101",
        "Ferritin 18 L ug/L 30 - 400",
        "C-reactive protein 24 H mg/L 0 - 5",
        "Comment: raised white cells and CRP suggest an infection; iron stores low. Repeat in "
        "six weeks."]
    assert [b.text for b in doc.blocks if b.kind == BlockKind.HEADING] == [
        "Blood count, 3 March 2026"]


def test_rules_around_some_columns_of_a_wider_table_do_not_make_it_a_table() -> None:
    """tabula-java's 12s0324.pdf (tests/fixtures/formats): rules between three of its nine
    figure columns' groups, the row names and the last group outside them. Read as a ruled
    table, each group was one cell holding a whole column of figures and the rest came apart
    (a row's last figure glued to the next row's name, bold figures as headings); read as lines,
    each row is one paragraph, its figures in order."""
    doc = parse(Path(__file__).parent / "fixtures/formats/12s0324.pdf")
    texts = [b.text for b in doc.blocks]
    assert not [b for b in doc.blocks if b.kind in (BlockKind.TABLE, BlockKind.TABLE_ROW)]
    assert ("Violent crime. . . . . . . . . . . . . . . . . . 467. 9 69. 1 398. 8 380. 2 56. 5 "
            "323. 7 87. 7 12. 6 75. 2") in texts
    assert any(t.startswith("Robbery. . .") and t.endswith(" 102.1 25.5 76.6 90.0 22.9 67.1 "
                                                           "12.1 2.5 9.5") for t in texts)
    assert not [b.text for b in doc.blocks
                if b.kind == BlockKind.HEADING and re.fullmatch(r"[\d,. –]+", b.text)]
