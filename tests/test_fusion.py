"""Fusion rules: identifiers in queries, exact matches first, weighted RRF, query language."""

from __future__ import annotations

from datetime import date

from ingest.search.confidence import Signals, abstains
from ingest.search.fusion import (
    amount_matches,
    chinese_number,
    clause_key,
    exact_matches,
    identifiers,
    is_english,
    missing_codes,
    order,
    rrf,
)
from ingest.text import sentences


def test_chinese_numerals() -> None:
    assert [chinese_number(n) for n in ("十", "十二", "二十", "二十三", "一百零五", "7", "甲")] == [
        10, 12, 20, 23, 105, 7, None]


def test_clause_numbers_compare_in_either_form() -> None:
    assert clause_key("第十二条") == clause_key("第12条") == clause_key("第 1２ 条") == "12"
    assert clause_key("4.2.2") == "4.2.2"
    assert clause_key("附则") is None and clause_key(None) is None


def test_identifiers_found_in_queries() -> None:
    ids = identifiers("VPN 报 SEC-3001，按第十二条和 4.2 条处理，超过150元和《审批权限表》怎么办")
    assert ids.clauses == ["12", "4.2"]
    assert ids.strings == ["sec-3001", "《审批权限表》"] and ids.amounts == ["150元"]
    assert not identifiers("出差打车超标了还能报吗")
    assert not identifiers("2026年出差到上海").clauses  # a year is not a clause number
    # a one-letter fault code, written against the Chinese around it
    assert identifiers("E117报警咋处理").strings == ["e117"]
    assert not identifiers("A4纸和5G网络").strings


def test_a_code_counts_as_missing_only_when_no_text_carries_it() -> None:
    asked = identifiers("E208报警怎么处理，参照《设备管理办法》第三条")
    assert missing_codes(asked, ["E207 冷却水压力低", "E209 电机过热"]) == ["e208"]
    assert missing_codes(asked, ["故障代码: E-208; 处置方法: 停机"]) == []  # hyphens aside
    assert missing_codes(identifiers("《设备管理办法》第三条"), ["无关"]) == []  # no code asked


def test_exact_matches_count_clause_and_text() -> None:
    ids = identifiers("第十条规定的打车费是不是150元")
    assert exact_matches(ids, "第十条", "市内交通费每天不超过150元") == 1
    assert exact_matches(ids, "第十一条", "市内交通费每天不超过150元") == 0
    assert amount_matches(ids, "市内交通费每天不超过１５０元") == 1  # NFKC
    assert amount_matches(identifiers("请假5天"), "事假每次不超过5天") == 1
    assert amount_matches(identifiers("请假5天"), "陪产假15天，或2.5天") == 0
    assert amount_matches(ids, "住宿费") == 0


def test_exact_identifier_outranks_fused_score() -> None:
    scores = rrf({"bm25": ["a", "b", "c"], "dense": ["b", "a", "c"]}, {}, 60)
    assert order(scores, {})[:2] in (["a", "b"], ["b", "a"])
    assert order(scores, {"c": 1})[0] == "c"


def test_weights_scale_each_path() -> None:
    scores = rrf({"bm25": ["a", "b"], "dense": ["b", "a"]}, {"dense": 0.25}, 60)
    assert scores["a"] > scores["b"]


def test_query_language() -> None:
    assert is_english("Who must approve regular hybrid work?")
    assert not is_english("VPN 报 SEC-3001 怎么办")


def test_identifier_query_ranks_the_exact_clause_first(ingested) -> None:
    from ingest.search import search_index

    _, settings = ingested
    response = search_index(settings, "信息安全管理规范 4.2.2 条是怎么规定的",
                            tenant_id="default", groups=["all-staff"], as_of=date(2026, 5, 1))
    top = response.results[0]
    assert (top.doc_id, top.clause_no, top.exact_match) == ("information-security", "4.2.2", True)
    assert response.identifiers.clauses == ["4.2.2"]


def test_sentences_split_chinese_and_english_and_drop_fragments() -> None:
    text = ("第五条 员工上下班须打卡。因故无法打卡的，应补卡；\n注：\n"
            "Staff must clock in. See 5.1 below.")
    assert sentences(text) == ["第五条 员工上下班须打卡", "因故无法打卡的，应补卡",
                               "Staff must clock in", "See 5.1 below."]
    assert sentences("注：") == ["注："]


def test_abstains_unless_a_sentence_is_close_or_an_identifier_matches() -> None:
    def signals(sentence: float, exact: bool = False, amount: bool = False) -> Signals:
        return Signals(cosine=0.5, term_cover=0.5, rare_cover=0.5, both_paths=True,
                       exact=exact, amount=amount, sentence=sentence)

    assert abstains([signals(0.50), signals(0.55)], answerable_from=0.56)
    assert not abstains([signals(0.50), signals(0.56)], answerable_from=0.56)
    assert not abstains([signals(0.40, exact=True)], answerable_from=0.56)
    assert abstains([signals(0.40, amount=True)], answerable_from=0.56)  # 5天 is no answer
    assert abstains([], answerable_from=0.56)


def test_search_abstains_when_the_corpus_has_no_answer(ingested) -> None:
    """No document mentions a housing fund: the search says so, and still returns its closest
    passages; an answerable question does not abstain."""
    from ingest.search import search_index

    _, settings = ingested
    ask = {"tenant_id": "default", "groups": ["all-staff"], "as_of": date(2026, 5, 1)}
    unanswerable = search_index(settings, "公司住房公积金的缴存比例是多少", **ask)
    answerable = search_index(settings, "出差期间伙食补助标准是多少", **ask)
    assert unanswerable.abstained and len(unanswerable.results) == 5
    assert not answerable.abstained
    assert answerable.results[0].confidence > max(r.confidence for r in unanswerable.results)
