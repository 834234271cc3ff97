"""The manifest's state machine: the only path to READY is through every store, in order.
Every test runs on both manifest databases: a SQLite file and PostgreSQL."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_store_contract import make_chunk

from ingest.manifest import ManifestStore
from ingest.manifest.store import TransitionError
from ingest.models import DocumentMeta, State


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "manifest.db")
    return request.getfixturevalue("postgres_database")


@pytest.fixture
def manifest(location: str):
    store = ManifestStore(location)
    store.generation = store.create_generation("model", 8, "chunker@1", serving=True).generation
    yield store
    store.close()


def meta(version: str = "1") -> DocumentMeta:
    return DocumentMeta(doc_id="policy", version_id=version, title="差旅费管理办法",
                        tenant_id="t1", acl=["staff"], source_uri="file:///p.pdf",
                        source_path="p.pdf", file_hash="abc")


def walk_to_ready(manifest: ManifestStore, version: str = "1") -> None:
    manifest.begin(meta(version), "run1", "chunker@1", "model")
    for state in (State.MILVUS_READY, State.ES_READY, State.NEO4J_READY):
        manifest.advance("policy", version, state, "run1")
    manifest.publish("policy", version, [make_chunk(1, version=version)], "run1")


def test_versions_become_visible_only_when_ready(manifest: ManifestStore) -> None:
    manifest.begin(meta(), "run1", "chunker@1", "model")
    manifest.advance("policy", "1", State.MILVUS_READY, "run1")
    assert manifest.published_keys() == []
    manifest.advance("policy", "1", State.ES_READY, "run1")
    manifest.advance("policy", "1", State.NEO4J_READY, "run1")
    assert manifest.published_keys() == []
    manifest.publish("policy", "1", [make_chunk(1)], "run1")
    assert manifest.published_keys() == ["policy@1"]
    record = manifest.get("policy", "1")
    assert record is not None and record.state == State.READY and record.chunk_count == 1


def test_begin_says_which_rows_the_stores_hold_only_when_it_knows(
        manifest: ManifestStore) -> None:
    """Writers take a version's stored rows from `begin` instead of asking the stores; after a
    cut-short or failed attempt only the stores know, and `begin` must say so (None)."""
    assert manifest.begin(meta(), "run1", "chunker@1", "model") == frozenset()  # new
    assert manifest.begin(meta(), "run2", "chunker@1", "model") is None  # cut short
    walk_to_ready(manifest, "2")
    assert manifest.begin(meta("2"), "run3", "chunker@1", "model") == {"policy-2-1"}
    assert manifest.fail(("policy", "3"), "p.pdf", "parse failed", "run4") == State.FAILED
    assert manifest.begin(meta("3"), "run5", "chunker@1", "model") is None
    walk_to_ready(manifest, "4")
    assert manifest.fail(("policy", "4"), "p.pdf", "write failed", "run6") == State.READY
    assert manifest.begin(meta("4"), "run7", "chunker@1", "model") is None  # kept, not clean


def test_skipping_a_store_is_refused(manifest: ManifestStore) -> None:
    manifest.begin(meta(), "run1", "chunker@1", "model")
    with pytest.raises(TransitionError):
        manifest.advance("policy", "1", State.ES_READY, "run1")
    with pytest.raises(TransitionError):
        manifest.publish("policy", "1", [], "run1")
    assert manifest.get("policy", "1").state == State.CREATED


def test_publish_replaces_the_published_chunk_set(manifest: ManifestStore) -> None:
    walk_to_ready(manifest)
    first = set(manifest.published("policy", "1"))
    manifest.begin(meta(), "run2", "chunker@1", "model")
    for state in (State.MILVUS_READY, State.ES_READY, State.NEO4J_READY):
        manifest.advance("policy", "1", state, "run2")
    manifest.publish("policy", "1", [make_chunk(2), make_chunk(3)], "run2")
    second = set(manifest.published("policy", "1"))
    assert first == {"policy-1-1"} and second == {"policy-1-2", "policy-1-3"}
    assert manifest.chunks(["policy-1-1", "policy-1-2"]).keys() == {"policy-1-2"}


def test_new_content_failing_keeps_the_published_version_serving(
        manifest: ManifestStore) -> None:
    walk_to_ready(manifest)
    state = manifest.fail(("policy", "1"), "p.pdf", "ParseError: PDF has no pages", "run2")
    record = manifest.get("policy", "1")
    assert state == record.state == State.READY
    assert "new content failed: ParseError" in record.reason
    assert manifest.published_keys() == ["policy@1"]


def test_tombstones_hide_every_version_in_every_generation(manifest: ManifestStore) -> None:
    walk_to_ready(manifest)
    walk_to_ready(manifest, "2")
    serving = manifest.generation
    manifest.generation = manifest.create_generation("model", 8, "chunker@1").generation
    walk_to_ready(manifest)
    keys = manifest.tombstone("policy", None, "deleted by user", "run3")
    assert sorted(keys) == [("policy", "1"), ("policy", "2")]
    assert manifest.published_keys() == []
    manifest.generation = serving
    assert manifest.published_keys() == []
    assert manifest.get("policy", "1").state == State.TOMBSTONED
    with pytest.raises(TransitionError):
        manifest.begin(meta(), "run4", "chunker@1", "model")
    assert manifest.pending_cleanups() == [("policy", "1"), ("policy", "2")]
    manifest.mark_cleaned("policy", "1")
    assert manifest.pending_cleanups() == [("policy", "2")]
    assert manifest.published_keys() == []


def test_activating_a_generation_keeps_the_previous_one(manifest: ManifestStore) -> None:
    first = manifest.generation
    second = manifest.create_generation("model", 8, "chunker@2")
    assert second.status == "building" and manifest.serving().generation == first
    manifest.activate(second.generation)
    statuses = {g.generation: g.status for g in manifest.generations()}
    assert statuses == {first: "kept", second.generation: "serving"}


def test_failure_keeps_reason_and_counts_attempts(manifest: ManifestStore) -> None:
    manifest.fail(("broken", "1"), "broken.pdf", "ParseError: PDF has no pages", "run1")
    manifest.fail(("broken", "1"), "broken.pdf", "ParseError: PDF has no pages", "run2")
    record = manifest.get("broken", "1")
    assert record.state == State.FAILED
    assert record.reason == "ParseError: PDF has no pages"
    assert record.attempts == 2
    assert manifest.published_keys() == []


def test_a_reingest_keeps_the_published_version_served_until_it_is_ready_again(
        manifest: ManifestStore) -> None:
    """A rewrite of a published version (new content, or only new metadata) serves its last
    published records until it is READY again; a failed rewrite leaves it READY (a full disk
    must not hide what was published)."""
    walk_to_ready(manifest)
    walk_to_ready(manifest, "2")
    manifest.begin(meta(), "run2", "chunker@1", "model")
    assert manifest.published_keys() == ["policy@1", "policy@2"]
    assert "policy@1" not in manifest.hidden_keys()
    manifest.fail(("policy", "1"), "policy.md", "disk full", "run2")
    assert manifest.get("policy", "1").state == State.READY
    assert manifest.published_keys() == ["policy@1", "policy@2"]


def test_migrations_run_once(location: str) -> None:
    first = ManifestStore(location)
    first.generation = first.create_generation("model", 8, "c", serving=True).generation
    first.close()
    again = ManifestStore(location)
    walk_to_ready(again)
    again.close()
    assert ManifestStore(location).published_keys() == ["policy@1"]


def test_workers_opening_a_new_manifest_at_once_migrate_it_once(location: str) -> None:
    start = threading.Barrier(6)
    errors: list[Exception] = []

    def open_it() -> None:
        start.wait()
        try:
            ManifestStore(location).close()
        except Exception as error:  # noqa: BLE001 - collected for the assertion below
            errors.append(error)

    threads = [threading.Thread(target=open_it) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    store = ManifestStore(location)
    assert store.generations() == [] and store.published_keys() == []
    store.close()


def test_racing_workers_advance_a_version_once(manifest: ManifestStore, location: str) -> None:
    """Workers with their own connections try the same step at once: the writer lock lets
    exactly one through; the others see the new state and are refused."""
    manifest.begin(meta(), "run1", "chunker@1", "model")
    start = threading.Barrier(6)
    outcomes: list[str] = []

    def worker() -> None:
        store = ManifestStore(location, manifest.generation)
        start.wait()
        try:
            store.advance("policy", "1", State.MILVUS_READY, "race")
            outcomes.append("advanced")
        except TransitionError:
            outcomes.append("refused")
        finally:
            store.close()

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["advanced"] + ["refused"] * 5
    assert manifest.get("policy", "1").state == State.MILVUS_READY


def test_postgres_writers_of_different_documents_do_not_wait(postgres_database: str) -> None:
    """A transaction holds its document's lock only: another document's writer goes through
    while it is open, the same document's writer waits for it, and a whole-manifest writer
    (a new generation) waits for every document writer."""
    from ingest.manifest.sql import connect

    ManifestStore(postgres_database).close()  # migrated
    holder, other, same, whole = (connect(postgres_database) for _ in range(4))
    holder.begin("policy")
    other.begin("handbook")  # would block here under one global lock
    other.commit()
    done: list[str] = []

    def write(connection, document: str | None) -> None:
        connection.begin(document)
        done.append(document or "manifest")
        connection.commit()

    waiting = [threading.Thread(target=write, args=(same, "policy")),
               threading.Thread(target=write, args=(whole, None))]
    for thread in waiting:
        thread.start()
    for thread in waiting:
        thread.join(timeout=1.0)
    assert done == []  # both wait for the open "policy" transaction
    holder.commit()
    for thread in waiting:
        thread.join(timeout=10)
    assert sorted(done) == ["manifest", "policy"]
    for connection in (holder, other, same, whole):
        connection.close()


def test_a_run_reads_only_the_versions_it_touches(manifest: ManifestStore) -> None:
    walk_to_ready(manifest, "1")
    walk_to_ready(manifest, "2")
    handbook = meta().model_copy(update={"doc_id": "handbook", "source_path": "/b/h.md",
                                         "title": "员工手册"})
    manifest.begin(handbook, "run1", "chunker@1", "model", source_root="/b")
    keys = lambda records: [r.version_key for r in records]  # noqa: E731
    assert keys(manifest.documents()) == ["handbook@1", "policy@1", "policy@2"]
    assert keys(manifest.documents(doc_ids=["policy", "nothing"])) == ["policy@1", "policy@2"]
    assert keys(manifest.documents(source_paths=["/b/h.md"])) == ["handbook@1"]
    assert keys(manifest.documents(under="/b", doc_ids=["handbook"])) == ["handbook@1"]
    assert keys(manifest.documents(under="/")) == ["handbook@1"]
    assert manifest.documents(under="/elsewhere") == []
    assert manifest.documents(under="/b/h") == []  # a folder, not a name's beginning
    assert manifest.state_counts() == {"CREATED": 1, "READY": 2}
    manifest.tombstone("handbook", None, "deleted", "run1")
    assert manifest.titles() == {"差旅费管理办法"}
