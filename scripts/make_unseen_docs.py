"""Generate `eval/unseen_docs/`: the knowledge base of a fictional property-management company
(锦澜物业服务有限公司, Suzhou: the residential sites 翠湖苑 and 云栖花园, the office tower
锦澜国际中心 and the office park 桐泾商务园), written blind to how kbflow searches, for
`eval/unseen_cases.jsonl` (documents and questions in a domain its developers never wrote for).

Formats and the parts that hold answers:
- decoration_rules.docx: 第X条 clauses under chapter headings, a fee table, a footnote (when the
  deposit is refunded), page header and footer (the document number).
- parking_rules_2023.docx and parking_rules_2026.pdf: a regulation and its revised successor under
  the same title. The successor says so only law-style, in the line under its title and in its last
  clause (the old version is repealed); three numbers change. The PDF runs over several pages with
  a running header and a page footer.
- water_tank_notice.html (a resident portal page: navigation, sidebar with other notices, footer)
  and water_tank_notice_corrected.docx: a notice and its corrected re-issue, whose title differs in
  brackets and adds （更正）; the old notice is repealed a sentence after it is named.
- fee_schedule_2026.xlsx: three sheets; the first has a merged title row, two header rows (merged
  group headers) and a merged note row.
- repair_categories.csv: GB18030, as a Chinese Excel saves it.
- elevator_entrapment_training.pptx: a footer on every slide, facts only in the speaker notes.
- fire_test_notice_scanned.pdf: a signed and stamped notice as scanned page images, no text layer.
- garbage_sorting_notice.png: a posted notice as pixels (read by OCR).
- resident_faq.md, contractor_safety_guide_en.docx (English only), site_contacts.txt (contacts and a
  duty roster), employee_handbook.pdf and cleaning_standard.pdf (text PDFs).

Run `.venv/bin/python scripts/make_unseen_docs.py` from the repository root; the output is
deterministic (fixed timestamps and document properties, no random ids).
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

OUT = Path(__file__).resolve().parent.parent / "eval" / "unseen_docs"
FIXED = dt.datetime(2026, 6, 1, 9, 0, 0)
PDF_DATE = "D:20260601090000"
CJK = "china-s"
COMPANY = "锦澜物业服务有限公司"

# ------------------------------------------------------------------- decoration rules (docx)
DECO_TITLE = "锦澜物业住宅装修管理规定"
DECO_HEADER = "锦澜物业服务有限公司　工程管理部受控文件"
DECO_FOOTER = "文件编号：JL-GC-005　第3版　可向业主公开"
DECO_FOOTNOTE = ("装修押金在竣工验收合格满30日后，凭押金收据原件退还；"
                 "收据遗失的，须由业主本人持身份证到服务中心办理。")
DECO = [
    ("h1", "第一章 总则"),
    ("p", "第一条 为规范住宅装饰装修活动，维护房屋结构安全和全体业主的共同利益，"
          "依据《住宅室内装饰装修管理办法》，结合公司在管项目实际，制定本规定。"),
    ("p", "第二条 本规定适用于公司在管的翠湖苑、云栖花园等住宅项目。锦澜国际中心、"
          "桐泾商务园的办公室装修，另行执行《写字楼租户装修手册》。"),
    ("h1", "第二章 装修申请"),
    ("p", "第三条 业主或经业主书面授权的使用人，应在开工前至少5个工作日到项目服务中心"
          "办理装修申请，提交房产证明、装修设计图纸和施工单位资质证明。"),
    ("p", "第四条 服务中心收到完整资料后3个工作日内完成审核。审核通过的，发放《装修许可证》，"
          "许可证须张贴在入户门外侧，直至竣工验收。"),
    ("p", "第五条 施工人员凭身份证办理《施工出入证》，无证人员不得进入小区施工。"),
    ("fn", "第六条 装修押金、装修垃圾清运费等费用按下表收取"),
    ("table", [
        ["收费项目", "收费标准", "备注"],
        ["装修押金（高层住宅）", "3000元/户", "无违规记录的全额退还"],
        ["装修押金（叠加别墅）", "10000元/户", "无违规记录的全额退还"],
        ["装修垃圾清运费", "8元/㎡（按建筑面积）", "一次性收取，不予退还"],
        ["施工出入证工本费", "5元/证", "装修结束后交回"],
    ]),
    ("h1", "第三章 施工管理"),
    ("p", "第七条 装修施工时间为周一至周五8:00至12:00、14:00至18:00。周六、周日及法定节假日"
          "只允许进行不产生噪音的施工，电钻、切割机等高噪音作业一律禁止。"),
    ("p", "第八条 禁止拆改承重墙、剪力墙及梁柱；禁止将卫生间改在下层住户的卧室、厨房上方。"
          "卫生间、厨房、阳台改动防水层的，须做48小时闭水试验，经服务中心工程人员确认后"
          "方可铺贴饰面。"),
    ("p", "第九条 电焊、气割等动火作业须提前1天申请《动火作业许可》，现场配备灭火器不少于2具。"),
    ("p", "第十条 装修垃圾须袋装，于每日17:00至19:00运至指定堆放点，严禁投入生活垃圾桶"
          "或从窗口抛撒。"),
    ("p", "第十一条 空调外机须安装在预留机位。封闭阳台须采用小区统一的款式和颜色，"
          "翠湖苑统一为深灰色断桥铝窗框。"),
    ("h1", "第四章 验收与违规处理"),
    ("p", "第十二条 装修完工后，业主应在7日内向服务中心申请竣工验收。"),
    ("p", "第十三条 违反本规定的，服务中心有权责令停工整改；拒不整改的，从装修押金中扣除"
          "恢复原状所需费用。擅自拆改承重结构的，报告住房和城乡建设部门处理。"),
    ("p", "第十四条 本规定由工程管理部负责解释，自2025年10月1日起施行。"),
]

# ------------------------------------------------------------- parking rules, 2023 (docx)
PARKING_TITLE = "锦澜物业住宅小区停车管理办法"
PARKING_OLD = [
    "第一条 为规范小区车辆停放秩序，保障消防通道畅通，制定本办法。",
    "第二条 本办法适用于翠湖苑、云栖花园的地面停车位及地下停车库。",
    "第三条 业主车辆须办理车辆登记，每户登记车辆不超过2辆，登记车辆凭车牌识别自动进出。",
    "第四条 临时车辆进入小区，停放30分钟以内免费；超过30分钟的，每小时收费5元，"
    "每日（24小时）最高收费40元。",
    "第五条 业主访客车辆经业主通过“锦澜生活”小程序预约的，每次可免费停放2小时。",
    "第六条 月租车位按先登记先分配的原则安排，月租车辆欠费超过15日的，"
    "系统暂停其自动放行权限。",
    "第七条 消防通道、绿化带及单元门口禁止停车，违者由服务中心张贴提示单并拍照留存。",
    "第八条 电动自行车一律停放在非机动车棚，严禁进入电梯和楼道充电。",
    "第九条 小区内行驶限速10公里/小时，禁止鸣笛。",
    "第十条 本办法由秩序管理部负责解释，自发布之日起施行。",
]

# ---------------------------------------------------------- parking rules, revised (pdf)
PARKING_NEW_DATES = "（2023年3月1日发布　2026年4月10日修订）"
PARKING_NEW = [
    ("第一章 总则", [
        "第一条 为规范住宅小区车辆停放秩序，保障消防通道畅通和业主出行安全，制定本办法。",
        "第二条 本办法适用于翠湖苑、云栖花园的地面停车位及地下停车库。",
        "第三条 秩序管理部负责停车场的日常管理；各项目服务中心负责车辆登记、停车收费"
        "和投诉处理。",
    ]),
    ("第二章 车辆登记", [
        "第四条 业主车辆须凭行驶证和房产证明办理车辆登记，每户登记车辆不超过2辆，"
        "登记车辆凭车牌识别自动进出。",
        "第五条 承租人车辆凭租赁登记信息办理车辆登记，登记有效期与租赁合同期限一致。",
    ]),
    ("第三章 临时停车", [
        "第六条 临时车辆进入小区，停放30分钟以内免费；超过30分钟的，每小时收费5元，"
        "每日（24小时）最高收费60元。",
        "第七条 临时车辆在小区内连续停放超过72小时的，服务中心应联系车主核实情况。",
        "第八条 外卖、快递车辆在小区大门外指定区域停放，不得驶入小区内部道路。",
    ]),
    ("第四章 访客车辆", [
        "第九条 业主访客车辆经业主通过“锦澜生活”小程序预约的，每次可免费停放3小时；"
        "超出部分按临时停车标准收费。",
        "第十条 每户每月预约访客车辆不超过20次。",
    ]),
    ("第五章 月租车位与产权车位", [
        "第十一条 月租车位按先登记先分配的原则安排，月租车辆欠费超过10日的，"
        "系统暂停其自动放行权限。",
        "第十二条 产权车位业主应按年度收费标准缴纳车位管理服务费。产权车位出租的，"
        "业主应将承租人车辆信息报服务中心备案。",
        "第十三条 车位不得改作仓储用途，不得在车位上堆放杂物或加装地锁。",
    ]),
    ("第六章 新能源汽车充电", [
        "第十四条 业主在产权车位自行安装充电桩的，须向服务中心提交供电部门同意安装的证明"
        "和施工方案，并由具备资质的单位安装。",
        "第十五条 云栖花园地下车库B2层设有公共充电车位40个，充电服务费按每千瓦时0.8元收取，"
        "电费另计。充电完成后30分钟内未驶离的，按临时停车标准收取占位费。",
        "第十六条 电动自行车一律在非机动车棚内的集中充电点充电，严禁进入电梯、楼道"
        "或在室内充电。",
    ]),
    ("第七章 禁停区域与违规处理", [
        "第十七条 消防通道、消防登高面、绿化带及单元门口禁止停车。",
        "第十八条 违规停放的，服务中心张贴提示单并拍照留存；占用消防通道经劝阻拒不驶离的，"
        "报请消防救援机构依法处理。",
        "第十九条 小区内行驶限速10公里/小时，禁止鸣笛。",
    ]),
    ("第八章 附则", [
        "第二十条 本办法由秩序管理部负责解释。",
        "第二十一条 本办法自2026年5月1日起施行。2023年3月1日发布的"
        "《锦澜物业住宅小区停车管理办法》同时废止。",
    ]),
]

# ------------------------------------------------------------- water tank notice family
TANK_TITLE = "关于云栖花园2026年二次供水水箱清洗停水的通知"
TANK_ITEMS_OLD = [
    "一、1号楼至2号楼：2026年5月18日（周一）8:30至16:30。",
    "二、3号楼至6号楼：2026年5月19日（周二）9:00至17:00。",
    "三、清洗完成后，请先打开水龙头放水3至5分钟，待水质清澈后再使用。",
    "四、水箱清洗由具备卫生许可的苏州清源水处理工程有限公司实施，"
    "清洗后的水质检测报告将在各单元大堂公示。",
]
TANK_ITEMS_NEW = [TANK_ITEMS_OLD[0], "二、3号楼至6号楼：2026年5月21日（周四）9:00至19:00。",
                  *TANK_ITEMS_OLD[2:]]
TANK_PAGE = """<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8">
<title>{title} - 锦澜生活服务平台</title></head>
<body>
<header><div class="brand">锦澜生活服务平台</div>
<nav><a href="/">首页</a> | <a href="/pay">物业缴费</a> | <a href="/repair">在线报修</a> |
<a href="/notice">通知公告</a> | <a href="/events">社区活动</a> | <a href="/contact">联系我们</a>
</nav></header>
<div class="crumb">首页 &gt; 通知公告 &gt; 云栖花园</div>
<aside class="side"><h3>最新公告</h3><ul>
<li><a href="/n/1208">关于翠湖苑电梯年度检验的通知</a></li>
<li><a href="/n/1205">锦澜生活小程序缴费功能升级说明</a></li>
<li><a href="/n/1199">关于开展夏季消防安全检查的通知</a></li></ul>
<h3>便民服务</h3><ul><li>访客预约</li><li>装修申请</li><li>发票下载</li></ul></aside>
<main><article>
<h1>{title}</h1>
<p class="meta">发布单位：云栖花园服务中心　发布时间：2026-05-08　浏览：862</p>
<p>各位业主、住户：</p>
<p>为保障生活用水卫生，根据二次供水设施卫生管理的有关要求，本服务中心定于近期对
云栖花园二次供水水箱进行年度清洗消毒，届时相关楼栋将暂停供水，具体安排如下：</p>
{items}
<p>请各位住户提前做好储水准备，由此带来的不便，敬请谅解。咨询电话：0512-6758 3301。</p>
<p>云栖花园服务中心<br>2026年5月8日</p>
</article></main>
<footer>锦澜物业服务有限公司 版权所有 | 24小时服务热线 400-885-6600 | 苏ICP备00000000号</footer>
</body></html>
"""
TANK_CORRECTED_TITLE = "关于云栖花园（2026年）二次供水水箱清洗停水的通知（更正）"
TANK_CORRECTED = [
    "各位业主、住户：",
    "本中心于2026年5月8日在锦澜生活服务平台发布了《关于云栖花园2026年二次供水水箱清洗停水的"
    "通知》。因清洗单位施工排期调整，3号楼至6号楼的停水安排有变。现将更正后的安排通知如下，"
    "原通知同时作废。",
    *TANK_ITEMS_NEW,
    "请各位住户提前做好储水准备，由此带来的不便，敬请谅解。",
    "云栖花园服务中心",
    "2026年5月12日",
]

# ---------------------------------------------------------------- fee schedule (xlsx)
FEE_TITLE = "锦澜物业2026年度收费标准（经业主大会审议通过）"
FEE_HEAD_1 = ["项目名称", "物业类型", "物业服务费（元/㎡·月）", None,
              "产权车位管理服务费（元/个·月）", None, "缴费周期"]
FEE_HEAD_2 = [None, None, "收费标准", "其中：电梯运行费", "地面车位", "地下车位", None]
FEES = [
    ("翠湖苑", "高层住宅", 2.85, 0.35, 60, 100, "按季度预缴"),
    ("翠湖苑", "叠加别墅", 3.65, "—", 60, 100, "按季度预缴"),
    ("云栖花园", "多层住宅", 1.95, "—", 50, 90, "按年预缴"),
    ("云栖花园", "小高层住宅", 2.45, 0.3, 50, 90, "按年预缴"),
    ("锦澜国际中心", "甲级写字楼", 26.5, "含在收费标准内", "—", 650, "按月缴纳"),
    ("桐泾商务园", "研发办公", 11.8, "含在收费标准内", 120, 380, "按季度预缴"),
]
FEE_NOTE = "注：住宅业主一次性预缴全年物业服务费的，赠送1个月物业服务费。"
PAID_SERVICES = [  # 服务代码, 服务项目, 收费标准, 备注
    ("YC-101", "更换水龙头", "30元/个", "不含材料费"),
    ("YC-102", "疏通马桶", "60元/次", "因使用不当造成堵塞的"),
    ("YC-103", "疏通地漏/下水管", "80元/次", "户内管道"),
    ("YC-105", "更换灯具", "25元/盏", "不含材料费"),
    ("YC-201", "日常家政保洁", "45元/小时", "2小时起约"),
    ("YC-202", "开荒保洁", "6元/㎡", "按建筑面积计算"),
    ("YC-401", "空调清洗（挂机）", "80元/台", "含消毒"),
    ("YC-402", "空调清洗（柜机）", "120元/台", "含消毒"),
]
CONTRACTORS = [  # 服务类别, 单位名称, 服务范围, 合同期限, 对接人
    ("电梯维保", "苏州恒梯电梯工程有限公司", "全部在管项目", "2025-07-01至2027-06-30", "顾建平"),
    ("保洁", "洁诚环境服务有限公司", "翠湖苑、云栖花园", "2026-01-01至2026-12-31", "孙丽华"),
    ("保洁", "明澈清洁服务（苏州）有限公司", "锦澜国际中心、桐泾商务园",
     "2025-10-01至2026-09-30", "钱志远"),
    ("秩序维护", "苏州盾安保安服务有限公司", "全部在管项目", "2026-03-01至2027-02-28", "马骏"),
    ("绿化养护", "青枝园林工程有限公司", "翠湖苑、云栖花园", "2026-01-01至2026-12-31", "杨帆"),
    ("水箱清洗", "苏州清源水处理工程有限公司", "云栖花园", "2026-04-01至2027-03-31", "邵晨"),
]

# ------------------------------------------------------------ repair categories (csv)
REPAIRS = [  # 类别代码, 报修类别, 典型问题, 响应时限, 到场时限, 收费说明
    ("R01", "紧急类-水", "水管爆裂、大面积漏水", "立即响应", "15分钟内", "公共部位免费"),
    ("R02", "紧急类-电", "户内全部停电、配电箱冒烟", "立即响应", "20分钟内", "公共部位免费"),
    ("R03", "紧急类-电梯困人", "电梯停运且有人员被困", "立即响应",
     "物业5分钟内；维保单位30分钟内", "免费"),
    ("R04", "一般类-给排水", "水龙头滴漏、马桶堵塞", "30分钟内", "2小时内", "户内有偿"),
    ("R05", "一般类-门窗", "入户门锁故障、窗户关不严", "30分钟内", "当日内", "户内有偿"),
    ("R06", "渗漏类", "楼上渗水、外墙渗水", "30分钟内", "4小时内", "查明责任后由责任方承担"),
    ("R07", "公共设施", "路灯不亮、单元门禁损坏", "1小时内", "24小时内", "免费"),
    ("R08", "环境类", "公共区域卫生、垃圾未清运", "1小时内", "2小时内", "免费"),
    ("R09", "装修及噪音投诉", "违规施工、夜间噪音", "30分钟内", "1小时内", "免费"),
]

# ---------------------------------------------------- elevator entrapment training (pptx)
SLIDE_FOOTER = "锦澜物业工程管理部　内部培训资料　2026年3月"
SLIDES = [  # title, bullets, speaker notes
    ("电梯困人应急处置培训", ["工程管理部　2026年3月"], ""),
    ("接警与安抚", ["监控中心接到困人报警后立即通过五方对讲安抚", "记录梯号、楼层和被困人数"],
     "安抚话术要点：告知被困人员不要扒门，不要试图自行离开轿厢。"
     "每隔5分钟与被困人员通话一次，直到救出为止。"),
    ("到场时限", ["物业工程人员5分钟内到场", "维保单位30分钟内到场"],
     "锦澜国际中心和桐泾商务园的维保合同另有约定：维保单位驻场人员15分钟内到场。"),
    ("盘车放人", ["仅限持电梯安装维修作业证的人员操作", "操作前必须切断主电源"],
     "盘车必须两人配合，一人松闸一人盘车。每次盘车移动不超过300毫米，"
     "确认轿厢到达平层位置后再开门。"),
    ("常见故障代码", ["E35：门锁回路断开", "E07：超速保护动作", "E52：轿厢意外移动"],
     "故障代码以控制柜显示为准，以上为恒梯公司保养的设备所用代码。"),
    ("事后处置", ["询问被困人员身体状况", "2小时内提交《电梯困人事件报告》"],
     "被困时间超过30分钟的，须在当日内向所在区市场监管局特种设备科报告，"
     "并在24小时内回访被困人员。"),
    ("演练与考核", ["每季度组织一次困人救援演练", "演练记录存档三年"], ""),
]

# ---------------------------------------------------- fire test notice (scanned pdf)
FIRE_PAGES = [
    ["关于锦澜国际中心2026年度消防联动测试的通知",
     "各租户单位：",
     "根据消防安全管理规定，经与消防维保单位协商，",
     "锦澜国际中心定于2026年6月13日（周六）",
     "8:00至12:00进行年度消防联动测试。",
     "测试期间将反复启动火灾警报和消防广播，",
     "防火卷帘门将降下，请勿惊慌，无需疏散。",
     "测试期间全部客梯将迫降至首层，",
     "暂停运行约40分钟，请提前安排人员上下楼。",
     "如有疑问，请联系消防控制室：0512-6275 8119。"],
    ["附：测试项目",
     "1. 火灾自动报警系统",
     "2. 消防广播及声光报警器",
     "3. 防火卷帘门",
     "4. 正压送风及排烟风机",
     "5. 电梯迫降功能",
     "特此通知。",
     "锦澜物业服务有限公司",
     "锦澜国际中心服务中心（盖章）",
     "项目经理：韩立峰（签字）",
     "2026年6月2日"],
]

# ---------------------------------------------------------- garbage sorting notice (png)
GARBAGE = ["翠湖苑生活垃圾分类投放时间调整公告",
           "各位业主、住户：",
           "根据街道垃圾分类工作要求，自2026年6月1日起，",
           "翠湖苑生活垃圾定时定点投放时间调整为：",
           "早上 6:30至9:00　晚上 18:00至21:00",
           "其他时段请勿将垃圾放置在投放点周边。",
           "大件垃圾每周六8:00至11:00在北门临时堆放点集中收集，",
           "装修垃圾请按装修管理规定另行清运，切勿混投。",
           "翠湖苑服务中心",
           "2026年5月25日"]

# --------------------------------------------------------------------- resident FAQ (md)
FAQ_MD = """# 锦澜物业业主服务常见问题（FAQ）

适用项目：翠湖苑、云栖花园　更新时间：2026年4月

## 门禁卡丢了怎么补办？

业主本人持身份证到项目服务中心办理，每张工本费20元，当场即可领取。
每户最多可办理6张门禁卡。人脸识别开门可在“锦澜生活”小程序自助登记。

## 楼上漏水渗到我家了，物业管不管？

管。请先拨打服务中心电话报修，工程人员到场查明渗漏原因并协调处理。
属于楼上户内管道或防水层问题的，维修费用及造成的损失由楼上业主承担；
属于公共管道问题的，由物业负责维修。

## 物业费可以开发票吗？

可以。在“锦澜生活”小程序缴费后可申请电子普通发票，7个工作日内发送至您预留的邮箱。
单位业主需要增值税专用发票的，请携带开票信息到服务中心申请。

## 房子出租需要到物业登记吗？

需要。业主应在签订租赁合同后3日内到服务中心登记承租人信息，承租人凭登记信息办理门禁卡和车辆登记。

## 小区里可以养狗吗？

可以。请到服务中心登记犬只信息并出示犬类免疫证明。外出遛狗须牵绳，犬绳长度不超过1.5米，
并及时清理犬只粪便。

## 对物业服务不满意，怎么投诉？

可拨打24小时服务热线400-885-6600，或在小程序“投诉建议”栏目提交。
投诉在1个工作日内回复，5个工作日内办结。
"""

# --------------------------------------------------- contractor safety guide (English docx)
GUIDE_TITLE = "Contractor Safety Guide for Maintenance Vendors"
GUIDE_SUB = ("Jinlan International Centre and Tongjing Business Park. Issued by the Engineering "
             "Department, January 2026.")
GUIDE_HEADER = "Jinlan Property Services Co., Ltd. | Engineering Department"
GUIDE_FOOTER = "JL-EN-SAFE-02 Rev. 1 | Uncontrolled when printed"
GUIDE = [
    ("1. Site induction", [
        "Every contractor worker must complete a 45-minute safety induction at the Property "
        "Management Office on level B1 before first entry. The induction is valid for 12 months.",
    ]),
    ("2. Access badges", [
        "Contractor badges are issued against a refundable deposit of RMB 200 per badge. A lost "
        "badge forfeits the deposit. Badges must be worn visibly at all times on site.",
    ]),
    ("3. Working hours", [
        "Noisy work such as drilling, chiselling or cutting on occupied office floors is only "
        "allowed from 20:00 to 07:00 on weekdays, or at any time on weekends and public holidays.",
    ]),
    ("4. Hot work", [
        "Welding, grinding and any work with an open flame need a Hot Work Permit. Permit "
        "requests must be submitted at least 24 hours in advance.",
        "A fire watcher must stay at the work area for 30 minutes after the hot work ends. Smoke "
        "detectors in the area may be isolated only by the Fire Control Room.",
    ]),
    ("5. Working at height", [
        "Work above 2 metres requires a full-body harness. Mobile scaffolds must have locked "
        "wheels and guardrails and are inspected before every shift.",
    ]),
    ("6. Electrical work", [
        "Lockout/tagout is mandatory. The isolation padlock key is held by the Jinlan duty "
        "engineer until the work is signed off.",
    ]),
    ("7. Materials and lifts", [
        "Materials and tools may be moved only in freight elevator No. 9, which has a maximum "
        "load of 2,000 kg. Book it through the service desk at least one working day ahead.",
        "Passenger elevators must not be used to carry materials.",
    ]),
    ("8. Smoking and waste", [
        "Smoking is not allowed anywhere inside the buildings, including stairwells and the "
        "loading dock. Construction waste must be removed from site on the day it is produced.",
    ]),
    ("9. Incidents", [
        "Report any injury, fire or near miss to the Fire Control Room (ext. 8119) within "
        "15 minutes.",
    ]),
]

# ------------------------------------------------------------ site contacts and roster (txt)
CONTACTS_TXT = """锦澜物业服务有限公司　各项目服务中心联系方式及2026年6月值班安排
（秩序管理部　2026年5月28日更新）

一、项目服务中心
项目            地址                              电话              办公时间
翠湖苑          苏州工业园区翠湖路88号            0512-6758 2201    每天 8:30-20:00
云栖花园        苏州市姑苏区云栖街16号            0512-6758 3301    周一至周六 8:30-18:00
锦澜国际中心    苏州工业园区星海大道1288号B1层    0512-6275 8000    工作日 8:00-19:00
桐泾商务园      苏州市姑苏区桐泾北路210号         0512-6812 4400    工作日 8:30-17:30

二、24小时服务热线：400-885-6600（全部项目通用）
    锦澜国际中心消防控制室：0512-6275 8119

三、2026年6月夜间值班经理（19:00至次日8:30）
周次                    值班经理    手机
第1周 6月1日-6月7日     周海燕      138 0512 6601
第2周 6月8日-6月14日    陆明        138 0512 6602
第3周 6月15日-6月21日   沈佳琪      138 0512 6603
第4周 6月22日-6月28日   王博文      138 0512 6604
6月29日-6月30日         周海燕      138 0512 6601

值班经理遇电梯困人、水管爆裂、火警等紧急情况，须在10分钟内赶到现场或安排人员到场。
"""

# ----------------------------------------------------------- employee handbook (text pdf)
HANDBOOK_TITLE = "锦澜物业员工手册（2026版·节选）"
HANDBOOK_SUB = "人力资源部　2026年1月"
HANDBOOK = [
    ("第一章 入职与试用", [
        "1.1 新员工入职当日须提交身份证、学历证明及体检报告；秩序维护员和工程人员"
        "须持有相应的上岗证书。",
        "1.2 一线岗位（秩序、保洁、工程）试用期3个月，管理岗位试用期6个月。",
        "1.3 试用期满前10日，由部门负责人填写《转正评估表》，报人力资源部审核。",
    ]),
    ("第二章 工作时间与考勤", [
        "2.1 行政人员实行标准工时，上班时间为9:00至17:30，午休1小时。",
        "2.2 一线岗位实行综合计算工时，按排班表上岗，须提前10分钟到岗交接。",
        "2.3 迟到或早退30分钟以上的，按旷工半日处理。",
        "2.4 夜班补贴每班30元，随当月工资发放。",
    ]),
    ("第三章 仪容与工服", [
        "3.1 工服每年发放夏装2套、冬装1套，离职时须交还。",
        "3.2 上岗须佩戴工牌，工牌遗失的，补办费用为15元。",
        "3.3 上岗期间须保持仪容整洁，女员工长发须盘起。",
    ]),
    ("第四章 服务纪律", [
        "4.1 接到业主报修或求助，实行首问负责制，不得推诿。",
        "4.2 严禁向业主索要或收受红包、礼品、购物卡，一经查实，解除劳动合同。",
        "4.3 不得泄露业主姓名、电话、房号等个人信息。",
        "4.4 进入业主户内维修须穿戴鞋套，维修完成后请业主在工单上签字确认。",
    ]),
    ("第五章 安全", [
        "5.1 登高2米以上作业必须系安全带，并有专人监护。",
        "5.2 电气作业实行停电、验电、挂牌上锁，严禁带电作业。",
    ]),
]

# ------------------------------------------------------- cleaning standard (text pdf)
CLEANING_TITLE = "保洁外包服务质量考核标准"
CLEANING_SUB = "品质管理部　2026年1月"
CLEANING = [
    ("一、适用范围", [
        "本标准适用于翠湖苑、云栖花园、锦澜国际中心、桐泾商务园的保洁外包服务单位。",
    ]),
    ("二、住宅项目作业频次", [
        "1. 大堂及电梯厅地面每日湿拖2次，保持无水渍、无污迹。",
        "2. 电梯轿厢每日擦拭3次，轿厢按钮每日消毒1次。",
        "3. 楼道扶手每周擦拭2次，消防楼梯每周清扫1次。",
        "4. 垃圾桶每日清运2次，每周清洗1次。",
    ]),
    ("三、写字楼项目作业频次", [
        "1. 公共卫生间每小时巡检1次，及时补充厕纸和洗手液。",
        "2. 大堂石材地面每季度进行一次晶面养护。",
        "3. 玻璃幕墙外立面每年清洗2次，由具备高空作业资质的单位实施。",
    ]),
    ("四、考核办法", [
        "1. 品质管理部每月组织一次综合考核，满分100分。",
        "2. 月度考核得分低于85分的，扣减当月服务费3%；低于75分的，扣减当月服务费8%。",
        "3. 连续两个月低于80分的，公司有权解除合同。",
        "4. 经核实的业主有效投诉，每起扣2分。",
    ]),
]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_decoration(OUT / "decoration_rules.docx")
    write_plain_docx(OUT / "parking_rules_2023.docx", PARKING_TITLE, "（2023年3月1日发布）",
                     PARKING_OLD)
    write_text_pdf(OUT / "parking_rules_2026.pdf", PARKING_TITLE, PARKING_NEW_DATES,
                   PARKING_NEW, f"{COMPANY}　秩序管理部")
    items = "\n".join(f"<p>{item}</p>" for item in TANK_ITEMS_OLD)
    (OUT / "water_tank_notice.html").write_text(
        TANK_PAGE.format(title=TANK_TITLE, items=items), encoding="utf-8")
    write_plain_docx(OUT / "water_tank_notice_corrected.docx", TANK_CORRECTED_TITLE, "",
                     TANK_CORRECTED)
    write_workbook(OUT / "fee_schedule_2026.xlsx")
    write_csv(OUT / "repair_categories.csv")
    OUT.joinpath("elevator_entrapment_training.pptx").write_bytes(deck_bytes(
        SLIDES, SLIDE_FOOTER, lambda number, total: f"{number}/{total}",
        title="电梯困人应急处置培训", created=FIXED))
    write_scanned_pdf(OUT / "fire_test_notice_scanned.pdf")
    write_png(OUT / "garbage_sorting_notice.png")
    (OUT / "resident_faq.md").write_text(FAQ_MD, encoding="utf-8")
    write_guide(OUT / "contractor_safety_guide_en.docx")
    (OUT / "site_contacts.txt").write_text(CONTACTS_TXT, encoding="utf-8")
    write_text_pdf(OUT / "employee_handbook.pdf", HANDBOOK_TITLE, HANDBOOK_SUB, HANDBOOK,
                   f"{COMPANY}　人力资源部")
    write_text_pdf(OUT / "cleaning_standard.pdf", CLEANING_TITLE, CLEANING_SUB, CLEANING,
                   f"{COMPANY}　品质管理部")
    print(f"wrote {len(list(OUT.iterdir()))} files to {OUT}")


# ----------------------------------------------------------------------------- writers


def new_docx(title: str):
    document = docx.Document()
    document.core_properties.created = document.core_properties.modified = FIXED
    document.core_properties.title = title
    return document


def write_decoration(path: Path) -> None:
    document = new_docx(DECO_TITLE)
    section = document.sections[0]
    section.header.paragraphs[0].text = DECO_HEADER
    section.footer.paragraphs[0].text = DECO_FOOTER
    document.add_heading(DECO_TITLE, level=0)
    document.add_paragraph("工程管理部　2025年9月15日发布")
    for kind, content in DECO:
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
    path.write_bytes(office_bytes(document, [DECO_FOOTNOTE]))


def write_plain_docx(path: Path, title: str, dates: str, paragraphs: list[str]) -> None:
    document = new_docx(title)
    document.add_heading(title, level=1)
    if dates:
        document.add_paragraph(dates)
    for text in paragraphs:
        document.add_paragraph(text)
    path.write_bytes(office_bytes(document))


def write_guide(path: Path) -> None:
    document = new_docx(GUIDE_TITLE)
    section = document.sections[0]
    section.header.paragraphs[0].text = GUIDE_HEADER
    section.footer.paragraphs[0].text = GUIDE_FOOTER
    document.add_heading(GUIDE_TITLE, level=0)
    document.add_paragraph(GUIDE_SUB)
    for heading, paragraphs in GUIDE:
        document.add_heading(heading, level=1)
        for text in paragraphs:
            document.add_paragraph(text)
    path.write_bytes(office_bytes(document))


def wrap(text: str, width: float, size: float) -> list[str]:
    """Greedy CJK wrap by measured width, breaking after punctuation when it can."""
    lines: list[str] = []
    while pymupdf.get_text_length(text, CJK, size) > width:
        cut = 1
        while pymupdf.get_text_length(text[:cut + 1], CJK, size) <= width:
            cut += 1
        marks = [i for i, ch in enumerate(text[:cut]) if ch in "，。；：、）"]
        if marks and marks[-1] >= cut * 0.6:
            cut = marks[-1] + 1
        lines.append(text[:cut])
        text = text[cut:]
    return [*lines, text] if text else lines


def save_pdf(document, path: Path, title: str) -> None:
    document.set_metadata({"title": title, "author": COMPANY, "creationDate": PDF_DATE,
                           "modDate": PDF_DATE, "producer": "kbflow unseen docs"})
    path.write_bytes(document.tobytes(garbage=3, deflate=True, no_new_id=True))


def centred(page, y: float, text: str, size: float) -> None:
    page.insert_text(((page.rect.width - pymupdf.get_text_length(text, CJK, size)) / 2, y),
                     text, fontname=CJK, fontsize=size)


def write_text_pdf(path: Path, title: str, subtitle: str,
                   chapters: list[tuple[str, list[str]]], running_header: str) -> None:
    """A4 pages with a running header, a centred title and subtitle, chapter headings, wrapped
    paragraphs and a 第 n 页 共 N 页 footer."""
    document = pymupdf.open()
    left, width, bottom = 72, 451, 760

    def new_page():
        page = document.new_page(width=595, height=842)
        page.insert_text((left, 50), running_header, fontname=CJK, fontsize=8)
        page.draw_line((left, 56), (left + width, 56), width=0.5)
        return page

    page = new_page()
    y = 100.0
    centred(page, y, title, 16)
    y += 26
    centred(page, y, subtitle, 10.5)
    y += 40
    for heading, paragraphs in chapters:
        if y > bottom - 60:
            page, y = new_page(), 90.0
        centred(page, y, heading, 13)
        y += 28
        for text in paragraphs:
            lines = wrap(text, width, 11)
            if y + 21 * len(lines) > bottom:
                page, y = new_page(), 90.0
            for line in lines:
                page.insert_text((left, y), line, fontname=CJK, fontsize=11)
                y += 21
            y += 8
        y += 10
    total = document.page_count
    for number, each in enumerate(document, start=1):
        centred(each, 805, f"第 {number} 页 共 {total} 页", 9)
    save_pdf(document, path, title)


def write_scanned_pdf(path: Path) -> None:
    """Each page is a photo of a printed, signed and stamped sheet: text is drawn on a scratch
    page with a slight tilt, rendered to pixels, and only the image is placed in the PDF."""
    document = pymupdf.open()
    tilt = pymupdf.Matrix(0.4)  # degrees; a sheet is never fed quite straight
    for lines in FIRE_PAGES:
        scratch = pymupdf.open()
        sheet = scratch.new_page(width=595, height=842)
        sheet.draw_rect(sheet.rect, color=None, fill=(0.96, 0.95, 0.93))
        y = 110.0
        for number, line in enumerate(lines):
            size = 15 if number == 0 else 13
            x = (595 - pymupdf.get_text_length(line, CJK, size)) / 2 if number == 0 else 70
            if line.startswith(("锦澜物业服务", "锦澜国际中心服务", "项目经理", "2026年6月2日")):
                x = 330
            sheet.insert_text((x, y), line, fontname=CJK, fontsize=size,
                              morph=(pymupdf.Point(x, y), tilt))
            y += 40 if number == 0 else 30
        if lines is FIRE_PAGES[-1]:  # the company seal over the signature block
            seal = pymupdf.Point(420, y - 110)
            sheet.draw_circle(seal, 48, color=(0.8, 0.1, 0.1), width=2.5)
            sheet.insert_text((seal.x - 26, seal.y + 5), "锦澜物业", fontname=CJK, fontsize=13,
                              color=(0.8, 0.1, 0.1))
        image = sheet.get_pixmap(dpi=150).tobytes("png")
        page = document.new_page(width=595, height=842)
        page.insert_image(page.rect, stream=image)
    save_pdf(document, path, "")


def write_png(path: Path) -> None:
    """A notice on the lift-lobby board, photographed: pixels only, on a yellowish sheet."""
    document = pymupdf.open()
    page = document.new_page(width=460, height=360)
    page.draw_rect(page.rect, color=None, fill=(0.90, 0.89, 0.84))
    page.draw_rect(pymupdf.Rect(14, 14, 446, 346), color=None, fill=(0.97, 0.96, 0.90))
    y = 46.0
    for number, line in enumerate(GARBAGE):
        size = 16 if number == 0 else 10.5
        if number == 0:
            x = (460 - pymupdf.get_text_length(line, CJK, size)) / 2
        elif number >= len(GARBAGE) - 2:
            x = 320
        else:
            x = 32 if number == 1 else 48
        colour = (0.7, 0.05, 0.05) if number == 0 else (0, 0, 0)
        page.insert_text((x, y), line, fontname=CJK, fontsize=size, color=colour)
        y += 36 if number == 0 else 26
    path.write_bytes(page.get_pixmap(dpi=200).tobytes("png"))


def write_workbook(path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "物业服务费"
    sheet.append([FEE_TITLE])
    sheet.merge_cells("A1:G1")
    sheet["A1"].font = Font(bold=True, size=14)
    sheet["A1"].alignment = Alignment(horizontal="center")
    sheet.append(FEE_HEAD_1)
    sheet.append(FEE_HEAD_2)
    for merged in ("A2:A3", "B2:B3", "C2:D2", "E2:F2", "G2:G3"):
        sheet.merge_cells(merged)
    for row in FEES:
        sheet.append(list(row))
    for row in sheet.iter_rows(min_row=4, min_col=3, max_col=4):
        for cell in row:
            if isinstance(cell.value, float):
                cell.number_format = "0.00"
    note_row = len(FEES) + 5
    sheet.cell(note_row, 1, FEE_NOTE)
    sheet.merge_cells(f"A{note_row}:G{note_row}")

    services = book.create_sheet("有偿服务价目")
    services.append(["服务代码", "服务项目", "收费标准", "备注"])
    for row in PAID_SERVICES:
        services.append(list(row))

    vendors = book.create_sheet("外包服务单位")
    vendors.append(["服务类别", "单位名称", "服务范围", "合同期限", "对接人"])
    for row in CONTRACTORS:
        vendors.append(list(row))
    book.properties.created = book.properties.modified = FIXED
    path.write_bytes(office_bytes(book))


def write_csv(path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["类别代码", "报修类别", "典型问题", "响应时限", "到场时限", "收费说明"])
    writer.writerows(REPAIRS)
    path.write_bytes(buffer.getvalue().encode("gb18030"))


if __name__ == "__main__":
    main()
