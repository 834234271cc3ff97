"""The verdict's conflict rules on hand-made results: what counts as two documents stating
different values for the same thing, and what does not."""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.search.verdict import ConflictKind, conflicts, decide, values


@dataclass
class Result:
    chunk_id: str
    document_key: str
    text: str
    title: str = "制度"
    rank: int = 1
    title_path: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.title_path = [self.title]

    @property
    def doc_id(self) -> str:
        return self.document_key.split(":")[-1]


def better_ranked(x: Result, y: Result, _kind: ConflictKind) -> tuple[bool, str]:
    return x.rank < y.rank, "rank"


# The question's words the corpus knows, with their rarity (the rarest says what it is about).
LODGING = {"出差": 2.0, "住宿": 4.0, "标准": 1.5}


def test_two_documents_stating_different_amounts_for_one_thing_conflict() -> None:
    group = Result("g1", "travel", "第三条 住宿费实行限额报销：一线城市每人每晚不超过600元。",
                   title="集团差旅费用管理办法")
    faq = Result("f1", "faq", "问：住宿标准？答：一线城市每人每晚不超过500元。", rank=2,
                 title="差旅常见问题")
    found = conflicts(LODGING, [group, faq], better_ranked)
    assert len(found) == 1
    conflict = found[0]
    assert conflict.kind == "definition" and conflict.topic == "住宿"
    assert (conflict.a.chunk_id, conflict.a.value, conflict.b.value) == ("g1", "600元", "500元")
    assert decide(False, found, "")[0] == "conflict"


def test_different_tenants_make_a_hierarchy_and_a_corrected_reissue_a_reissue() -> None:
    group = Result("g1", "travel", "一线城市住宿费每人每晚不超过600元。")
    child = Result("c1", "hc-precision:lodging", "一线城市住宿费每人每晚不超过450元。")
    assert conflicts(LODGING, [group, child], better_ranked)[0].kind == "hierarchy"
    notice = Result("n1", "meal", "加班餐费补贴调整为每人每次30元。",
                    title="关于调整加班餐费的通知")
    fixed = Result("n2", "meal-fix", "加班餐费补贴为每人每次35元。",
                   title="关于调整加班餐费的通知（更正）")
    meal = {"加班": 3.0, "餐费": 5.0}
    assert conflicts(meal, [notice, fixed], better_ranked)[0].kind == "reissue"


def test_same_values_other_questions_and_one_document_do_not_conflict() -> None:
    same = [Result("a", "x", "一线城市住宿每晚不超过600元。"),
            Result("b", "y", "住宿标准：一线城市每晚不超过600元。")]
    assert conflicts(LODGING, same, better_ranked) == []
    # Same shape, different subject: leave and travel approvals answer different questions.
    approval = {"请假": 5.0, "审批": 2.0}
    leave = Result("l", "leave", "(一)请假3天以内(含3天)的,由部门负责人审批。")
    trip = Result("t", "travel", "(一)境内出差5天以内(含5天)的,由部门负责人审批。")
    assert conflicts(approval, [leave, trip], better_ranked) == []
    # Sentences without the question's rarest word say nothing about it.
    assert values("住宿费每晚600元。伙食补助每天100元。", {"伙食": 5.0, "住宿": 1.0}) != []
    assert [v.written for v in values("住宿费每晚600元。伙食补助每天100元。",
                                      {"伙食": 5.0, "住宿": 1.0})] == ["100元"]
    # Two chunks of one document never conflict with each other.
    one = [Result("p1", "x", "一线城市住宿每晚不超过600元。"),
           Result("p2", "x", "一线城市住宿每晚不超过500元。")]
    assert conflicts(LODGING, one, better_ranked) == []


def test_amounts_compare_in_one_unit_and_chinese_numerals_count() -> None:
    a = Result("a", "x", "单笔采购金额在5万元以上的须招标。")
    b = Result("b", "y", "单笔采购金额在50000元以上的须招标。")
    assert conflicts({"采购": 2.0, "招标": 4.0}, [a, b], better_ranked) == []
    c = Result("c", "z", "婚假天数为十天。")
    d = Result("d", "w", "婚假天数为15天。", rank=2)
    found = conflicts({"婚假": 6.0}, [c, d], better_ranked)
    assert [(f.a.value, f.b.value) for f in found] == [("十天", "15天")]


def test_no_answer_wins_over_a_conflict() -> None:
    assert decide(True, [], "nothing close")[0] == "no_answer"
    assert decide(False, [], "a sentence answers") == ("sufficient", "a sentence answers")
