"""ingest/pipeline without an orchestrator: a document version driven through its phases
(prepared → parsed → chunked → planned → written) into the embedded stores (SQLite vectors,
SQLite FTS5, LadybugDB) with the real embedding model, and a whole run with typed failures."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from tests_support import SAMPLE_DOCS

from ingest.chunk import chunk_params
from ingest.config import Settings
from ingest.embed import Embedder, Embedding, TokenCounter
from ingest.manifest import ManifestStore
from ingest.models import ROLE_STEPS, ChunkKind, State, StoreRole
from ingest.parse import ParsePool
from ingest.pipeline import InProcess, Planned, RunContext, current_generation, run_pipeline
from ingest.pipeline.plan import date_versions, plan
from ingest.pipeline.prepare import Selection, chunk_all, parse_window, select
from ingest.pipeline.write import write
from ingest.stores import Stores, open_stores

LOG = logging.getLogger("test_pipeline")


class Recording(InProcess):
    """InProcess, noting each version's manifest state as each store role is written."""

    def __init__(self, manifest: ManifestStore) -> None:
        self.manifest = manifest
        self.seen: list[tuple[StoreRole, State]] = []

    def write(self, role: StoreRole, stores: Stores, group: Sequence[Planned],
              vectors: Mapping[str, Embedding]) -> None:
        for p in group:
            record = self.manifest.get(*p.key)
            assert record is not None
            self.seen.append((role, record.state))
        super().write(role, stores, group, vectors)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SAMPLE_DOCS / "leave_policy.md", docs)
    return docs


def test_a_version_goes_through_every_phase_into_the_stores(
        settings: Settings, folder: Path, embedder: Embedder) -> None:
    params = chunk_params(settings)
    tokens = TokenCounter(settings.embedding_model)
    path = folder / "leave_policy.md"
    with ManifestStore(settings.manifest) as manifest:
        steps = Recording(manifest)
        ctx = RunContext(settings=settings, manifest=manifest, run_id="r1", steps=steps,
                         log=LOG)
        generation = current_generation(manifest, settings, params.version)

        selection = Selection()
        prepared = select(ctx, params, selection, path, folder)
        assert prepared is not None and prepared.key == ("leave_policy", "1")
        assert manifest.get("leave_policy", "1") is None  # nothing recorded before a write

        with ParsePool(1, settings.parse_timeout_s) as parser:
            [parsed] = parse_window(ctx, parser, [prepared])
        assert parsed.doc.meta.title == "休假管理制度" and parsed.doc.blocks

        [job] = chunk_all(ctx, params, tokens, [parsed])
        assert job.chunker_version == params.version
        indexed = [c for c in job.chunks if c.kind != ChunkKind.PARENT]
        assert indexed and all(c.embedding_model == settings.embedding_model for c in indexed)

        [dated] = date_versions(manifest, [job], params.version)
        assert dated.effective_to == job.meta.effective_to  # no later version closes it

        planned = plan(ctx, dated)
        assert planned is not None
        assert planned.diff.added == dated.chunks and not planned.diff.removed

        vectors, _ = steps.embed(embedder, [c for c in planned.diff.writes
                                            if c.kind != ChunkKind.PARENT])
        assert set(vectors) == {c.chunk_id for c in indexed}
        assert {len(v.values) for v in vectors.values()} == {embedder.dimension}

        stores = open_stores(settings, embedder.name, embedder.dimension, generation.generation)
        try:
            [written] = write(ctx, stores, [planned], vectors)
            key = planned.version_key
            assert stores.vectors.chunk_ids(key) == {c.chunk_id for c in indexed}
            assert stores.lexical.chunk_ids(key) == {c.chunk_id for c in dated.chunks}
            assert stores.graph.chunk_ids(key) == {c.chunk_id for c in dated.chunks}
        finally:
            stores.close()
        assert written.planned.job is planned.job and ctx.failures == []
        assert written.planned.stored == frozenset()  # a new version: no rows to look up
        # each role was written in the state the previous role left (ROLE_STEPS order)
        states = [State.CREATED, *(state for _, state in ROLE_STEPS)]
        assert steps.seen == list(zip([r for r, _ in ROLE_STEPS], states, strict=False))
        record = manifest.get("leave_policy", "1")
        assert record is not None and record.state == State.READY
        assert set(manifest.published("leave_policy", "1")) == {c.chunk_id for c in dated.chunks}
        assert set(ctx.clock.seconds) >= {"parse", "chunk", "diff", "vectors", "manifest"}


def test_a_changed_version_rewrites_only_its_changes_and_drops_stale_rows(
        settings: Settings, folder: Path, embedder: Embedder) -> None:
    path = folder / "leave_policy.md"
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id="r1", steps=InProcess(),
                         log=LOG)
        first = run_pipeline(ctx, str(folder), [(path, folder)])
    assert first.written == 1 and first.failures == []

    text = path.read_text(encoding="utf-8")
    path.write_text(text[:text.index("## 第二章")], encoding="utf-8")  # chapters 2+ removed
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id="r2", steps=InProcess(),
                         log=LOG)
        before = set(manifest.published("leave_policy", "1"))
        second = run_pipeline(ctx, str(folder), [(path, folder)])
        after = set(manifest.published("leave_policy", "1"))
    assert second.written == 1 and second.failures == []
    assert second.chunks.removed > 0 and len(after) < len(before)
    assert second.embedded < first.embedded  # unchanged text comes from the vector cache
    stores = open_stores(settings, embedder.name, embedder.dimension, first.generation)
    try:  # the removed chunks' rows are gone from every store
        assert stores.lexical.chunk_ids("leave_policy@1") == after
        assert stores.graph.chunk_ids("leave_policy@1") == after
        assert stores.vectors.chunk_ids("leave_policy@1") <= after
    finally:
        stores.close()


class FailingLexical(InProcess):
    """InProcess whose lexical write fails: the version's vector rows are already written."""

    def write(self, role: StoreRole, stores: Stores, group: Sequence[Planned],
              vectors: Mapping[str, Embedding]) -> None:
        if role == "lexical":
            raise RuntimeError("lexical store unavailable")
        super().write(role, stores, group, vectors)


def test_rows_a_failed_rewrite_left_are_removed_by_the_next_run(
        settings: Settings, folder: Path, embedder: Embedder) -> None:
    """The manifest records only published chunks: the rows of a rewrite that failed half-way
    are found by asking the stores, not by the manifest's records."""
    path = folder / "leave_policy.md"
    original = path.read_text(encoding="utf-8")

    def run(run_id: str, steps: InProcess) -> None:
        with ManifestStore(settings.manifest) as manifest:
            ctx = RunContext(settings=settings, manifest=manifest, run_id=run_id, steps=steps,
                             log=LOG)
            run_pipeline(ctx, str(folder), [(path, folder)])

    run("r1", InProcess())
    with ManifestStore(settings.manifest) as manifest:
        published = set(manifest.published("leave_policy", "1"))
        generation = manifest.generation
    path.write_text(original + "\n## 第九章 附则\n\n**第九十条** 本制度新增的条款。\n",
                    encoding="utf-8")
    run("r2", FailingLexical())
    assert generation is not None

    def stored() -> dict[str, set[str]]:
        stores = open_stores(settings, embedder.name, embedder.dimension, generation)
        try:
            return {"vectors": stores.vectors.chunk_ids("leave_policy@1"),
                    "lexical": stores.lexical.chunk_ids("leave_policy@1"),
                    "graph": stores.graph.chunk_ids("leave_policy@1")}
        finally:
            stores.close()

    assert stored()["vectors"] - published  # the failed rewrite's new rows
    path.write_text(original, encoding="utf-8")
    run("r3", InProcess())
    with ManifestStore(settings.manifest) as manifest:
        record = manifest.get("leave_policy", "1")
        assert record is not None and record.state == State.READY
        now = set(manifest.published("leave_policy", "1"))
    assert now == published
    rows = stored()
    assert rows["vectors"] <= now
    assert rows["lexical"] == now
    assert rows["graph"] == now


def test_failures_are_typed_and_the_parse_error_rate_counts_the_parse_stage(
        settings: Settings, folder: Path) -> None:
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 20)
    (folder / "bad.md").write_text("x", encoding="utf-8")
    (folder / "bad.md.meta.yaml").write_text("acl: []\n", encoding="utf-8")
    files = [(p, folder) for p in sorted(folder.glob("*")) if not p.name.endswith(".yaml")]
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id="r1", steps=InProcess(),
                         log=LOG)
        summary = run_pipeline(ctx, str(folder), files)
        failed = {f.doc_id: f for f in summary.failures}
        assert set(failed) == {"broken", "bad"}
        assert (failed["broken"].stage, failed["broken"].kind) == ("parse", "ParseError")
        assert failed["broken"].reason == f"ParseError: {failed['broken'].message}"
        assert failed["bad"].stage == "read" and "acl" in failed["bad"].reason
        for doc_id, failure in failed.items():
            record = manifest.get(doc_id, "1")
            assert record is not None and record.state == State.FAILED
            assert record.reason == failure.reason
    # the bad sidecar is not a parse error: one of the two parsed documents failed to parse
    assert (summary.parse.documents, summary.parse.parse_errors) == (2, 1)
    assert summary.parse.parse_error_rate == 0.5
    assert summary.written == 1 and summary.documents == {"FAILED": 2, "READY": 1}
    dumped = summary.model_dump(mode="json")
    assert dumped["failures"][0]["reason"] and dumped["parse"]["parse_error_rate"] == 0.5


def test_nothing_indexed_fails_and_coverage_counts_what_reached_chunks(
        settings: Settings, tmp_path: Path) -> None:
    """A file whose text reaches no searchable chunk fails with the reason instead of going
    READY with nothing; coverage is measured on the chunks (headings with nothing under them
    reach one as text, so an outline is wholly read)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    # one paragraph, which becomes the title: still indexed
    note = "本制度自发布之日起施行,由行政部负责解释。"
    (folder / "note.txt").write_text(note + "\n", encoding="utf-8")
    # a table of headers only: its text is seen, but no row reaches a searchable chunk
    (folder / "contacts.md").write_text("# 通讯录\n\n| 姓名 | 电话 | 部门 |\n|---|---|---|\n",
                                        encoding="utf-8")
    # an outline: one body paragraph, then headings with nothing under them: chunked as text
    outline = ["# 员工手册", "## 第一章 总则", "本手册适用于全体员工。"] + [
        f"## 第{n}章 {name}管理制度与实施细则说明" for n, name in
        zip("二三四五六七", ["考勤", "薪酬", "培训", "保密", "安全", "奖惩"], strict=True)]
    (folder / "outline.md").write_text("\n\n".join(outline) + "\n", encoding="utf-8")
    files = [(p, folder) for p in sorted(folder.glob("*"))]
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id="r1", steps=InProcess(),
                         log=LOG)
        summary = run_pipeline(ctx, str(folder), files)
        failed = {f.doc_id: f for f in summary.failures}
        assert set(failed) == {"contacts"}
        assert (failed["contacts"].stage, failed["contacts"].kind) == ("chunk", "NothingIndexed")
        assert "characters seen, none reached a chunk" in failed["contacts"].reason
        record = manifest.get("contacts", "1")
        assert record is not None and record.state == State.FAILED
        note_record = manifest.get("note", "1")
        assert note_record is not None and note_record.state == State.READY
        assert [c.text for c in manifest.published_chunks() if c.doc_id == "note"] == [note]
        outline_record = manifest.get("outline", "1")
        assert outline_record is not None and outline_record.state == State.READY
        outline_texts = "\n".join(c.text for c in manifest.published_chunks()
                                  if c.doc_id == "outline")
        report = outline_record.parse_report or {}
    assert report["chars_indexed"] == report["chars_seen"] > 0
    assert summary.parse.low_coverage == {}
    assert "第七章 奖惩管理制度与实施细则说明" in outline_texts
