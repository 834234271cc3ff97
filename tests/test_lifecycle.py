"""The index lifecycle: crash recovery at every state, deletes, policy versions, rebuilds behind
the publish gate, rollback, lineage."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from tests_support import REPO, SAMPLE_DOCS

from flows.ingest import ingest_flow
from flows.lifecycle import rebuild_flow, rollback_flow
from ingest.config import Settings
from ingest.lifecycle import open_generation
from ingest.manifest import ManifestStore
from ingest.models import State
from ingest.search import search_index

LEAVE = "leave_policy.md"
REMOTE = "remote_work_policy.md"


def write_corpus(folder: Path, *, edited: bool) -> Path:
    """Two Markdown policies; the edited variant changes 第十条, drops 第十二条, adds 第二十条."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(SAMPLE_DOCS / REMOTE, folder / REMOTE)
    text = (SAMPLE_DOCS / LEAVE).read_text(encoding="utf-8")
    if edited:
        assert "婚假10天" in text
        text = text.replace("婚假10天", "婚假13天")
        lines = [line for line in text.splitlines() if "第十二条" not in line]
        text = "\n".join(lines) + "\n\n第二十条 本制度的修订须经职工代表大会讨论通过。\n"
    (folder / LEAVE).write_text(text, encoding="utf-8")
    return folder


def fresh_data(tmp_path: Path, name: str, cache_from: Settings) -> Settings:
    data = tmp_path / name
    data.mkdir()
    shutil.copy(cache_from.vector_cache_path, data / "vector_cache.db")
    return Settings(data_dir=data)


def snapshot(settings: Settings) -> dict:
    """Everything a reader could observe: per published version, the chunk ids in each store,
    the triples, the manifest records; plus total row counts (duplicates and orphans show)."""
    manifest = ManifestStore(settings.manifest)
    keys = manifest.published_keys()
    records = {r.version_key: (r.state, r.chunk_count) for r in manifest.documents()}
    # chunk records without their source location (the unchanged document keeps the folder it
    # was first ingested from, which differs between the two runs)
    fingerprints = {
        r.version_key: {c.chunk_id: (c.content_hash, c.kind, c.parent_chunk_id, c.prev_chunk_id,
                                     c.next_chunk_id, c.effective_from, c.effective_to)
                        for c in manifest.version_chunks(r.doc_id, r.version_id)}
        for r in manifest.documents()
    }
    generation = manifest.generation
    manifest.close()
    stores = open_generation(settings, generation)
    try:
        return {
            "published": keys, "records": records, "fingerprints": fingerprints,
            "vectors": {k: stores.vectors.chunk_ids(k) for k in keys},
            "lexical": {k: stores.lexical.chunk_ids(k) for k in keys},
            "graph": {k: stores.graph.chunk_ids(k) for k in keys},
            "triples": {k: sorted((t.subject, t.predicate, t.object, t.source_chunk_id)
                                  for t in stores.graph.triples(k)) for k in keys},
            "counts": (stores.vectors.count(), stores.lexical.count(), stores.graph.count()),
        }
    finally:
        stores.close()


@pytest.fixture(scope="module")
def reference(prefect_api, ingested, tmp_path_factory: pytest.TempPathFactory):
    """The edited corpus ingested in one uninterrupted run, and the original corpus ingested
    into a template data directory that each crash test starts from."""
    _, session = ingested
    root = tmp_path_factory.mktemp("lifecycle")
    original = write_corpus(root / "original", edited=False)
    edited = write_corpus(root / "edited", edited=True)
    expected = fresh_data(root, "expected", session)
    ingest_flow(str(edited), str(expected.data_dir))
    template = fresh_data(root, "template", expected)
    ingest_flow(str(original), str(template.data_dir))
    shutil.copy(expected.vector_cache_path, template.vector_cache_path)
    return {"original": original, "edited": edited, "expected": expected, "template": template}


def crash(mode: str, point: str, data_dir: Path, target: str) -> int:
    """Run tests/crashing_run.py; its return code (-9 when it was killed as planned)."""
    from prefect.settings import get_current_settings

    env = os.environ | {"PREFECT_API_URL": str(get_current_settings().api.url)}
    child = subprocess.run(
        [sys.executable, str(REPO / "tests" / "crashing_run.py"), mode, point, str(data_dir),
         target], env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    if child.returncode != -9:
        print(child.stdout[-3000:], child.stderr[-3000:])  # shown with the failed assertion
    return child.returncode


@pytest.mark.parametrize("state", [State.CREATED, State.MILVUS_READY, State.ES_READY,
                                   State.NEO4J_READY, State.READY])
def test_killed_at_any_state_then_resumed_converges(reference, tmp_path: Path, state) -> None:
    data = tmp_path / "data"
    shutil.copytree(reference["template"].data_dir, data)
    edited = str(reference["edited"])  # the same paths as the uninterrupted run: same source URIs
    assert crash("ingest", state, data, edited) == -9  # SIGKILL

    resumed = ingest_flow(edited, str(data))
    assert resumed.failures == []
    assert resumed.embedded == 0
    expected = snapshot(reference["expected"])
    actual = snapshot(Settings(data_dir=data))
    for part in ("published", "records", "fingerprints", "vectors", "lexical", "graph",
                 "triples", "counts"):
        assert actual[part] == expected[part], part


@pytest.mark.parametrize("state", [State.CREATED, State.ES_READY, State.READY])
def test_killed_with_the_manifest_on_postgres_then_resumed_converges(
        reference, postgres_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        state) -> None:
    """The same crash recovery with the manifest in PostgreSQL: a killed connection's open
    transaction is rolled back by the server, and the resumed run converges as on SQLite."""
    monkeypatch.setenv("KBFLOW_MANIFEST_URL", postgres_database)  # also for the child processes
    settings = fresh_data(tmp_path, "data", reference["template"])
    # The original corpus, ingested in another process, as a user's earlier run would have.
    from prefect.settings import get_current_settings

    subprocess.run([str(Path(sys.executable).parent / "kbflow"), "--data-dir",
                    str(settings.data_dir), "ingest", str(reference["original"])],
                   env=os.environ | {"PREFECT_API_URL": str(get_current_settings().api.url)},
                   capture_output=True, check=True, timeout=600)
    edited = str(reference["edited"])
    assert crash("ingest", state, settings.data_dir, edited) == -9

    resumed = ingest_flow(edited, str(settings.data_dir))
    assert resumed.failures == [] and resumed.embedded == 0
    assert not (settings.data_dir / "manifest.db").exists()
    expected, actual = snapshot(reference["expected"]), snapshot(settings)
    for part in ("published", "records", "fingerprints", "vectors", "lexical", "graph",
                 "triples", "counts"):
        assert actual[part] == expected[part], part


def test_editing_one_clause_rewrites_only_its_neighbourhood(reference, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(reference["template"].data_dir, data)
    folder = tmp_path / "docs"
    shutil.copytree(reference["original"], folder)
    ingest_flow(str(folder), str(data))  # the documents now live in `folder`
    before = content_hashes(data)
    shutil.copy(reference["edited"] / LEAVE, folder / LEAVE)  # edit in place
    summary = ingest_flow(str(folder), str(data))
    assert summary.embedded == 0  # the cache was filled by the reference run
    assert summary.skipped_unchanged == 1
    after = content_hashes(data)
    new_content = [after[i][1] for i in after if i in before and after[i][0] != before[i][0]]
    assert (set(after) - set(before), set(before) - set(after)) == (
        {k for k in after if after[k][1] == "第二十条"}, {k for k in before if before[k][1] ==
                                                          "第十二条"})
    # new content: 第十条, and the parents that quote the edited, removed and added clauses
    assert [label for label in new_content if label != "parent"] == ["第十条"]
    assert summary.chunks.changed == len(new_content)
    assert summary.chunks.added == 1 and summary.chunks.removed == 1
    assert summary.chunks.updated > 0  # later chunks moved (offsets, links): rewritten only


def content_hashes(data: Path) -> dict[str, tuple[str, str]]:
    manifest = ManifestStore(Settings(data_dir=data).manifest)
    chunks = manifest.version_chunks("leave_policy", "1")
    manifest.close()
    return {c.chunk_id: (c.content_hash, "parent" if c.kind == "parent" else c.clause_no)
            for c in chunks}


def test_crash_between_tombstone_and_cleanup_never_resurrects(reference, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(reference["template"].data_dir, data)
    settings = Settings(data_dir=data)
    assert crash("delete", "cleanup", data, "leave_policy") == -9
    query = {"tenant_id": "default", "groups": ["all-staff"], "as_of": date(2026, 5, 1)}

    def leave_policy_hits() -> list[str]:  # dense always answers: only its documents matter
        return [r.chunk_id for r in search_index(settings, "婚假", **query).results
                if r.doc_id == "leave_policy"]

    assert leave_policy_hits() == []
    manifest = ManifestStore(settings.manifest)
    assert manifest.pending_cleanups() == [("leave_policy", "1")]
    manifest.close()
    stores = open_generation(settings, "g1")
    assert stores.lexical.chunk_ids("leave_policy@1")  # rows are still there, but invisible
    stores.close()

    again = ingest_flow(str(reference["original"]), str(data))  # the file is still in the folder
    assert again.cleaned == ["leave_policy@1"]
    assert [f.doc_id for f in again.failures] == ["leave_policy"]
    assert "deleted" in again.failures[0].reason
    assert leave_policy_hits() == []
    stores = open_generation(settings, "g1")
    assert not stores.lexical.chunk_ids("leave_policy@1")
    assert not stores.vectors.chunk_ids("leave_policy@1")
    assert not stores.graph.chunk_ids("leave_policy@1")
    stores.close()


def test_a_file_removed_from_the_folder_is_tombstoned(reference, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(reference["template"].data_dir, data)
    folder = tmp_path / "docs"
    shutil.copytree(reference["original"], folder)
    first = ingest_flow(str(folder), str(data))  # records this folder as the documents' root
    assert first.tombstoned == []
    (folder / LEAVE).unlink()
    summary = ingest_flow(str(folder), str(data))
    assert summary.tombstoned == ["leave_policy@1"] and summary.cleaned == ["leave_policy@1"]
    assert summary.documents == {"READY": 1, "TOMBSTONED": 1}


def test_a_new_version_closes_the_previous_one(reference, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(reference["template"].data_dir, data)
    settings = Settings(data_dir=data)
    folder = tmp_path / "docs"
    folder.mkdir()
    old = folder / "leave_2025.md"
    shutil.copy(reference["original"] / LEAVE, old)
    meta = "doc_id: leave\nversion: '{v}'\neffective_from: {d}\n"
    (folder / "leave_2025.md.meta.yaml").write_text(meta.format(v="2025", d="2025-04-01"))
    ingest_flow(str(folder), str(data))
    shutil.copy(reference["edited"] / LEAVE, folder / "leave_2026.md")
    (folder / "leave_2026.md.meta.yaml").write_text(meta.format(v="2026", d="2026-03-01"))
    summary = ingest_flow(str(folder), str(data))
    assert summary.failures == [] and summary.written == 2  # the new version, and the old closed

    manifest = ManifestStore(settings.manifest)
    old_record = manifest.get("leave", "2025")
    new_record = manifest.get("leave", "2026")
    manifest.close()
    assert summary.embedded == new_record.chunk_count  # closing the old version embeds nothing
    assert old_record.effective_to == date(2026, 2, 28) and old_record.state == State.READY
    query = {"tenant_id": "default", "groups": ["all-staff"], "k": 3}
    before = search_index(settings, "婚假天数", as_of=date(2025, 12, 1), **query).results
    after = search_index(settings, "婚假天数", as_of=date(2026, 6, 1), **query).results
    assert before[0].version_id == "2025" and "婚假10天" in before[0].text
    assert after[0].version_id == "2026" and "婚假13天" in after[0].text
    assert {r.version_id for r in before if r.doc_id == "leave"} == {"2025"}
    assert {r.version_id for r in after if r.doc_id == "leave"} == {"2026"}


def test_rebuild_with_unchanged_model_embeds_nothing_then_rollback(reference,
                                                                   tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(reference["template"].data_dir, data)
    settings = Settings(data_dir=data)
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "marriage", "question": "婚假有几天", "tags": ["leave"], '
        '"expected": [{"doc_id": "leave_policy", "clause": "第十条"}]}\n', encoding="utf-8")
    report = rebuild_flow(str(data), str(cases))
    assert report.activated and report.gate.passed
    assert report.generation == "g2" and report.previous == "g1"
    assert report.summary.embedded == 0 and report.summary.written == 2
    recall = next(c for c in report.gate.checks if c.name == "recall_at_10")
    assert recall.value == 1.0

    manifest = ManifestStore(settings.manifest)
    assert manifest.serving().generation == "g2"
    manifest.close()
    hit = search_index(settings, "婚假有几天", tenant_id="default", groups=["all-staff"],
                       as_of=date(2026, 5, 1)).results[0]
    lineage = ManifestStore(settings.manifest).trace(hit.chunk_id)
    assert [r.generation for r in lineage] == ["g1", "g2"]
    assert lineage[1].run_source == "rebuild g2"

    back = rollback_flow(None, str(data))
    assert (back.serving, back.previous) == ("g1", "g2")
    manifest = ManifestStore(settings.manifest)
    assert manifest.serving().generation == "g1"
    manifest.close()
    assert search_index(settings, "婚假有几天", tenant_id="default", groups=["all-staff"],
                        as_of=date(2026, 5, 1)).results[0].chunk_id == hit.chunk_id


def test_rebuild_failing_its_gate_leaves_the_old_generation_serving(reference,
                                                                    tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(reference["template"].data_dir, data)
    folder = tmp_path / "docs"
    shutil.copytree(reference["original"], folder)
    ingest_flow(str(folder), str(data))  # the documents now live in `folder`
    # its source breaks afterwards: bytes no encoding reads as text (a UTF-16 BOM would read)
    (folder / REMOTE).write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    report = rebuild_flow(str(data), None)
    assert not report.activated
    assert any(reason.startswith("parse_error_rate") for reason in report.reasons)
    manifest = ManifestStore(Settings(data_dir=data).manifest)
    statuses = {g.generation: g.status for g in manifest.generations()}
    manifest.close()
    assert statuses == {"g1": "serving", "g2": "failed"}
    results = search_index(Settings(data_dir=data), "home internet reimbursement",
                           tenant_id="default", groups=["all-staff"], as_of=date(2026, 5, 1))
    assert results.results[0].doc_id == "remote_work_policy"
