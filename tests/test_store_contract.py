"""One contract per store role, run against every implementation of that role.

Each `*_store` fixture is parametrized by implementation; a production engine joins by adding
its name to the params list and a branch to the factory.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from ingest.embed import Embedding
from ingest.models import Chunk, ChunkKind, SearchFilter, Triple, version_key
from ingest.stores.protocols import VectorStore

DIM = 8


def make_chunk(n: int, *, doc: str = "policy", version: str = "1", text: str = "",
               tenant: str = "t1", acl: tuple[str, ...] = ("staff",),
               eff_from: date | None = date(2025, 1, 1), eff_to: date | None = None,
               kind: ChunkKind = ChunkKind.CLAUSE) -> Chunk:
    return Chunk(
        doc_id=doc, version_id=version, chunk_id=f"{doc}-{version}-{n}", kind=kind,
        text=text or f"第{n}条 差旅 报销 标准 条款{n}", prefix=f"《{doc}》v{version}",
        clause_no=f"第{n}条", structural_path=f"第{n}条", page_start=1, page_end=1,
        char_start=0, char_end=10, tenant_id=tenant, acl=list(acl), source_uri="file:///x",
        effective_from=eff_from, effective_to=eff_to, parser_version="p", chunker_version="c",
        content_hash=f"h{n}",
    )


def vector(n: int, coverage: float = 1.0) -> Embedding:
    values = [0.0] * DIM
    values[n % DIM] = 1.0
    return Embedding(values=values, coverage=coverage)


def flt(**overrides) -> SearchFilter:
    base = {"tenant_id": "t1", "groups": ["staff"], "as_of": date(2026, 1, 1),
            "hidden_keys": [version_key("policy", "2")]}
    return SearchFilter(**(base | overrides))


# ---- factories ----------------------------------------------------------------------------------
# Production engines are the ones `deploy/local/engines.sh start` runs (`make test` starts them).
# A test against an engine that is not running fails with that advice; it never skips.

ES_URL = os.environ.get("KBFLOW_ES_URL", "http://127.0.0.1:9200")
NEO4J_URI = os.environ.get("KBFLOW_NEO4J_URI", "bolt://127.0.0.1:7687")
MILVUS_URI = os.environ.get("KBFLOW_MILVUS_URI", "http://127.0.0.1:19530")


def unique_name(prefix: str = "kbflow_test") -> str:
    """A name no other test (or run) uses, so tests never see each other's data."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def require_engine(name: str, url: str, probe: Callable[[], object]) -> str:
    try:
        probe()
    except Exception as exc:  # noqa: BLE001 - whatever the client raises, the advice is the same
        pytest.fail(f"{name} is not reachable at {url} ({type(exc).__name__}: {exc}); "
                    "start it with `deploy/local/engines.sh start`", pytrace=False)
    return url


@pytest.fixture(scope="session")
def es_url() -> str:
    from elasticsearch import Elasticsearch

    with Elasticsearch(ES_URL, request_timeout=10) as es:
        return require_engine("Elasticsearch", ES_URL, es.cluster.health)


@pytest.fixture(scope="session")
def neo4j_uri() -> str:
    from neo4j import GraphDatabase

    with GraphDatabase.driver(NEO4J_URI, auth=None, connection_timeout=10) as driver:
        return require_engine("Neo4j", NEO4J_URI, driver.verify_connectivity)


@pytest.fixture(scope="session")
def milvus_uri() -> str:
    from pymilvus import MilvusClient

    return require_engine("Milvus", MILVUS_URI,
                          lambda: MilvusClient(uri=MILVUS_URI, timeout=10).list_collections())


@pytest.fixture(params=["sqlite", "milvus-lite", "milvus-grpc"])
def open_vector_store(request: pytest.FixtureRequest, tmp_path: Path):
    """Opens a store of the parametrized implementation: open(dimension, model)."""
    from ingest.stores.milvus import MilvusVectorStore
    from ingest.stores.sqlite_vectors import SqliteVectorStore

    opened = []
    collection = unique_name()

    def open_(dimension: int = DIM, model: str = "test-model") -> VectorStore:
        if request.param == "sqlite":
            store = SqliteVectorStore(tmp_path / "vectors.db", dimension, model)
        elif request.param == "milvus-lite":
            store = MilvusVectorStore(str(tmp_path / "milvus.db"), dimension, model)
        else:
            store = MilvusVectorStore(request.getfixturevalue("milvus_uri"), dimension, model,
                                      collection=collection)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()
    if request.param == "milvus-grpc":
        from pymilvus import MilvusClient

        client = MilvusClient(request.getfixturevalue("milvus_uri"))
        client.drop_collection(f"{collection}_g1")
        client.close()


@pytest.fixture
def vector_store(open_vector_store):
    return open_vector_store()


@pytest.fixture(params=["sqlite-fts5", "elasticsearch"])
def lexical_store(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "sqlite-fts5":
        from ingest.stores.sqlite_lexical import SqliteLexicalStore

        store = SqliteLexicalStore(tmp_path / "lexical.db")
        yield store
        store.close()
        return
    from ingest.stores.elasticsearch import ElasticsearchLexicalStore

    store = ElasticsearchLexicalStore(request.getfixturevalue("es_url"), alias=unique_name())
    yield store
    store.drop()
    store.drop_template()
    store.close()


@pytest.fixture(params=["ladybug", "neo4j"])
def graph_store(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "ladybug":
        from ingest.stores.ladybug_graph import LadybugGraphStore

        store = LadybugGraphStore(tmp_path / "graph.lbug")
        yield store
        store.close()
        return
    from ingest.stores.neo4j_graph import Neo4jGraphStore

    store = Neo4jGraphStore(request.getfixturevalue("neo4j_uri"), generation=unique_name("t"),
                            alias=unique_name())
    yield store
    store.drop()
    store.close()


# ---- vector contract ----------------------------------------------------------------------------

def test_vector_upsert_is_idempotent_and_delete_removes(vector_store) -> None:
    chunks = [make_chunk(i) for i in range(1, 4)]
    vectors = {c.chunk_id: vector(i) for i, c in enumerate(chunks, start=1)}
    vector_store.upsert(chunks, vectors)
    vector_store.upsert(chunks, vectors)
    assert vector_store.count() == 3
    assert vector_store.chunk_ids("policy@1") == {c.chunk_id for c in chunks}
    vector_store.delete([chunks[0].chunk_id])
    assert vector_store.chunk_ids("policy@1") == {chunks[1].chunk_id, chunks[2].chunk_id}


def test_vector_chunk_ids_of_many_versions_in_one_call(vector_store) -> None:
    odd = 'a"b\nc'  # a key with characters the filter expression must escape
    chunks = [make_chunk(1), make_chunk(2), make_chunk(1, version="2"), make_chunk(1, doc=odd)]
    vector_store.upsert(chunks, {c.chunk_id: vector(i) for i, c in enumerate(chunks)})
    found = vector_store.chunk_ids_of(["policy@1", "policy@2", f"{odd}@1", "absent@1"])
    assert found == {"policy@1": {"policy-1-1", "policy-1-2"}, "policy@2": {"policy-2-1"},
                     f"{odd}@1": {f"{odd}-1-1"}, "absent@1": set()}
    assert found["policy@1"] == vector_store.chunk_ids("policy@1")


def test_vector_search_ranks_nearest_first(vector_store) -> None:
    chunks = [make_chunk(i) for i in range(1, 4)]
    vector_store.upsert(chunks, {c.chunk_id: vector(i) for i, c in enumerate(chunks, start=1)})
    hits = vector_store.search(vector(2).values, flt(), 3, 0.5)
    assert hits[0].chunk_id == chunks[1].chunk_id
    assert hits[0].score > hits[-1].score


def test_vector_filters_apply_inside_the_query(vector_store) -> None:
    rows = {
        "visible": make_chunk(1),
        "other_tenant": make_chunk(2, tenant="t2"),
        "other_group": make_chunk(3, acl=("finance",)),
        "expired": make_chunk(4, eff_to=date(2025, 6, 30)),
        "future": make_chunk(5, eff_from=date(2027, 1, 1)),
        "unpublished": make_chunk(6, version="2"),
    }
    low_coverage = make_chunk(7)
    all_chunks = [*rows.values(), low_coverage]
    vectors = {c.chunk_id: vector(1) for c in rows.values()}
    vectors[low_coverage.chunk_id] = vector(1, coverage=0.1)
    vector_store.upsert(all_chunks, vectors)
    # k is larger than the number of rows: a post-filter would still return only "visible",
    # but so would an in-query filter; the second search proves the filter is not a post-filter
    # by asking for one hit and still getting the one visible row.
    hits = vector_store.search(vector(1).values, flt(), 10, 0.5)
    assert [h.chunk_id for h in hits] == [rows["visible"].chunk_id]
    assert [h.chunk_id for h in vector_store.search(vector(1).values, flt(), 1, 0.5)] == [
        rows["visible"].chunk_id
    ]
    finance = vector_store.search(vector(1).values, flt(groups=["finance"]), 10, 0.5)
    assert [h.chunk_id for h in finance] == [rows["other_group"].chunk_id]


# Group names a sidecar may carry: wildcard, delimiter and quote characters, a prefix of another
# name, several groups. Each row is found by exactly the groups it names, whole.
GROUPED_ROWS = {1: ("fin_ance",), 2: ("a%",), 3: ("ab", "财务部"), 4: ('x"|y',)}
GROUP_QUERIES = {"fin_ance": {1}, "finXance": set(), "a%": {2}, "abc": set(), "a": set(),
                 "财务部": {3}, "财务": set(), 'x"|y': {4}, "x": set(), "|": set(), "%": set()}


def test_vector_group_names_are_matched_whole(vector_store) -> None:
    chunks = [make_chunk(n, acl=acl) for n, acl in GROUPED_ROWS.items()]
    vector_store.upsert(chunks, {c.chunk_id: vector(1) for c in chunks})
    for group, rows in GROUP_QUERIES.items():
        hits = vector_store.search(vector(1).values, flt(groups=[group]), 10, 0.5)
        assert {h.chunk_id for h in hits} == {f"policy-1-{n}" for n in rows}, group
    both = vector_store.search(vector(1).values, flt(groups=["a%", "财务部"]), 10, 0.5)
    assert {h.chunk_id for h in both} == {"policy-1-2", "policy-1-3"}


def test_vector_dense_search_over_chinese_text(open_vector_store, embedder) -> None:
    """Real bge-small-zh vectors: a colloquial Chinese question finds its clause by meaning."""
    texts = ["出差期间市内交通费每人每天不超过150元，凭发票实报实销。",
             "员工每年享有带薪年休假，工龄满十年的为十天。",
             "公司印章由行政部统一保管，用印需经部门负责人审批。",
             "Employees may work from home up to two days per week."]
    chunks = [make_chunk(i, text=t) for i, t in enumerate(texts, start=1)]
    store = open_vector_store(embedder.dimension, embedder.name)
    encoded = embedder.encode([c.embed_text for c in chunks])
    store.upsert(chunks, {c.chunk_id: e for c, e in zip(chunks, encoded, strict=True)})
    for question, expected in (("在外地坐出租车的费用能报多少", 0), ("谁管公章", 2)):
        hits = store.search(embedder.encode_query(question).values, flt(), 4, 0.7)
        assert hits[0].chunk_id == chunks[expected].chunk_id, question


def test_vector_reader_sees_what_another_writer_changes(open_vector_store) -> None:
    """A long-lived reader (a warm `kbflow serve`) sees rows another writer adds, rewrites in
    place and deletes after the reader's first search: each row once, with its newest vector."""
    writer, reader = open_vector_store(), open_vector_store()
    first, second = make_chunk(1), make_chunk(2)

    def found() -> list[str]:
        return [h.chunk_id for h in reader.search(vector(1).values, flt(), 5, -1.0)]

    writer.upsert([first], {first.chunk_id: vector(1)})
    assert found() == [first.chunk_id]
    writer.upsert([first, second], {first.chunk_id: vector(2), second.chunk_id: vector(1)})
    assert found() == [second.chunk_id, first.chunk_id]
    writer.delete([second.chunk_id])
    assert found() == [first.chunk_id]


def test_vector_search_stays_right_after_most_rows_are_replaced(open_vector_store) -> None:
    """Rows rewritten many times over (a corpus re-ingested daily) are found once each, with
    the nearest first, by a reader that searched before and between the rewrites."""
    writer, reader = open_vector_store(), open_vector_store()
    chunks = [make_chunk(n) for n in range(1, 1201)]
    for round_ in range(3):
        writer.upsert(chunks, {c.chunk_id: vector(n + round_) for n, c in enumerate(chunks)})
        hits = reader.search(vector(round_).values, flt(), 400, -1.0)
        nearest = {c.chunk_id for n, c in enumerate(chunks) if n % DIM == 0}
        assert {h.chunk_id for h in hits[: len(nearest)]} == nearest
        assert len({h.chunk_id for h in hits}) == len(hits) == 400
        writer.delete([c.chunk_id for c in chunks[::2]])
        assert all(int(h.chunk_id.rsplit("-", 1)[1]) % 2 == 0
                   for h in reader.search(vector(round_).values, flt(), 400, -1.0))


def test_vector_store_refuses_another_model(open_vector_store) -> None:
    from ingest.stores.protocols import EmbeddingMismatchError

    open_vector_store(DIM, "model-a").close()
    with pytest.raises(EmbeddingMismatchError, match="model-a"):
        open_vector_store(DIM, "model-b")


# ---- lexical contract ---------------------------------------------------------------------------

def test_lexical_upsert_replaces_and_delete_removes(lexical_store) -> None:
    chunk = make_chunk(1, text="第1条 出差期间市内交通费按标准报销")
    lexical_store.upsert([chunk])
    lexical_store.upsert([chunk.model_copy(update={"text": "第1条 住宿费按城市等级报销"})])
    assert lexical_store.count() == 1
    assert lexical_store.search("市内交通", flt(), 5) == []
    assert [h.chunk_id for h in lexical_store.search("住宿费", flt(), 5)] == [chunk.chunk_id]
    lexical_store.delete([chunk.chunk_id])
    assert lexical_store.count() == 0
    assert lexical_store.chunk_ids("policy@1") == set()


def test_lexical_bm25_segments_chinese_and_ranks(lexical_store) -> None:
    chunks = [
        make_chunk(1, text="第1条 员工出差打车费用超标的，经部门负责人审批后报销"),
        make_chunk(2, text="第2条 年休假天数按工作年限计算"),
        make_chunk(3, text="第3条 出差住宿标准按城市等级执行"),
    ]
    lexical_store.upsert(chunks)
    hits = lexical_store.search("出差打车超标了还能报吗", flt(), 5)
    assert hits[0].chunk_id == chunks[0].chunk_id
    assert chunks[1].chunk_id not in {h.chunk_id for h in hits}


def test_lexical_filters_apply_inside_the_query(lexical_store) -> None:
    text = "第1条 出差打车费用报销"
    rows = {
        "visible": make_chunk(1, text=text),
        "other_tenant": make_chunk(2, text=text, tenant="t2"),
        "other_group": make_chunk(3, text=text, acl=("finance",)),
        "expired": make_chunk(4, text=text, eff_to=date(2025, 6, 30)),
        "unpublished": make_chunk(5, text=text, version="2"),
        "parent": make_chunk(6, text=text, kind=ChunkKind.PARENT),
    }
    lexical_store.upsert(list(rows.values()))
    assert [h.chunk_id for h in lexical_store.search("打车", flt(), 1)] == [
        rows["visible"].chunk_id
    ]
    two_versions = flt(hidden_keys=[])
    assert {h.chunk_id for h in lexical_store.search("打车", two_versions, 10)} == {
        rows["visible"].chunk_id, rows["unpublished"].chunk_id
    }
    assert lexical_store.search("打车", flt(hidden_keys=["policy@1", "policy@2"]), 10) == []


def test_lexical_finds_the_visible_rows_behind_many_better_hidden_ones(lexical_store) -> None:
    """More rows than one ranking pass reads outscore or tie every row the reader may see
    (another tenant's, an unpublished version's): the hits are still the best visible rows,
    ties by chunk id, as if the filter ran first."""
    text = "差旅 报销 标准"
    better = [make_chunk(n, tenant="t2", text=f"{text} 差旅 报销") for n in range(1, 151)]
    better += [make_chunk(n, version="2", text=f"{text} 差旅 报销") for n in range(1, 151)]
    ties = [make_chunk(n, doc="z", tenant="t2", text=text) for n in range(1, 151)]
    visible = [make_chunk(n, doc="z", version="3", text=text) for n in (5, 3, 9)]
    lexical_store.upsert([*better, *ties, *visible])
    hits = lexical_store.search("差旅报销", flt(), 2)
    assert [h.chunk_id for h in hits] == ["z-3-3", "z-3-5"]


def test_lexical_ties_at_the_edge_of_a_ranking_pass_keep_chunk_id_order(lexical_store) -> None:
    """Equal scores on both sides of what one ranking pass reads: the visible hits are the
    smallest chunk ids, wherever the engine put them among the ties."""
    text = "差旅 报销 标准"
    first = [make_chunk(n, doc="z", version="3", text=text) for n in (9, 5)]
    hidden = [make_chunk(n, doc="z", tenant="t2", text=text) for n in range(1, 151)]
    last = [make_chunk(3, doc="z", version="3", text=text)]
    for rows in (first, hidden, last):
        lexical_store.upsert(rows)
    hits = lexical_store.search("差旅报销", flt(), 2)
    assert [h.chunk_id for h in hits] == ["z-3-3", "z-3-5"]


def test_lexical_group_names_are_matched_whole(lexical_store) -> None:
    lexical_store.upsert([make_chunk(n, text="第1条 出差打车费用报销", acl=acl)
                          for n, acl in GROUPED_ROWS.items()])
    for group, rows in GROUP_QUERIES.items():
        hits = lexical_store.search("打车", flt(groups=[group]), 10)
        assert {h.chunk_id for h in hits} == {f"policy-1-{n}" for n in rows}, group


def test_lexical_vocabulary_lists_indexed_terms_with_chunk_counts(lexical_store) -> None:
    """Typo correction's dictionary: the jieba terms indexed, each with the number of chunks
    holding it, current after upserts and deletes."""
    first = make_chunk(1, text="差旅费报销须附发票")
    second = make_chunk(2, text="加班餐费凭发票报销")
    lexical_store.upsert([first, second])
    vocab = lexical_store.vocabulary()
    assert vocab["发票"] == 2 and vocab["报销"] == 2 and vocab["加班"] == 1
    lexical_store.delete([second.chunk_id])
    vocab = lexical_store.vocabulary()
    assert vocab["发票"] == 1 and vocab.get("加班", 0) == 0


# ---- graph contract -----------------------------------------------------------------------------

def triple(chunk: Chunk, obj: str = "市内交通费") -> Triple:
    return Triple(subject="部门负责人", predicate="审批", object=obj, subject_type="Role",
                  object_type="Matter", source_chunk_id=chunk.chunk_id, doc_id=chunk.doc_id,
                  version_id=chunk.version_id, extractor="rules@test", confidence=0.7)


def test_graph_merge_is_idempotent(graph_store) -> None:
    first, second = make_chunk(1), make_chunk(2)
    first.next_chunk_id = second.chunk_id
    triples = [triple(first), triple(second, "住宿费")]
    graph_store.upsert([first, second], triples)
    graph_store.upsert([first, second], triples)
    assert graph_store.count() == 2
    stored = graph_store.triples("policy@1")
    assert {(t.object, t.source_chunk_id, t.extractor) for t in stored} == {
        ("市内交通费", first.chunk_id, "rules@test"), ("住宿费", second.chunk_id, "rules@test")
    }


def next_links(store: Any) -> set[tuple[str, str]]:
    """The stored NEXT links (no protocol reads them: they are for people querying the graph)."""
    from ingest.stores.ladybug_graph import LadybugGraphStore

    if isinstance(store, LadybugGraphStore):
        rows = store._rows("MATCH (a:Chunk)-[:NEXT]->(b:Chunk) RETURN a.chunk_id, b.chunk_id")
        return {(a, b) for a, b in rows}
    with store._driver.session(database=store._database) as session:
        return {(r["a"], r["b"]) for r in session.run(
            "MATCH (a:Chunk {generation: $g})-[:NEXT]->(b:Chunk) "
            "RETURN a.chunk_id AS a, b.chunk_id AS b", g=store.generation)}


def test_graph_next_links_follow_an_edit(graph_store) -> None:
    """A reworded chunk (deleted, written again) keeps the link from its unchanged predecessor;
    a chunk whose successor changed loses its old link."""
    a, b, c, d = (make_chunk(n) for n in range(4))
    for first, second in ((a, b), (b, c)):
        first.next_chunk_id, second.prev_chunk_id = second.chunk_id, first.chunk_id
    graph_store.upsert([a, b, c], [])
    assert next_links(graph_store) == {(a.chunk_id, b.chunk_id), (b.chunk_id, c.chunk_id)}
    graph_store.delete_chunks([b.chunk_id])  # b reworded: written again, a untouched
    graph_store.upsert([b], [])
    assert next_links(graph_store) == {(a.chunk_id, b.chunk_id), (b.chunk_id, c.chunk_id)}
    b.next_chunk_id, d.prev_chunk_id, d.next_chunk_id = d.chunk_id, b.chunk_id, c.chunk_id
    c.prev_chunk_id = d.chunk_id  # d inserted between b and c
    graph_store.upsert([b, d, c], [])
    assert next_links(graph_store) == {(a.chunk_id, b.chunk_id), (b.chunk_id, d.chunk_id),
                                       (d.chunk_id, c.chunk_id)}


def test_graph_delete_chunks_removes_their_triples_only(graph_store) -> None:
    first, second = make_chunk(1), make_chunk(2)
    graph_store.upsert([first, second], [triple(first), triple(second, "住宿费")])
    graph_store.delete_chunks([first.chunk_id])
    assert [t.source_chunk_id for t in graph_store.triples("policy@1")] == [second.chunk_id]
    assert graph_store.count() == 1


# ---- graph path search --------------------------------------------------------------------------

def cite(chunk: Chunk, subject: str, obj: str, predicate: str = "引用",
         confidence: float = 0.9) -> Triple:
    return Triple(subject=subject, predicate=predicate, object=obj, subject_type="Document",
                  object_type="Document", source_chunk_id=chunk.chunk_id, doc_id=chunk.doc_id,
                  version_id=chunk.version_id, extractor="rules@test", confidence=confidence)


def walk(path) -> list[str]:
    return [node.name for node in path.nodes]


def test_graph_paths_follow_relations_up_to_the_hop_limit(graph_store) -> None:
    chunks = [make_chunk(i) for i in range(1, 4)]
    graph_store.upsert(chunks, [cite(chunks[0], "A", "B"), cite(chunks[1], "B", "C"),
                                cite(chunks[2], "C", "D")])
    two = graph_store.paths(["A"], flt())
    assert [walk(p) for p in two] == [["A", "B"], ["A", "B", "C"]]
    relation = two[1].relations[1]
    assert (relation.subject, relation.object, relation.source_chunk_id, relation.doc_id,
            relation.version_id) == ("B", "C", chunks[1].chunk_id, "policy", "1")
    assert [walk(p) for p in graph_store.paths(["A"], flt(), hops=1)] == [["A", "B"]]
    assert [walk(p) for p in graph_store.paths(["A"], flt(), hops=3)][-1] == ["A", "B", "C", "D"]
    # Direction is relative to the walk; "in" from C finds who cites C.
    assert [walk(p) for p in graph_store.paths(["C"], flt(), hops=1, direction="in")] == [
        ["C", "B"]]
    assert [walk(p) for p in graph_store.paths(["C"], flt(), hops=1, direction="out")] == [
        ["C", "D"]]
    assert graph_store.paths(["A"], flt(), predicates=["审批"]) == []
    assert graph_store.paths(["nobody"], flt()) == []
    with pytest.raises(ValueError, match="hops"):
        graph_store.paths(["A"], flt(), hops=0)
    with pytest.raises(ValueError, match="max_paths"):
        graph_store.paths(["A"], flt(), max_paths=10**6)


def test_graph_paths_caps_hold_on_a_hub(graph_store) -> None:
    chunks = [make_chunk(i) for i in range(1, 31)]
    graph_store.upsert(chunks, [cite(c, "HUB", f"M{i:02d}", confidence=0.5 + i / 100)
                                for i, c in enumerate(chunks, start=1)]
                       + [cite(chunks[0], "M01", "FAR")])
    capped = graph_store.paths(["HUB"], flt(), max_paths=10)
    assert len(capped) == 10
    # Best first: the most confident relations leave the hub first.
    assert [p.nodes[1].name for p in capped[:3]] == ["M30", "M29", "M28"]
    few = graph_store.paths(["HUB"], flt(), max_nodes=5)
    assert len({n.name for p in few for n in p.nodes}) == 5
    assert len(graph_store.paths(["HUB"], flt(), max_paths=1000)) == 31


def test_graph_paths_filter_visibility_inside_the_query(graph_store) -> None:
    rows = {
        "visible": make_chunk(1),
        "other_tenant": make_chunk(2, tenant="t2"),
        "other_group": make_chunk(3, acl=("finance",)),
        "expired": make_chunk(4, eff_to=date(2025, 6, 30)),
        "future": make_chunk(5, eff_from=date(2027, 1, 1)),
        "unpublished": make_chunk(6, version="2"),
    }
    # Each citing chunk is more confident than the visible one: a post-filter on the best
    # path would return nothing with max_paths=1.
    graph_store.upsert(list(rows.values()), [
        cite(c, name, "X", confidence=0.5 if name == "visible" else 0.9)
        for name, c in rows.items()
    ] + [cite(rows["visible"], "visible", "Y"), cite(rows["other_tenant"], "Y", "Z")])
    sources = [p.relations[0].source_chunk_id for p in graph_store.paths(["X"], flt(), hops=1)]
    assert sources == [rows["visible"].chunk_id]
    assert [p.relations[0].source_chunk_id for p in
            graph_store.paths(["X"], flt(), hops=1, max_paths=1)] == [rows["visible"].chunk_id]
    finance = graph_store.paths(["X"], flt(groups=["finance"]), hops=1)
    assert [p.relations[0].source_chunk_id for p in finance] == [rows["other_group"].chunk_id]
    past = graph_store.paths(["X"], flt(as_of=date(2025, 3, 1)), hops=1)
    assert {p.relations[0].source_chunk_id for p in past} == {
        rows["visible"].chunk_id, rows["expired"].chunk_id}
    assert graph_store.paths(["X"], flt(tenant_id="t3")) == []
    assert graph_store.paths(["X"], flt(hidden_keys=["policy@1", "policy@2"])) == []
    # A hidden relation also ends a walk: Y → Z is another tenant's, so Z is never reached.
    assert "Z" not in {n.name for p in graph_store.paths(["X"], flt(), hops=3) for n in p.nodes}
    assert {n.name for n in graph_store.entities(["t2"])} == {"other_tenant", "X", "Y", "Z"}
    # A reader links its query only against the entities of the relations it may see.
    assert {n.name for n in graph_store.entities(["t1"], flt())} == {"visible", "X", "Y"}
    assert {n.name for n in graph_store.entities(["t1"], flt(groups=["finance"]))} == {
        "other_group", "X"}


def test_graph_relations_follow_their_chunks_visibility(graph_store) -> None:
    chunk = make_chunk(1)
    graph_store.upsert([chunk], [])
    graph_store.upsert([], [cite(chunk, "A", "B")])  # visibility from the stored chunk node
    assert len(graph_store.paths(["A"], flt())) == 1
    closed = chunk.model_copy(update={"effective_to": date(2025, 12, 31)})
    graph_store.upsert([closed], [cite(closed, "A", "B")])
    assert graph_store.paths(["A"], flt()) == []
    assert len(graph_store.paths(["A"], flt(as_of=date(2025, 6, 1)))) == 1
    graph_store.upsert([], [cite(make_chunk(9), "A", "C")])  # no source chunk anywhere
    assert [walk(p) for p in graph_store.paths(["A"], flt(as_of=date(2025, 6, 1)))] == [
        ["A", "B"]]


def test_graph_clause_chunks_find_a_titled_clause_the_reader_may_see(graph_store) -> None:
    seventh = make_chunk(7)
    hidden = make_chunk(8, tenant="t2")
    parent = make_chunk(9, kind=ChunkKind.PARENT).model_copy(update={"clause_no": "第7条"})
    graph_store.upsert([seventh, hidden, parent], [], {"policy@1": "差旅费管理办法"})
    graph_store.upsert([seventh], [])  # no titles given: the stored title stays
    wanted = [("差旅费管理办法", "第7条"), ("差旅费管理办法", "第8条"), ("别的办法", "第7条")]
    assert graph_store.clause_chunks(wanted, flt()) == {
        ("差旅费管理办法", "第7条"): [seventh.chunk_id]}
    assert graph_store.clause_chunks(wanted, flt(tenant_id="t2")) == {
        ("差旅费管理办法", "第8条"): [hidden.chunk_id]}
    assert graph_store.clause_chunks(wanted, flt(hidden_keys=["policy@1", "policy@2"])) == {}


def test_graph_citations_keep_surface_and_rule_and_reach_the_cited_clause(graph_store) -> None:
    """A citation edge (graph/citations.py) keeps how it was written and resolved, on every
    read; the cited clause is found whichever numbering the citation wrote (第12条/第十二条)."""
    cited = make_chunk(12, doc="fund").model_copy(update={"clause_no": "第十二条"})
    citing = make_chunk(3, doc="contract")
    edge = Triple(subject="《合同管理办法》第3条", subject_type="Clause", predicate="引用条款",
                  object="《资金管理办法》第12条", object_type="Clause",
                  source_chunk_id=citing.chunk_id, doc_id="contract", version_id="1",
                  extractor="rules@test", confidence=0.76, surface="《XX集团资金管理办法》第12条",
                  rule="prefix")
    graph_store.upsert([cited, citing], [edge], {"fund@1": "资金管理办法",
                                                 "contract@1": "合同管理办法"})
    assert graph_store.triples("contract@1") == [edge]
    paths = graph_store.paths(["《资金管理办法》第12条"], flt(), direction="in", hops=1)
    assert [(p.relations[0].surface, p.relations[0].rule) for p in paths] == [
        ("《XX集团资金管理办法》第12条", "prefix")]
    assert graph_store.clause_chunks([("资金管理办法", "第12条")], flt()) == {
        ("资金管理办法", "第12条"): [cited.chunk_id]}

# ---- tenant scopes (issue 25) -------------------------------------------------------------------
# A group "grp" with two subsidiaries, "sub-a" and "sub-b". A reader of sub-a is handed its own
# tenant and its ancestors (ingest.scopes.TenantTree.visible): it sees the group's documents and
# its own, never its sibling's, and never one its groups do not name, whoever's it is.

SCOPED = {"group": ("grp", ("staff",)), "group_board": ("grp", ("board",)),
          "own": ("sub-a", ("staff",)), "sibling": ("sub-b", ("staff",))}


def scoped_chunks(text: str = "") -> dict[str, Chunk]:
    return {name: make_chunk(n, doc=name, tenant=tenant, acl=acl, text=text)
            for n, (name, (tenant, acl)) in enumerate(SCOPED.items(), start=1)}


def sub_a(**overrides) -> SearchFilter:
    return flt(**({"tenant_id": "sub-a", "ancestors": ["grp"], "hidden_keys": []} | overrides))


def names(hits, chunks: dict[str, Chunk]) -> set[str]:
    by_id = {c.chunk_id: name for name, c in chunks.items()}
    return {by_id[h.chunk_id] for h in hits}


def test_vector_reader_sees_its_tenant_and_ancestors_never_a_sibling(vector_store) -> None:
    chunks = scoped_chunks()
    vector_store.upsert(list(chunks.values()), {c.chunk_id: vector(1) for c in chunks.values()})
    search = vector_store.search
    assert names(search(vector(1).values, sub_a(), 10, 0.5), chunks) == {"group", "own"}
    assert names(search(vector(1).values, sub_a(groups=["staff", "board"]), 10, 0.5),
                 chunks) == {"group", "group_board", "own"}
    assert names(search(vector(1).values, sub_a(ancestors=[]), 10, 0.5), chunks) == {"own"}
    group = flt(tenant_id="grp", hidden_keys=[])  # a parent never sees its children's
    assert names(search(vector(1).values, group, 10, 0.5), chunks) == {"group"}


def test_lexical_reader_sees_its_tenant_and_ancestors_never_a_sibling(lexical_store) -> None:
    chunks = scoped_chunks("第1条 出差打车费用报销")
    lexical_store.upsert(list(chunks.values()))
    assert names(lexical_store.search("打车", sub_a(), 10), chunks) == {"group", "own"}
    assert names(lexical_store.search("打车", sub_a(groups=["board"]), 10), chunks) == {
        "group_board"}
    assert names(lexical_store.search("打车", flt(tenant_id="grp", hidden_keys=[]), 10),
                 chunks) == {"group"}
    assert lexical_store.term_counts(["打车"], sub_a()) == {"打车": 2}


def test_graph_reader_sees_its_tenant_and_ancestors_never_a_sibling(graph_store) -> None:
    chunks = scoped_chunks()
    graph_store.upsert(list(chunks.values()),
                       [cite(c, "X", name) for name, c in chunks.items()])
    reached = {p.nodes[-1].name for p in graph_store.paths(["X"], sub_a(), hops=1)}
    assert reached == {"group", "own"}
    assert {n.name for n in graph_store.entities(sub_a().tenants)} == {"X", "group",
                                                                     "group_board", "own"}
    assert {n.name for n in graph_store.entities(["grp"])} == {"X", "group", "group_board"}
