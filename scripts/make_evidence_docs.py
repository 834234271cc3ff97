"""Generate `eval/evidence_docs/`: a group and two subsidiaries whose documents contradict each
other on purpose, for `eval/evidence_cases.jsonl` (the search verdict, scopes and authority).

- The group (the default tenant) states travel allowances in its policy (Word); its FAQ (a web
  page, authority `faq`) states one of them differently: a `definition` conflict.
- 恒川精密 (tenant hc-precision, parent: the group) lowers one limit in its own rules (PDF): a
  `hierarchy` conflict its readers must see with its own rule first.
- 恒川物流 (tenant hc-logistics, a sibling) keeps a spreadsheet of driver allowances that
  hc-precision's readers must never see.
- A notice (PDF) and its corrected re-issue (Word, "（更正）", 原通知同时作废) state two amounts.
Folder metadata files set tenant and authority per folder; `evidence_tenants.yaml` declares the
parents. Texts and questions were written for this set, in wordings used nowhere else here.

Run `python scripts/make_evidence_docs.py`; the output is deterministic.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import docx
import openpyxl
import pymupdf
from make_format_docs import office_bytes  # byte-stable OOXML (run from scripts/)

EVAL = Path(__file__).resolve().parent.parent / "eval"
OUT = EVAL / "evidence_docs"
FIXED = dt.datetime(2026, 1, 12, 9, 0, 0)
CJK_FONT = "china-s"

GROUP_POLICY = ("恒川集团差旅费用管理办法", "2026年1月1日起施行", [
    ("第一章 总则", [
        "第一条 为规范集团及各子公司员工因公出差的费用开支，制定本办法。",
        "第二条 本办法适用于集团总部及全资子公司；子公司另有规定且不高于本办法标准的，从其规定。",
    ]),
    ("第二章 开支标准", [
        "第三条 住宿费实行限额报销：一线城市（北京、上海、广州、深圳）每人每晚不超过600元，"
        "其他城市每人每晚不超过400元。",
        "第四条 出差伙食补助按出差自然天数计算，每人每天补助100元，包干使用，不另凭票报销。",
        "第五条 市内交通费按每人每天80元定额包干。",
        "第六条 乘坐火车的，一般乘坐高铁或动车二等座；夜间乘车超过6小时的，可乘坐软卧。",
    ]),
    ("第三章 报销", [
        "第七条 出差人员应当在出差结束返回后15个工作日内，凭审批单及票据办理报销。",
        "第八条 超出限额标准的部分由出差人员个人承担，但经分管领导事前书面批准的除外。",
    ]),
])
FAQ = [  # question, answer (one answer disagrees with the policy: 80 vs 100)
    ("出差的伙食补助一天能拿多少？", "伙食补助按天发放，每人每天补助80元，无需提供餐饮发票。"),
    ("住宿超出标准的部分怎么办？", "超出部分原则上自行承担，特殊情况请提前找分管领导书面审批。"),
    ("坐火车能买一等座吗？", "一般只能买二等座，夜里坐车超过6小时可以买软卧。"),
]
PRECISION_RULES = ("恒川精密出差住宿补充规定", "2026年2月1日起执行", [
    "第一条 根据集团差旅费用管理办法，结合本公司成本控制要求，制定本补充规定。",
    "第二条 本公司员工赴一线城市出差，住宿费每人每晚不超过450元，超出部分不予报销。",
    "第三条 出差伙食补助、市内交通费按集团规定执行。",
    "第四条 驻客户工厂的技术支持人员，每月另发交通补贴300元。",
])
LOGISTICS_ROWS = [  # 补贴项目, 标准, 说明
    ("长途出车补贴", "每天120元", "单程超过300公里的出车任务"),
    ("一线城市住宿", "每人每晚520元", "司机随车外宿，凭发票报销"),
    ("夜间行车补贴", "每次50元", "22:00至次日6:00之间行车"),
]
NOTICE = ("关于调整夜间加班餐费标准的通知", "2026年3月1日", [
    "各部门：",
    "为保障夜间加班员工的用餐，经研究决定，自2026年3月1日起，"
    "晚上10点以后仍在岗加班的员工，餐费补贴调整为每人每次30元，随当月工资发放。",
    "特此通知。",
])
CORRECTION = ("关于调整夜间加班餐费标准的通知（更正）", "2026年3月5日", [
    "各部门：",
    "3月1日印发的《关于调整夜间加班餐费标准的通知》中补贴金额有误，现更正如下。",
    "自2026年3月1日起，晚上10点以后仍在岗加班的员工，餐费补贴为每人每次35元，随当月工资发放。",
    "原通知同时作废。",
])
META = {  # folder → its metadata file
    "": "authority: policy\n",
    "faq": "authority: faq\n",
    "notices": "authority: notice\n",
    "hc-precision": "tenant_id: hc-precision\nauthority: policy\n",
    "hc-logistics": "tenant_id: hc-logistics\nauthority: policy\n",
}
TENANTS = ("# child tenant: parent tenant (eval/evidence_docs)\n"
           "hc-precision: default\nhc-logistics: default\n")
META_FILE = "_meta.yaml"


def word(path: Path, title: str, dated: str, sections: list[tuple[str, list[str]]]) -> None:
    document = docx.Document()
    document.core_properties.created = document.core_properties.modified = FIXED
    document.add_heading(title, level=1)
    document.add_paragraph(dated)
    for heading, paragraphs in sections:
        if heading:
            document.add_heading(heading, level=2)
        for text in paragraphs:
            document.add_paragraph(text)
    path.write_bytes(office_bytes(document))


def pdf(path: Path, title: str, dated: str, lines: list[str]) -> None:
    document = pymupdf.open()
    page = document.new_page(width=595, height=842)
    y = 90.0
    page.insert_text((200, y), title, fontname=CJK_FONT, fontsize=15)
    y += 30
    page.insert_text((250, y), dated, fontname=CJK_FONT, fontsize=10)
    y += 34
    for text in lines:
        while text:  # wrap at 36 characters a line
            page.insert_text((72, y), text[:36], fontname=CJK_FONT, fontsize=11)
            text, y = text[36:], y + 20
        y += 8
    document.set_metadata({"title": title, "creationDate": "D:20260112090000",
                           "modDate": "D:20260112090000", "producer": "kbflow"})
    path.write_bytes(document.tobytes(garbage=3, deflate=True, no_new_id=True))


def faq_page(path: Path) -> None:
    items = "\n".join(f"<dt>问：{q}</dt><dd>答：{a}</dd>" for q, a in FAQ)
    path.write_text(
        "<!DOCTYPE html><html lang=\"zh\"><head><meta charset=\"utf-8\">"
        "<title>差旅报销常见问题</title></head><body>"
        "<nav><a href=\"/\">首页</a> | <a href=\"/finance\">财务共享中心</a></nav>"
        f"<main><h1>差旅报销常见问题</h1><p>财务共享中心整理，仅供参考。</p><dl>{items}</dl>"
        "</main></body></html>\n", encoding="utf-8")


def sheet(path: Path) -> None:
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "司机补贴"
    ws.append(["补贴项目", "标准", "说明"])
    for row in LOGISTICS_ROWS:
        ws.append(list(row))
    book.properties.created = book.properties.modified = FIXED
    path.write_bytes(office_bytes(book))


def main() -> None:
    for folder, meta in META.items():
        (OUT / folder).mkdir(parents=True, exist_ok=True)
        (OUT / folder / META_FILE).write_text(meta, encoding="utf-8")
    title, dated, sections = GROUP_POLICY
    word(OUT / "travel_policy.docx", title, dated, sections)
    faq_page(OUT / "faq" / "travel_faq.html")
    title, dated, lines = PRECISION_RULES
    pdf(OUT / "hc-precision" / "lodging_rules.pdf", title, dated, lines)
    sheet(OUT / "hc-logistics" / "driver_allowances.xlsx")
    title, dated, lines = NOTICE
    pdf(OUT / "notices" / "night_meal_notice.pdf", title, dated, lines)
    title, dated, lines = CORRECTION
    word(OUT / "notices" / "night_meal_notice_corrected.docx", title, dated, [("", lines)])
    (EVAL / "evidence_tenants.yaml").write_text(TENANTS, encoding="utf-8")


if __name__ == "__main__":
    main()
