"""Citations resolved through a corpus's titles: variants, self-references, articles, dangling."""

from __future__ import annotations

from pathlib import Path

from test_store_contract import flt, make_chunk

from ingest.graph import extract_triples
from ingest.graph.citations import citations
from ingest.graph.quality import graph_quality
from ingest.graph.titles import TitleIndex
from ingest.search.citations import citation_answer
from ingest.stores.ladybug_graph import LadybugGraphStore

LAWS = TitleIndex([
    "中华人民共和国公司法", "中华人民共和国民事诉讼法", "中华人民共和国刑法",
    "中华人民共和国刑法修正案（九）", "中华人民共和国刑法修正案（十）",
    "最高人民法院关于适用《中华人民共和国民事诉讼法》的解释",
    "人民检察院刑事诉讼规则", "人民检察院刑事诉讼规则（试行）",
])
COMPANY = TitleIndex(["采购管理办法", "资金管理办法", "宏远集团合同管理办法", "差旅费管理办法",
                      "华东公司费用报销办法", "华南公司费用报销办法"])


def test_a_title_resolves_through_its_variants() -> None:
    cases = {
        "中华人民共和国公司法": ("中华人民共和国公司法", "exact"),
        "公司法": ("中华人民共和国公司法", "prefix"),
        "中华人民共和国公司法（2023修订）": ("中华人民共和国公司法", "version"),
        "刑法修正案(九)": ("中华人民共和国刑法修正案（九）", "prefix"),
        "最高人民法院关于适用〈中华人民共和国民事诉讼法〉的解释":
            ("最高人民法院关于适用《中华人民共和国民事诉讼法》的解释", "exact"),
        "人民检察院刑事诉讼规则(试行)": ("人民检察院刑事诉讼规则（试行）", "exact"),
        "人民检察院刑事诉讼规则": ("人民检察院刑事诉讼规则", "exact"),
    }
    for cited, (title, rule) in cases.items():
        found = LAWS.resolve(cited)
        assert (found.title, found.rule) == (title, rule), cited


def test_company_prefixed_titles_resolve_to_the_document_itself() -> None:
    found = COMPANY.resolve("XX集团采购管理办法")
    assert (found.title, found.rule) == ("采购管理办法", "prefix")
    # the prefixed document answers to its short title too
    assert COMPANY.resolve("合同管理办法").title == "宏远集团合同管理办法"


def test_two_documents_never_merge_on_a_generic_or_shared_title() -> None:
    assert COMPANY.resolve("费用报销办法").rule == "dangling:ambiguous"
    assert COMPANY.resolve("华北公司费用报销办法").title is None  # another company's
    assert COMPANY.resolve("办法").rule == "dangling:generic"
    assert COMPANY.resolve("营业执照").rule == "dangling:form"
    assert LAWS.resolve("中华人民共和国合同法").rule == "dangling:not_in_corpus"


def test_self_references_resolve_to_the_citing_document() -> None:
    interpretation = "最高人民法院关于适用《中华人民共和国民事诉讼法》的解释"
    assert LAWS.resolve("解释", interpretation).title == interpretation
    found = list(citations("违反本法第十条、第十二条第二款规定的", "中华人民共和国公司法", LAWS))
    assert [(c.surface, c.resolution.rule, c.article) for c in found] == [
        ("本法第十条", "self", "第十条"), ("本法第十二条第二款", "self", "第十二条")]


def test_article_references_go_to_the_cited_document() -> None:
    text = ("依照《中华人民共和国刑法》第二百六十六条、第二百六十七条的规定，"
            "并适用民事诉讼法第一百一十九条第一款；见《关于〈刑法〉第三十条的解释》。")
    found = [(c.surface, c.resolution.title, c.article)
             for c in citations(text, "某解释", LAWS) if c.article]
    assert found == [
        ("《中华人民共和国刑法》第二百六十六条", "中华人民共和国刑法", "第二百六十六条"),
        ("《中华人民共和国刑法》第二百六十七条", "中华人民共和国刑法", "第二百六十七条"),
        ("民事诉讼法第一百一十九条第一款", "中华人民共和国民事诉讼法", "第一百一十九条"),
    ]


def test_a_defined_abbreviation_names_what_it_stands_for() -> None:
    text = ("根据《中华人民共和国民事诉讼法》（以下简称《民诉法》），制定本规定。"
            "《民诉法》第五条规定的情形")
    aliases = LAWS.aliases(text, "某规定")
    found = [c for c in citations(text, "某规定", LAWS, aliases) if c.article]
    assert [(c.resolution.title, c.resolution.rule, c.article) for c in found] == [
        ("中华人民共和国民事诉讼法", "alias", "第五条")]


def test_company_corpus_edges_carry_surface_rule_and_target_clause() -> None:
    """《XX集团采购管理办法》第九条 in two documents and 《采购管理办法》 in a third: all three
    cite one document, and the clause edge names its 第九条."""
    texts = {"资金管理办法": "大额付款按《XX集团采购管理办法》第九条执行。",
             "宏远集团合同管理办法": "合同签订前须完成《宏远集团采购管理办法》规定的比价。",
             "差旅费管理办法": "差旅采购适用《采购管理办法》。"}
    triples = [t for n, (title, text) in enumerate(texts.items())
               for t in extract_triples([make_chunk(n, doc=title, text=text)], title, COMPANY)]
    citing = {t.subject for t in triples if t.predicate == "引用" and t.object == "采购管理办法"}
    assert citing == set(texts)
    clause = [t for t in triples if t.predicate == "引用条款"]
    assert [(t.subject, t.object, t.surface, t.rule) for t in clause] == [
        ("《资金管理办法》第0条", "《采购管理办法》第九条", "《XX集团采购管理办法》第九条",
         "prefix")]
    assert all(0 < t.confidence < 1 for t in triples)


def test_dangling_citations_are_kept_and_counted_by_kind() -> None:
    chunk = make_chunk(1, text="依据《中华人民共和国合同法》和《公司法》，凭《营业执照》办理。")
    triples = extract_triples([chunk], "某办法", LAWS)
    quality = graph_quality(triples, ["某办法", *LAWS.titles])
    assert quality.dangling_kinds == {"form": 1, "not_in_corpus": 1}
    assert quality.dangling_references == {"中华人民共和国合同法": 1, "营业执照": 1}


def test_bare_article_numbers_belong_to_the_text_unless_it_has_no_such_article() -> None:
    own = list(citations("依照第五条处理。", "中华人民共和国公司法", LAWS, articles={"第五条"}))
    assert [(c.resolution.title, c.resolution.rule) for c in own] == [
        ("中华人民共和国公司法", "self")]
    # a list of offences names 刑法's articles; its title says which law it is about
    crimes = list(citations("109.洗钱罪(第191条)", "关于适用刑法分则规定的犯罪的罪名的意见", LAWS,
                            articles=set()))
    assert [(c.resolution.title, c.article) for c in crimes] == [("中华人民共和国刑法", "第191条")]
    unknown = list(citations("依照第五条处理。", "某通知", LAWS, articles=set()))
    assert [c.resolution.rule for c in unknown] == ["dangling:unknown_article"]
    # an article's own heading inside a chunk cites nothing; an amendment's numbers are the law's
    assert list(citations("第四条 内容。 第五条 内容。", "某规定", LAWS)) == []
    amendment = list(citations("将第十七条修改为:", "中华人民共和国刑法修正案(十)", LAWS))
    assert [(c.resolution.title, c.resolution.rule) for c in amendment] == [
        ("中华人民共和国刑法", "amended")]


def test_a_law_named_without_quotes_that_nothing_resolves_dangles_by_its_name() -> None:
    found = list(citations("参照物权法第一百零六条", "某规定", LAWS, articles={"第一条"}))
    assert [(c.name, c.resolution.rule, c.article) for c in found] == [
        ("物权法", "dangling:not_in_corpus", "第一百零六条")]
    triples = extract_triples([make_chunk(1, text="参照物权法第一百零六条")], "某规定", LAWS,
                              {"第1条"})
    assert [(t.object, t.rule) for t in triples] == [
        ("《物权法》第一百零六条", "dangling:not_in_corpus")]


NAMED = TitleIndex([
    "中华人民共和国国家赔偿法", "中华人民共和国宪法", "中华人民共和国立法法",
    "中华人民共和国国务院组织法", "中华人民共和国企业破产法", "中华人民共和国劳动合同法",
    "中华人民共和国刑法", "中华人民共和国社会保险法", "中华人民共和国公司法",
    "中华人民共和国刑法修正案（九）",
])


def _named(text: str, citing: str = "某条例") -> list[tuple[str, str | None, str]]:
    return [(c.surface, c.resolution.title, c.resolution.rule)
            for c in citations(text, citing, NAMED) if c.article is None]


def test_a_law_named_without_quotes_or_article_is_a_document_citation_where_the_text_cites_it(
) -> None:
    assert _named("应当依照国家赔偿法的规定给予赔偿。") == [
        ("国家赔偿法", "中华人民共和国国家赔偿法", "unquoted")]
    # a citing verb's whole list, the 《》 and 本法 items in it skipped over
    assert [t for _, t, _ in _named("根据宪法、立法法和国务院组织法的有关规定，制定本条例。")] == [
        "中华人民共和国宪法", "中华人民共和国立法法", "中华人民共和国国务院组织法"]
    assert [t for _, t, _ in _named("依照本条例、《中华人民共和国立法法》和企业破产法处理")] == [
        "中华人民共和国立法法", "中华人民共和国企业破产法"]
    # no verb: a known name right before 的规定 / 规定, at a word boundary
    assert [t for _, t, _ in _named("用人单位依照企业破产法规定进行重整的；劳动合同法规定的情形")
            ] == ["中华人民共和国企业破产法", "中华人民共和国劳动合同法"]
    triples = extract_triples([make_chunk(1, text="依照国家赔偿法的规定给予赔偿。")], "某条例",
                              NAMED)
    assert [(t.predicate, t.object, t.surface, t.rule) for t in triples] == [
        ("引用", "中华人民共和国国家赔偿法", "国家赔偿法", "unquoted")]
    assert 0 < triples[0].confidence < 1


def test_a_law_name_inside_other_words_or_the_documents_own_title_cites_nothing() -> None:
    refused = [
        "违反社会保险法律、法规、规章的，应当责令改正。",  # the field's laws, not the 社会保险法
        "依照劳动合同法实施条例的规定",  # another document, which this corpus lacks
        "依照刑法修正案的规定",  # an amendment, not 刑法 (and no number says which)
        "符合有限责任公司法规定",  # 公司法 inside a longer word
        "依照物权法的规定",  # a name the corpus does not resolve: no document edge
        "依照本法规定处罚；依法给予赔偿",  # self-references and 依法
        "依照刑法第二百六十六条的规定",  # an article citation, not a document one
    ]
    for text in refused:
        assert _named(text) == [], text
    # the citing document's own name: never its own citation
    assert _named("劳动合同法规定的情形，依照劳动合同法处理", "中华人民共和国劳动合同法") == []


def test_a_title_cut_by_a_chunk_boundary_is_read_whole_where_it_starts() -> None:
    first = make_chunk(1, text="第一条 分别按照《中华人民共")
    second = make_chunk(2, text="和国刑法》第二十条的规定予以适用。")
    triples = extract_triples([first, second], "某解释", NAMED, {"第1条", "第2条"})
    assert [(t.source_chunk_id, t.object, t.rule) for t in triples] == [
        (first.chunk_id, "中华人民共和国刑法", "exact"),
        (first.chunk_id, "《中华人民共和国刑法》第二十条", "exact")]
    # the second chunk's tail of the title (and its 第二十条) is not the text's own article
    assert list(citations(second.text, "某解释", NAMED, articles={"第二十条"})) == []


def test_an_issuer_written_before_the_quoted_title_belongs_to_it() -> None:
    rules = "最高人民法院关于执行《中华人民共和国刑法》确定罪名的规定"
    index = TitleIndex([rules, "中华人民共和国刑法"])
    text = "现对最高人民法院《关于执行〈中华人民共和国刑法〉确定罪名的规定》作如下补充"
    found = [c for c in citations(text, "某补充规定", index) if c.article is None]
    assert [(c.surface[:7], c.resolution.title) for c in found] == [("最高人民法院《", rules)]
    # not in the corpus: it dangles under the issuer's full title, as other texts write it
    alone = [c for c in citations(text, "某补充规定", NAMED) if c.article is None]
    assert [(c.name, c.resolution.rule) for c in alone] == [
        ("最高人民法院关于执行〈中华人民共和国刑法〉确定罪名的规定", "dangling:not_in_corpus")]
    # a meeting is no issuer
    meeting = list(citations("常务委员会第十次会议《关于修改〈中华人民共和国刑法〉的决定》",
                             "某法", NAMED))
    assert meeting[0].name == "关于修改〈中华人民共和国刑法〉的决定"


def test_who_cites_a_law_no_corpus_title_holds_finds_it_with_and_without_the_country_name(
        tmp_path: Path) -> None:
    """A repealed law is cited as 《物权法》 by one text and 《中华人民共和国物权法》 by another:
    two written names, one law, both citing documents in its answer."""
    short = make_chunk(1, doc="a", text="第1条 依照《物权法》处理。")
    full = make_chunk(2, doc="b", text="第2条 根据《中华人民共和国物权法》制定。")
    store = LadybugGraphStore(tmp_path / "graph")
    try:
        for chunk, title in ((short, "某规定"), (full, "某条例")):
            store.upsert([chunk], extract_triples([chunk], title, NAMED),
                         {chunk.version_key: title})
        chunks = {c.chunk_id: c for c in (short, full)}
        for asked in ("物权法", "中华人民共和国物权法"):
            answer = citation_answer(store, lambda ids: {i: chunks[i] for i in ids if i in chunks},
                                     asked, flt(hidden_keys=[]))
            assert sorted(d.title for d in answer.incoming) == ["某条例", "某规定"], asked
    finally:
        store.close()
