"""Issue 28, items 13 and 14 on the embedded stores with the real model: a rewrite that fails (a
full disk, a kill) never hides what was published, and its failure names the real error; a
rebuild killed anywhere leaves one whole serving generation that every alias names, and the dead
generation is dropped.

    python tests/test_attacks_rebuild.py POINT DATA_DIR

runs a rebuild that SIGKILLs itself at POINT (one of KILL_POINTS).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

import pytest
from tests_support import REPO

from flows.quiet import quiet
from ingest.config import Settings
from ingest.embed import Embedder, Embedding
from ingest.manifest import ManifestStore
from ingest.models import Chunk, ChunkKind, State, StoreRole
from ingest.pipeline import IngestSummary, InProcess, Planned, RunContext, run_pipeline
from ingest.search import Searcher
from ingest.stores import Stores

LOG = logging.getLogger("test_attacks_rebuild")
POLICIES = 12
AS_OF = date(2026, 1, 1)
KILL_POINTS = ("build", "gate", "switch", "cleanup")


def write_policies(folder: Path, count: int, *, acl: str = "[all-staff]",
                   effective_to: str | None = None, rate: str = "每天") -> Path:
    """`count` small policies with sidecars, each naming its own project code KB0nn."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"p{n:02d}.md").write_text(
            f"# 第{n}号补贴管理办法\n\n**第一条** 项目代码KB{n:03d}的差旅补贴标准为{rate}"
            f"{100 + n}元。\n\n**第二条** 项目代码KB{n:03d}的补贴由财务部按月发放。\n",
            encoding="utf-8")
        (folder / f"p{n:02d}.md.meta.yaml").write_text(
            f'doc_id: policy-{n:02d}\nversion: "1"\ntenant_id: default\nacl: {acl}\n'
            "effective_from: 2025-01-01\n"
            + (f"effective_to: {effective_to}\n" if effective_to else ""), encoding="utf-8")
    return folder


def ingest(settings: Settings, folder: Path, run_id: str,
           steps: InProcess | None = None) -> IngestSummary:
    files = [(path, folder) for path in sorted(folder.glob("*.md"))]
    with ManifestStore(settings.manifest) as manifest:
        ctx = RunContext(settings=settings, manifest=manifest, run_id=run_id,
                         steps=steps or InProcess(), log=LOG)
        return run_pipeline(ctx, str(folder), files)


def answers(settings: Settings, count: int) -> dict[str, str]:
    """Each policy's top search answer for its own code, as an all-staff reader: doc → text."""
    with Searcher(settings) as searcher:
        found = {}
        for n in range(count):
            top = searcher.search(f"KB{n:03d}的差旅补贴标准", tenant_id="default",
                                  groups=["all-staff"], as_of=AS_OF).results
            if top:
                found[top[0].doc_id] = top[0].text
    return found


def old_answers(count: int) -> dict[str, str]:
    return {f"policy-{n:02d}": f"第一条 项目代码KB{n:03d}的差旅补贴标准为每天{100 + n}元。"
            for n in range(count)}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The policies ingested once: the vector cache every test starts from (nothing to embed)."""
    root = tmp_path_factory.mktemp("attacks_rebuild")
    settings = Settings(data_dir=root / "data")
    ingest(settings, write_policies(root / "docs", POLICIES), "template")
    return settings


@pytest.fixture
def published(template: Settings, tmp_path: Path) -> tuple[Settings, Path]:
    """The policies ingested into a fresh data directory from `tmp_path/docs`."""
    settings = Settings(data_dir=tmp_path / "data")
    settings.data_dir.mkdir()
    shutil.copy(template.vector_cache_path, settings.vector_cache_path)
    folder = write_policies(tmp_path / "docs", POLICIES)
    assert ingest(settings, folder, "first").failures == []
    assert answers(settings, POLICIES) == old_answers(POLICIES)
    return settings, folder


class FullLexical(InProcess):
    """InProcess, with the lexical store's SQLite file held at its size when the lexical role
    starts (PRAGMA max_page_count): its writes fail with a real SQLITE_FULL, which SQLite rolls
    back by itself, as on a full disk."""

    def write(self, role: StoreRole, stores: Stores, group: Sequence[Planned],
              vectors: Mapping[str, Embedding]) -> None:
        if role == "lexical":
            stores.lexical._db.execute("PRAGMA max_page_count = 1")  # type: ignore[attr-defined]
        super().write(role, stores, group, vectors)


class FullCache(InProcess):
    """InProcess, with the vector cache's file full when new vectors are to be stored."""

    def embed(self, embedder: Embedder, chunks: list[Chunk]
              ) -> tuple[dict[str, Embedding], int]:
        embedder._cache.execute("PRAGMA max_page_count = 1")
        return super().embed(embedder, chunks)


def test_a_metadata_rewrite_failing_on_a_full_disk_keeps_every_version_served(
        published: tuple[Settings, Path]) -> None:
    """A new acl and end date (same text) fail in the lexical store after the vectors took
    them: every version stays READY (the failed ones with their old records) and is found with
    its text, and the failure says the disk is full (it said "cannot rollback", and every
    failed version vanished from search)."""
    settings, folder = published
    with ManifestStore(settings.manifest) as manifest:
        before = manifest.published_keys()
    write_policies(folder, POLICIES, acl="[all-staff, auditors]", effective_to="2030-12-31")
    summary = ingest(settings, folder, "metadata", FullLexical())

    failed = {f.doc_id for f in summary.failures}
    assert failed  # the first few fit in the pages their old rows freed, as on a real disk
    for failure in summary.failures:
        assert failure.stage == "write" and failure.message == "database or disk is full"
    with ManifestStore(settings.manifest) as manifest:
        assert manifest.published_keys() == before and manifest.hidden_keys() == []
        for record in manifest.documents():
            assert record.state == State.READY
            kept = "kept last published content" in (record.reason or "")
            assert kept == (record.doc_id in failed)
    assert answers(settings, POLICIES) == old_answers(POLICIES)


def test_a_full_vector_cache_fails_the_run_with_its_real_error(
        published: tuple[Settings, Path]) -> None:
    """New text whose vectors cannot be cached stops the run with SQLite's own error (it was
    masked by "cannot rollback - no transaction is active"); nothing published is touched."""
    settings, folder = published
    write_policies(folder, POLICIES, rate="每日")
    with pytest.raises(sqlite3.OperationalError, match=r"^database or disk is full$"):
        ingest(settings, folder, "new text", FullCache())
    assert answers(settings, POLICIES) == old_answers(POLICIES)


def test_a_rewrite_killed_half_way_keeps_the_published_versions_served(
        prefect_api: None, published: tuple[Settings, Path]) -> None:
    """SIGKILLed once the first rewritten version reached ES_READY, every version is still
    found with its old text (they were all hidden while in flight), and the next run
    finishes the rewrite."""
    from prefect.settings import get_current_settings

    settings, folder = published
    write_policies(folder, POLICIES, acl="[all-staff, auditors]")
    child = subprocess.run(
        [sys.executable, str(REPO / "tests" / "crashing_run.py"), "ingest", State.ES_READY,
         str(settings.data_dir), str(folder)],
        env=os.environ | {"PREFECT_API_URL": str(get_current_settings().api.url)},
        capture_output=True, text=True, timeout=600, check=False)
    assert child.returncode == -9, child.stderr[-3000:]
    with ManifestStore(settings.manifest) as manifest:
        assert State.READY not in manifest.state_counts()  # all of them in flight
    assert answers(settings, POLICIES) == old_answers(POLICIES)

    assert ingest(settings, folder, "resumed").failures == []
    with Searcher(settings) as searcher:
        top = searcher.search("KB003的差旅补贴标准", tenant_id="default", groups=["auditors"],
                              as_of=AS_OF).results
    assert top and top[0].doc_id == "policy-03"


# ---- item 14: rebuilds killed at each point ------------------------------------------------------

def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _rebuild_killed_at(point: str, data_dir: str) -> None:
    """The child: a real rebuild flow that SIGKILLs itself at `point`."""
    quiet()
    import flows.lifecycle as lifecycle

    if point == "build":  # once the first version of the new generation is in its vectors
        advance = ManifestStore.advance

        def advance_then_die(self: ManifestStore, *args: object) -> None:
            advance(self, *args)  # type: ignore[arg-type]
            _die()

        ManifestStore.advance = advance_then_die  # type: ignore[method-assign]
    elif point == "gate":  # built, not yet judged
        lifecycle.publish_gate = lambda **_: _die()  # type: ignore[assignment,return-value]
    elif point == "switch":  # the new generation's graph and lexical aliases switched, not vectors
        activate = Stores.activate

        def half_switch(self: Stores) -> None:
            with ManifestStore(Settings(data_dir=Path(data_dir)).manifest) as manifest:
                building = manifest.get_generation("g2") is not None
            if not building:  # aliases repaired before the rebuild began
                activate(self)
                return
            self.graph.activate()
            self.lexical.activate()
            _die()

        Stores.activate = half_switch  # type: ignore[method-assign]
    else:  # switched, old generations not yet dropped
        lifecycle._drop_old_generations = lambda *_: _die()  # type: ignore[assignment]
    lifecycle.rebuild_flow(data_dir, None)
    sys.exit(f"the rebuild finished without reaching {point}")


def kill_rebuild(point: str, data_dir: Path) -> int:
    from prefect.settings import get_current_settings

    child = subprocess.run(
        [sys.executable, __file__, point, str(data_dir)],
        env=os.environ | {"PREFECT_API_URL": str(get_current_settings().api.url)},
        capture_output=True, text=True, timeout=600, check=False)
    if child.returncode != -9:
        print(child.stdout[-3000:], child.stderr[-3000:])
    return child.returncode


def aliases(settings: Settings) -> dict[str, str | None]:
    """The generation each embedded store's alias names."""
    named: dict[str, str | None] = {}
    for role, path in (("vectors", settings.vectors_path), ("lexical", settings.lexical_path)):
        with sqlite3.connect(path) as db:
            row = db.execute("SELECT target FROM kbflow_aliases WHERE name='kbflow_chunks'"
                             ).fetchone()
        named[role] = row[0].removeprefix("kbflow_chunks_") if row else None
    alias_file = settings.graph_path / "kbflow_graph.json"
    named["graph"] = json.loads(alias_file.read_text())["generation"] \
        if alias_file.exists() else None
    return named


def leftovers(settings: Settings, generation: str) -> list[str]:
    """Tables and files of `generation` still on disk."""
    found = [p.name for p in settings.graph_path.glob(f"{generation}.lbug*")]
    for path in (settings.vectors_path, settings.lexical_path):
        with sqlite3.connect(path) as db:
            found += [r[0] for r in db.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE ?",
                (f"kbflow_chunks_{generation}%",))]
    return found


def assert_whole(settings: Settings, generation: str) -> None:
    """The manifest serves `generation`, and each store holds exactly its published chunks."""
    from ingest.lifecycle import open_generation

    with ManifestStore(settings.manifest) as manifest:
        serving = manifest.serving()
        assert serving is not None and serving.generation == generation
        keys = manifest.published_keys()
        assert len(keys) == 3 and manifest.hidden_keys() == []
        records = {r.version_key: manifest.version_chunks(r.doc_id, r.version_id)
                   for r in manifest.documents()}
    stores = open_generation(settings, generation)
    try:
        for key in keys:
            ids = {c.chunk_id for c in records[key]}
            assert stores.lexical.chunk_ids(key) == ids
            assert stores.graph.chunk_ids(key) == ids
            assert stores.vectors.chunk_ids(key) == {
                c.chunk_id for c in records[key] if c.kind != ChunkKind.PARENT}
    finally:
        stores.close()
    assert answers(settings, 3) == old_answers(3)


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_rebuild_killed_anywhere_leaves_one_whole_generation_and_drops_the_dead_one(
        prefect_api: None, template: Settings, tmp_path: Path, point: str) -> None:
    """Killed during the build, before the gate, between the switches, or before cleanup:
    the manifest serves one whole generation; the cleanup (or the next rebuild) points every
    alias at it and drops a generation a dead run left "building" (kept forever before, and a
    kill between the switches left the aliases on g2 while the manifest served g1)."""
    from flows.lifecycle import rebuild_flow
    from ingest.lifecycle.generations import reconcile

    settings = Settings(data_dir=tmp_path / "data")
    settings.data_dir.mkdir()
    shutil.copy(template.vector_cache_path, settings.vector_cache_path)
    ingest(settings, write_policies(tmp_path / "docs", 3), "first")
    assert aliases(settings) == dict.fromkeys(("vectors", "lexical", "graph"), "g1")

    assert kill_rebuild(point, settings.data_dir) == -9
    switched = point in ("switch", "cleanup")
    serving = "g2" if switched else "g1"
    assert_whole(settings, serving)  # readers follow the manifest: whole right away
    if point != "build":  # "build" is left to the next rebuild
        with ManifestStore(settings.manifest) as manifest:
            assert reconcile(settings, manifest) == ([] if switched else ["g2"])
            if switched:  # the switch recorded the gate report with it
                g2 = manifest.get_generation("g2")
                assert g2 is not None and g2.gate_report is not None
        assert aliases(settings) == dict.fromkeys(("vectors", "lexical", "graph"), serving)
        assert_whole(settings, serving)

    report = rebuild_flow(str(settings.data_dir), None)
    assert report.activated and report.generation == "g3"
    assert ("g2" in report.dropped) == (point == "build")
    with ManifestStore(settings.manifest) as manifest:
        statuses = {g.generation: g.status for g in manifest.generations()}
    assert statuses == {"g1": "kept", "g2": "kept" if switched else "dropped", "g3": "serving"}
    assert aliases(settings) == dict.fromkeys(("vectors", "lexical", "graph"), "g3")
    assert_whole(settings, "g3")
    if not switched:
        assert leftovers(settings, "g2") == []


if __name__ == "__main__":
    _rebuild_killed_at(*sys.argv[1:3])
