"""What a search may see, on the embedded stores with the real model: only READY versions, with
a per-query filter that lists the few hidden versions, never the published ones, so its size
does not grow with the corpus (issue 16)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from test_store_contract import make_chunk

from ingest.lifecycle import cleanup_tombstones
from ingest.manifest import ManifestStore
from ingest.models import Chunk, DocumentMeta, SearchFilter, State
from ingest.search import hybrid_search
from ingest.stores import Stores, open_stores

# One version held in each state that is not READY, each with a word no other version uses.
IN_FLIGHT = {State.CREATED: "樱桃", State.MILVUS_READY: "菠萝", State.ES_READY: "芒果",
             State.NEO4J_READY: "榴莲"}
FAILED_WORD, DELETED_WORD = "荔枝", "椰子"
STEPS = [State.MILVUS_READY, State.ES_READY, State.NEO4J_READY]


class RecordingLexical:
    """The real lexical store, noting the filter each search hands it."""

    def __init__(self, store) -> None:
        self.store, self.filters = store, []

    def search(self, query: str, flt: SearchFilter, k: int):
        self.filters.append(flt)
        return self.store.search(query, flt, k)


def meta(chunk: Chunk) -> DocumentMeta:
    return DocumentMeta(doc_id=chunk.doc_id, version_id=chunk.version_id, title=chunk.doc_id,
                        tenant_id=chunk.tenant_id, acl=chunk.acl, source_uri="file:///x",
                        source_path=f"/docs/{chunk.doc_id}.md", file_hash=chunk.content_hash)


def write(manifest: ManifestStore, stores: Stores, embedder, chunk: Chunk,
          until: State | None) -> None:
    """Begin a version, write its rows to every store, and advance it as far as `until`
    (READY: published)."""
    manifest.begin(meta(chunk), "run", "c", embedder.name)
    vectors, _ = embedder.embed_chunks([chunk])
    stores.vectors.upsert([chunk], vectors)
    stores.lexical.upsert([chunk])
    stores.graph.upsert([chunk], [], {chunk.version_key: chunk.doc_id})
    for state in STEPS:
        if until == State.CREATED:
            return
        manifest.advance(chunk.doc_id, chunk.version_id, state, "run")
        if state == until:
            return
    manifest.publish(chunk.doc_id, chunk.version_id, [chunk], "run")


@pytest.fixture
def index(settings, embedder):
    manifest = ManifestStore(settings.manifest)
    manifest.generation = manifest.create_generation(embedder.name, embedder.dimension, "c",
                                                     serving=True).generation
    stores = open_stores(settings, embedder.name, embedder.dimension, manifest.generation)
    yield manifest, stores
    stores.close()
    manifest.close()


def search(manifest: ManifestStore, stores: Stores, embedder, query: str,
           lexical: RecordingLexical | None = None, mode: str = "hybrid"):
    return hybrid_search(query, manifest=manifest, lexical=lexical or stores.lexical,
                         vectors=stores.vectors, embedder=embedder, tenant_id="t1",
                         groups=["staff"], as_of=date(2026, 1, 1), k=5, mode=mode)


def test_only_ready_versions_are_seen_and_the_filter_does_not_grow(index, embedder,
                                                                     settings) -> None:
    manifest, stores = index
    hidden: dict[str, Chunk] = {}
    for n, (state, word) in enumerate(IN_FLIGHT.items(), start=1):
        hidden[word] = make_chunk(n, doc=f"inflight{n}", text=f"第{n}条 {word}费用报销规定")
        write(manifest, stores, embedder, hidden[word], state)
    hidden[FAILED_WORD] = make_chunk(5, doc="failed", text=f"第5条 {FAILED_WORD}费用报销规定")
    write(manifest, stores, embedder, hidden[FAILED_WORD], State.ES_READY)
    manifest.fail(("failed", "1"), "/docs/failed.md", "RuntimeError: store down", "run")
    hidden[DELETED_WORD] = make_chunk(6, doc="deleted", text=f"第6条 {DELETED_WORD}费用报销规定")
    write(manifest, stores, embedder, hidden[DELETED_WORD], State.READY)
    manifest.tombstone("deleted", "1", "deleted by its owner", "run")

    filter_sizes = []
    for published in (10, 200):
        start = len(manifest.published_keys())
        for n in range(start, published):
            write(manifest, stores, embedder,
                  make_chunk(1, doc=f"notice{n}", text=f"第1条 会议室{n}号预约须知"), State.READY)
        assert len(manifest.published_keys()) == published
        for word, chunk in hidden.items():
            recording = RecordingLexical(stores.lexical)
            for mode in ("bm25", "dense", "hybrid"):
                found = search(manifest, stores, embedder, f"{word}费用报销规定", recording, mode)
                assert chunk.chunk_id not in [r.chunk_id for r in found.results], (word, mode)
            # hidden inside the store's own query, not only when hits are read back
            flt = recording.filters[-1]
            assert chunk.chunk_id not in [h.chunk_id for h in stores.lexical.search(
                f"{word}费用报销规定", flt, 50)]
            assert chunk.chunk_id not in [h.chunk_id for h in stores.vectors.search(
                embedder.encode_query(f"{word}费用报销规定").values, flt, 50, 0.0)]
            filter_sizes.append(len(flt.hidden_keys))
    assert set(filter_sizes) == {len(hidden)}  # the same at 10 and at 200 published versions

    # Published, the last in-flight version is found and leaves the filter.
    durian = hidden[IN_FLIGHT[State.NEO4J_READY]]
    manifest.publish(durian.doc_id, durian.version_id, [durian], "run")
    top = search(manifest, stores, embedder, "榴莲费用报销规定").results[0]
    assert (top.chunk_id, top.bm25_rank, top.dense_rank) == (durian.chunk_id, 1, 1)
    assert len(manifest.hidden_keys()) == len(hidden) - 1

    # A deleted version leaves the filter only once its rows are gone from every store.
    cleaned = cleanup_tombstones(manifest, lambda g: open_stores(
        settings, embedder.name, embedder.dimension, g))
    assert cleaned == ["deleted@1"]
    assert "deleted@1" not in manifest.hidden_keys()
    assert stores.lexical.chunk_ids("deleted@1") == set()
    assert stores.vectors.chunk_ids("deleted@1") == set()


def test_hidden_keys_follow_the_state_machine(tmp_path: Path) -> None:
    """Every state but READY is hidden; a version rewritten after being READY keeps serving its
    last published records until it is READY again (issue 28: a failed rewrite hid it)."""
    manifest = ManifestStore(tmp_path / "manifest.db")
    manifest.generation = manifest.create_generation("m", 4, "c", serving=True).generation
    chunk = make_chunk(1)
    manifest.begin(meta(chunk), "run", "c", "m")
    for state in STEPS:
        assert manifest.hidden_keys() == ["policy@1"], state
        manifest.advance("policy", "1", state, "run")
    assert manifest.hidden_keys() == ["policy@1"]
    manifest.publish("policy", "1", [chunk], "run")
    assert manifest.hidden_keys() == [] and manifest.published_keys() == ["policy@1"]
    manifest.begin(meta(chunk), "run2", "c", "m")  # new content for the same version
    assert manifest.hidden_keys() == [] and manifest.published_keys() == ["policy@1"]
    manifest.close()
