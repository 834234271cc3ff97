"""Entity linking: titles with or without 《》, clause numbers in either form, role aliases."""

from __future__ import annotations

import pytest

from ingest.graph.link import EntityIndex, chinese_number, clause_key
from ingest.models import GraphNode

ENTITIES = [
    GraphNode(name="差旅费管理办法", type="Document"),
    GraphNode(name="审批权限表", type="Document"),
    GraphNode(name="信息安全管理规范", type="Document"),
    GraphNode(name="《差旅费管理办法》第十六条", type="Clause"),
    GraphNode(name="《差旅费管理办法》第七条", type="Clause"),
    GraphNode(name="《信息安全管理规范》4.2.1", type="Clause"),
    GraphNode(name="《采购管理办法》第七条", type="Clause"),
    GraphNode(name="部门负责人", type="Role"),
    GraphNode(name="差旅费报销", type="Matter"),
    GraphNode(name="差旅", type="Matter"),
    GraphNode(name="费", type="Matter"),
]


def linked(query: str) -> list[tuple[str, float]]:
    return [(link.name, link.score) for link in EntityIndex(ENTITIES).link(query)]


@pytest.mark.parametrize("text,number", [("十二", 12), ("十", 10), ("一百零五", 105),
                                         ("二十", 20), ("两", 2), ("12", 12), ("甲", None)])
def test_chinese_numbers(text: str, number: int | None) -> None:
    assert chinese_number(text) == number


def test_clause_numbers_have_one_key_in_every_spelling() -> None:
    assert clause_key("第十二条") == clause_key("第12条") == clause_key("12条") == "art:12"
    assert clause_key("12") == "art:12"
    assert clause_key("4.2") == "dec:4.2" != clause_key("4.2.1")
    assert clause_key("附则") is None


def test_titles_link_with_or_without_book_quotes() -> None:
    assert linked("哪些制度引用了《审批权限表》") == [("审批权限表", 1.0)]
    assert linked("哪些制度引用了审批权限表") == [("审批权限表", 0.9)]
    # A 《…》 that is no entity is another document: the known title inside it is not linked.
    assert "差旅费管理办法" not in dict(linked("《差旅费管理办法实施细则》"))


def test_longer_names_win_over_names_inside_them() -> None:
    names = [name for name, _ in linked("差旅费报销要谁审批")]
    assert names == ["差旅费报销"]


def test_clauses_link_by_number_within_a_named_title() -> None:
    assert ("《差旅费管理办法》第十六条", 1.0) in linked("《差旅费管理办法》第16条提到了哪些条款")
    assert ("《差旅费管理办法》第十六条", 1.0) in linked("《差旅费管理办法》16 说了什么")
    assert ("《信息安全管理规范》4.2.1", 1.0) in linked("信息安全管理规范4.2.1是什么")
    # Without a title, every document's clause of that number, at a lower score.
    assert sorted(linked("第七条提到的规定")) == [("《差旅费管理办法》第七条", 0.6),
                                                  ("《采购管理办法》第七条", 0.6)]
    assert [n for n, _ in linked("差旅费管理办法第七条")] == ["《差旅费管理办法》第七条",
                                                              "差旅费管理办法"]


def test_roles_link_through_their_aliases() -> None:
    assert linked("部门主管能审批什么") == [("部门负责人", 0.9)]
    assert linked("今天天气怎么样") == []


def test_a_quoted_title_links_through_its_variants() -> None:
    index = EntityIndex([*ENTITIES, GraphNode(name="中华人民共和国公司法", type="Document")])
    assert [(link.name, link.surface) for link in index.link("哪些规定引用了《公司法》")] == [
        ("中华人民共和国公司法", "《公司法》")]
    assert index.link("哪些规定引用了《管理办法》") == []  # generic: names no document
