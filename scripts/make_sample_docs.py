"""Generate the sample policy corpus in ``sample_docs/`` (PDF, DOCX, HTML, MD + sidecars).

kbflow needs a small but realistic corpus to exercise parsing, chunking, versioning
and ACL filtering end to end: two versions of the same policy in different formats,
running headers/footers a parser must strip, Chinese clause numbering (第X章/第X条,
（一）), decimal numbering (4.2.1), an HTML table, Markdown with and without sidecar
metadata, and an English document. Binary formats cannot be reviewed in a diff, so
all texts live here as data and the files are rebuilt deterministically with
``python scripts/make_sample_docs.py`` (fixed metadata dates, fixed zip timestamps).

Document text markup used below (one block per non-indented line; indented lines
continue the previous block and are joined without a separator):

    = 标题          title
    @ 生效日期：…   meta line under the title (文件编号, 生效日期, …)
    # 第一章 总则   chapter / level-1 heading
    ## 2.2 口令要求 section / level-2 heading
    ---             page break (PDF only)
    anything else   body paragraph (第X条 clause, （一） item, plain text)

Three PDFs exercise the parse stage's layout handling: a scanned (image-only) policy that
needs OCR, a ruled table that continues onto a second page without repeating its header
row (with merged cells), and a two-column handbook whose clauses run from the bottom of
the left column to the top of the right one.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import docx
import pymupdf
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.oxml.ns import qn
from docx.shared import Pt

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = REPO_ROOT / "sample_docs"

COMPANY = "星河科技有限公司"
PDF_HEADER = "星河科技有限公司 内部制度文件"

# ---------------------------------------------------------------------------
# Document texts
# ---------------------------------------------------------------------------

TRAVEL_2025 = """
= 差旅费管理办法
@ 文件编号：XH-CW-2025-001　　版本：2025版　　发布部门：财务部
@ 生效日期：2025年1月1日
# 第一章 总则
第一条 目的 为规范公司员工差旅行为，加强差旅费用管理，合理控制费用支出，根据
    《财务管理制度》及国家有关规定，结合公司实际，制定本办法。
第二条 适用范围 本办法适用于星河科技有限公司及其下属分支机构的全体正式员工和
    试用期员工。实习生、劳务派遣人员因公出差的，参照本办法执行。外部专家、顾问的
    差旅费用按双方合同约定执行，合同未约定的参照本办法执行。
第三条 基本原则 差旅费管理遵循以下原则：
（一）事前审批原则：出差须事先履行审批手续，未经审批的出差费用不予报销；
（二）厉行节约原则：出差人员应合理安排行程，在标准范围内选择交通工具和住宿；
（三）据实报销原则：差旅费用凭合法有效票据据实报销，严禁虚报、冒领；
（四）分级管理原则：按员工职级分别确定差旅费开支标准。
# 第二章 出差审批
第四条 出差申请 员工出差前应通过OA系统提交《出差申请单》，写明出差事由、目的地、
    起止日期、交通方式及费用预算，经审批同意后方可出行。因紧急公务来不及事前申请的，
    须经部门负责人口头同意，并在返回后2个工作日内补办审批手续。
第五条 审批权限 出差审批权限如下：
（一）境内出差5天以内（含5天）的，由部门负责人审批；
（二）境内出差超过5天的，由部门负责人审核后报分管副总审批；
（三）境外出差的，经分管副总审核后报总经理审批。
出差费用预算超出部门年度预算的，按《审批权限表》规定的权限另行审批。
第六条 行程变更 出差途中因公需要变更行程或延长出差时间的，出差人员应及时在OA系统
    补充申请；因私延长出差时间的，延长期间发生的一切费用由个人承担。
# 第三章 差旅费开支标准
第七条 交通工具标准 员工出差乘坐交通工具按职级执行以下标准：
（一）副总经理及以上人员：飞机经济舱全价票或公务舱，高铁、动车商务座或一等座；
（二）部门负责人及M3级以上管理人员：飞机经济舱，高铁、动车一等座；
（三）其他员工：飞机经济舱（优先选择折扣机票），高铁、动车二等座。
出差距离在800公里以内且有高铁直达的，原则上应乘坐高铁。因特殊情况需超标准乘坐
    交通工具的，须事先经分管副总批准。
第八条 住宿标准 员工出差住宿费在以下标准内凭发票据实报销：
（一）一线城市（北京、上海、广州、深圳）：副总经理及以上人员每人每天800元，部门
    负责人每人每天600元，其他员工每人每天450元；
（二）省会城市及计划单列市：副总经理及以上人员每人每天600元，部门负责人每人每天
    450元，其他员工每人每天350元；
（三）其他城市：副总经理及以上人员每人每天450元，部门负责人每人每天350元，其他
    员工每人每天280元。
两名同性别员工同行的，原则上合住一间，按一人标准的1.5倍报销。超出标准部分由个人
    承担。
第九条 伙食补助 员工出差期间按出差自然天数发放伙食补助，境内每人每天80元，境外
    按《因公出国（境）管理规定》执行。接待单位或会议主办方已统一安排用餐的，按实际
    用餐天数扣减伙食补助。
第十条 市内交通费 员工出差期间在目的地城市乘坐出租车（打车）或网约车的，一线城市
    （北京、上海、广州、深圳）每人每天限额100元，其他城市每人每天限额60元。超标部分
    原则上由个人承担；确因公务需要超标的，须经部门负责人审批后方可报销。
第十一条 其他费用 出差期间因公发生的会议费、资料费、签证费、行李超重费等，凭合法
    票据据实报销。出差期间的通讯费、洗衣费、景点门票等个人消费不予报销。
# 第四章 借款与报销
第十二条 差旅借款 出差人员可根据预计费用向财务部申请差旅借款，借款金额原则上
    不超过出差预算的80%。前次借款未还清的，不得再次借款。出差结束后，借款应在
    报销时一并冲销，多退少补。
第十三条 报销时限 出差人员应在出差结束后30天内办理报销手续。超过30天未报销的，
    须提交书面说明并经部门负责人签字确认；超过90天未报销的，原则上不予报销。
第十四条 报销流程 差旅费报销按以下流程办理：
（一）出差人员在OA系统填写《差旅费报销单》，并上传发票、行程单、登机牌或车票等
    原始凭证；
（二）部门负责人审核出差事由及费用的真实性；
（三）财务部审核票据的合规性及开支标准；
（四）按《审批权限表》规定的权限完成审批后，财务部在5个工作日内支付款项。
第十五条 票据要求 报销发票抬头须为“星河科技有限公司”，并注明公司纳税人识别号。
    电子发票须上传原始文件，同一发票不得重复报销。
# 第五章 监督与违规处理
第十六条 违规处理 有下列情形之一的，财务部有权拒绝报销，并视情节轻重按
    《员工奖惩管理规定》予以处理：
（一）未经审批擅自出差的；
（二）虚开、伪造、变造票据，或虚报出差天数、费用的；
（三）违反本办法第七条、第八条规定，超标准乘坐交通工具或住宿且未经批准的；
（四）违反本办法第十条规定，市内交通费超出限额且未经部门负责人审批的。
已报销的违规费用，由财务部从当事人工资中扣回。
# 第六章 附则
第十七条 解释权 本办法由财务部负责解释。本办法未尽事宜，按《财务管理制度》执行。
第十八条 施行日期 本办法自2025年1月1日起施行，原《差旅费管理办法（2022年版）》
    同时废止。
"""

TRAVEL_2026 = """
= 差旅费管理办法
@ 文件编号：XH-CW-2026-001　　版本：2026版　　发布部门：财务部
@ 生效日期：2026年1月1日
# 第一章 总则
第一条 目的 为规范公司员工差旅行为，加强差旅费用管理，合理控制费用支出，根据
    《财务管理制度》及国家有关规定，结合公司实际，制定本办法。
第二条 适用范围 本办法适用于星河科技有限公司及其下属分支机构的全体正式员工和
    试用期员工。实习生、劳务派遣人员因公出差的，参照本办法执行。外部专家、顾问的
    差旅费用按双方合同约定执行，合同未约定的参照本办法执行。
第三条 基本原则 差旅费管理遵循以下原则：
（一）事前审批原则：出差须事先履行审批手续，未经审批的出差费用不予报销；
（二）厉行节约原则：出差人员应合理安排行程，在标准范围内选择交通工具和住宿；
（三）据实报销原则：差旅费用凭合法有效票据据实报销，严禁虚报、冒领；
（四）分级管理原则：按员工职级分别确定差旅费开支标准。
# 第二章 出差审批
第四条 出差申请 员工出差前应通过OA系统提交《出差申请单》，写明出差事由、目的地、
    起止日期、交通方式及费用预算，经审批同意后方可出行。因紧急公务来不及事前申请的，
    须经部门负责人口头同意，并在返回后3个工作日内补办审批手续。
第五条 审批权限 出差审批权限如下：
（一）境内出差5天以内（含5天）的，由部门负责人审批；
（二）境内出差超过5天的，由部门负责人审核后报分管副总审批；
（三）境外出差的，经分管副总审核后报总经理审批。
出差费用预算超出部门年度预算的，按《审批权限表》规定的权限另行审批。
第六条 行程变更 出差途中因公需要变更行程或延长出差时间的，出差人员应及时在OA系统
    补充申请；因私延长出差时间的，延长期间发生的一切费用由个人承担。
# 第三章 差旅费开支标准
第七条 交通工具标准 员工出差乘坐交通工具按职级执行以下标准：
（一）副总经理及以上人员：飞机经济舱全价票或公务舱，高铁、动车商务座或一等座；
（二）部门负责人及M3级以上管理人员：飞机经济舱，高铁、动车一等座；
（三）其他员工：飞机经济舱（优先选择折扣机票），高铁、动车二等座。
出差距离在800公里以内且有高铁直达的，原则上应乘坐高铁。因特殊情况需超标准乘坐
    交通工具的，须事先经分管副总批准。
第八条 住宿标准 员工出差住宿费在以下标准内凭发票据实报销：
（一）一线城市（北京、上海、广州、深圳）：副总经理及以上人员每人每天900元，部门
    负责人每人每天700元，其他员工每人每天500元；
（二）省会城市及计划单列市：副总经理及以上人员每人每天700元，部门负责人每人每天
    500元，其他员工每人每天400元；
（三）其他城市：副总经理及以上人员每人每天500元，部门负责人每人每天400元，其他
    员工每人每天320元。
两名同性别员工同行的，原则上合住一间，按一人标准的1.5倍报销。超出标准部分由个人
    承担。
第九条 伙食补助 员工出差期间按出差自然天数发放伙食补助，境内每人每天80元，境外
    按《因公出国（境）管理规定》执行。接待单位或会议主办方已统一安排用餐的，按实际
    用餐天数扣减伙食补助。
第十条 市内交通费 员工出差期间在目的地城市乘坐出租车（打车）或网约车的，一线城市
    （北京、上海、广州、深圳）每人每天限额150元，其他城市每人每天限额80元。超标部分
    须提交书面情况说明，经部门负责人审批后予以报销；未经审批的超标部分不予报销。
第十一条 其他费用 出差期间因公发生的会议费、资料费、签证费、行李超重费等，凭合法
    票据据实报销。出差期间的通讯费、洗衣费、景点门票等个人消费不予报销。
# 第四章 借款与报销
第十二条 差旅借款 出差人员可根据预计费用向财务部申请差旅借款，借款金额原则上
    不超过出差预算的80%。前次借款未还清的，不得再次借款。出差结束后，借款应在
    报销时一并冲销，多退少补。
第十三条 报销时限 出差人员应在出差结束后60天内办理报销手续。超过60天未报销的，
    须提交书面说明并经部门负责人签字确认；超过180天未报销的，原则上不予报销。
第十四条 报销流程 差旅费报销按以下流程办理：
（一）出差人员在费控系统填写《差旅费报销单》，并上传发票、行程单、登机牌或车票等
    原始凭证；
（二）部门负责人审核出差事由及费用的真实性；
（三）财务部审核票据的合规性及开支标准；
（四）按《审批权限表》规定的权限完成审批后，财务部在3个工作日内支付款项。
第十五条 票据要求 报销发票抬头须为“星河科技有限公司”，并注明公司纳税人识别号。
    电子发票（含数电票）须上传原始文件，同一发票不得重复报销。
# 第五章 监督与违规处理
第十六条 违规处理 有下列情形之一的，财务部有权拒绝报销，并视情节轻重按
    《员工奖惩管理规定》予以处理：
（一）未经审批擅自出差的；
（二）虚开、伪造、变造票据，或虚报出差天数、费用的；
（三）违反本办法第七条、第八条规定，超标准乘坐交通工具或住宿且未经批准的；
（四）违反本办法第十条规定，市内交通费超出限额且未提交书面情况说明或未经审批的。
已报销的违规费用，由财务部从当事人工资中扣回。
# 第六章 附则
第十七条 解释权 本办法由财务部负责解释。本办法未尽事宜，按《财务管理制度》执行。
第十八条 施行日期 本办法自2026年1月1日起施行，原《差旅费管理办法（2025年版）》
    同时废止。
"""

LEAVE_POLICY = """
= 休假管理制度
@ 文件编号：XH-HR-2025-002　　发布部门：人力资源部
@ 生效日期：2025年4月1日
# 第一章 总则
第一条 为保障员工休息休假的合法权益，规范公司休假管理，根据《中华人民共和国劳动法》
    《职工带薪年休假条例》等法律法规，结合公司实际，制定本制度。
第二条 本制度适用于与星河科技有限公司建立劳动关系的全体员工。劳务派遣人员、实习生
    的休假按相关协议执行。
第三条 公司假期包括：
（一）年休假；
（二）病假；
（三）事假；
（四）婚假；
（五）产假、陪产假；
（六）丧假。
法定节假日按国家规定执行，不在本制度调整范围内。
# 第二章 年休假
第四条 员工连续工作满12个月以上的，享受带薪年休假。年休假天数按员工累计工作年限
    确定：
（一）累计工作已满1年不满10年的，年休假5天；
（二）累计工作已满10年不满20年的，年休假10天；
（三）累计工作已满20年的，年休假15天。
国家法定休假日、休息日不计入年休假假期。
第五条 年休假原则上在本年度内安排，可以集中安排，也可以分段安排，每次不少于半天。
    因工作需要当年未休完的，经部门负责人同意可顺延至次年3月31日，逾期未休的视为
    自动放弃，但因公司原因未能安排的除外。
第六条 员工有下列情形之一的，不享受当年的年休假：
（一）依法享受寒暑假，其休假天数多于年休假天数的；
（二）请事假累计20天以上且公司按照规定不扣工资的；
（三）累计工作满1年不满10年，请病假累计2个月以上的；
（四）累计工作满10年不满20年，请病假累计3个月以上的；
（五）累计工作满20年以上，请病假累计4个月以上的。
第七条 因工作需要公司安排员工不休年休假的，对员工应休未休的年休假天数，按照该员工
    日工资收入的300%支付年休假工资报酬（含正常工作期间的工资收入）。
# 第三章 其他假期
第八条 病假 员工因病或非因工负伤需要停止工作治疗的，可申请病假。请病假1天以上的，
    须提供二级以上医疗机构出具的病假证明。病假期间工资按《薪酬管理制度》执行，
    且不低于当地最低工资标准的80%。
第九条 事假 员工因私事需请假的，可申请事假，事假为无薪假。事假原则上每次不超过
    5天，全年累计不超过15天。
第十条 婚假 员工依法办理结婚登记的，可享受婚假10天（含法定婚假3天及公司福利婚假
    7天）。婚假应在结婚登记之日起一年内一次性休完，逾期视为放弃。
第十一条 产假 女员工生育享受产假158天（含国家规定产假98天及地方奖励假60天），
    其中产前可休假15天。难产的，增加产假15天；生育多胞胎的，每多生育1个婴儿，
    增加产假15天。女员工怀孕未满4个月流产的，享受15天产假；怀孕满4个月流产的，
    享受42天产假。
第十二条 陪产假 男员工的配偶生育子女的，可享受陪产假15天，应在配偶生育之日起
    6个月内休完。
第十三条 丧假 员工的直系亲属（父母、配偶、子女）去世的，给予丧假3天；岳父母、
    公婆、祖父母、外祖父母去世的，给予丧假1天。需到外地料理丧事的，可根据路程远近
    另给路程假。丧假期间工资照发。
# 第四章 请假审批
第十四条 员工请假应提前通过OA系统提交请假申请，注明请假类型、起止时间及工作交接
    安排，经审批同意后方可休假。因突发疾病等紧急情况无法事先申请的，应在当日通过
    电话或即时通讯工具告知直接上级，并在返岗后2个工作日内补办手续。
第十五条 请假审批权限如下：
（一）请假3天以内（含3天）的，由部门负责人审批；
（二）请假3天以上的，由部门负责人审核后报分管副总审批；
（三）连续请假10天以上的，审批后须报人力资源部备案。
婚假、产假、陪产假、丧假须同时提交结婚证、出生医学证明、死亡证明等相关证明材料。
第十六条 员工休假结束后应按时返岗，并在OA系统中办理销假手续。假期届满未办理续假
    手续且未到岗的，按旷工处理，具体按《员工奖惩管理规定》执行。
# 第五章 附则
第十七条 本制度由人力资源部负责解释。国家或地方法规另有规定的，从其规定。
第十八条 本制度自2025年4月1日起施行，原《员工请休假管理规定》同时废止。
"""

INFORMATION_SECURITY = """
= 信息安全管理规范
@ 文件编号：XH-IT-2025-007　　版本：V3.0　　发布部门：信息技术部
@ 生效日期：2025年7月1日
# 1 总则
1.1 为加强公司信息安全管理，保护公司信息资产的保密性、完整性和可用性，防范信息
    安全风险，根据《中华人民共和国网络安全法》《中华人民共和国数据安全法》及公司
    《信息安全管理制度》，制定本规范。
1.2 本规范适用于星河科技有限公司全体员工、外包人员以及接入公司网络和信息系统的
    第三方人员。
1.3 信息安全管理委员会负责统筹公司信息安全工作；信息技术部负责本规范的制定、
    技术实施与监督检查；各部门负责人是本部门信息安全的第一责任人。
# 2 账号与口令管理
2.1 公司信息系统实行“一人一号”，统一通过统一身份平台进行认证。员工离职或调岗的，
    人力资源部应在当日通知信息技术部禁用或调整其账号权限。
## 2.2 口令要求
2.2.1 口令长度不少于12位，且须包含大写字母、小写字母、数字和特殊字符中的至少三类，
    不得使用姓名、工号、生日、手机号等易被猜测的信息。
2.2.2 口令有效期为90天，到期前7天系统将发送提醒。新口令不得与最近5次使用过的口令
    相同。
2.2.3 连续5次输入错误口令的，账号将被自动锁定30分钟。
2.2.4 严禁将口令告知他人、共享账号或将口令以明文形式记录在纸张、文档中。
# 3 数据分类分级
3.1 公司数据按照敏感程度分为以下四级：
（1）绝密：泄露后会对公司造成特别严重损害的数据，如未公开的并购信息、核心源代码；
（2）机密：泄露后会对公司造成严重损害的数据，如客户个人信息、财务报表、合同文本；
（3）内部：仅限公司内部使用的数据，如内部制度、组织架构、会议纪要；
（4）公开：经批准可对外发布的数据，如官网信息、产品宣传资料。
3.2 绝密和机密数据须加密存储和传输，仅限授权人员按最小权限原则访问；对外提供机密
    及以上数据的，须经数据所属部门负责人和信息技术部负责人审批。
# 4 终端与网络安全
4.1 办公终端须安装公司统一的防病毒软件和终端管理客户端，及时安装安全补丁，不得
    擅自卸载或关闭安全软件。
## 4.2 外部存储设备与远程访问
4.2.1 未经信息技术部登记授权的U盘、移动硬盘等外部存储设备，禁止接入办公终端。
    确需使用的，应通过IT服务台提交申请，经部门负责人审批后由信息技术部登记授权。
4.2.2 员工从公司外部访问内部系统的，必须通过公司VPN接入，并使用信息技术部签发的
    个人VPN证书。VPN证书有效期为1年，到期前须重新申请。
4.2.3 禁止在公共场所的开放Wi-Fi网络下处理机密及以上数据。
# 5 信息安全事件报告
5.1 员工发现病毒感染、账号被盗用、数据泄露、设备丢失等信息安全事件的，应在30分钟
    内报告IT服务台（分机8110），不得隐瞒、迟报或擅自处置。
5.2 信息技术部接报后应按照《信息安全事件应急预案》对事件进行分级和处置；重大及以上
    事件须在2小时内报告信息安全管理委员会。
# 6 安全提示代码及处理
6.1 公司安全系统在拦截风险操作时会显示安全提示代码，常见代码的含义及处理方式如下。
    如问题无法自助解决，请联系IT服务台并提供代码。
SEC-1001 口令已过期，请在统一身份平台重置口令
含义：账号口令已超过90天有效期。处理方式：登录统一身份平台，通过手机短信验证后
    自助重置口令；重置后约5分钟在各系统生效。
SEC-1002 账号已锁定，请30分钟后重试或联系IT服务台
含义：连续5次输入错误口令，账号被临时锁定。处理方式：等待30分钟后自动解锁；如需
    立即解锁，请携带工牌联系IT服务台核验身份。
SEC-1003 登录环境异常，需进行二次验证
含义：系统检测到异地登录或新设备登录。处理方式：按提示完成手机验证码或动态令牌
    验证；如非本人操作，请立即重置口令并报告IT服务台。
SEC-2001 未授权的外部存储设备
含义：接入的U盘或移动硬盘未在信息技术部登记授权。处理方式：立即拔出设备；确需
    使用的，按本规范4.2.1的规定提交申请。
SEC-2002 终端安全软件未运行或病毒库已过期
含义：防病毒软件被关闭或超过7天未更新病毒库。处理方式：重启终端管理客户端并
    手动更新病毒库；仍无法恢复的，联系IT服务台。
SEC-2003 检测到敏感数据违规外发
含义：数据防泄漏系统检测到机密及以上数据通过邮件、即时通讯或网盘外发。处理方式：
    外发已被阻断；确属业务需要的，按本规范3.2的规定履行审批手续后重新发送。
SEC-3001 VPN证书失效
含义：个人VPN证书已过期或已被吊销。处理方式：通过IT服务台门户重新申请VPN证书，
    经部门负责人审批后由信息技术部签发。
SEC-3002 VPN客户端版本过低
含义：VPN客户端版本低于公司要求的最低版本。处理方式：从软件中心下载安装最新版本
    的VPN客户端后重新连接。
# 7 监督检查与责任追究
7.1 信息技术部每季度组织信息安全检查，检查结果纳入部门年度考核。
7.2 违反本规范造成信息安全事件的，按《员工奖惩管理规定》追究当事人及部门负责人的
    责任；构成违法犯罪的，依法移送有关机关处理。
# 8 附则
8.1 本规范由信息技术部负责解释。
8.2 本规范自2025年7月1日起施行，《信息安全管理规范》（V2.0）同时废止。
"""

PROCUREMENT = """
= 采购管理办法
@ 文件编号：XHSZ-CG-2024-001　　版本：2024版　　发布部门：采购部
@ 生效日期：2024年3月1日
# 第一章 总则
第一条 为规范公司采购行为，降低采购成本，防范采购风险，根据《财务管理制度》及
    星河科技有限公司相关规定，结合公司实际，制定本办法。
第二条 本办法适用于星河科技（苏州）有限公司（以下简称“公司”）。公司系星河科技
    有限公司的全资子公司，本办法未规定的事项，参照星河科技有限公司相关制度执行。
第三条 采购工作遵循以下原则：
（一）公开、公平、公正原则；
（二）质量优先、价格合理、择优选择原则；
（三）计划管理、预算控制原则；
（四）采购需求、采购执行、验收付款相互分离原则。
第四条 本办法所称采购，是指公司以购买、租赁、委托等方式获取货物、工程和服务的
    行为，包括办公用品、IT设备、软件许可、咨询服务、工程施工等。
# 第二章 组织与职责
第五条 公司设立采购委员会，由总经理任主任，成员包括财务总监、法务负责人、采购部
    负责人及需求部门负责人。采购委员会主要职责：
（一）审议公司年度采购计划；
（二）审议单笔5万元（含）以上的采购事项；
（三）审议供应商准入和淘汰名单；
（四）协调处理采购过程中的重大争议。
第六条 采购部是采购工作的归口管理部门，负责组织实施采购、管理供应商库、组织采购
    合同的起草与谈判，并对采购过程文件进行归档。
第七条 需求部门负责提出采购需求和技术要求，参与供应商评审，并负责到货验收。
# 第三章 采购方式与审批
第八条 公司采购方式包括公开招标、邀请招标、竞争性谈判、询价比价和单一来源采购。
    单笔5万元以下的采购应至少取得三家供应商报价进行比价；50万元以上的采购原则上
    应采用公开招标方式。
第九条 采购审批权限如下：
（一）单笔金额5万元以下的，由部门负责人审批；
（二）单笔金额5万元（含）至50万元的，由采购委员会审议，总经理批准；
（三）单笔金额50万元（含）以上的，由采购委员会审议、总经理审核后报董事长批准。
具体审批人及审批金额以《审批权限表》为准；未纳入年度预算的采购，还须按《审批权限表》
    中“预算外支出”的权限另行审批。
第十条 有下列情形之一的，经采购委员会审议后可采用单一来源采购：
（一）只能从唯一供应商处采购的；
（二）发生不可预见的紧急情况，不能从其他供应商处采购的；
（三）为保证原有项目一致性或服务配套要求，需继续从原供应商处添购，且添购金额累计
    不超过原合同金额10%的。
第十一条 严禁将应当招标或应当由上级审批的采购项目化整为零、拆分采购以规避审批。
# 第四章 供应商管理
第十二条 供应商须经资质审查后方可纳入公司合格供应商库。资质审查内容包括营业执照、
    相关行业资质、财务状况、履约能力及商业信誉等。
第十三条 采购部每年对合格供应商进行一次绩效评估，评估结果分为A、B、C、D四级。
    评估为D级的供应商，经采购委员会审议后移出合格供应商库，三年内不得再次准入。
# 第五章 合同与验收
第十四条 采购金额在1万元（含）以上的，应签订书面采购合同。采购合同的起草、审核、
    签订和归档按《合同管理办法》执行，合同须经法务审核后方可签订。
第十五条 货物或服务交付后，需求部门应会同采购部在10个工作日内完成验收，并出具
    验收单。验收不合格的，采购部应及时与供应商协商退换货或追究违约责任。
第十六条 财务部凭采购合同、验收单和合法发票办理付款。预付款比例原则上不超过合同
    金额的30%，超过30%的须经财务总监批准。
# 第六章 监督与责任
第十七条 采购人员与供应商存在利害关系的，应当主动回避。采购人员不得收受供应商的
    财物、回扣或其他不正当利益。
第十八条 违反本办法规定，造成公司经济损失的，由责任人承担相应赔偿责任，并按
    《员工奖惩管理规定》给予处分；涉嫌违法犯罪的，依法移送司法机关处理。
# 第七章 附则
第十九条 本办法由采购部负责解释。
第二十条 本办法自2024年3月1日起施行。
"""

APPROVAL_AUTHORITY_ROWS = [
    ("差旅费报销", "单次5000元以下", "部门负责人", "开支标准按《差旅费管理办法》执行"),
    ("差旅费报销", "单次5000元（含）至2万元", "部门负责人、财务总监", ""),
    ("差旅费报销", "单次2万元（含）以上", "总经理", "须附经批准的出差申请单"),
    ("采购", "5万元以下", "部门负责人", "至少三家比价"),
    ("采购", "5万元（含）至50万元", "总经理", "须经采购委员会审议"),
    (
        "采购",
        "50万元（含）以上",
        "董事长",
        "须经采购委员会审议、总经理审核；原则上公开招标",
    ),
    ("合同签订", "10万元以下", "部门负责人", "须经法务审核"),
    ("合同签订", "10万元（含）至100万元", "总经理", "须经法务、财务会签"),
    ("合同签订", "100万元（含）以上", "董事长", "按《合同管理办法》执行"),
    ("预算外支出", "1万元以下", "财务总监", ""),
    ("预算外支出", "1万元（含）以上", "总经理", "年度累计超过50万元的报董事会审议"),
    ("员工借款", "2万元以下", "财务总监", "前次借款未还清的不得再借"),
    ("招聘（编制内）", "—", "部门负责人、人力资源总监", "须在年度人员编制计划内"),
    ("招聘（编制外）", "—", "总经理", "由人力资源部提交专项申请"),
]

APPROVAL_AUTHORITY_INTRO = (
    "为明确公司各类经营管理事项的审批权限，提高决策效率，防范经营风险，根据"
    "《财务管理制度》《采购管理办法》《合同管理办法》等制度，制定本审批权限表。"
    "各级审批人应在授权范围内履行审批职责，不得越权审批。"
)

APPROVAL_AUTHORITY_NOTES = [
    "本表所称“以上”含本数，“以下”不含本数；金额均指含税金额。",
    "同一事项涉及多个审批层级的，须逐级审批，上一级审批人不得代替下一级审批人审批。",
    "审批人出差或休假期间，可书面授权他人代为审批，但不得授权超出本人权限的事项。",
    "严禁将同一事项拆分为多笔以规避审批权限。",
    "本表由财务部负责解释，自2026年1月1日起施行，原《审批权限表》（2024年版）同时废止。",
]

REMOTE_WORK_POLICY = """\
# Remote Work Policy

Document No.: XH-HR-2025-005
Issued by: Human Resources Department, 星河科技有限公司 (Xinghe Technology Co., Ltd.)
Effective date: 2025-03-01

## 1. Purpose

This policy sets out the rules under which employees may work from a location other
than a company office ("remote work"), so that business continuity, information
security and employee well-being are maintained.

## 2. Scope and Eligibility

2.1 Eligibility. Full-time employees who have passed their probation period and whose
role does not require on-site presence may apply for remote work.

2.2 Exclusions. Remote work is generally not available to employees in probation, to
front-desk, facilities and laboratory roles, or to employees whose most recent
performance rating is "needs improvement".

## 3. Types of Remote Work

3.1 Occasional remote work: up to 4 days per calendar month, for example to wait for
a home repair or to avoid a long commute after a late-night release.

3.2 Regular hybrid work: a fixed schedule of up to 2 remote days per week, agreed in
writing for a period of up to 6 months and renewable.

## 4. Application and Manager Approval

4.1 Employees must submit a remote work request in the OA system at least 1 working
day in advance for occasional remote work, and at least 5 working days in advance for
regular hybrid work.

4.2 Occasional remote work requires approval by the direct manager. Regular hybrid
work requires approval by the direct manager and the head of department, and is
recorded by the Human Resources Department.

4.3 Managers may decline or revoke approval when business needs require on-site
presence, giving at least 2 working days' notice except in emergencies.

## 5. Working Hours and Availability

5.1 Remote workers follow their normal working hours and must be reachable by phone
and instant messaging during core hours (10:00-12:00 and 14:00-17:00).

5.2 Attendance is recorded by clocking in and out in the OA system. Overtime while
working remotely must be approved in advance, as in the office.

## 6. Equipment

6.1 The company provides a company-managed laptop. Employees on regular hybrid work
may additionally borrow one external monitor, returned when the arrangement ends.

6.2 Personal computers must not be used to access company systems or data.

6.3 Employees are responsible for the reasonable care of company equipment; loss or
theft must be reported as described in section 7.4.

## 7. Information Security and VPN

7.1 All access to internal systems from outside the office must go through the
company VPN using a personal VPN certificate, as required by the Information Security
Management Standard (《信息安全管理规范》), clause 4.2.2.

7.2 If the VPN client shows error SEC-3001 (VPN certificate invalid), request a new
certificate through the IT service desk portal; do not share certificates or accounts.

7.3 Confidential and top-secret data must not be processed over public Wi-Fi, and
screens must be locked whenever the device is left unattended.

7.4 Loss or theft of a device, or any suspected security incident, must be reported to
the IT service desk (extension 8110) within 30 minutes.

## 8. Expense Reimbursement

8.1 Employees on approved regular hybrid work may claim home internet costs of up to
200 CNY per month, against a valid invoice issued in the employee's name, submitted
together with the monthly expense claim.

8.2 Electricity, heating, furniture, and mobile phone costs are not reimbursed, unless
approved in advance by the head of department under the Approval Authority Table
(《审批权限表》).

8.3 Travel between home and the office on office days is not business travel and is
not reimbursed under the Travel Expense Management Measures (《差旅费管理办法》).

## 9. Health and Safety

9.1 Employees should work in a safe, ergonomic environment and take regular breaks.

9.2 Work-related injuries during remote working hours must be reported to the direct
manager and the Human Resources Department within 24 hours.

## 10. Suspension and Termination

10.1 A remote work arrangement may be suspended or ended by the company for business
reasons, performance concerns, or breaches of this policy, in particular of section 7.

10.2 Employees may end a regular hybrid arrangement with 5 working days' notice.

## 11. Miscellaneous

11.1 This policy is interpreted by the Human Resources Department.

11.2 This policy takes effect on 2025-03-01.
"""


SEAL_POLICY = """
= 印章使用管理规定
@ 文件编号：XH-XZ-2025-004　　发布部门：行政部
@ 生效日期：2025年6月1日
第一条 为规范公司印章的刻制、保管和使用，防范用印风险，制定本规定。
第二条 本规定所称印章包括公司公章、合同专用章、财务专用章和法定代表人名章。
第三条 印章由行政部统一刻制和登记，任何部门不得自行刻制印章。
第四条 使用印章须在OA系统提交用印申请，经部门负责人审批后方可用印。
---
第五条 合同专用章的使用须附经法务审核的合同文本。
第六条 印章原则上不得携带外出；确需外带的，须经总经理批准并由两人同行。
第七条 违反本规定擅自用印的，按《员工奖惩管理规定》处理。
第八条 本规定由行政部负责解释，自2025年6月1日起施行。
"""

EXPENSE_STANDARDS_INTRO = """
= 费用报销标准表
@ 文件编号：XH-CW-2026-006　　版本：2026版　　发布部门：财务部
@ 生效日期：2026年1月1日
第一条 为统一公司各类费用的报销标准，根据《差旅费管理办法》《财务管理制度》等制度，
    制定本标准表。员工报销各类费用时，应按下表所列标准执行；超出标准的部分由个人
    承担，经总经理特别批准的除外。
第二条 下表所列金额均为含税金额。住宿费按出差目的地的城市等级和出差人员的职级
    确定标准；一线城市指北京、上海、广州、深圳，省会城市含计划单列市。
表1 费用报销标准表
"""

EXPENSE_STANDARDS_OUTRO = """
第三条 同一行程涉及多个城市的，住宿费按实际住宿城市的标准分别计算。
第四条 本标准表由财务部负责解释，自2026年1月1日起执行。
"""

EXPENSE_STANDARDS_HEADER = ["费用类型", "城市等级", "职级", "标准金额", "备注"]
# One row per line; None marks a cell merged into the cell above (费用类型 column) or into
# the cell on its left (elsewhere).
EXPENSE_STANDARDS_ROWS: list[list[str | None]] = [
    ["住宿费", "一线城市", "副总经理及以上", "800元/天", "凭发票据实报销"],
    [None, "一线城市", "部门负责人", "600元/天", "凭发票据实报销"],
    [None, "一线城市", "其他员工", "450元/天", "凭发票据实报销"],
    [None, "省会城市", "副总经理及以上", "600元/天", "凭发票据实报销"],
    [None, "省会城市", "部门负责人", "450元/天", "凭发票据实报销"],
    [None, "省会城市", "其他员工", "350元/天", "凭发票据实报销"],
    [None, "其他城市", "副总经理及以上", "450元/天", "凭发票据实报销"],
    [None, "其他城市", "部门负责人", "350元/天", "凭发票据实报销"],
    [None, "其他城市", "其他员工", "280元/天", "凭发票据实报销"],
    ["伙食补助", "不区分城市等级和职级", None, "80元/天", "境外按《因公出国（境）管理规定》执行"],
    ["市内交通费", "一线城市", "全体员工", "100元/天", "超标须部门负责人审批"],
    [None, "其他城市", "全体员工", "60元/天", "超标须部门负责人审批"],
    ["通讯费", "不限", "部门负责人及以上", "300元/月", "按月随工资发放"],
    ["通讯费", "不限", "其他员工", "150元/月", "销售岗位可上浮50%"],
    ["业务招待费", "不限", "部门负责人及以上", "500元/次", "须事前在OA系统审批"],
    ["业务招待费", "不限", "其他员工", "300元/次", "须事前在OA系统审批"],
    ["培训费", "不限", "全体员工", "5000元/年", "超出须报人力资源部审核"],
    ["加班餐费", "不限", "全体员工", "30元/次", "限晚上8点后加班"],
]
EXPENSE_STANDARDS_COL_W = [72.0, 80.0, 90.0, 80.0, 129.0]
EXPENSE_STANDARDS_ROWS_PAGE_1 = 12  # the table breaks here; page 2 repeats no header row

HANDBOOK = """
= 员工手册（节选）
@ 星河科技有限公司 人力资源部 编　　2025年版
@ 生效日期：2025年9月1日
# 第一章 入职与试用
第一条 新员工应在报到当日向人力资源部提交身份证、学历证书、离职证明及体检报告原件，
    并签订劳动合同。材料不全的，应在报到后五个工作日内补齐。
第二条 新员工试用期按劳动合同约定执行，最长不超过六个月。试用期内，部门负责人应
    指定一名导师，帮助新员工熟悉岗位职责、工作流程和公司制度。
第三条 试用期满前十五日，员工应提交转正申请和试用期工作总结，由部门负责人组织
    考核。考核合格的按期转正；考核不合格的，依照劳动合同的约定处理。
# 第二章 工作时间与考勤
第四条 公司实行标准工时制，工作时间为周一至周五上午九时至下午六时，午休一小时。
    因工作性质需要实行弹性工作制的岗位，由部门负责人报人力资源部批准。
第五条 员工上下班须通过考勤系统打卡。因外出办事、出差等原因无法打卡的，应在三个
    工作日内在OA系统提交补卡申请，并由部门负责人确认。
第六条 员工迟到或早退三十分钟以内的，每次扣减当月绩效分一分；超过三十分钟的，按
    旷工半日处理。每月累计迟到三次以上的，由部门负责人进行谈话提醒。
第七条 员工因工作需要加班的，应事先提交加班申请。加班可安排同等时间的调休，调休
    应在加班后三个月内使用，逾期未使用的不再保留。
# 第三章 行为规范
第八条 员工应遵守国家法律法规和公司规章制度，恪守职业道德，保守公司商业秘密，
    不得利用职务之便为本人或他人谋取不正当利益。
第九条 员工在工作场所应着装整洁、举止文明。接待客户或参加对外活动时，应按公司
    要求着正装并佩戴工牌。
第十条 员工不得在工作时间从事与工作无关的活动，不得擅自将公司设备、资料带离办公
    场所。确需带离的，应经部门负责人批准并办理登记手续。
第十一条 员工与客户、供应商发生利益关系的，应主动向部门负责人申报并回避相关业务。
# 第四章 附则
第十二条 本手册未尽事宜，按公司相关制度执行。本手册由人力资源部负责解释，自2025年
    9月1日起施行。
"""
HANDBOOK_BODY_SIZE = 13.0
HANDBOOK_GUTTER = 24.0


@dataclass(frozen=True)
class SampleDoc:
    filename: str
    # "pdf" | "docx" | "md" (from markup) | "raw" (written verbatim) | "html"
    # | "scanned" | "table" | "columns" (PDFs for the parse stage's layout handling)
    fmt: str
    source: str
    author: str
    sidecar: dict[str, object] | None = None


# A subsidiary's files live in its own folder, whose `_meta.yaml` names its tenant: a sidecar
# may narrow its folder's tenant, never name one the folder did not declare.
FOLDER_META: dict[str, dict[str, object]] = {"subsidiary-b": {"tenant_id": "subsidiary-b"}}

SAMPLES = [
    SampleDoc(
        "travel_expense_2025.pdf",
        "pdf",
        TRAVEL_2025,
        "星河科技有限公司 财务部",
        {
            "doc_id": "travel-expense",
            "version": "2025",
            "tenant_id": "default",
            "acl": ["all-staff"],
            "effective_from": "2025-01-01",
            "effective_to": "2025-12-31",
            "source_uri": "https://intranet.example.com/policies/travel-expense-2025.pdf",
        },
    ),
    SampleDoc(
        "travel_expense_2026.docx",
        "docx",
        TRAVEL_2026,
        "星河科技有限公司 财务部",
        {
            "doc_id": "travel-expense",
            "version": "2026",
            "tenant_id": "default",
            "acl": ["all-staff"],
            "effective_from": "2026-01-01",
            "source_uri": "https://intranet.example.com/policies/travel-expense-2026.docx",
        },
    ),
    SampleDoc(
        "approval_authority.html",
        "html",
        "",
        "星河科技有限公司 财务部",
        {
            "doc_id": "approval-authority",
            "version": "2026",
            "tenant_id": "default",
            "acl": ["finance", "managers"],
            "effective_from": "2026-01-01",
            "source_uri": "https://intranet.example.com/policies/approval-authority.html",
        },
    ),
    SampleDoc("leave_policy.md", "md", LEAVE_POLICY, "星河科技有限公司 人力资源部"),
    SampleDoc(
        "information_security.pdf",
        "pdf",
        INFORMATION_SECURITY,
        "星河科技有限公司 信息技术部",
        {
            "doc_id": "information-security",
            "version": "v3",
            "tenant_id": "default",
            "acl": ["all-staff"],
            "effective_from": "2025-07-01",
            "source_uri": "https://intranet.example.com/policies/information-security-v3.pdf",
        },
    ),
    SampleDoc(
        "remote_work_policy.md",
        "raw",
        REMOTE_WORK_POLICY,
        "星河科技有限公司 人力资源部",
    ),
    SampleDoc(
        "subsidiary-b/procurement_policy.docx",
        "docx",
        PROCUREMENT,
        "星河科技（苏州）有限公司 采购部",
        {
            "doc_id": "procurement",
            "version": "2024",
            "tenant_id": "subsidiary-b",
            "acl": ["all-staff"],
            "effective_from": "2024-03-01",
            "source_uri": "https://intranet.example.com/subsidiary-b/policies/procurement-2024.docx",
        },
    ),
    SampleDoc(
        "seal_policy_scanned.pdf",
        "scanned",
        SEAL_POLICY,
        "星河科技有限公司 行政部",
        {
            "doc_id": "seal-policy",
            "version": "2025",
            "tenant_id": "default",
            "acl": ["all-staff"],
            "effective_from": "2025-06-01",
            "source_uri": "https://intranet.example.com/policies/seal-policy-scan.pdf",
        },
    ),
    SampleDoc(
        "expense_standards.pdf",
        "table",
        EXPENSE_STANDARDS_INTRO,
        "星河科技有限公司 财务部",
        {
            "doc_id": "expense-standards",
            "version": "2026",
            "tenant_id": "default",
            "acl": ["all-staff"],
            "effective_from": "2026-01-01",
            "source_uri": "https://intranet.example.com/policies/expense-standards.pdf",
        },
    ),
    SampleDoc(
        "employee_handbook.pdf",
        "columns",
        HANDBOOK,
        "星河科技有限公司 人力资源部",
        {
            "doc_id": "employee-handbook",
            "version": "2025",
            "tenant_id": "default",
            "acl": ["all-staff"],
            "effective_from": "2025-09-01",
            "source_uri": "https://intranet.example.com/policies/employee-handbook.pdf",
        },
    ),
]

# Fixed timestamps keep the binary outputs reproducible.
FIXED_DT = dt.datetime(2024, 12, 1, 9, 0, 0)
PDF_DATE = "D:20241201090000+08'00'"
ZIP_DATE = (2024, 12, 1, 9, 0, 0)

# ---------------------------------------------------------------------------
# Markup parsing and validation
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    kind: str  # "title" | "meta" | "chapter" | "section" | "para" | "pagebreak"
    text: str


CN_DIGITS = "零一二三四五六七八九"
CLAUSE_RE = re.compile(r"^第([一二三四五六七八九十百零]+)条")
CHAPTER_RE = re.compile(r"^第([一二三四五六七八九十]+)章")
DECIMAL_RE = re.compile(r"^(\d+(?:\.\d+)*) ")


def cn_number(n: int) -> str:
    """Chinese numeral for 1..99 as used in 第X条 (10 -> 十, 12 -> 十二, 20 -> 二十)."""
    if not 0 < n < 100:
        raise ValueError(n)
    tens, ones = divmod(n, 10)
    head = "" if tens == 0 else ("十" if tens == 1 else CN_DIGITS[tens] + "十")
    return head + (CN_DIGITS[ones] if ones else "")


def parse_markup(src: str) -> list[Block]:
    blocks: list[Block] = []
    for line in src.splitlines():
        if not line.strip():
            continue
        if line.strip() == "---":
            blocks.append(Block("pagebreak", ""))
            continue
        if line[0].isspace():
            prev = blocks[-1]
            blocks[-1] = Block(prev.kind, prev.text + line.strip())
            continue
        for prefix, kind in (
            ("= ", "title"),
            ("@ ", "meta"),
            ("## ", "section"),
            ("# ", "chapter"),
        ):
            if line.startswith(prefix):
                blocks.append(Block(kind, line[len(prefix) :].strip()))
                break
        else:
            blocks.append(Block("para", line.strip()))
    return blocks


def check_numbering(name: str, blocks: list[Block]) -> int:
    """Fail loudly if chapters/clauses are not numbered consecutively; return clause count."""
    clauses = [CLAUSE_RE.match(b.text) for b in blocks if b.kind == "para"]
    clause_nums = [m.group(1) for m in clauses if m]
    chapters = [CHAPTER_RE.match(b.text) for b in blocks if b.kind == "chapter"]
    chapter_nums = [m.group(1) for m in chapters if m]
    for label, found in (("条", clause_nums), ("章", chapter_nums)):
        expected = [cn_number(i) for i in range(1, len(found) + 1)]
        if found != expected:
            raise SystemExit(
                f"{name}: 第X{label} numbering is not consecutive: {found}"
            )
    if clause_nums:
        return len(clause_nums)
    # Decimal-numbered document: count numbered paragraphs (leaf provisions).
    return sum(1 for b in blocks if b.kind == "para" and DECIMAL_RE.match(b.text))


def effective_date_line(blocks: list[Block]) -> str:
    for b in blocks:
        if b.kind == "meta" and b.text.startswith("生效日期："):
            return b.text
    raise SystemExit("document has no 生效日期 line")


# ---------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------

PAGE_W, PAGE_H = pymupdf.paper_size("a4")
MARGIN_X = 72.0
BODY_TOP = 86.0
BODY_BOTTOM = PAGE_H - 72.0
BODY_SIZE = 11.0
LINE_GAP = 1.75  # line height as a multiple of the font size
CJK_FONT = "china-s"

NO_LINE_START = set("，。、；：！？）》」』”’%)]},.;:!?")
NO_LINE_END = set("（《「『“‘([{")
TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-%/:@_]*|.")


def text_width(text: str, size: float) -> float:
    # The built-in CJK font is written unembedded without a /W array, so every glyph,
    # ASCII included, is rendered 1 em wide; PyMuPDF measures it the same way.
    return pymupdf.get_text_length(text, fontname=CJK_FONT, fontsize=size)


def wrap(text: str, size: float, width: float, first_indent: float = 0.0) -> list[str]:
    """Greedy line breaking for CJK text that keeps ASCII runs (codes, amounts) intact
    and applies basic kinsoku rules (no closing punctuation at line start)."""
    lines: list[str] = []
    current = ""
    avail = width - first_indent
    for tok in TOKEN_RE.findall(text):
        if current and text_width(current + tok, size) > avail:
            if tok[0] in NO_LINE_START:
                current += tok  # let punctuation hang into the margin
                continue
            carry = ""
            while current and current[-1] in NO_LINE_END:
                carry = current[-1] + carry
                current = current[:-1]
            lines.append(current)
            current = carry + tok
            avail = width
        else:
            current += tok
    if current:
        lines.append(current)
    return lines


@dataclass(frozen=True)
class PdfLine:
    text: str
    x: float
    size: float
    space_before: float
    page_break: bool = False


def layout_pdf_lines(
    blocks: list[Block], left: float = MARGIN_X, body_w: float = PAGE_W - 2 * MARGIN_X,
    body_size: float = BODY_SIZE,
) -> list[PdfLine]:
    """Lines of the given blocks laid out in the band [left, left + body_w]."""
    out: list[PdfLine] = []
    for b in blocks:
        if b.kind == "pagebreak":
            out.append(PdfLine("", 0, 0, 0, page_break=True))
        elif b.kind == "title":
            size = 18.0
            out.append(
                PdfLine(b.text, left + (body_w - text_width(b.text, size)) / 2, size, 6)
            )
        elif b.kind == "meta":
            size = 10.0
            x = left + (body_w - text_width(b.text, size)) / 2
            out.append(PdfLine(b.text, x, size, 4))
        elif b.kind == "chapter":
            size = 13.0
            x = (
                left
                if DECIMAL_RE.match(b.text)
                else left + (body_w - text_width(b.text, size)) / 2
            )
            out.append(PdfLine(b.text, x, size, 12))
        elif b.kind == "section":
            out.append(PdfLine(b.text, left, 12.0, 6))
        else:
            indent = 2 * body_size
            for i, line in enumerate(wrap(b.text, body_size, body_w, indent)):
                x = left + (indent if i == 0 else 0)
                out.append(PdfLine(line, x, body_size, 2 if i == 0 else 0))
    return out


def paginate(lines: list[PdfLine]) -> list[list[tuple[PdfLine, float]]]:
    pages: list[list[tuple[PdfLine, float]]] = [[]]
    y = BODY_TOP
    for ln in lines:
        if ln.page_break:
            pages.append([])
            y = BODY_TOP
            continue
        step = ln.space_before + ln.size * LINE_GAP
        if pages[-1] and y + step > BODY_BOTTOM:
            pages.append([])
            y = BODY_TOP
        y += step if pages[-1] else ln.size * LINE_GAP
        pages[-1].append((ln, y))
    return pages


def running_header(page: pymupdf.Page) -> None:
    hx = (PAGE_W - text_width(PDF_HEADER, 9)) / 2
    page.insert_text(
        (hx, 44),
        PDF_HEADER,
        fontname=CJK_FONT,
        fontsize=9,
        color=(0.35, 0.35, 0.35),
    )
    page.draw_line(
        (MARGIN_X, 52), (PAGE_W - MARGIN_X, 52), color=(0.6, 0.6, 0.6), width=0.5
    )


def running_footer(page: pymupdf.Page, n: int, total: int) -> None:
    footer = f"第 {n} 页 共 {total} 页"
    fx = (PAGE_W - text_width(footer, 9)) / 2
    page.insert_text(
        (fx, PAGE_H - 40),
        footer,
        fontname=CJK_FONT,
        fontsize=9,
        color=(0.35, 0.35, 0.35),
    )


def build_pdf(blocks: list[Block]) -> pymupdf.Document:
    pages = paginate(layout_pdf_lines(blocks))
    doc = pymupdf.open()
    for n, page_lines in enumerate(pages, start=1):
        page = doc.new_page(width=PAGE_W, height=PAGE_H)
        running_header(page)
        for ln, y in page_lines:
            page.insert_text((ln.x, y), ln.text, fontname=CJK_FONT, fontsize=ln.size)
        running_footer(page, n, len(pages))
    return doc


def write_pdf(sample: SampleDoc, blocks: list[Block], path: Path) -> None:
    save_pdf(build_pdf(blocks), sample, blocks, path)


def save_pdf(doc: pymupdf.Document, sample: SampleDoc, blocks: list[Block], path: Path) -> None:
    """Fixed metadata and no random file id keep the bytes reproducible."""
    title = next(b.text for b in blocks if b.kind == "title")
    doc.set_metadata(
        {
            "title": title,
            "author": sample.author,
            "subject": f"{COMPANY} 内部制度文件",
            "keywords": "",
            "creator": "kbflow scripts/make_sample_docs.py",
            "producer": "PyMuPDF",
            "creationDate": PDF_DATE,
            "modDate": PDF_DATE,
            "trapped": "",
        }
    )
    path.write_bytes(doc.tobytes(garbage=4, deflate=True, no_new_id=True))
    doc.close()


# ---------------------------------------------------------------------------
# PDFs for layout handling: scanned, a table across pages, two columns
# ---------------------------------------------------------------------------

SCAN_DPI = 150


def write_scanned_pdf(sample: SampleDoc, blocks: list[Block], path: Path) -> None:
    """Each page of the text PDF rendered to a grayscale image: no text layer remains."""
    text_pdf = build_pdf(blocks)
    scan = pymupdf.open()
    for page in text_pdf:
        pix = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY)
        scan_page = scan.new_page(width=PAGE_W, height=PAGE_H)
        scan_page.insert_image(scan_page.rect, stream=pix.tobytes("png"))
    text_pdf.close()
    save_pdf(scan, sample, blocks, path)


def draw_lines(page: pymupdf.Page, lines: list[PdfLine], y: float) -> float:
    """Lines below y; returns the last baseline."""
    for ln in lines:
        y += ln.space_before + ln.size * LINE_GAP
        page.insert_text((ln.x, y), ln.text, fontname=CJK_FONT, fontsize=ln.size)
    return y


def draw_cell(page: pymupdf.Page, rect: pymupdf.Rect, text: str, size: float,
              fill: tuple[float, float, float] | None = None) -> None:
    page.draw_rect(rect, color=(0, 0, 0), fill=fill, width=0.6)
    for i, line in enumerate(wrap(text, size, rect.width - 8)):
        page.insert_text((rect.x0 + 4, rect.y0 + 4 + size * (1.3 * i + 1)), line,
                         fontname=CJK_FONT, fontsize=size)


def column_edges() -> list[float]:
    xs = [MARGIN_X]
    for w in EXPENSE_STANDARDS_COL_W:
        xs.append(xs[-1] + w)
    return xs


def draw_table_rows(page: pymupdf.Page, rows: list[list[str | None]], y: float,
                    size: float) -> float:
    """Ruled rows from y down; a None cell is covered by the cell above (first column) or on
    its left (other columns). Returns the bottom of the last row."""
    xs = column_edges()
    tops = [y]
    for row in rows:
        lines = max(len(wrap(c, size, xs[i + 1] - xs[i] - 8)) for i, c in enumerate(row) if c)
        tops.append(tops[-1] + 8 + size * 1.3 * lines)
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            if cell is None:
                continue
            r_end = r + 1
            while c == 0 and r_end < len(rows) and rows[r_end][0] is None:
                r_end += 1
            c_end = c + 1
            while c_end < len(row) and row[c_end] is None:
                c_end += 1
            draw_cell(page, pymupdf.Rect(xs[c], tops[r], xs[c_end], tops[r_end]), cell, size)
    return tops[-1]


def write_table_pdf(sample: SampleDoc, blocks: list[Block], path: Path) -> None:
    """Intro clauses, then 表1 with its header row on page 1 only, then closing clauses."""
    size = 9.5
    doc = pymupdf.open()
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    running_header(page)
    y = draw_lines(page, layout_pdf_lines(blocks), BODY_TOP) + 10
    xs = column_edges()
    for i, text in enumerate(EXPENSE_STANDARDS_HEADER):
        rect = pymupdf.Rect(xs[i], y, xs[i + 1], y + 22)
        draw_cell(page, rect, text, 10.0, fill=(0.88, 0.88, 0.88))
    first = EXPENSE_STANDARDS_ROWS[:EXPENSE_STANDARDS_ROWS_PAGE_1]
    if draw_table_rows(page, first, y + 22, size) > BODY_BOTTOM:
        raise SystemExit("expense_standards.pdf: the page-1 rows do not fit on page 1")
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    running_header(page)
    rest = EXPENSE_STANDARDS_ROWS[EXPENSE_STANDARDS_ROWS_PAGE_1:]
    y = draw_table_rows(page, rest, BODY_TOP - 12, size)
    draw_lines(page, layout_pdf_lines(parse_markup(EXPENSE_STANDARDS_OUTRO)), y + 4)
    for n, p in enumerate(doc, start=1):
        running_footer(p, n, doc.page_count)
    save_pdf(doc, sample, blocks, path)


def write_columns_pdf(sample: SampleDoc, blocks: list[Block], path: Path) -> None:
    """Title and meta lines across the page, then the body flowing through two columns."""
    head = [b for b in blocks if b.kind in {"title", "meta"}]
    body = [b for b in blocks if b.kind not in {"title", "meta"}]
    col_w = (PAGE_W - 2 * MARGIN_X - HANDBOOK_GUTTER) / 2
    lines = layout_pdf_lines(body, 0.0, col_w, HANDBOOK_BODY_SIZE)
    doc = pymupdf.open()
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    running_header(page)
    top = draw_lines(page, layout_pdf_lines(head), BODY_TOP) + 10
    column, y = 0, top
    for ln in lines:
        step = ln.space_before + ln.size * LINE_GAP
        if y + step > BODY_BOTTOM:
            column, y = column + 1, (top if doc.page_count == 1 else BODY_TOP)
            if column == 2:
                page = doc.new_page(width=PAGE_W, height=PAGE_H)
                running_header(page)
                column, y = 0, BODY_TOP
        y += step
        x = MARGIN_X + column * (col_w + HANDBOOK_GUTTER) + ln.x
        page.insert_text((x, y), ln.text, fontname=CJK_FONT, fontsize=ln.size)
    for n, p in enumerate(doc, start=1):
        running_footer(p, n, doc.page_count)
    save_pdf(doc, sample, blocks, path)


# ---------------------------------------------------------------------------
# DOCX
# ---------------------------------------------------------------------------


def _set_east_asian_font(style, name: str) -> None:
    rfonts = style.element.get_or_add_rPr().get_or_add_rFonts()
    rfonts.set(qn("w:eastAsia"), name)


def _normalize_zip(data: bytes) -> bytes:
    """Rewrite the OOXML zip with fixed member timestamps so output is byte-stable."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            zi = zipfile.ZipInfo(info.filename, date_time=ZIP_DATE)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            dst.writestr(zi, src.read(info.filename))
    return buf.getvalue()


def write_docx(sample: SampleDoc, blocks: list[Block], path: Path) -> None:
    d = docx.Document()
    styles = d.styles
    _set_east_asian_font(styles["Normal"], "宋体")
    styles["Normal"].font.size = Pt(11)
    for name in ("Title", "Heading 1", "Heading 2"):
        _set_east_asian_font(styles[name], "黑体")

    header = d.sections[0].header.paragraphs[0]
    header.text = PDF_HEADER
    header.alignment = WD_ALIGN_PARAGRAPH.CENTER

    for b in blocks:
        if b.kind == "title":
            p = d.add_heading(b.text, level=0)
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
        elif b.kind == "meta":
            p = d.add_paragraph(b.text)
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
        elif b.kind == "chapter":
            p = d.add_heading(b.text, level=1)
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
        elif b.kind == "section":
            d.add_heading(b.text, level=2)
        else:
            p = d.add_paragraph()
            p.paragraph_format.first_line_indent = Pt(22)
            m = CLAUSE_RE.match(b.text)
            if m:
                p.add_run(m.group(0)).bold = True
                p.add_run(b.text[m.end() :])
            else:
                p.add_run(b.text)

    title = next(b.text for b in blocks if b.kind == "title")
    cp = d.core_properties
    cp.title = title
    cp.author = sample.author
    cp.last_modified_by = sample.author
    cp.subject = f"{COMPANY} 内部制度文件"
    cp.keywords = ""
    cp.comments = ""
    cp.revision = 1
    cp.created = FIXED_DT
    cp.modified = FIXED_DT
    cp.last_printed = FIXED_DT

    buf = io.BytesIO()
    d.save(buf)
    path.write_bytes(_normalize_zip(buf.getvalue()))


# ---------------------------------------------------------------------------
# Markdown / HTML / sidecars
# ---------------------------------------------------------------------------


def write_markdown(blocks: list[Block], path: Path) -> None:
    parts: list[str] = []
    for b in blocks:
        if b.kind == "title":
            parts.append(f"# {b.text}")
        elif b.kind == "chapter":
            parts.append(f"## {b.text}")
        elif b.kind == "section":
            parts.append(f"### {b.text}")
        else:
            m = CLAUSE_RE.match(b.text)
            parts.append(
                f"**{m.group(0)}** {b.text[m.end() :].lstrip()}" if m else b.text
            )
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")


def write_approval_html(path: Path) -> int:
    esc = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}

    def h(s: str) -> str:
        return "".join(esc.get(c, c) for c in s)

    rows = "\n".join(
        "      <tr>" + "".join(f"<td>{h(c)}</td>" for c in row) + "</tr>"
        for row in APPROVAL_AUTHORITY_ROWS
    )
    notes = "\n".join(f"    <li>{h(n)}</li>" for n in APPROVAL_AUTHORITY_NOTES)
    html = f"""<!DOCTYPE html>
<html lang="zh-CN">
<head>
  <meta charset="utf-8">
  <title>审批权限表 - {COMPANY}</title>
</head>
<body>
  <h1>审批权限表</h1>
  <p class="doc-meta">文件编号：XH-CW-2026-003　　版本：2026版　　发布部门：财务部</p>
  <p class="doc-meta">生效日期：2026年1月1日</p>
  <p>{h(APPROVAL_AUTHORITY_INTRO)}</p>
  <table border="1">
    <thead>
      <tr><th>事项</th><th>金额范围</th><th>审批人</th><th>备注</th></tr>
    </thead>
    <tbody>
{rows}
    </tbody>
  </table>
  <h2>说明</h2>
  <ol>
{notes}
  </ol>
  <p class="footer">本页面内容为{COMPANY}内部资料，未经许可不得对外提供。</p>
</body>
</html>
"""
    path.write_text(html, encoding="utf-8")
    return len(APPROVAL_AUTHORITY_ROWS)


def write_sidecar(meta: dict[str, object], path: Path) -> None:
    lines = []
    for key, value in meta.items():
        if isinstance(value, list):
            rendered = "[" + ", ".join(str(v) for v in value) + "]"
        elif key == "version":
            rendered = f'"{value}"'  # keep versions like "2025" as strings
        else:
            rendered = str(value)
        lines.append(f"{key}: {rendered}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------


def main() -> int:
    for folder, declared in FOLDER_META.items():
        (OUT_DIR / folder).mkdir(parents=True, exist_ok=True)
        write_sidecar(declared, OUT_DIR / folder / "_meta.yaml")
    for sample in SAMPLES:
        path = OUT_DIR / sample.filename
        if sample.fmt == "raw":
            path.write_text(sample.source, encoding="utf-8")
            summary = "raw markdown"
        elif sample.fmt == "html":
            summary = f"{write_approval_html(path)} table rows"
        else:
            blocks = parse_markup(sample.source)
            clauses = check_numbering(sample.filename, blocks)
            effective_date_line(blocks)
            if sample.fmt == "pdf":
                write_pdf(sample, blocks, path)
            elif sample.fmt == "scanned":
                write_scanned_pdf(sample, blocks, path)
            elif sample.fmt == "table":
                write_table_pdf(sample, blocks, path)
            elif sample.fmt == "columns":
                write_columns_pdf(sample, blocks, path)
            elif sample.fmt == "docx":
                write_docx(sample, blocks, path)
            else:
                write_markdown(blocks, path)
            summary = f"{clauses} clauses"
        if sample.sidecar is not None:
            write_sidecar(sample.sidecar, OUT_DIR / f"{sample.filename}.meta.yaml")
        print(f"wrote {path.relative_to(REPO_ROOT)} ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
