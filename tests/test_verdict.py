"""The verdict's conflict rules on hand-made results: what counts as two documents stating
different values for the same thing, and what does not."""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.search.verdict import ConflictKind, Precedence, conflicts, decide, values


@dataclass
class Result:
    chunk_id: str
    document_key: str  # "<tenant>:<doc id>" outside the default tenant, as the index keeps it
    text: str
    title: str = "制度"
    rank: int = 1
    authority: str | None = None
    scope_depth: int = 0
    title_path: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.title_path = [self.title]

    @property
    def doc_id(self) -> str:
        return self.document_key.split(":")[-1]

    @property
    def tenant_id(self) -> str:
        return self.document_key.split(":")[0] if ":" in self.document_key else "default"


def better_ranked(x: Result, y: Result, _kind: ConflictKind) -> tuple[bool, str]:
    return x.rank < y.rank, "rank"


# The question's words (ingest.stores.tokens.query_tokens).
LODGING = {"出差", "住宿", "标准"}


def test_two_documents_stating_different_amounts_for_one_thing_conflict() -> None:
    group = Result("g1", "travel", "第三条 住宿费实行限额报销：一线城市每人每晚不超过600元。",
                   title="集团差旅费用管理办法")
    faq = Result("f1", "faq", "问：住宿标准？答：一线城市住宿每人每晚不超过500元。", rank=2,
                 title="差旅常见问题")
    found = conflicts(LODGING, [group, faq], better_ranked)
    assert len(found) == 1
    conflict = found[0]
    assert conflict.kind == "definition" and "一线城市" in conflict.topic
    assert (conflict.a.chunk_id, conflict.a.value, conflict.b.value) == ("g1", "600元", "500元")
    assert decide(False, found, "")[0] == "conflict"


def test_each_kind_puts_first_the_side_its_declared_rule_names() -> None:
    """Hierarchy: the narrower scope (or the broader, when so declared); re-issue: the
    corrected one; definition: the higher authority, whatever the ranks."""
    group = Result("g1", "travel", "一线城市住宿费每人每晚不超过600元。", scope_depth=1)
    child = Result("c1", "hc-precision:lodging", "一线城市住宿费每人每晚不超过450元。",
                   rank=2)
    hierarchy = conflicts(LODGING, [group, child], Precedence().first)[0]
    assert (hierarchy.kind, hierarchy.a.value) == ("hierarchy", "450元")
    assert "narrower" in hierarchy.rule
    broader = conflicts(LODGING, [group, child], Precedence(scope="broader").first)[0]
    assert broader.a.value == "600元"
    notice = Result("n1", "meal", "加班餐费补贴调整为每人每次30元。",
                    title="关于调整加班餐费的通知")
    fixed = Result("n2", "meal-fix", "加班餐费补贴为每人每次35元。", rank=2,
                   title="关于调整加班餐费的通知（更正）")
    meal = {"加班", "餐费"}
    reissue = conflicts(meal, [notice, fixed], Precedence().first)[0]
    assert (reissue.kind, reissue.a.chunk_id) == ("reissue", "n2")
    faq = Result("f1", "faq", "一线城市住宿每晚可报500元。", authority="faq")
    policy = Result("p1", "policy", "一线城市住宿费每人每晚不超过600元。", rank=3,
                    authority="policy")
    definition = conflicts(LODGING, [faq, policy], Precedence().first)[0]
    assert (definition.kind, definition.a.chunk_id) == ("definition", "p1")
    assert "policy over faq" in definition.rule
    undeclared = Result("u1", "memo", "一线城市住宿每晚可报550元。")
    assert conflicts(LODGING, [undeclared, faq], Precedence().first)[0].a.chunk_id == "f1"


def test_same_values_other_questions_and_one_document_do_not_conflict() -> None:
    same = [Result("a", "x", "一线城市住宿每晚不超过600元。"),
            Result("b", "y", "住宿标准：一线城市每晚不超过600元。")]
    assert conflicts(LODGING, same, better_ranked) == []
    # Same shape, different subject: leave and travel approvals answer different questions.
    approval = {"请假", "审批"}
    leave = Result("l", "leave", "(一)请假3天以内(含3天)的,由部门负责人审批。")
    trip = Result("t", "travel", "(一)境内出差5天以内(含5天)的,由部门负责人审批。")
    assert conflicts(approval, [leave, trip], better_ranked) == []
    # Clauses without a word of the question say nothing about it; dates are no values.
    assert [v.written for v in values("住宿费每晚600元。伙食补助每天100元。", {"伙食"})] == [
        "100元"]
    assert values("自2026年3月1日起，伙食补助调整。", {"伙食"}) == []
    # Two chunks of one document never conflict with each other.
    one = [Result("p1", "x", "一线城市住宿每晚不超过600元。"),
           Result("p2", "x", "一线城市住宿每晚不超过500元。")]
    assert conflicts(LODGING, one, better_ranked) == []


def test_amounts_compare_in_one_unit_and_chinese_numerals_count() -> None:
    a = Result("a", "x", "单笔采购金额在5万元以上的须招标。")
    b = Result("b", "y", "单笔采购金额在50000元以上的须招标。")
    assert conflicts({"采购", "招标"}, [a, b], better_ranked) == []
    c = Result("c", "z", "婚假天数为十天。")
    d = Result("d", "w", "婚假天数为15天。", rank=2)
    found = conflicts({"婚假"}, [c, d], better_ranked)
    assert [(f.a.value, f.b.value) for f in found] == [("十天", "15天")]


def test_no_answer_wins_over_a_conflict() -> None:
    assert decide(True, [], "nothing close")[0] == "no_answer"
    assert decide(False, [], "a sentence answers") == ("sufficient", "a sentence answers")
