"""A synthetic Chinese policy corpus: Markdown documents with chapters and 第X条 clauses.

Deterministic for a seed, so every benchmark run (and every system compared) reads the same text.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

DIGITS = "零一二三四五六七八九"
SUBJECTS = ["差旅费", "会议费", "培训费", "办公用品", "信息系统", "印章", "合同", "采购", "车辆",
            "档案", "保密", "考勤", "加班", "薪酬", "绩效", "招聘", "资产", "预算", "报销", "安全"]
ROLES = ["各部门负责人", "财务部", "人力资源部", "行政部", "信息技术部", "审计部", "总经理办公会",
         "经办人", "分管领导", "法务部"]
ACTIONS = ["应当在{n}个工作日内完成审批", "须经{role}书面批准后方可执行", "按实际发生金额据实报销",
           "超出标准部分由个人承担", "应当建立台账并每{n}个月核对一次", "不得超过{n}万元",
           "由{role}统一归口管理", "应当保留原始凭证不少于{n}年", "须提前{n}天提交申请",
           "报{role}备案"]
CONDITIONS = ["因公出差期间，", "如遇特殊情况，", "对于金额较大的事项，", "新入职员工",
              "跨部门协作项目中，", "年度预算范围内，", "涉及外部单位的，", "紧急情况下，"]


def chinese_number(n: int) -> str:
    """1..99 as written in clause numbers: 一, 十, 十二, 二十, 二十三."""
    tens, ones = divmod(n, 10)
    text = (DIGITS[tens] if tens > 1 else "") + ("十" if tens else "")
    return text + (DIGITS[ones] if ones else "")


def _sentence(rng: random.Random, subject: str) -> str:
    action = rng.choice(ACTIONS).format(n=rng.randint(2, 30), role=rng.choice(ROLES))
    return f"{rng.choice(CONDITIONS)}{subject}相关事项{action}。"


def document(index: int, rng: random.Random) -> str:
    subject = SUBJECTS[index % len(SUBJECTS)]
    title = f"{subject}管理办法（第{index + 1}号）"
    year, month = 2020 + index % 6, 1 + index % 12
    lines = [f"# {title}", "", f"文件编号：BM-{index:04d}　　发布部门：{rng.choice(ROLES)}", "",
             f"生效日期：{year}年{month}月1日", ""]
    clauses = rng.randint(10, 20)
    chapters = [1, clauses // 3 + 1, 2 * clauses // 3 + 1]
    for n in range(1, clauses + 1):
        if n in chapters:
            chapter = chapters.index(n) + 1
            name = ("总则", "管理要求", "附则")[chapter - 1]
            lines += [f"## 第{chinese_number(chapter)}章 {name}", ""]
        body = "".join(_sentence(rng, subject) for _ in range(rng.randint(1, 3)))
        lines += [f"**第{chinese_number(n)}条** {body}", ""]
    return "\n".join(lines)


def make_corpus(folder: Path, documents: int, seed: int = 7) -> list[Path]:
    """Write `documents` policies into `folder` (replacing what was there)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.md"):
        old.unlink()
    rng = random.Random(seed)
    paths = []
    for i in range(documents):
        path = folder / f"policy_{i:04d}.md"
        path.write_text(document(i, rng), encoding="utf-8")
        paths.append(path)
    return paths


def edit_clause(path: Path, clause: int = 5, marker: str = "（本条已修订）") -> None:
    """Change the text of one clause, and nothing else, as an editor fixing one rule would."""
    label = f"**第{chinese_number(clause)}条**"
    text = path.read_text(encoding="utf-8")
    edited, count = re.subn(rf"^({re.escape(label)} .*)$", rf"\1{marker}", text, count=1,
                            flags=re.MULTILINE)
    if count != 1:
        raise ValueError(f"{path} has no clause {label}")
    path.write_text(edited, encoding="utf-8")
