"""Amendments and decisions numbered by items (一、二、…): each item is a clause numbered by its
ordinal, so 《刑法修正案(九)》第三条 finds item 三、; other documents chunk as before."""

from __future__ import annotations

from pathlib import Path

from ingest.chunk import chunk_document
from ingest.graph import extract_triples
from ingest.graph.citations import citations
from ingest.graph.link import article_spellings
from ingest.graph.titles import TitleIndex
from ingest.models import Chunk, ChunkKind, ParsedDocument
from ingest.parse import parse_document, read_meta

# The start of the real text (LawRefBook's 刑法修正案（九）.md), its item 一、 quoting a new
# article over two paragraphs, and a list restarting at 一、 inside item 三、.
AMENDMENT = """# 中华人民共和国刑法修正案（九）

2015年8月29日 第十二届全国人民代表大会常务委员会第十六次会议通过

一、在刑法第三十七条后增加一条，作为第三十七条之一：“因利用职业便利实施犯罪，或者实施违背职业要求的特定义务的犯罪被判处刑罚的，人民法院可以根据犯罪情况和预防再犯罪的需要，禁止其自刑罚执行完毕之日或者假释之日起从事相关职业，期限为三年至五年。

“被禁止从事相关职业的人违反人民法院依照前款规定作出的决定的，由公安机关依法给予处罚；情节严重的，依照本法第三百一十三条的规定定罪处罚。”

二、将刑法第五十条第一款修改为：“判处死刑缓期执行的，在死刑缓期执行期间，如果没有故意犯罪，二年期满以后，减为无期徒刑。”

三、将刑法第五十三条修改为：“罚金在判决指定的期限内一次或者分期缴纳。有下列情形之一的，可以延期缴纳：

一、遭遇不能抗拒的灾祸；

二、缴纳确实有困难的。”

四、本修正案自2015年11月1日起施行。
"""
NOTICE = """# 关于发放2026年夏季高温津贴的通知

各部门、各车间：

一、发放期间：2026年6月1日至9月30日。

二、发放标准：在高温环境或露天作业的员工，每人每月300元。
"""
# a decision with 第N条 articles: its 一、 lines are not items
DECISION = """# 关于加强资金管理的决定

一、总则

第一条 为规范资金管理，作此决定。

二、付款

第二条 大额付款须经总经理审批。
"""


def _chunks(tmp_path: Path, name: str, text: str) -> list[Chunk]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    meta, data = read_meta(path, tmp_path, "default", ["all"])
    doc: ParsedDocument = parse_document(meta, data)
    return [c for c in chunk_document(doc) if c.kind != ChunkKind.PARENT]


def test_each_item_of_an_amendment_is_a_clause_numbered_by_its_ordinal(tmp_path) -> None:
    chunks = _chunks(tmp_path, "刑法修正案（九）.md", AMENDMENT)
    items = {c.clause_no: c for c in chunks if c.kind == ChunkKind.CLAUSE}
    assert sorted(items, key=len) == ["第一条", "第二条", "第三条", "第四条"]
    assert "被禁止从事相关职业的人" in items["第一条"].text  # its second paragraph stays in it
    assert items["第二条"].text.startswith("二、将刑法第五十条")
    assert "二、缴纳确实有困难的" in items["第三条"].text  # a list inside an item is its text
    assert items["第三条"].prefix.endswith("第三条")
    assert items["第三条"].structural_path == "第三条"
    assert [c.kind for c in chunks if c.clause_no is None] == [ChunkKind.PARAGRAPH]  # 通过 line


def test_an_article_reference_to_an_amendment_finds_the_item(tmp_path) -> None:
    amendment = _chunks(tmp_path, "刑法修正案（九）.md", AMENDMENT)
    title = amendment[0].prefix.split("》")[0].removeprefix("《")
    index = TitleIndex(["中华人民共和国刑法", title])
    text = "# 罪名补充规定\n\n第一条 依照《刑法修正案(九)》第三条办理。\n"
    triples = extract_triples(_chunks(tmp_path, "罪名.md", text), "罪名补充规定", index)
    assert [t.object for t in triples if t.predicate == "引用条款"] == [f"《{title}》第三条"]
    numbered = {s: c for c in amendment if c.clause_no for s in article_spellings(c.clause_no)}
    assert numbered["第三条"].text.startswith("三、将刑法第五十三条")
    assert numbered["第3条"] is numbered["第三条"]


def test_a_notice_and_a_decision_with_articles_chunk_as_before(tmp_path, monkeypatch) -> None:
    import ingest.chunk.units

    files = {"高温津贴.md": NOTICE, "决定.md": DECISION}

    def chunked() -> dict[str, list[dict[str, object]]]:
        return {name: [c.model_dump(exclude={"created_at"}) for c in _chunks(tmp_path, name, t)]
                for name, t in files.items()}

    now = chunked()
    monkeypatch.setattr(ingest.chunk.units, "item_clauses", lambda blocks, title: {})
    assert now == chunked()
    assert all(c["clause_no"] is None for c in now["高温津贴.md"])
    assert [c["clause_no"] for c in now["决定.md"] if c["clause_no"]] == ["第一条", "第二条"]


def test_bare_numbers_in_an_amendment_are_never_its_own_items() -> None:
    """将《解释》原第六条修改为 (a real decision's item 一、) means the amended text's article 6,
    though the decision now has a clause 第六条 of its own: it dangles when the amended text is
    not in the corpus, never resolving to the decision itself."""
    title = ("最高人民法院、最高人民检察院关于修改《关于办理妨害信用卡管理刑事案件具体应用法律"
             "若干问题的解释》的决定")
    items = {f"第{n}条" for n in "一二三四五六七八"}
    found = list(citations("一、将原第六条修改为：", title, TitleIndex([title]), articles=items))
    assert [(c.article, c.resolution.rule) for c in found] == [
        ("第六条", "dangling:unknown_article")]
