"""Elasticsearch, Neo4j and Milvus behaviour beyond the shared store contract: generations and
aliases, per-item bulk failures, Chinese analysis, constraints, older collections. Against the
engines that `deploy/local/engines.sh start` runs; a missing engine fails these tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import test_store_contract as contract
from test_store_contract import flt, make_chunk, triple, unique_name

from ingest.models import Chunk
from ingest.stores.elasticsearch import BulkWriteError, ElasticsearchLexicalStore
from ingest.stores.neo4j_graph import Neo4jGraphStore

# The engine fixtures (fail, never skip, when an engine is down) are the contract's.
es_url = contract.es_url
neo4j_uri = contract.neo4j_uri

# ---- Elasticsearch ------------------------------------------------------------------------------


@pytest.fixture
def es_alias(es_url: str) -> Iterator[tuple[str, list[ElasticsearchLexicalStore]]]:
    """A fresh alias; every store the test opens on it is dropped afterwards."""
    opened: list[ElasticsearchLexicalStore] = []
    yield unique_name(), opened
    for store in opened:
        store.drop()
    if opened:
        opened[0].drop_template()
    for store in opened:
        store.close()


def open_es(es_url: str, es_alias, generation: str = "g1", **kwargs) -> ElasticsearchLexicalStore:
    alias, opened = es_alias
    store = ElasticsearchLexicalStore(es_url, alias=alias, generation=generation, **kwargs)
    opened.append(store)
    return store


def chunks(n: int, version: str = "1") -> list[Chunk]:
    return [make_chunk(i, version=version, text=f"第{i}条 出差打车费用报销 条款{i}")
            for i in range(1, n + 1)]


def test_es_index_template_maps_fields_and_bm25(es_url, es_alias) -> None:
    store = open_es(es_url, es_alias)
    settings = store._es.indices.get_settings(index=store.index)[store.index]["settings"]
    assert settings["index"]["similarity"]["kbflow_bm25"] == {
        "type": "BM25", "k1": "1.2", "b": "0.75"
    }
    mapping = store._es.indices.get_mapping(index=store.index)[store.index]["mappings"]
    fields = mapping["properties"]
    for keyword in ("chunk_id", "doc_id", "version_key", "tenant_id", "acl", "kind"):
        assert fields[keyword]["type"] == "keyword"
    assert fields["eff_from"]["type"] == fields["eff_to"]["type"] == "integer"
    assert fields["tokens"]["analyzer"] == "whitespace"
    assert fields["body"]["analyzer"] == "cjk"
    # Reopening the same generation keeps its data (the constructor is idempotent).
    store.upsert(chunks(2))
    assert open_es(es_url, es_alias).count() == 2


def test_es_analyzers_segment_chinese(es_url, es_alias) -> None:
    from ingest.stores.tokens import tokens

    store = open_es(es_url, es_alias)
    text = "出差打车费用超标"

    def analyzed(field: str, value: str) -> list[str]:
        result = store._es.indices.analyze(index=store.index, field=field, text=value)
        return [t["token"] for t in result["tokens"]]

    assert analyzed("body", text) == ["出差", "差打", "打车", "车费", "费用", "用超", "超标"]
    jieba_tokens = tokens(text)
    assert analyzed("tokens", " ".join(jieba_tokens)) == jieba_tokens


def test_es_cjk_analyzer_finds_chinese_text(es_url, es_alias) -> None:
    store = open_es(es_url, es_alias, analyzer="cjk")
    rows = [
        make_chunk(1, text="第1条 员工出差打车费用超标的，经部门负责人审批后报销"),
        make_chunk(2, text="第2条 年休假天数按工作年限计算"),
        make_chunk(3, text="第3条 出差住宿标准按城市等级执行"),
    ]
    store.upsert(rows)
    hits = store.search("打车费用超标", flt(), 5)
    assert [h.chunk_id for h in hits] == [rows[0].chunk_id]
    assert [h.chunk_id for h in store.search("年休假", flt(), 5)] == [rows[1].chunk_id]
    # The filters hold on the cjk path too: another tenant sees nothing.
    assert store.search("打车费用超标", flt(tenant_id="t2"), 5) == []


def test_es_bulk_failure_names_the_failing_chunk_and_keeps_the_rest(es_url, es_alias) -> None:
    store = open_es(es_url, es_alias)
    good = make_chunk(1, text="第1条 出差打车费用报销")
    bad = make_chunk(2).model_copy(update={"page_start": 10**12})  # beyond an ES integer
    with pytest.raises(BulkWriteError) as error:
        store.upsert([good, bad])
    assert set(error.value.failures) == {bad.chunk_id}
    assert bad.chunk_id in str(error.value)
    assert "page_start" in error.value.failures[bad.chunk_id]
    assert store.chunk_ids("policy@1") == {good.chunk_id}
    assert [h.chunk_id for h in store.search("打车", flt(), 5)] == [good.chunk_id]


def test_es_delete_version_removes_only_that_version(es_url, es_alias) -> None:
    store = open_es(es_url, es_alias)
    store.upsert(chunks(3, version="1") + chunks(2, version="2"))
    store.delete_version("policy@1")
    assert store.chunk_ids("policy@1") == set()
    assert store.chunk_ids("policy@2") == {"policy-2-1", "policy-2-2"}
    store.delete(["policy-2-1", "policy-2-1", "no-such-chunk"])  # missing ids are not errors
    assert store.count() == 1


def test_es_activate_switches_the_alias_atomically(es_url, es_alias) -> None:
    old, new = open_es(es_url, es_alias, "g1"), open_es(es_url, es_alias, "g2")
    old.upsert(chunks(3))
    new.upsert(chunks(5))
    old.activate()
    es, alias = old._es, old.alias

    def through_alias() -> int:
        return es.search(index=alias, query={"match": {"tokens": "打车"}}, size=0)["hits"][
            "total"]["value"]

    assert through_alias() == 3
    seen: list[int | str] = []
    stop = threading.Event()

    def reader() -> None:
        for _ in range(2000):  # bounded, whatever happens to the switcher
            if stop.is_set():
                return
            try:
                seen.append(through_alias())
            except Exception as exc:  # noqa: BLE001 - recorded and asserted on below
                seen.append(f"{type(exc).__name__}: {exc}")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for _ in range(10):
            new.activate()
            old.activate()
        new.activate()
    finally:
        stop.set()
        thread.join(timeout=60)
    # Every read through the alias saw exactly one whole generation: never none, never both.
    assert seen and set(seen) <= {3, 5}
    assert through_alias() == 5
    assert set(es.indices.get_alias(name=alias)) == {new.index}
    # Dropping the old generation does not disturb readers of the alias.
    old.drop()
    assert through_alias() == 5


# ---- Neo4j --------------------------------------------------------------------------------------


@pytest.fixture
def neo4j_alias(neo4j_uri: str) -> Iterator[tuple[str, list[Neo4jGraphStore]]]:
    opened: list[Neo4jGraphStore] = []
    alias = unique_name()
    yield alias, opened
    for store in opened:
        store.drop()
    if opened:
        opened[0]._driver.execute_query("MATCH (a:KbflowAlias {name: $a}) DELETE a", a=alias)
    for store in opened:
        store.close()


def open_neo4j(neo4j_uri: str, neo4j_alias) -> Neo4jGraphStore:
    alias, opened = neo4j_alias
    store = Neo4jGraphStore(neo4j_uri, generation=unique_name("g"), alias=alias)
    opened.append(store)
    return store


def graph_counts(store: Neo4jGraphStore) -> dict[str, int]:
    records, _, _ = store._driver.execute_query(
        """MATCH (n {generation: $g}) RETURN labels(n)[0] AS what, count(*) AS n
           UNION ALL
           MATCH ()-[e {generation: $g}]->() RETURN type(e) AS what, count(*) AS n""",
        g=store.generation,
    )
    return {r["what"]: r["n"] for r in records}


def test_neo4j_constraints_exist(neo4j_uri, neo4j_alias) -> None:
    store = open_neo4j(neo4j_uri, neo4j_alias)
    records, _, _ = store._driver.execute_query(
        "SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties"
    )
    found = {r["name"]: (r["type"], r["labelsOrTypes"], r["properties"]) for r in records}
    assert found["kbflow_chunk"] == ("UNIQUENESS", ["Chunk"], ["generation", "chunk_id"])
    assert found["kbflow_document"] == ("UNIQUENESS", ["Document"], ["generation", "version_key"])
    assert found["kbflow_entity"] == ("UNIQUENESS", ["Entity"], ["generation", "key"])
    assert found["kbflow_relates"] == ("RELATIONSHIP_UNIQUENESS", ["RELATES"],
                                       ["generation", "key"])
    # Opening another store in the same process does not fail (its schema is there already).
    open_neo4j(neo4j_uri, neo4j_alias)


def test_neo4j_schema_statements_run_once_per_process_and_database(
        neo4j_uri, neo4j_alias, monkeypatch: pytest.MonkeyPatch) -> None:
    """They cost ~0.2 s at every open, paid by each one-file edit: a second open of the same
    database skips them, another (uri, database) still gets them."""
    from neo4j import Driver

    from ingest.stores import neo4j_graph

    ran: list[str] = []
    execute = Driver.execute_query

    def counting(self: Driver, query: Any, *args: Any, **kwargs: Any) -> Any:
        ran.append(str(query))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(Driver, "execute_query", counting)
    monkeypatch.setattr(neo4j_graph, "_SCHEMA_DONE", set())  # as in a new process
    schema = set(neo4j_graph._SCHEMA)
    open_neo4j(neo4j_uri, neo4j_alias)
    assert [q for q in ran if q in schema] == neo4j_graph._SCHEMA
    ran.clear()
    open_neo4j(neo4j_uri, neo4j_alias)
    assert [q for q in ran if q in schema] == []
    # the same server under another address is another key: its statements run again
    other = neo4j_uri.replace("localhost", "127.0.0.1") if "localhost" in neo4j_uri \
        else neo4j_uri.replace("127.0.0.1", "localhost")
    assert other != neo4j_uri
    alias, opened = neo4j_alias
    opened.append(Neo4jGraphStore(other, generation=unique_name("g"), alias=alias))
    assert [q for q in ran if q in schema] == neo4j_graph._SCHEMA


def test_neo4j_second_upsert_creates_no_duplicates(neo4j_uri, neo4j_alias) -> None:
    from neo4j.exceptions import ConstraintError

    store = open_neo4j(neo4j_uri, neo4j_alias)
    first, second = make_chunk(1), make_chunk(2)
    first.next_chunk_id = second.chunk_id
    triples = [triple(first), triple(second, "住宿费")]
    store.upsert([first, second], triples)
    once = graph_counts(store)
    store.upsert([first, second], triples)
    assert graph_counts(store) == once == {
        "Document": 1, "Chunk": 2, "Entity": 3, "HAS_CHUNK": 2, "NEXT": 1, "RELATES": 2,
    }
    with pytest.raises(ConstraintError):  # the constraint, not only MERGE, forbids a duplicate
        store._driver.execute_query("CREATE (:Chunk {generation: $g, chunk_id: $id})",
                                    g=store.generation, id=first.chunk_id)


def test_neo4j_generations_are_isolated_and_activate_records_one(neo4j_uri, neo4j_alias) -> None:
    old, new = open_neo4j(neo4j_uri, neo4j_alias), open_neo4j(neo4j_uri, neo4j_alias)
    chunk = make_chunk(1)
    old.upsert([chunk], [triple(chunk)])
    new.upsert([chunk], [triple(chunk), triple(chunk, "住宿费")])
    assert (old.count(), new.count()) == (1, 2)
    old.activate()
    new.activate()
    records, _, _ = old._driver.execute_query(
        "MATCH (a:KbflowAlias {name: $a}) RETURN a.generation AS g", a=old.alias
    )
    assert [r["g"] for r in records] == [new.generation]
    assert old.serving_generation() == new.generation
    old.drop()
    assert graph_counts(old) == {}
    assert new.count() == 2
    assert new.chunk_ids("policy@1") == {chunk.chunk_id}


def test_milvus_collection_without_acl_key_keeps_its_group_filter(tmp_path) -> None:
    """A collection built before the `acl_key` field existed is served (and written) with the
    array filter until a rebuild: same rows found, none widened."""
    from pymilvus import DataType, MilvusClient

    from ingest.stores.milvus import MilvusVectorStore

    uri = str(tmp_path / "milvus.db")
    client = MilvusClient(uri)
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("chunk_id", DataType.VARCHAR, max_length=64, is_primary=True)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=contract.DIM)
    for name in ("version_key", "doc_id", "tenant_id", "kind", "text"):
        schema.add_field(name, DataType.VARCHAR, max_length=512)
    schema.add_field("acl", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=64,
                     max_length=128)
    schema.add_field("eff_from", DataType.INT64)
    schema.add_field("eff_to", DataType.INT64)
    schema.add_field("coverage", DataType.FLOAT)
    index = client.prepare_index_params()
    index.add_index(field_name="vector", index_type="AUTOINDEX", metric_type="COSINE")
    client.create_collection("kbflow_chunks_g1", schema=schema, index_params=index)
    client.alter_collection_properties("kbflow_chunks_g1",
                                       properties={"kbflow.embedding_model": "test-model"})
    client.close()
    store = MilvusVectorStore(uri, contract.DIM, "test-model")
    try:
        chunks = [make_chunk(1), make_chunk(2, acl=("finance",))]
        store.upsert(chunks, {c.chunk_id: contract.vector(1) for c in chunks})
        staff = store.search(contract.vector(1).values, flt(), 10, 0.5)
        finance = store.search(contract.vector(1).values, flt(groups=["finance"]), 10, 0.5)
        assert [h.chunk_id for h in staff] == ["policy-1-1"]
        assert [h.chunk_id for h in finance] == ["policy-1-2"]
    finally:
        store.close()
