"""The search side of issue 28's review, replayed against real stores: typo correction that
leaked another tenant's words, Elasticsearch refusing a long hidden-versions filter, a read-only
data directory that could not be searched, and damaged SQLite files that ended in tracebacks.
Each test names the item it reproduces and fails on the code from before the fixes."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from test_store_contract import es_url, lexical_store, make_chunk  # noqa: F401 - fixtures
from test_visibility import STEPS, meta

from ingest.config import Settings
from ingest.embed import Embedder
from ingest.manifest import ManifestStore
from ingest.models import Chunk, SearchFilter
from ingest.search import hybrid_search
from ingest.search.rewrite import Vocabulary
from ingest.stores import open_stores
from ingest.stores.sqlite_vectors import SqliteVectorStore

KBFLOW = Path(sys.executable).with_name("kbflow")
DAY = date(2026, 1, 1)


def publish(manifest: ManifestStore, chunks: list[Chunk], write, *, ready: bool = True) -> None:
    """Begin the chunks' version, `write` its rows, and publish it (or leave it in flight)."""
    first = chunks[0]
    manifest.begin(meta(first), "run", "c", "m")
    write(chunks)
    if ready:
        for state in STEPS:
            manifest.advance(first.doc_id, first.version_id, state, "run")
        manifest.publish(first.doc_id, first.version_id, chunks, "run")


# ---- 9: typo correction draws only on what the reader may see ---------------------------------

BOARD = ["第1条 鲲鹏项目的预算由董事会审批。", "第2条 鲲鹏项目的进度每月报告董事会。"]
STAFF = ["第3条 项目经费报销须经部门负责人审批。", "第4条 项目结项后须提交总结报告。"]


def test_9_a_typo_is_corrected_only_to_words_the_reader_may_see(
        lexical_store, embedder, tmp_path: Path, settings: Settings) -> None:  # noqa: F811
    """昆朋项目 read like tenant a's board-only 鲲鹏项目 for everyone: tenant b's query came back
    corrected to it, so the correction told b a term of a document b may not see."""
    manifest = ManifestStore(tmp_path / "manifest.db")
    manifest.generation = manifest.create_generation("m", 4, "c", serving=True).generation
    vectors = SqliteVectorStore(tmp_path / "vectors.db", embedder.dimension, embedder.name)

    def write(chunks: list[Chunk]) -> None:
        vectors.upsert(chunks, embedder.embed_chunks(chunks)[0])
        lexical_store.upsert(chunks)

    def chunks(doc: str, texts: list[str], tenant: str, acl: str, start: int) -> list[Chunk]:
        return [make_chunk(n, doc=doc, text=t, tenant=tenant, acl=(acl,))
                for n, t in enumerate(texts, start=start)]

    publish(manifest, chunks("board", BOARD, "a", "board", 1), write)
    publish(manifest, chunks("staff", STAFF, "b", "staff", 3), write)
    draft = chunks("draft", [t.replace("第", "草案第") for t in BOARD], "b", "staff", 5)
    publish(manifest, draft, write, ready=False)  # b's own, but not published yet
    vocabulary = Vocabulary.load(settings, lexical_store)
    assert vocabulary.candidates("昆朋") == [("鲲鹏", True)]  # the corpus knows it

    def corrected(tenant: str, group: str) -> str:
        response = hybrid_search("昆朋项目", manifest=manifest, lexical=lexical_store,
                                 vectors=vectors, embedder=embedder, tenant_id=tenant,
                                 groups=[group], as_of=DAY, vocabulary=vocabulary)
        assert response.rewrite is not None
        return response.rewrite.corrected or response.rewrite.bm25_text

    assert "鲲鹏" not in corrected("b", "staff")
    assert "鲲鹏" not in corrected("a", "staff")  # the right tenant, not the right group
    assert corrected("a", "board") == "鲲鹏项目"  # the reader who may see it still gets it
    for state in STEPS:  # b's draft is published: now b may see the word, and gets it
        manifest.advance("draft", "1", state, "run")
    manifest.publish("draft", "1", draft, "run")
    assert corrected("b", "staff") == "鲲鹏项目"
    vectors.close()
    manifest.close()


# ---- low: more hidden versions than one terms query takes --------------------------------------

# Past Elasticsearch's index.max_terms_count (65,536) and this SQLite build's variable limit
# (250,000; 32,766 is SQLite's default).
MANY = 250_001


def test_a_hidden_keys_filter_longer_than_any_engine_limit_still_filters(
        lexical_store) -> None:  # noqa: F811
    """Elasticsearch refused a terms list of more than 65,536 hidden version keys, SQLite more
    `?` than its variable limit: a search then failed instead of filtering."""
    shown = make_chunk(1, text="差旅费报销标准")
    hidden = make_chunk(2, doc="gone", text="差旅费报销标准")
    lexical_store.upsert([shown, hidden])
    keys = [f"old{n}@1" for n in range(MANY)] + [hidden.version_key]
    flt = SearchFilter(tenant_id="t1", groups=["staff"], as_of=DAY, hidden_keys=keys)
    assert [h.chunk_id for h in lexical_store.search("差旅费报销", flt, 10)] == [shown.chunk_id]
    assert lexical_store.term_counts(["报销", "无此词"], flt) == {"报销": 1, "无此词": 0}


# ---- low: a read-only data directory; damaged SQLite files ------------------------------------

@pytest.fixture
def data_dir(tmp_path: Path, embedder) -> Path:
    """A data directory with one published clause in every embedded store, all files closed
    (no -wal or -shm left beside them), as a finished ingest leaves it."""
    settings = Settings(data_dir=tmp_path / "data")
    manifest = ManifestStore(settings.manifest)
    manifest.generation = manifest.create_generation(embedder.name, embedder.dimension, "c",
                                                     serving=True).generation
    stores = open_stores(settings, embedder.name, embedder.dimension, manifest.generation)
    chunk = make_chunk(1, text="第1条 差旅费报销须附发票，由部门负责人审批。")

    def write(chunks: list[Chunk]) -> None:
        stores.vectors.upsert(chunks, embedder.embed_chunks(chunks)[0])
        stores.lexical.upsert(chunks)
        stores.graph.upsert(chunks, [], {chunk.version_key: "差旅费管理办法"})

    publish(manifest, [chunk], write)
    stores.close()
    manifest.close()
    Embedder(embedder.name, settings.vector_cache_path).close()  # search reads its cache
    assert not list(settings.data_dir.glob("*-wal"))
    return settings.data_dir


def kbflow(data_dir: Path, *args: str, write: bool = True) -> subprocess.CompletedProcess[str]:
    """`kbflow --data-dir … args` as t1/staff. `write=False` runs it as a process that may not
    write what file modes forbid: root ignores them, but without CAP_DAC_OVERRIDE (setpriv
    drops it from the bounding set) it is held to them like any user, and still reads
    everything (the model under /root too)."""
    command = [str(KBFLOW), "--data-dir", str(data_dir), *args]
    if args[0] == "search":
        command += ["--tenant", "t1", "--group", "staff"]
    if not write and os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.fail("setpriv (util-linux) is needed to drop root's CAP_DAC_OVERRIDE")
        command = ["setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override",
                   *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_read_only_data_directory_is_searched(data_dir: Path) -> None:
    """Opening the manifest and the stores ran DDL and switched journals, so a reader that may
    not write the data directory (a read-only copy or mount) got `attempt to write a readonly
    database` instead of results."""
    modes = {p: p.stat().st_mode for p in [data_dir, *data_dir.rglob("*")]}
    for path in modes:
        path.chmod(stat.S_IMODE(path.stat().st_mode) & ~0o222)
    try:
        found = kbflow(data_dir, "search", "差旅费报销要什么", "--json", write=False)
        after = {p: p.stat().st_mtime_ns for p in modes}
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert found.returncode == 0, found.stderr
    assert '"chunk_id": "policy-1-1"' in found.stdout
    assert set(os.listdir(data_dir)) == {p.name for p in modes if p.parent == data_dir}
    assert after == {p: p.stat().st_mtime_ns for p in modes}  # nothing was written


def overwrite(path: Path) -> None:
    with path.open("r+b") as f:
        f.write(os.urandom(4096))


def truncate(path: Path) -> None:
    """Keep the first page only: the schema still reads, the rest of the file is gone."""
    os.truncate(path, 4096)


@pytest.mark.parametrize(("command", "name", "damage"), [
    ("search", "manifest.db", overwrite), ("search", "lexical.db", truncate),
    ("search", "vectors.db", overwrite), ("ingest", "manifest.db", truncate),
    ("ingest", "lexical.db", overwrite),
])
def test_a_damaged_database_fails_in_one_line_naming_it(data_dir: Path, tmp_path: Path,
                                                        command: str, name: str,
                                                        damage) -> None:
    """Random bytes over a SQLite file, or a truncated one, ended `kbflow search` and `kbflow
    ingest` in a traceback (an ingest's from inside its Prefect flow run)."""
    damage(data_dir / name)
    (tmp_path / "docs").mkdir()
    result = kbflow(data_dir, command, "差旅费报销" if command == "search" else
                    str(tmp_path / "docs"))
    assert result.returncode == 5, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(data_dir / name) in lines[0] and "restore it" in lines[0]
