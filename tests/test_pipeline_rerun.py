"""What a run does again and what it holds: an unchanged re-run parses nothing, a change to the
file or to a setting the parse depends on parses it again; vectors are written a write group
at a time, read back from the vector cache, so a run does not hold the corpus's vectors."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests_support import SAMPLE_DOCS

from ingest.config import Settings
from ingest.embed import Embedder, Embedding
from ingest.manifest import ManifestStore
from ingest.models import Chunk, ChunkKind, ParsedDocument
from ingest.parse import ParsePool
from ingest.pipeline import IngestSummary, InProcess, Prepared, RunContext, run_pipeline
from ingest.pipeline import run as pipeline_run
from ingest.pipeline.failures import Failure
from ingest.stores import open_stores

LOG = logging.getLogger("test_pipeline_rerun")
FILES = ["leave_policy.md", "remote_work_policy.md"]


class Counting(InProcess):
    """InProcess, counting the files handed to the parser."""

    def __init__(self) -> None:
        self.parsed: list[str] = []

    def parse(self, parser: ParsePool, window: Sequence[Prepared]
              ) -> list[ParsedDocument | Failure]:
        self.parsed += [item.path.name for item in window]
        return super().parse(parser, window)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in FILES:
        shutil.copy(SAMPLE_DOCS / name, docs)
    return docs


def run(settings: Settings, folder: Path, run_id: str) -> tuple[IngestSummary, list[str]]:
    """A run over the folder's files: its summary and the files it parsed."""
    steps = Counting()
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id=run_id, steps=steps,
                         log=LOG)
        summary = run_pipeline(ctx, str(folder), [(p, folder) for p in sorted(folder.iterdir())])
    assert summary.failures == []
    return summary, sorted(steps.parsed)


def test_an_unchanged_rerun_parses_nothing(settings: Settings, folder: Path) -> None:
    first, parsed = run(settings, folder, "r1")
    assert parsed == FILES and first.written == 2
    again, parsed = run(settings, folder, "r2")
    assert parsed == [] and again.skipped_unchanged == 2
    assert (again.written, again.embedded, again.chunks.added) == (0, 0, 0)


def test_an_edited_file_is_parsed_again_and_only_it(settings: Settings, folder: Path) -> None:
    run(settings, folder, "r1")
    path = folder / "leave_policy.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n第九十九条 本制度由人事部解释。\n",
                    encoding="utf-8")
    edited, parsed = run(settings, folder, "r2")
    assert parsed == ["leave_policy.md"] and edited.skipped_unchanged == 1
    assert edited.written == 1 and edited.chunks.added >= 1


def test_a_setting_the_parse_depends_on_parses_every_file_again(
        settings: Settings, folder: Path) -> None:
    run(settings, folder, "r1")
    # what a parse reads: review comments (none in these files, so nothing is rewritten)
    commented = settings.model_copy(update={"parse_include_comments": True})
    again, parsed = run(commented, folder, "r2")
    assert parsed == FILES and again.skipped_unchanged == 0
    assert again.chunks.added == again.chunks.removed == again.embedded == 0
    assert run(commented, folder, "r3")[1] == []  # recorded: the next run skips them again
    # the ACL of files that declare none: every chunk is published with the new one
    finance = commented.model_copy(update={"default_acl": ["finance"]})
    moved, parsed = run(finance, folder, "r4")
    assert parsed == FILES and moved.embedded == 0
    with ManifestStore(finance.manifest) as manifest:
        chunks = manifest.published_chunks()
    assert chunks and {tuple(c.acl) for c in chunks} == {("finance",)}


def test_vectors_are_written_a_group_at_a_time_from_the_cache(
        settings: Settings, folder: Path, embedder: Embedder,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One version per write group: each group's vectors come back from the vector cache, and
    a vector gone from it meanwhile is computed again, so every indexed chunk gets its own."""

    class ForgetfulCache(Counting):
        def embed(self, embedder: Embedder, chunks: list[Chunk]
                  ) -> tuple[dict[str, Embedding], int]:
            vectors, computed = super().embed(embedder, chunks)
            with sqlite3.connect(settings.vector_cache_path) as db:
                db.execute("DELETE FROM vectors WHERE content_hash=?", (chunks[0].content_hash,))
            return vectors, computed

    monkeypatch.setattr(pipeline_run, "WRITE_GROUP", 1)
    files = [(p, folder) for p in sorted(folder.iterdir())]
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id="r1",
                         steps=ForgetfulCache(), log=LOG)
        summary = run_pipeline(ctx, str(folder), files)
        chunks = [c for c in manifest.published_chunks() if c.kind != ChunkKind.PARENT]
    assert summary.failures == [] and summary.written == 2
    distinct = len({c.content_hash for c in chunks})
    assert summary.embedded == distinct + 1  # the forgotten vector, computed twice
    stores = open_stores(settings, embedder.name, embedder.dimension, summary.generation)
    try:
        assert stores.vectors.count() == len(chunks)
        for key in {f"{c.doc_id}@{c.version_id}" for c in chunks}:
            assert stores.vectors.chunk_ids(key) == {
                c.chunk_id for c in chunks if f"{c.doc_id}@{c.version_id}" == key}
    finally:
        stores.close()
