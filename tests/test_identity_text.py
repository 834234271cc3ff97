"""The version-link rules for documents nobody on the team wrote (issue #24, item 4): titles
with and without the organisation's name, bracket and quote variants, 原通知… repeals
sentences after the 《title》, （更正） re-issues and law-style amendment lines; each with a
case that must not link. The wordings are invented here, not the held-out documents'."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

from ingest.lifecycle import VersionDates, closing_dates, superseded_keys
from ingest.parse.identity import Candidate, decide
from ingest.parse.identity_text import (
    amendment_dates,
    effective_date,
    facts,
    organisation_variants,
    repeal_statements,
    split_title,
    title_match,
)


def candidate(ref: str, title: str, body: str) -> Candidate:
    return Candidate(ref=ref, doc_id=ref, version_id="1", tenant_id="default",
                     facts=facts(title, body), text=body, file_hash=ref)


def never_taken(doc_id: str, version_id: str, refs: set[str]) -> bool:
    return False


def rules(decisions: dict, ref: str) -> list[str]:
    return [link.rule for link in decisions[ref].identity.links]


# ---- titles ------------------------------------------------------------------------------------

def test_a_leading_organisation_name_is_optional() -> None:
    base = split_title("宏远集团员工加班管理规定")[0]
    assert title_match("员工加班管理规定", base) == "宏远集团"
    assert title_match(split_title("星河电子股份有限公司差旅费报销办法（2023版）")[0],
                       "差旅费报销办法") == "星河电子股份有限公司"
    assert title_match(split_title("南江市人民政府办公厅关于加强城市燃气安全管理的通知")[0],
                       "关于加强城市燃气安全管理的通知") == "南江市人民政府办公厅"
    assert title_match("中华人民共和国国务院组织法", "国务院组织法") == "中华人民共和国"


def test_an_organisation_name_is_only_stripped_by_its_suffix_and_not_to_a_generic_title() -> None:
    # two policies of one company share the name, not the document
    assert title_match(split_title("宏远集团差旅管理办法")[0],
                       split_title("宏远集团采购管理办法")[0]) is None
    # two companies' policies of one name are two documents
    assert title_match("宏远集团差旅管理办法", "星河有限公司差旅管理办法") is None
    # what is left must still name one document; 内部/营业厅 are no organisations
    assert title_match("宏远集团管理办法", "管理办法") is None
    assert organisation_variants("内部审计管理办法") == {}
    assert organisation_variants("营业厅服务规范") == {}
    assert organisation_variants("岗位安全操作规程") == {}


def test_bracket_quote_and_space_variants_are_one_title() -> None:
    assert split_title("数据备份管理规程<2024版>") == split_title("《数据备份管理规程（2024版）》")
    assert split_title("数据备份管理规程〈2024版〉") == ("数据备份管理规程", "2024")
    assert (split_title("“三重一大” 决策制度实施办法")[0]
            == split_title('"三重一大"决策制度、实施办法')[0])
    for title, marker in (("会议室预订须知（更正）", "更正"),
                          ("采购招标管理细则(修订稿)", "修订稿"),
                          ("采购招标管理细则（第二版）", "第二版")):
        assert split_title(title)[1] == marker, title


# ---- repeal statements ---------------------------------------------------------------------------

CORRECTION = """各子公司、各部门：
我部于2024年5月6日印发了《关于调整国内出差住宿费标准的通知》。经核查，该通知附件中住宿费有误。
现将更正后的标准重新印发，请遵照执行。原通知同时作废。
二线城市住宿费标准为每人每晚四百五十元。"""


def test_a_repeal_naming_the_document_sentences_after_its_title() -> None:
    found = repeal_statements(CORRECTION, "关于调整国内出差住宿费标准的通知（更正）")
    assert [s.title for s in found] == ["关于调整国内出差住宿费标准的通知"]
    assert found[0].sentence.startswith("我部于2024年5月6日印发了《")
    assert found[0].sentence.endswith("原通知同时作废")
    # the kind must fit the title: 原办法 does not mean a 通知
    assert repeal_statements("我部曾印发《关于调整住宿费标准的通知》。原办法同时废止。") == []
    # a title relied on is not what 原规定 repeals
    assert repeal_statements("根据《宏远集团薪酬管理规定》制定本细则。原规定不再执行。") == []


def test_a_back_reference_too_far_away_without_a_title_or_to_a_part_is_no_repeal() -> None:
    far = ("公司印发了《仓储物资盘点管理办法》。盘点每季度一次。由财务部牵头。仓储部配合。"
           "盘点结果报总经理。原办法同时废止。")
    assert repeal_statements(far) == []
    assert repeal_statements("因标准有误，现予更正。原通知同时作废。") == []
    assert repeal_statements("《仓储物资盘点管理办法》已经修订。原办法第五条同时废止。") == []
    near = "公司印发了《仓储物资盘点管理办法》。盘点每季度一次。原办法同时废止。"
    assert [s.title for s in repeal_statements(near)] == ["仓储物资盘点管理办法"]


def test_a_repeal_without_the_company_name_links_to_the_prefixed_title() -> None:
    old = candidate("hr/old.md", "宏远集团员工加班管理规定",
                    "生效日期：2022年3月1日\n第一条 加班须经审批。")
    new = candidate("hr/new.md", "宏远集团员工加班与调休管理办法",
                    "第三十条 本办法自2024年7月1日起施行，原《员工加班管理规定》同时废止。")
    decisions = decide([old, new], never_taken)
    assert decisions["hr/old.md"].doc_id == decisions["hr/new.md"].doc_id
    link = decisions["hr/new.md"].identity.links[0]
    assert (link.rule, link.org_prefix, link.other_is) == ("repeal", "宏远集团", "older")
    # the same sentence does not take over another policy of the same company
    other = candidate("hr/other.md", "宏远集团员工考勤管理规定", "生效日期：2022年3月1日")
    assert not decide([other, new], never_taken)["hr/new.md"].identity.links


def test_status_shows_the_organisation_name_a_link_left_out(capsys) -> None:
    from flows.cli.reads import _print_inferred_versions

    old = candidate("hr/old.md", "宏远集团员工加班管理规定", "生效日期：2022年3月1日")
    new = candidate("hr/new.md", "宏远集团员工加班与调休管理办法",
                    "第三十条 本办法自2024年7月1日起施行，原《员工加班管理规定》同时废止。")
    identity = decide([old, new], never_taken)["hr/new.md"].identity
    _print_inferred_versions([SimpleNamespace(version_key="hr@2024-07-01", identity=identity,
                                              effective_from=date(2024, 7, 1), effective_to=None)])
    shown = capsys.readouterr().out.replace("\n", "")
    assert "repeal: older version" in shown and "titles equal without 宏远集团" in shown
    assert "原《员工加班管理规定》同时废止" in shown


def test_a_correction_reissue_replaces_the_original_even_from_the_same_day() -> None:
    original = candidate("fin/a.md", "关于调整国内出差住宿费标准的通知",
                         "自2024年6月1日起执行。二线城市住宿费标准为每人每晚五百四十元。")
    corrected = candidate("fin/b.md", "关于调整国内出差住宿费标准的通知（更正）",
                          CORRECTION + "\n自2024年6月1日起执行。")
    decisions = decide([corrected, original], never_taken)
    assert decisions["fin/a.md"].doc_id == decisions["fin/b.md"].doc_id
    assert set(rules(decisions, "fin/b.md")) == {"reissue"}  # the repeal alone needs a later date
    assert decisions["fin/b.md"].version_id == "更正"
    ends = closing_dates([VersionDates(doc_id=d.doc_id, version_id=d.version_id,
                                       effective_from=d.identity.effective_from, declared_to=None)
                          for d in decisions.values()])
    doc = decisions["fin/b.md"].doc_id
    assert ends[(doc, "更正")] is None  # in force
    assert ends[(doc, decisions["fin/a.md"].version_id)] == date(2024, 5, 31)  # never in force
    # an undated re-issue next to a dated original would sort first: no link
    undated = candidate("fin/c.md", "关于调整国内出差住宿费标准的通知（更正）",
                        "住宿费标准更正如下。")
    assert not decide([undated, original], never_taken)["fin/c.md"].identity.links


def test_a_revision_naming_the_original_with_the_company_name_sentences_later() -> None:
    original = candidate("fin/a.md", "宏远集团费用报销审批流程",
                         "生效日期：2023年1月1日\n第一条 报销须经审批。")
    revised = candidate("fin/b.md", "宏远集团费用报销审批流程（修订）",
                        "生效日期：2024年9月1日\n公司曾印发《费用报销审批流程》。现予修订。"
                        "原文件同时停止执行。")
    decisions = decide([original, revised], never_taken)
    [link] = decisions["fin/b.md"].identity.links
    assert (link.rule, link.org_prefix, link.other_is) == ("repeal", "宏远集团", "older")
    assert link.detail.endswith("原文件同时停止执行")
    assert decisions["fin/a.md"].doc_id == decisions["fin/b.md"].doc_id


# ---- law-style amendment lines -------------------------------------------------------------------

def test_a_law_is_dated_by_its_latest_amendment_not_its_first_start_date() -> None:
    law = """# 中华人民共和国测绘成果保护法

1998年6月20日 第九届全国人民代表大会常务委员会第三次会议通过

2009年4月24日 第十一届全国人民代表大会常务委员会第八次会议《关于修改〈……〉的决定》第一次修正

## 第一章 总则

第一条 为了保护测绘成果，制定本法。

第四十条 本法自1998年10月1日起施行。"""
    found, basis = effective_date(law)
    assert found == date(2009, 4, 24) and basis.endswith("第一次修正")
    assert [d for d, _ in amendment_dates(law)] == [date(1998, 6, 20), date(2009, 4, 24)]
    # one parenthesised line, and a revision with its own later start
    one_line = ("(2001年8月3日第九届全国人民代表大会常务委员会第二十三次会议通过　根据2016年11月7日"
                "第十二届全国人民代表大会常务委员会第二十四次会议《关于修改〈某某法〉的决定》修正　"
                "2021年4月29日第十三届全国人民代表大会常务委员会第二十八次会议修订)\n"
                "第一条 为了……\n第六十条 本法自2021年9月1日起施行。")
    assert effective_date(one_line)[0] == date(2021, 9, 1)
    assert [d.year for d, _ in amendment_dates(one_line)] == [2001, 2016, 2021]
    # a company notice's approval mid-sentence is no amendment line
    notice = "《差旅管理办法》已经2024年3月1日总经理办公会审议通过，现予印发。\n第一条 ……"
    assert amendment_dates(notice) == [] and effective_date(notice) == (None, None)


def test_two_versions_of_a_law_in_one_folder_link_by_title_and_amendment_date() -> None:
    head = "# 中华人民共和国测绘成果保护法\n\n1998年6月20日 第九届…会议通过\n\n"
    tail = "\n第四十条 本法自1998年10月1日起施行。"
    old = candidate("laws/a.md", "中华人民共和国测绘成果保护法", head + "第一条 旧文。" + tail)
    new = candidate("laws/b.md", "中华人民共和国测绘成果保护法",
                    head + "2009年4月24日 第十一届…《关于修改…的决定》修正\n\n第一条 新文。" + tail)
    decisions = decide([new, old], never_taken)
    # the first version starts on the date its last article states, after its adoption
    law = "中华人民共和国测绘成果保护法"
    assert [(d.doc_id, d.version_id) for d in decisions.values()] == [
        (law, "1998-10-01"), (law, "2009-04-24")]
    assert rules(decisions, "laws/b.md") == ["same_title"]


def test_parts_of_one_law_in_several_files_are_no_versions() -> None:
    """LawRefBook splits a code into one file per part, each titled by the code; one part's
    opening lacks the 施行 line, so dates alone would make it an older version of the rest."""
    adopted = "# 中华人民共和国某某法典\n\n2020年5月28日 第十三届全国人民代表大会第三次会议通过\n\n"
    part = candidate("code/a.md", "中华人民共和国某某法典", adopted + "第一条 甲。")
    other = candidate("code/b.md", "中华人民共和国某某法典",
                      adopted + "2021年1月1日 施行\n\n第九条 乙。")
    assert (part.facts.effective_from, other.facts.effective_from) == (
        date(2020, 5, 28), date(2021, 1, 1))
    assert part.facts.amended == other.facts.amended == date(2020, 5, 28)
    assert not decide([part, other], never_taken)["code/b.md"].identity.links


def test_a_rule_starting_on_a_date_dates_its_notice() -> None:
    """自2026年3月1日起，…调整为… states when the rule starts as much as …起施行 does; a date
    that only names when something happened does not."""
    notice = "各部门：\n经研究决定，自2026年3月1日起，夜间加班餐费补贴调整为每人每次30元。"
    assert effective_date(notice)[0] == date(2026, 3, 1)
    assert effective_date("2026年3月1日起草本通知，请各部门知悉。")[0] is None


def test_a_correction_of_a_title_holding_a_year_is_its_newer_version() -> None:
    """A year inside the title (2026年夏季) is kept apart from the （更正） that re-issues it: the
    correction's marker is 2026更正, so it neither reads as the original's own version nor drops
    its 原通知同时作废 sentences later; neither notice is dated."""
    title = "关于发放2026年夏季高温津贴的通知"
    assert split_title(title + "（更正）") == (split_title(title)[0], "2026更正")
    original = candidate("hr/heat.html", title, "一、发放标准：每人每月300元。")
    corrected = candidate("hr/heat-fix.pdf", title + "（更正）",
                          f"我部于2026年5月20日发布的《{title}》中，津贴标准有误。"
                          "经核对，现重新发布如下，原通知同时作废。一、发放标准：每人每月360元。")
    decisions = decide([original, corrected], never_taken)
    assert decisions["hr/heat.html"].doc_id == decisions["hr/heat-fix.pdf"].doc_id
    assert rules(decisions, "hr/heat-fix.pdf") == ["repeal"]
    # without the repeal sentence the title alone says which re-issues which
    silent = candidate("hr/heat-fix.pdf", title + "（更正）", "一、发放标准：每人每月360元。")
    decisions = decide([silent, original], never_taken)
    assert rules(decisions, "hr/heat-fix.pdf") == ["reissue"]
    assert decisions["hr/heat.html"].version_id == "2026"
    assert decisions["hr/heat-fix.pdf"].version_id == "2026更正"
    # undated, the notice is out of force on every day, whichever version id sorts first
    doc = decisions["hr/heat.html"].doc_id
    superseded = superseded_keys(d.identity for d in decisions.values())
    for fix_id in ("2026更正", "0-sorts-first"):
        ends = closing_dates([
            VersionDates(doc_id=doc, version_id="2026", effective_from=None, declared_to=None,
                         superseded=f"{doc}@2026" in superseded),
            VersionDates(doc_id=doc, version_id=fix_id, effective_from=None, declared_to=None)])
        assert ends == {(doc, "2026"): date.min, (doc, fix_id): None}


def test_status_says_a_superseded_version_is_in_force_on_no_day(capsys) -> None:
    from flows.cli.reads import _print_inferred_versions

    identity = facts("关于发放2026年夏季高温津贴的通知", "每人每月300元。").model_copy(
        update={"inferred": True})
    _print_inferred_versions([SimpleNamespace(version_key="heat@2026", identity=identity,
                                              effective_from=None, effective_to=date.min)])
    assert "superseded, in force on no known day" in capsys.readouterr().out
