"""Generate `eval/fresh_docs/`: the knowledge base of a fictional food manufacturer (澄湖食品,
dairy and frozen dumplings, a plant in Jiaxing), written blind to how kbflow searches, for
`eval/fresh_cases.jsonl` (a generalization check on documents and questions its developers
never saw).

Formats and the parts that hold answers:
- workshop_hygiene_rules.docx: headings, 第X条 clauses with 1.1-style sub-steps, a table, a
  footnote, page header and footer text.
- cold_chain_rules_2023.docx and cold_chain_rules_2026.pdf: a policy and its revised successor
  (the successor names the old one and repeals it; three numbers change). The PDF runs over
  several pages with a running header and page footer.
- heat_allowance_notice.html (an intranet page with navigation and sidebar) and
  heat_allowance_notice_corrected.pdf: a notice and its corrected re-issue (原通知同时作废).
- complaint_handling_training.pptx: a footer on every slide, facts in the speaker notes.
- product_catalogue.xlsx: two sheets, a merged title row, header rows.
- line_fault_codes.csv: UTF-8 with BOM, as Excel exports it.
- fire_drill_notice.png: a printed notice as pixels (read by OCR).
- traceability_system_faq.md, recall_procedure_en.pdf (English), visitor_safety_bilingual.txt,
  department_contacts.txt, shift_allowance_rules.docx.

Run `python scripts/make_fresh_docs.py` from the repository root; the output is deterministic.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

import docx
import openpyxl
import pymupdf

# byte-stable OOXML and Word footnotes, as the format set makes them
from make_format_docs import deck_bytes, footnote_reference, office_bytes
from openpyxl.styles import Alignment, Font

OUT = Path(__file__).resolve().parent.parent / "eval" / "fresh_docs"
FIXED = dt.datetime(2026, 5, 26, 9, 0, 0)
CJK = "china-s"
COMPANY = "澄湖食品股份有限公司"

# --------------------------------------------------------------------------- hygiene (docx)
HYGIENE_TITLE = "澄湖食品生产车间卫生管理规定"
HYGIENE_HEADER = "澄湖食品股份有限公司　质量管理部受控文件"
HYGIENE_FOOTER = "文件编号：CH-QA-012　版本：B/2　仅限内部使用"
HYGIENE_FOOTNOTE = ("有效氯浓度每班使用试纸检测一次，检测结果记入《消毒液浓度记录表》，"
                    "记录保存两年。")
HYGIENE = [
    ("h1", "第一章 总则"),
    ("p", "第一条 为防止产品在加工过程中受到污染，保证速冻食品和乳制品的卫生安全，"
          "根据《食品生产许可审查通则》，结合本公司实际，制定本规定。"),
    ("p", "第二条 本规定适用于嘉兴工厂全部生产车间、内包装间及冷库作业区。"
          "外来施工人员和参观人员进入上述区域时，同样适用本规定。"),
    ("h1", "第二章 人员卫生"),
    ("p", "第三条 员工进入车间前，须按以下顺序完成更衣和消毒："),
    ("p", "1.1 在一次更衣室脱下外衣和鞋子，存放于个人更衣柜；"),
    ("p", "1.2 穿戴连体工作服、发网及口罩，头发不得外露；"),
    ("p", "1.3 用流动水和洗手液洗手，搓洗时间不少于20秒，再将双手浸入消毒液中停留30秒；"),
    ("p", "1.4 经风淋室风淋15秒后，方可进入洁净区。"),
    ("p", "第四条 手部有开放性伤口、患有腹泻或有发热症状的员工，应当主动向班组长报告，"
          "当天不得从事直接接触产品的岗位。"),
    ("p", "第五条 进入车间不得佩戴戒指、耳钉、手表等饰品，不得携带手机。"
          "确需通讯的，由班组长使用车间对讲机联系。"),
    ("p", "第六条 工作服每日由洗衣房统一收洗；冷库作业人员的防寒服每周清洗两次。"),
    ("h1", "第三章 环境与设备清洁"),
    ("fn", "第七条 常用消毒剂的使用浓度和更换频次按下表执行"),
    ("table", [
        ["消毒对象", "消毒剂", "使用浓度", "更换或使用频次"],
        ["洗手消毒池", "含氯消毒液", "有效氯50mg/L", "每2小时更换"],
        ["鞋靴消毒池", "含氯消毒液", "有效氯200mg/L", "每4小时更换"],
        ["工器具、案板", "75%酒精", "直接喷洒", "随用随喷"],
        ["传送带", "过氧乙酸溶液", "0.2%（质量分数）", "每班生产结束后"],
    ]),
    ("p", "第八条 生产线在每班结束后进行清洗消毒。清洗完成后由质检员进行ATP涂抹检测，"
          "检测值超过150 RLU的，须重新清洗并复测。"),
    ("p", "第九条 车间内发现鼠迹或虫害的，应当立即通知行政部，由外包虫控公司在24小时内上门处理。"),
    ("h1", "第四章 监督与考核"),
    ("p", "第十条 质量管理部每周对车间卫生进行不少于两次的突击检查，检查结果在车间公告栏公示。"),
    ("p", "第十一条 违反本规定的，首次给予口头警告；第二次扣减当月绩效分5分；"
          "一年内累计三次的，调离生产岗位。"),
    ("p", "第十二条 本规定由质量管理部负责解释，自发布之日起施行。"),
]

# ------------------------------------------------------------------ cold chain, old (docx)
COLD_OLD_TITLE = "澄湖食品冷链运输温控管理办法"
COLD_OLD = [
    "第一条 为确保低温乳制品和速冻食品在运输过程中的温度符合要求，制定本办法。",
    "第二条 本办法适用于公司自有冷藏车及委托的第三方冷链承运商。",
    "第三条 低温乳制品（巴氏鲜奶、酸奶）运输过程中厢体温度应保持在2℃至6℃；"
    "速冻食品运输过程中厢体温度应不高于-18℃。",
    "第四条 装货前冷藏车须提前预冷，预冷时间不少于30分钟，厢体温度达到要求后方可装车。",
    "第五条 每辆冷藏车应安装温度记录仪，记录间隔不超过5分钟，数据保存期不少于1年。",
    "第六条 运输途中厢体温度超出规定范围且持续超过30分钟的，驾驶员应立即报告物流调度，"
    "该车产品到货后隔离存放，经质检部门评估后方可入库。",
    "第七条 收货仓库在卸货时应抽测产品中心温度，速冻食品中心温度高于-12℃的，拒绝收货。",
    "第八条 第三方承运商一个季度内发生两次温控异常的，暂停派单一个月。",
    "第九条 本办法由物流部负责解释，自2023年3月1日起施行。",
]

# -------------------------------------------------------------- cold chain, revised (pdf)
COLD_NEW_TITLE = "澄湖食品冷链运输温控管理办法（2026年修订）"
COLD_NEW_ISSUED = "物流部　2026年5月20日印发"
COLD_NEW = [
    ("第一章 总则", [
        "第一条 为确保低温乳制品和速冻食品在运输、中转和配送过程中的温度持续受控，"
        "保障产品质量安全，制定本办法。",
        "第二条 本办法自2026年7月1日起施行，2023年版《冷链运输温控管理办法》同时废止。",
        "第三条 本办法适用于公司自有冷藏车、租赁冷藏车及委托的第三方冷链承运商。",
        "第四条 物流部负责冷链运输的组织和日常监控；质量管理部负责温控异常产品的评估和处置；"
        "法务部负责审核承运商合同中的温控条款。",
    ]),
    ("第二章 温度要求", [
        "第五条 低温乳制品（巴氏鲜奶、酸奶）运输过程中厢体温度应保持在2℃至6℃。",
        "第六条 速冻食品运输过程中厢体温度应不高于-18℃，短时波动不得高于-15℃。",
        "第七条 同一车厢不得混装冷藏产品和冷冻产品；确需同车配送的，须使用带隔板的双温区冷藏车。",
    ]),
    ("第三章 车辆与设备", [
        "第八条 装货前冷藏车须提前预冷，预冷时间不少于45分钟，厢体温度达到要求后方可装车。",
        "第九条 每辆冷藏车应安装经校准的温度记录仪，记录间隔不超过5分钟，数据保存期不少于2年。",
        "第十条 温度记录仪每年由具备资质的计量机构校准一次，校准证书随车备查。",
        "第十一条 冷藏车厢体每次卸货后应清扫，每周使用食品级消毒剂全面消毒一次。",
        "第十二条 装卸货过程中，单次开门时间不得超过3分钟，装卸间隙应随手关闭厢门。",
    ]),
    ("第四章 在途监控", [
        "第十三条 物流调度中心通过车载终端实时监控厢体温度，温度接近上限时，"
        "系统自动向驾驶员推送预警。",
        "第十四条 运输途中厢体温度超出规定范围且持续超过15分钟的，驾驶员应立即报告物流调度中心，"
        "该车产品到货后隔离存放，经质量管理部评估后方可入库。",
        "第十五条 冷藏机组在途中发生故障的，驾驶员应就近联系备用车辆转运，"
        "转运须在2小时内完成。",
        "第十六条 严禁为节省燃油擅自关闭冷藏机组。自有车辆驾驶员违反的，给予书面警告；"
        "承运商车辆违反的，每次扣减运费500元。",
    ]),
    ("第五章 收货验收", [
        "第十七条 收货仓库在卸货时应抽测产品中心温度，速冻食品中心温度高于-12℃的，拒绝收货。",
        "第十八条 低温乳制品到货时，产品温度高于8℃的，整批暂扣并通知质量管理部。",
        "第十九条 收货人员应下载本车次的温度记录，与随车单据一并归档。",
    ]),
    ("第六章 承运商管理", [
        "第二十条 第三方承运商一个季度内发生两次温控异常的，暂停派单一个月。",
        "第二十一条 冷链驾驶员每年接受温控操作培训不少于8学时，培训记录由物流部保存。",
        "第二十二条 物流部每半年对承运商进行一次现场评审，评审不合格的，终止合作。",
    ]),
    ("第七章 附则", [
        "第二十三条 本办法由物流部负责解释。",
    ]),
]

# ------------------------------------------------------------- heat allowance notice family
HEAT_TITLE = "关于发放2026年夏季高温津贴的通知"
HEAT_ITEMS_OLD = [
    "一、发放期间：2026年6月1日至9月30日。",
    "二、发放标准：在高温环境（车间温度33℃以上）或露天作业的员工，每人每月300元；"
    "在空调环境下工作的员工，每人每月150元。",
    "三、发放方式：随当月工资一并发放，不得以防暑降温饮料代替。",
    "四、当月实际出勤不满10天的，按标准的50%发放。",
]
HEAT_ITEMS_NEW = [item.replace("每人每月300元", "每人每月360元") for item in HEAT_ITEMS_OLD]
HEAT_PAGE = """<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8">
<title>{title} - 澄湖食品员工之家</title></head>
<body>
<header><div class="brand">澄湖食品员工之家</div>
<nav><a href="/">首页</a> | <a href="/news">公司新闻</a> | <a href="/notice">通知公告</a> |
<a href="/hr">人事服务</a> | <a href="/it">IT服务台</a></nav></header>
<div class="crumb">首页 &gt; 通知公告 &gt; 人力资源部</div>
<aside class="side"><h3>最新公告</h3><ul>
<li><a href="/n/311">2026年端午节放假安排</a></li>
<li><a href="/n/309">嘉兴工厂食堂窗口调整的说明</a></li>
<li><a href="/n/305">关于开展安全生产月活动的通知</a></li></ul>
<h3>快捷入口</h3><ul><li>工资条查询</li><li>考勤异常申诉</li><li>内部推荐</li></ul></aside>
<main><article>
<h1>{title}</h1>
<p class="meta">发布部门：人力资源部　发布日期：2026-05-20　阅读次数：1532</p>
<p>各部门、各车间：</p>
<p>根据省人力资源和社会保障厅有关夏季高温津贴的规定，结合公司实际，现就2026年夏季高温津贴发放事项通知如下：</p>
{items}
<p>特此通知。</p>
<p>人力资源部<br>2026年5月20日</p>
</article></main>
<footer>澄湖食品股份有限公司 版权所有 | 内网服务热线 6610 | 浙ICP备00000000号</footer>
</body></html>
"""
HEAT_CORRECTED_TITLE = "关于发放2026年夏季高温津贴的通知（更正）"
HEAT_CORRECTED = [
    "各部门、各车间：",
    "我部于2026年5月20日发布的《关于发放2026年夏季高温津贴的通知》中，"
    "高温作业岗位的津贴标准有误。经核对，现重新发布如下，原通知同时作废。",
    *HEAT_ITEMS_NEW,
    "特此通知。",
]
HEAT_CORRECTED_SIGN = ["人力资源部", "2026年5月26日"]

# ----------------------------------------------------------------- complaint training (pptx)
SLIDE_FOOTER = "澄湖食品客户服务中心　内部培训　严禁外传"
SLIDES = [  # title, bullets, speaker notes
    ("消费者投诉处理培训", ["客户服务中心　2026年4月"], ""),
    ("投诉受理时限", ["400热线受理后2小时内建立工单", "一般投诉3个工作日内结案"],
     "讲解要点：涉及异物、疑似食物中毒的投诉属于重大投诉，须在30分钟内上报质量管理部经理，"
     "并于24小时内安排专人上门。"),
    ("异物投诉处理", ["请消费者保留产品及包装", "不得在电话中承认责任或作出赔偿承诺"],
     "上门取回的样品须在48小时内送达嘉兴工厂质检中心，样品袋上贴好投诉工单号。"),
    ("赔付权限", ["以换货为首选方案", "现金赔付须按权限审批"],
     "权限说明：单笔赔付200元以内由一线客服专员直接处理；200元至2000元由客服主管审批；"
     "超过2000元须报客户服务中心总监及法务部会签。"),
    ("媒体与舆情", ["一线人员不接受媒体采访", "发现网络负面帖子及时截图上报"],
     "舆情监测由品牌部负责。工作时间以外发现负面舆情的，请拨打值班电话转品牌部值班人员。"),
    ("考核要求", ["回访满意度目标95%", "工单超时记入月度考核"], ""),
]

# -------------------------------------------------------------------- catalogue (xlsx)
PRODUCTS = [  # 产品编码, 产品名称, 规格, 储存条件, 保质期, 生产线
    ("CH-DM-101", "巴氏杀菌鲜牛奶", "950mL", "2-6℃冷藏", "7天", "L1"),
    ("CH-DM-102", "原味风味发酵乳", "200g×12杯", "2-6℃冷藏", "21天", "L2"),
    ("CH-DM-205", "常温全脂纯牛奶", "250mL×24盒", "常温避光", "6个月", "L5"),
    ("CH-SD-301", "猪肉白菜水饺", "1kg", "-18℃以下冷冻", "12个月", "L3"),
    ("CH-SD-302", "三鲜水饺", "500g", "-18℃以下冷冻", "12个月", "L3"),
    ("CH-SD-315", "荠菜鲜肉馄饨", "400g", "-18℃以下冷冻", "9个月", "L4"),
    ("CH-SD-320", "黑芝麻汤圆", "450g", "-18℃以下冷冻", "12个月", "L4"),
]
ALLERGENS = [  # 产品编码, 含有的过敏原, 交叉污染提示
    ("CH-DM-101", "乳", "无"),
    ("CH-DM-102", "乳", "无"),
    ("CH-DM-205", "乳", "无"),
    ("CH-SD-301", "小麦（麸质）、大豆", "可能含有芝麻（同线生产芝麻制品）"),
    ("CH-SD-302", "小麦（麸质）、虾、鸡蛋", "可能含有芝麻（同线生产芝麻制品）"),
    ("CH-SD-315", "小麦（麸质）、大豆", "可能含有虾（同线生产三鲜馅料）"),
    ("CH-SD-320", "小麦（麸质）、芝麻、乳", "可能含有花生（同线生产花生馅汤圆）"),
]

# ---------------------------------------------------------------------- fault codes (csv)
FAULTS = [  # 故障代码, 设备名称, 故障现象, 处置方法, 负责岗位
    ("E101", "真空包装机", "真空度不足（低于-0.08MPa）",
     "检查密封条和真空泵油位，更换密封条后试机3包", "设备维修工"),
    ("E117", "真空包装机", "封口温度异常", "停机校准热封温度至165℃±5℃", "设备维修工"),
    ("F203", "速冻隧道", "出口产品中心温度高于-15℃", "降低传送带速度10%并通知班组长", "速冻操作员"),
    ("F210", "速冻隧道", "蒸发器结霜严重", "执行手动融霜程序，时间不少于20分钟", "制冷工"),
    ("M305", "金属探测器", "剔除装置不动作", "立即停线，已通过产品全部隔离复检", "质检员"),
    ("M311", "金属探测器", "灵敏度测试不合格",
     "使用Fe1.5mm测试块重新校验，上次合格测试后的产品全部追溯", "质检员"),
    ("P402", "灌装机", "灌装量偏差超过±2%", "调整计量泵并抽检10瓶", "灌装操作员"),
    ("C501", "CIP清洗系统", "碱液浓度低于1.2%", "补加碱液并重新启动清洗循环", "CIP操作员"),
]

# ------------------------------------------------------------------------ fire drill (png)
DRILL = ["消防疏散演练通知", "各部门：",
         "定于2026年6月18日（周四）14:30，",
         "在嘉兴工厂举行全员消防疏散演练。",
         "听到连续警铃后，请沿绿色指示标志",
         "撤离至东门停车场集合。",
         "冷库及速冻隧道岗位按应急预案关停设备。",
         "安全环保部", "2026年6月10日"]

# ----------------------------------------------------------------------- QTS FAQ (md)
FAQ_MD = """# 质量追溯系统（QTS）常见问题

维护部门：信息中心　更新时间：2026年2月

## 1. 包装上的批次号怎么看？

产品包装上的批次号共14位，格式为“生产日期(8位)+生产线代码(2位)+班次代码(1位)+流水号(3位)”。
班次代码A、B、C、D分别对应甲、乙、丙、丁班。例如 20260315L3B017 表示2026年3月15日3号线乙班第17批。

## 2. 追溯一个批次要多久？

在QTS中输入批次号，即可查到原料批次、投料记录和出库去向。公司要求正向追溯和反向追溯均能在2小时内完成。

## 3. 成品留样怎么管理？

每个批次的成品留样2份，存放于质检中心留样室，保存至产品保质期满后1个月，到期由质检员统一销毁并登记。

## 4. 怎么开通QTS账号？

由部门负责人在OA提交“QTS账号申请”，信息中心在1个工作日内开通。质检员账号具有批次放行权限，其他岗位账号仅可查询。

## 5. 系统登录不了或数据不同步怎么办？

请拨打信息中心分机 6610。夜班期间系统无法使用时，先使用纸质《批次记录单》记录，系统恢复后24小时内补录。

## 6. 原料批次怎么录入？

原料入库时，仓管员扫描随货的批次条码；没有条码的原料手工录入，并由质检员复核。
"""

# ------------------------------------------------------------------- recall SOP (English pdf)
RECALL_TITLE = "Chenghu Foods Product Recall Procedure"
RECALL_SUB = "Document SOP-QA-07, Revision 3, effective 1 March 2026"
RECALL = [
    ("1. Purpose", [
        "This procedure sets out how Chenghu Foods removes unsafe or non-compliant products from "
        "the market quickly and keeps records of every recall.",
    ]),
    ("2. Scope", [
        "It applies to all finished products sold in mainland China and exported to Hong Kong "
        "and Singapore.",
    ]),
    ("3. Recall classes", [
        "3.1 Class I: products that could cause serious harm to health or death, for example an "
        "undeclared allergen or pathogen contamination. A Class I recall must be launched within "
        "24 hours of the decision.",
        "3.2 Class II: products that may cause temporary harm to health. Launch within 48 hours.",
        "3.3 Class III: products unlikely to harm health but not compliant, for example a "
        "labelling error. Launch within 72 hours.",
    ]),
    ("4. Responsibilities", [
        "4.1 The Recall Committee is chaired by the Quality Director. Members are the Logistics "
        "Manager, the Sales Director, the Legal Counsel and the Brand Manager.",
        "4.2 The General Manager decides whether to recall, on the committee's recommendation.",
        "4.3 The Legal Counsel reports Class I and Class II recalls to the local market "
        "regulation bureau.",
    ]),
    ("5. Procedure", [
        "5.1 Trace the affected batches in QTS and freeze all remaining stock within 4 hours.",
        "5.2 Notify distributors by phone and e-mail; distributors must confirm receipt within "
        "12 hours.",
        "5.3 Returned goods are stored in the quarantine area of the Jiaxing warehouse with a red "
        "RECALLED - DO NOT SHIP tag.",
        "5.4 Destruction of recalled products must be witnessed by two employees and recorded "
        "with photos.",
    ]),
    ("6. Effectiveness and practice", [
        "6.1 For a Class I recall, at least 95% of the distributed quantity must be recovered "
        "within 10 days.",
        "6.2 A mock recall is run at least twice a year; it must trace one full batch within "
        "4 hours.",
        "6.3 Recall records are kept for at least 5 years.",
    ]),
]

# --------------------------------------------------------------- visitor rules (bilingual txt)
VISITOR_TXT = """澄湖食品嘉兴工厂来访人员安全须知
Visitor Safety Rules - Chenghu Foods Jiaxing Plant

1. 所有访客须在门卫室登记，出示有效身份证件并领取访客证。
   All visitors must sign in at the gatehouse, show valid ID and collect a visitor badge.
2. 访客在厂区内须由接待员工全程陪同。
   Visitors must be escorted by their host at all times.
3. 进入生产区须穿戴一次性鞋套、发帽和白大褂，禁止携带玻璃制品和食品。
   In production areas wear shoe covers, a hair cap and a white coat; glass and food are not allowed.
4. 生产区内严禁拍照、录像；确需拍摄的，须经质量管理部书面同意。
   Photography and video recording are prohibited in production areas unless Quality Management approves in writing.
5. 厂区内车辆限速15公里/小时，请按指定路线行驶。
   The speed limit on site is 15 km/h; follow the marked routes.
6. 离厂时须归还访客证，遗失的赔偿20元。
   Return your badge when leaving; a lost badge costs 20 yuan.
7. 紧急情况请用厂内电话拨打应急电话 6119。
   In an emergency dial 6119 from any internal phone.
"""

# ---------------------------------------------------------------------- contacts (txt)
CONTACTS_TXT = """澄湖食品 嘉兴工厂内部常用电话（2026年3月更新）

部门/岗位                     联系人      电话
---------------------------------------------------------------
总机                          -           0573-8266 1000
质量管理部经理                王立群      分机 6201
质检中心（化验室）            值班质检员  分机 6230（24小时）
物流调度中心                  值班调度    分机 6350，冷链异常24小时热线 6358
信息中心                      服务台      分机 6610
安全环保部                    刘振        分机 6119（应急）
人力资源部薪酬组              陈佳        分机 6402
行政部（虫害、宿舍、车辆）    周敏        分机 6080
客户服务中心                  -           400-826-0517

外线拨打分机：0573-8266 加分机号。
"""

# ------------------------------------------------------------------ shift allowance (docx)
SHIFT_TITLE = "澄湖食品生产一线倒班及津贴管理办法"
SHIFT = [
    "第一条 生产车间实行四班三倒。早班8:00至16:00，中班16:00至24:00，夜班0:00至次日8:00。",
    "第二条 接班人员须提前15分钟到岗，交接内容记入《交接班记录》，双方签字确认。",
    "第三条 夜班津贴每人每班40元；中班津贴每人每班20元。",
    "第四条 同一员工连续夜班不得超过7天，连续夜班结束后至少安排24小时休息。",
    "第五条 在冷库（-18℃以下）连续作业的员工，每工作1小时须到缓冲间休息不少于10分钟；"
    "低温岗位津贴每人每月200元。",
    "第六条 倒班人员调班须提前2天经班组长同意，并在排班系统登记；每月调班不超过3次。",
    "第七条 因生产需要延长工作时间的，按国家规定支付加班工资，每月加班不超过36小时。",
    "第八条 本办法所列津贴随当月工资发放，由人力资源部负责解释。",
]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_hygiene(OUT / "workshop_hygiene_rules.docx")
    write_plain_docx(OUT / "cold_chain_rules_2023.docx", COLD_OLD_TITLE,
                     "物流部　2023年2月15日印发", COLD_OLD)
    write_cold_chain_pdf(OUT / "cold_chain_rules_2026.pdf")
    items = "\n".join(f"<p>{item}</p>" for item in HEAT_ITEMS_OLD)
    (OUT / "heat_allowance_notice.html").write_text(
        HEAT_PAGE.format(title=HEAT_TITLE, items=items), encoding="utf-8")
    write_cjk_pdf(OUT / "heat_allowance_notice_corrected.pdf", HEAT_CORRECTED_TITLE,
                  HEAT_CORRECTED, HEAT_CORRECTED_SIGN)
    write_deck(OUT / "complaint_handling_training.pptx")
    write_workbook(OUT / "product_catalogue.xlsx")
    write_csv(OUT / "line_fault_codes.csv")
    write_png(OUT / "fire_drill_notice.png")
    (OUT / "traceability_system_faq.md").write_text(FAQ_MD, encoding="utf-8")
    write_recall_pdf(OUT / "recall_procedure_en.pdf")
    (OUT / "visitor_safety_bilingual.txt").write_text(VISITOR_TXT, encoding="utf-8")
    (OUT / "department_contacts.txt").write_text(CONTACTS_TXT, encoding="utf-8")
    write_plain_docx(OUT / "shift_allowance_rules.docx", SHIFT_TITLE,
                     "人力资源部　2025年12月1日发布", SHIFT)
    print(f"wrote {len(list(OUT.iterdir()))} files to {OUT}")


# ----------------------------------------------------------------------------- writers


def write_hygiene(path: Path) -> None:
    document = docx.Document()
    document.core_properties.created = document.core_properties.modified = FIXED
    document.core_properties.title = HYGIENE_TITLE
    section = document.sections[0]
    section.header.paragraphs[0].text = HYGIENE_HEADER
    section.footer.paragraphs[0].text = HYGIENE_FOOTER
    document.add_heading(HYGIENE_TITLE, level=0)
    document.add_paragraph("质量管理部　2025年9月1日发布")
    for kind, content in HYGIENE:
        if kind == "h1":
            document.add_heading(content, level=1)
        elif kind == "fn":
            paragraph = document.add_paragraph(content)
            paragraph._p.append(footnote_reference(1))
            paragraph.add_run("。")
        elif kind == "table":
            table = document.add_table(rows=len(content), cols=len(content[0]))
            table.style = "Table Grid"
            for r, row in enumerate(content):
                for c, value in enumerate(row):
                    table.cell(r, c).text = value
        else:
            document.add_paragraph(content)
    path.write_bytes(office_bytes(document, [HYGIENE_FOOTNOTE]))


def write_plain_docx(path: Path, title: str, issued: str, clauses: list[str]) -> None:
    document = docx.Document()
    document.core_properties.created = document.core_properties.modified = FIXED
    document.core_properties.title = title
    document.add_heading(title, level=1)
    document.add_paragraph(issued)
    for clause in clauses:
        document.add_paragraph(clause)
    path.write_bytes(office_bytes(document))


def wrap(text: str, width: float, font: str, size: float) -> list[str]:
    """Greedy wrap by measured width; CJK text breaks after punctuation when it can."""
    lines: list[str] = []
    while text:
        if pymupdf.get_text_length(text, font, size) <= width:
            lines.append(text)
            break
        cut = 1
        while pymupdf.get_text_length(text[:cut + 1], font, size) <= width:
            cut += 1
        head = text[:cut]
        if font == CJK:
            marks = [i for i, ch in enumerate(head) if ch in "，。；：、）"]
            if marks and marks[-1] >= cut * 0.5:
                cut = marks[-1] + 1
        else:
            space = head.rfind(" ")
            if space > 0:
                cut = space + 1
        lines.append(text[:cut].rstrip())
        text = text[cut:].lstrip() if font != CJK else text[cut:]
    return lines


def save_pdf(document, path: Path, title: str) -> None:
    document.set_metadata({"title": title, "author": COMPANY,
                           "creationDate": "D:20260526090000", "modDate": "D:20260526090000",
                           "producer": "kbflow fresh docs"})
    path.write_bytes(document.tobytes(garbage=3, deflate=True, no_new_id=True))


def write_cold_chain_pdf(path: Path) -> None:
    """Several A4 pages: running header, page number footer, chapters and clauses."""
    document = pymupdf.open()
    left, width, bottom = 72, 451, 760
    pages: list = []
    page = None
    y = 0.0

    def new_page():
        nonlocal page, y
        page = document.new_page(width=595, height=842)
        pages.append(page)
        page.insert_text((72, 50), f"{COMPANY}　物流部", fontname=CJK, fontsize=8)
        y = 90.0

    new_page()
    page.insert_text(((595 - pymupdf.get_text_length(COLD_NEW_TITLE, CJK, 16)) / 2, y),
                     COLD_NEW_TITLE, fontname=CJK, fontsize=16)
    y += 28
    page.insert_text((330, y), COLD_NEW_ISSUED, fontname=CJK, fontsize=10)
    y += 36
    for chapter, clauses in COLD_NEW:
        if y > bottom - 60:
            new_page()
        page.insert_text(((595 - pymupdf.get_text_length(chapter, CJK, 13)) / 2, y), chapter,
                         fontname=CJK, fontsize=13)
        y += 30
        for clause in clauses:
            lines = wrap(clause, width, CJK, 11)
            if y + 21 * len(lines) > bottom:
                new_page()
            for line in lines:
                page.insert_text((left, y), line, fontname=CJK, fontsize=11)
                y += 21
            y += 9
        y += 10
    for number in range(1, document.page_count + 1):
        each = document[number - 1]
        footer = f"第 {number} 页 共 {document.page_count} 页"
        each.insert_text(((595 - pymupdf.get_text_length(footer, CJK, 9)) / 2, 805), footer,
                         fontname=CJK, fontsize=9)
    save_pdf(document, path, COLD_NEW_TITLE)


def write_cjk_pdf(path: Path, title: str, paragraphs: list[str], signature: list[str]) -> None:
    document = pymupdf.open()
    page = document.new_page(width=595, height=842)
    y = 100.0
    page.insert_text(((595 - pymupdf.get_text_length(title, CJK, 15)) / 2, y), title,
                     fontname=CJK, fontsize=15)
    y += 44
    for text in paragraphs:
        for line in wrap(text, 451, CJK, 11):
            page.insert_text((72, y), line, fontname=CJK, fontsize=11)
            y += 21
        y += 8
    y += 20
    for line in signature:
        page.insert_text((400, y), line, fontname=CJK, fontsize=11)
        y += 21
    save_pdf(document, path, title)


def write_recall_pdf(path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page(width=595, height=842)
    y = 80.0
    page.insert_text((72, y), RECALL_TITLE, fontname="hebo", fontsize=16)
    y += 22
    page.insert_text((72, y), RECALL_SUB, fontname="helv", fontsize=10)
    y += 30
    for heading, paragraphs in RECALL:
        if y > 720:
            page = document.new_page(width=595, height=842)
            y = 80.0
        page.insert_text((72, y), heading, fontname="hebo", fontsize=12)
        y += 20
        for text in paragraphs:
            for line in wrap(text, 451, "helv", 10.5):
                page.insert_text((72, y), line, fontname="helv", fontsize=10.5)
                y += 15
            y += 6
        y += 8
    save_pdf(document, path, RECALL_TITLE)


def write_deck(path: Path) -> None:
    path.write_bytes(deck_bytes(SLIDES, SLIDE_FOOTER, lambda number, total: f"{number}/{total}",
                                title="消费者投诉处理培训", created=FIXED))


def write_workbook(path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "在售产品"
    sheet.append(["澄湖食品2026年在售产品清单"])
    sheet.merge_cells("A1:F1")
    sheet["A1"].font = Font(bold=True, size=14)
    sheet["A1"].alignment = Alignment(horizontal="center")
    sheet.append(["产品编码", "产品名称", "规格", "储存条件", "保质期", "生产线"])
    for row in PRODUCTS:
        sheet.append(list(row))
    allergens = book.create_sheet("过敏原信息")
    allergens.append(["产品编码", "含有的过敏原", "交叉污染提示"])
    for row in ALLERGENS:
        allergens.append(list(row))
    allergens.append([])
    allergens.append(["注：过敏原信息每年由研发部复核一次，标签须与本表一致。"])
    allergens.merge_cells(f"A{len(ALLERGENS) + 3}:C{len(ALLERGENS) + 3}")
    book.properties.created = book.properties.modified = FIXED
    path.write_bytes(office_bytes(book))


def write_csv(path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["故障代码", "设备名称", "故障现象", "处置方法", "负责岗位"])
    writer.writerows(FAULTS)
    path.write_bytes(buffer.getvalue().encode("utf-8-sig"))


def write_png(path: Path) -> None:
    """A printed notice as pixels only."""
    document = pymupdf.open()
    page = document.new_page(width=420, height=340)
    page.draw_rect(page.rect, color=None, fill=(0.94, 0.93, 0.90))
    y = 42.0
    for number, line in enumerate(DRILL):
        size = 18 if number == 0 else 11
        if number == 0:
            x = (420 - pymupdf.get_text_length(line, CJK, size)) / 2
        elif number >= len(DRILL) - 2:
            x = 270
        else:
            x = 34 if number == 1 else 56
        page.insert_text((x, y), line, fontname=CJK, fontsize=size)
        y += size * 2.1 if number == 0 else 26
    pixmap = page.get_pixmap(dpi=200)
    path.write_bytes(pixmap.tobytes("png"))


if __name__ == "__main__":
    main()
