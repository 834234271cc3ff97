"""Generate `eval/format_docs/`: documents in the formats and parts a company knowledge base
holds beyond clean PDFs and Markdown, for `eval/format_cases.jsonl`.

Each file puts part of its answers where a naive parser does not look: spreadsheet rows (two
visible sheets and a hidden draft sheet), a CSV in GB18030 with semicolons, Word footnotes and a
text box, slide speaker notes under a footer repeated on every slide, an intranet page whose
sidebar and navigation sit before its article, and a photographed notice (an image, read by OCR).
The texts and questions were written for this set, in wordings used nowhere else in the project.

Run `python scripts/make_format_docs.py`; the output is deterministic (fixed zip timestamps and
document properties), so the files can be reviewed as regenerated, not as binaries.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
import pymupdf
from pptx.util import Inches, Pt

OUT = Path(__file__).resolve().parent.parent / "eval" / "format_docs"
ZIP_DATE = (2026, 1, 5, 9, 0, 0)
FIXED = dt.datetime(2026, 1, 5, 9, 0, 0)

ACCOUNTS = [  # 科目编码, 科目名称, 核算内容, 审批层级
    ("660201", "办公用品", "文具、打印耗材、小额办公设备（单价2000元以下）", "部门经理"),
    ("660202", "差旅交通", "出差期间的机票、火车票、市内交通", "部门经理"),
    ("660203", "业务招待", "客户宴请、礼品（须事前报批）", "分管副总"),
    ("660204", "会议费", "内部会议场地、茶歇、资料印刷", "部门经理"),
    ("660205", "培训费", "外部培训课程、认证考试报名费", "人力资源总监"),
    ("660206", "通讯费", "员工手机话费补贴、宽带", "部门经理"),
    ("660207", "软件订阅", "SaaS服务年费、软件许可续费", "信息技术总监"),
    ("660208", "车辆使用", "公务车加油、过路费、停车费", "行政总监"),
]
ASSETS = [  # 资产类别, 折旧年限, 残值率
    ("电子设备", "3年", "5%"), ("办公家具", "5年", "5%"), ("运输工具", "4年", "5%"),
]
SUPPLIERS = [  # 供应商名称, 服务类别, 联系人, 合同截止日期
    ("青禾物业服务有限公司", "保洁服务", "许文静", "2026-09-30"),
    ("恒通快递", "文件寄送", "马超", "2026-12-31"),
    ("绿源饮用水公司", "桶装水配送", "朱莉", "2026-06-30"),
    ("安信保安服务公司", "门岗安保", "郑国强", "2027-03-31"),
]
SLIDE_FOOTER = "星河集团内部培训资料　请勿外传"
SLIDES = [  # title, bullet points, speaker notes
    ("新员工入职培训", ["人力资源部　2026年版"], ""),
    ("试用期与转正", ["试用期一般为三个月", "转正需通过直属上级评估"],
     "讲师提示：转正评估由直属上级在试用期满前十五个工作日发起，人力资源部复核后出具转正通知。"),
    ("考勤打卡", ["弹性工作时间 8:30-10:00 到岗", "每月允许补卡三次"],
     "补充说明：补卡超过三次的，当月全勤奖不予发放；出差期间无需打卡，以出差审批单为准。"),
    ("办公设备领用", ["入职当天领取笔记本电脑", "离职时须归还全部设备"],
     "设备遗失需按净值赔偿，笔记本电脑净值按三年直线折旧计算。"),
    ("信息安全须知", ["禁止使用个人网盘存储公司文件", "密码每九十天更换一次"], ""),
    ("常见问题", ["工资每月十日发放", "社保在入职次月缴纳"],
     "如遇十日为节假日，工资提前至最近的工作日发放。"),
]
CONTRACT = [
    ("title", "设备租赁合同（标准文本）"),
    ("p", "出租方（甲方）：星河设备租赁有限公司"),
    ("p", "承租方（乙方）：＿＿＿＿＿＿＿＿"),
    ("p", "第一条 租赁物为甲方所有的工程机械设备，具体型号及数量见附件清单。"),
    ("p", "第二条 租赁期限自设备交付之日起计算，最短不少于六个月。"),
    ("p", "第三条 租金按月结算，乙方应于每月五日前支付当月租金。"),
    ("fn", "第四条 双方另有约定的，应按集团标准范本签订补充协议",
     "标准范本编号为 ZL-2026-03，可在法务部共享目录下载。"),
    ("p", "第五条 乙方逾期支付租金的，每逾期一日按未付金额的万分之五支付违约金。"),
    ("box", "特别提示：设备进场前乙方须提供操作人员的特种作业证复印件。"),
    ("p", "第六条 本合同一式两份，双方各执一份，自双方盖章之日起生效。"),
]
PORTAL = """<!DOCTYPE html><html lang="zh"><head><meta charset="utf-8">
<title>VPN 账号申请指南 - 星河集团IT服务门户</title></head><body>
<header><div class="logo">星河集团IT服务门户</div><nav><a href="/">首页</a> <a href="/kb">知识库</a>
<a href="/ticket">提交工单</a> <a href="/download">软件下载</a></nav></header>
<div class="breadcrumb"><a href="/">首页</a> &gt; <a href="/kb">知识库</a> &gt; 远程访问</div>
<aside class="sidebar"><h2>热门服务</h2><ul><li><a href="/pwd">密码重置</a></li>
<li><a href="/mail">邮箱扩容</a></li><li><a href="/printer">打印机安装</a></li></ul></aside>
<main><article><h1>VPN 账号申请指南</h1>
<p>员工因出差或居家办公需要访问内网系统的，可申请 VPN 账号。</p>
<h2>申请条件</h2><p>申请人须为正式员工，外包人员需由接口部门负责人担保。</p>
<h2>办理流程</h2><p>在 IT 服务门户提交“远程访问申请”工单，经部门负责人审批后，
信息技术部在两个工作日内开通账号，并将初始密码发送至申请人企业邮箱。</p>
<p>VPN 账号有效期为一年，到期前七天系统自动发送续期提醒。</p></article></main>
<div class="cookie-banner">本站使用 Cookie 改善浏览体验，继续浏览即表示同意。</div>
<footer>© 2026 星河集团 信息技术部 | 服务热线 8000</footer></body></html>
"""
NOTICE = ["停水通知", "各位同事：",
          "因市政管网检修，园区A栋将于2026年5月20日",
          "9:00至17:00暂停供水，请提前做好储水准备。",
          "B栋、C栋供水不受影响。", "园区物业服务中心", "2026年5月15日"]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_workbook(OUT / "account_catalogue.xlsx")
    write_csv(OUT / "supplier_list.csv")
    write_contract(OUT / "lease_contract.docx")
    write_deck(OUT / "onboarding_training.pptx")
    (OUT / "it_portal_vpn.html").write_text(PORTAL, encoding="utf-8")
    write_notice(OUT / "water_outage_notice.png")
    print(f"wrote {len(list(OUT.iterdir()))} files to {OUT}")


def write_workbook(path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "费用科目"
    sheet.append(["2026年管理费用科目目录"])
    sheet.append(["科目编码", "科目名称", "核算内容", "审批层级"])
    for row in ACCOUNTS:
        sheet.append(list(row))
    assets = book.create_sheet("资产折旧")
    assets.append(["资产类别", "折旧年限", "残值率"])
    for row in ASSETS:
        assets.append(list(row))
    draft = book.create_sheet("草稿")
    draft.append(["待定科目", "尚未审定，请勿引用"])
    draft.sheet_state = "hidden"
    book.properties.created = book.properties.modified = FIXED
    path.write_bytes(office_bytes(book))


def write_csv(path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=";", lineterminator="\r\n")
    writer.writerow(["供应商名称", "服务类别", "联系人", "合同截止日期"])
    writer.writerows(SUPPLIERS)
    path.write_bytes(buffer.getvalue().encode("gb18030"))


def write_contract(path: Path) -> None:
    document = docx.Document()
    document.core_properties.created = document.core_properties.modified = FIXED
    footnotes = []
    for kind, text, *note in CONTRACT:
        if kind == "title":
            document.add_heading(text, level=0)
        elif kind == "fn":
            paragraph = document.add_paragraph(text)
            footnotes.append(note[0])
            paragraph._p.append(footnote_reference(len(footnotes)))
            paragraph.add_run("。")
        elif kind == "box":
            document.add_paragraph()._p.append(text_box(text))
        else:
            document.add_paragraph(text)
    path.write_bytes(office_bytes(document, footnotes))


W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
FOOTNOTES_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"
FOOTNOTES_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes"


def footnote_reference(number: int):
    from docx.oxml import parse_xml

    return parse_xml(f'<w:r xmlns:w="{W}"><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
                     f'<w:footnoteReference w:id="{number}"/></w:r>')


def text_box(text: str):
    """A floating text box as Word writes it (wps shape, VML fallback)."""
    from docx.oxml import parse_xml

    content = f'<w:txbxContent><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:txbxContent>'
    return parse_xml(
        f'<w:r xmlns:w="{W}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
        ' xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"'
        ' xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
        ' xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'
        ' xmlns:v="urn:schemas-microsoft-com:vml"><mc:AlternateContent>'
        '<mc:Choice Requires="wps"><w:drawing><wp:anchor distT="0" distB="0" distL="0" distR="0"'
        ' simplePos="0" relativeHeight="1" behindDoc="0" locked="0" layoutInCell="1"'
        ' allowOverlap="1"><wp:simplePos x="0" y="0"/><wp:positionH relativeFrom="column">'
        '<wp:posOffset>0</wp:posOffset></wp:positionH><wp:positionV relativeFrom="paragraph">'
        '<wp:posOffset>0</wp:posOffset></wp:positionV><wp:extent cx="4000000" cy="600000"/>'
        '<wp:wrapNone/><wp:docPr id="1" name="文本框 1"/><a:graphic><a:graphicData'
        ' uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp>'
        f'<wps:cNvSpPr txBox="1"/><wps:spPr/><wps:txbx>{content}</wps:txbx><wps:bodyPr/>'
        '</wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>'
        f'<mc:Fallback><w:pict><v:shape><v:textbox>{content}</v:textbox></v:shape></w:pict>'
        '</mc:Fallback></mc:AlternateContent></w:r>')


def office_bytes(package: Any, footnotes: list[str] | None = None) -> bytes:
    """A python-docx, openpyxl or python-pptx object saved byte-stable (fixed_zip), with its
    Word footnotes when given."""
    buffer = io.BytesIO()
    package.save(buffer)
    data = buffer.getvalue()
    return fixed_zip(with_footnotes(data, footnotes) if footnotes is not None else data)


def with_footnotes(data: bytes, notes: list[str]) -> bytes:
    """The footnotes part, its content type and its relationship, as Word writes them."""
    separators = ('<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r>'
                  '</w:p></w:footnote><w:footnote w:type="continuationSeparator" w:id="0">'
                  '<w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>')
    body = "".join(
        f'<w:footnote w:id="{i}"><w:p><w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
        f'<w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> {note}</w:t></w:r></w:p>'
        f'</w:footnote>' for i, note in enumerate(notes, start=1))
    part = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            f'<w:footnotes xmlns:w="{W}">{separators}{body}</w:footnotes>')
    with zipfile.ZipFile(io.BytesIO(data)) as old:
        parts = {info.filename: old.read(info) for info in old.infolist()}
    parts["word/footnotes.xml"] = part.encode()
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
        b"</Types>", f'<Override PartName="/word/footnotes.xml" ContentType="{FOOTNOTES_TYPE}"/>'
        "</Types>".encode())
    rels = "word/_rels/document.xml.rels"
    parts[rels] = parts[rels].replace(
        b"</Relationships>", f'<Relationship Id="rIdFootnotes" Type="{FOOTNOTES_REL}" '
        'Target="footnotes.xml"/></Relationships>'.encode())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as new:
        for name, content in parts.items():
            new.writestr(name, content)
    return buffer.getvalue()


def deck_bytes(slides: list[tuple[str, list[str], str]], footer_text: str,
               page_label: Callable[[int, int], str], title: str = "",
               created: dt.datetime = FIXED) -> bytes:
    """A byte-stable deck: a title slide, then bullet slides, each with the same footer and a
    page label in its own text box, and speaker notes where given."""
    deck = pptx.Presentation()
    deck.core_properties.created = deck.core_properties.modified = created
    if title:
        deck.core_properties.title = title
    for number, (heading, points, notes) in enumerate(slides, start=1):
        slide = deck.slides.add_slide(deck.slide_layouts[0 if number == 1 else 1])
        slide.shapes.title.text = heading
        body = slide.placeholders[1].text_frame
        body.text = points[0]
        for point in points[1:]:
            body.add_paragraph().text = point
        footer = slide.shapes.add_textbox(Inches(0.5), Inches(7.0), Inches(6), Inches(0.4))
        footer.text_frame.text = footer_text
        footer.text_frame.paragraphs[0].runs[0].font.size = Pt(10)
        page = slide.shapes.add_textbox(Inches(9.0), Inches(7.0), Inches(0.8), Inches(0.4))
        page.text_frame.text = page_label(number, len(slides))
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    return office_bytes(deck)


def write_deck(path: Path) -> None:
    path.write_bytes(deck_bytes(SLIDES, SLIDE_FOOTER, lambda number, _: str(number)))


def write_notice(path: Path) -> None:
    """A notice printed and photographed: the text only as pixels, on a grey-ish page."""
    page_doc = pymupdf.open()
    page = page_doc.new_page(width=440, height=320)
    y = 40.0
    for number, line in enumerate(NOTICE):
        size = 18 if number == 0 else 11
        x = (440 - pymupdf.get_text_length(line, "china-s", size)) / 2 if number == 0 else 30
        page.insert_text((x, y), line, fontname="china-s", fontsize=size)
        y += size * 2.0
    pixmap = page.get_pixmap(dpi=200)
    path.write_bytes(pixmap.tobytes("png"))


def fixed_zip(data: bytes) -> bytes:
    """The OOXML zip with fixed member timestamps, so the output is byte-stable."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as old, \
            zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            content = old.read(info)
            if info.filename == "docProps/core.xml":  # openpyxl stamps the time of saving
                content = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2026-01-05T09:00:00Z",
                                 content)
            new.writestr(zipfile.ZipInfo(info.filename, date_time=ZIP_DATE), content,
                         compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


if __name__ == "__main__":
    main()
