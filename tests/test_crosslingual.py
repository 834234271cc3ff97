"""The cross-lingual index through real ingests, on the embedded and the servers profile: an
English question finds the Chinese clause that answers it and a Chinese question the English
paragraph, which the Chinese dense model and BM25 rank lower, and the verdict says they are
answered while a near-topic question is not; the index keeps the query
contract (another tenant's or a restricted document never comes back through it) and a deleted
document's rows leave it."""

from __future__ import annotations

import os
import signal
import sqlite3
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from tests_support import ingest, profile_settings, tree

from ingest.config import Settings
from ingest.embed import use_pool
from ingest.embed.encoders import USE_MODEL, UseEncoder
from ingest.lifecycle import delete_documents, open_generation
from ingest.search import Searcher, SearchOptions, SearchResponse
from ingest.search.confidence import ANSWERABLE_FROM
from ingest.search.crosslingual import language
from ingest.text import sentences

WAREHOUSE = """# 仓储作业管理规定

生效日期：2025年3月1日

## 第一章 库存物品

第一条 冷冻品入库后应立即存放在零下十八摄氏度以下的冷库中，冷库温度每两小时记录一次。

第二条 易燃易爆物品应存放在专用危险品库房，与其他货物的间距不少于两米。

第三条 仓库每季度末进行一次全面盘点，账实差异率不得超过千分之三。

## 第二章 作业安全

第四条 叉车在库区内行驶速度不得超过每小时五公里，转弯和倒车时必须鸣笛。

第五条 货架最上层不得堆放超过二十五公斤的货物，货架承重标识每年复核一次。

第六条 外来人员进入库区须佩戴安全帽，并由仓库管理员全程陪同。
"""

LEAVE = """# 员工休假管理办法

生效日期：2025年1月1日

第一条 员工累计工作满一年不满十年的，年休假五天；满十年不满二十年的，年休假十天。

第二条 员工申请病假超过三天的，须提交二级以上医院出具的诊断证明。

第三条 婚假为三天，符合晚婚条件的另增加七天。
"""

SUPPLIER = """# Supplier Onboarding Procedure

Effective date: 2025-06-01

## Audit

New suppliers must pass an on-site audit before the first purchase order is issued. The audit
team is made up of three people: one from quality assurance, one from purchasing and one from
the production line.

## Samples

Before mass production, a supplier sends twenty samples, which the laboratory tests within ten
working days.

## Deliveries

Goods arrive between 8 a.m. and 4 p.m. on weekdays; a late truck is unloaded the next morning.

## Payment

Invoices from a new supplier are paid within forty-five days of receipt.
"""


CORPUS = {
    "warehouse.md": WAREHOUSE,
    "leave.md": LEAVE,
    "supplier.md": SUPPLIER,
    # another tenant's English rule, closer in wording to the English question than ours
    "other/_meta.yaml": "tenant_id: other\n",
    "other/cold-store.md": "# Cold Store Rules\n\nFrozen goods must be kept at minus 25 "
                           "degrees Celsius or colder.\n",
    # restricted to the board
    "board.md": "# Board Travel Rules\n\nBoard members may fly business class on flights "
                "longer than four hours.\n",
    "board.md.meta.yaml": "acl: [board]\n",
}
FROZEN = "What temperature must frozen goods be kept at?"
DELIVERY = "送货车几点之前要到？"


@pytest.fixture(params=["embedded", "servers"])
def profile(request: pytest.FixtureRequest, tmp_path: Path):
    yield from profile_settings(request, tmp_path)


def ask(settings: Settings, query: str, *, tenant: str = "default", crosslingual: bool = True
        ) -> SearchResponse:
    with Searcher(settings) as searcher:
        return searcher.search(query, tenant_id=tenant, groups=["all-staff"],
                               as_of=date(2026, 1, 1), k=5,
                               options=SearchOptions(crosslingual=crosslingual))


def rank_of(response: SearchResponse, doc_id: str, words: str) -> int | None:
    return next((r.rank for r in response.results
                 if r.doc_id == doc_id and words in r.text), None)


def test_questions_find_answers_written_in_the_other_language(profile: Settings,
                                                              tmp_path: Path) -> None:
    root = tree(tmp_path / "docs", CORPUS)
    assert ingest(profile, root).failures == []

    english = ask(profile, FROZEN)
    top = english.results[0]
    assert (top.doc_id, top.clause_no) == ("warehouse", "第一条")
    assert top.crosslingual_rank is not None and top.signals is not None
    assert top.signals.crosslingual > 0
    # answered, though no sentence is close in the Chinese model's space
    assert english.verdict == "sufficient" and top.signals.sentence < ANSWERABLE_FROM
    without = rank_of(ask(profile, FROZEN, crosslingual=False), "warehouse", "冷冻品")
    assert without is None or without > 1
    # the other tenant's English rule matches the words better, and is never shown
    assert {r.doc_id for r in english.results} <= {"warehouse", "leave", "supplier"}
    theirs = ask(profile, FROZEN, tenant="other")
    assert [r.doc_id for r in theirs.results] == ["other-cold-store"]

    chinese = ask(profile, DELIVERY)
    assert rank_of(chinese, "supplier", "Goods arrive") == 1
    assert chinese.results[0].crosslingual_rank is not None
    assert chinese.verdict == "sufficient"
    without = rank_of(ask(profile, DELIVERY, crosslingual=False), "supplier", "Goods arrive")
    assert without is None or without > 1

    # a Chinese question with an English phrase gets the whole list; a lone English word (a
    # name the documents may write too) does not
    phrase = ask(profile, "safety helmet 谁要戴").results[0]
    assert (phrase.doc_id, phrase.clause_no, phrase.crosslingual_rank) == ("warehouse", "第六条", 1)
    word = ask(profile, "forklift 最快开多少").results[0]
    assert (word.doc_id, word.clause_no, word.crosslingual_rank) == ("warehouse", "第四条", None)

    board = ask(profile, "Can board members fly business class?")
    assert "board" not in {r.doc_id for r in board.results}
    assert board.verdict == "no_answer"
    # near the topic (leave), not answered: the cross-lingual score stays below its floor
    assert ask(profile, "How many days of paternity leave do fathers get?").verdict == "no_answer"


def test_a_deleted_document_leaves_the_crosslingual_index(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    root = tree(tmp_path / "docs", {"warehouse.md": WAREHOUSE, "leave.md": LEAVE})
    first = ingest(settings, root)
    stores = open_generation(settings, first.generation)
    try:
        assert stores.crosslingual is not None
        assert stores.crosslingual.chunk_ids("warehouse@1") == stores.vectors.chunk_ids(
            "warehouse@1") != set()
    finally:
        stores.close()
    assert delete_documents(settings, ["warehouse"], "withdrawn", "r2") == (
        ["warehouse@1"], ["warehouse@1"])
    stores = open_generation(settings, first.generation)
    try:
        assert stores.crosslingual is not None
        assert stores.crosslingual.chunk_ids("warehouse@1") == set()
        assert stores.crosslingual.chunk_ids("leave@1") != set()
    finally:
        stores.close()
    assert "warehouse" not in {r.doc_id for r in ask(settings, FROZEN).results}


def test_switched_off_no_index_is_written(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", crosslingual=False)
    summary = ingest(settings, tree(tmp_path / "docs", {"leave.md": LEAVE}))
    stores = open_generation(settings, summary.generation)
    try:
        assert stores.crosslingual is None
    finally:
        stores.close()
    assert ask(settings, "How many days of annual leave?").results[0].crosslingual_rank is None


@pytest.mark.parametrize(("text", "expected"), [
    ("Invoices are paid within forty-five days.", "en"),
    ("第四条 叉车行驶速度不得超过每小时五公里（5 km/h）。", "zh"),
    ("Visitors 访客 must wear helmets 安全帽 in the warehouse 仓库.", "mixed"),
    ("2025-06-01", "mixed"),  # no letters: neither language
])
def test_language_of_a_chunk(text: str, expected: str) -> None:
    assert language(text) == expected


def test_without_its_sentence_pass_the_index_still_answers_across_languages(
        tmp_path: Path) -> None:
    """KBFLOW_CROSSLINGUAL_SENTENCES=false (issue #43): the cross-lingual encoder runs on the
    chunk texts alone and keeps no sentence vectors, and questions still reach the answer in
    the other language; a data dir built with them answers the same with the setting off (its
    sentence rows are left unread)."""
    root = tree(tmp_path / "docs", CORPUS)
    lean = Settings(data_dir=tmp_path / "lean", crosslingual_sentences=False)
    summary = ingest(lean, root)
    assert summary.failures == []
    assert summary.encoded[f"{USE_MODEL} texts"] == summary.embedded > 0
    assert f"{USE_MODEL} sentences" not in summary.encoded
    assert summary.encoded[f"{lean.embedding_model} sentences"] > 0  # the bge pass stays
    with sqlite3.connect(lean.vector_cache_path) as db:
        kept = dict(db.execute("SELECT model, count(*) FROM sentences GROUP BY model").fetchall())
    assert USE_MODEL not in kept and kept[lean.embedding_model] > 0

    older = Settings(data_dir=tmp_path / "older", crosslingual_sentences=True)
    assert f"{USE_MODEL} sentences" in ingest(older, root).encoded
    read_as_lean = older.model_copy(update={"crosslingual_sentences": False})
    for settings in (lean, read_as_lean):
        english = ask(settings, FROZEN)
        top = english.results[0]
        assert (top.doc_id, top.clause_no) == ("warehouse", "第一条")
        assert top.crosslingual_rank is not None and english.verdict == "sufficient"
        chinese = ask(settings, DELIVERY)
        assert rank_of(chinese, "supplier", "Goods arrive") == 1
        assert chinese.verdict == "sufficient"
        assert ask(settings, "How many days of paternity leave do fathers get?"
                   ).verdict == "no_answer"


LAWS = Path(__file__).parent / "fixtures" / "law_versions"
# made-up codes, ticket ids, part numbers and a name, none of which fusion reads as a code
CODES = ["fresh000x0fba", "fresh001xfff2", "fresh002x2214", "fresh003x867c", "fresh004x1bbb",
         "fresh005xa2c5", "pk7f3qz", "Tsuvan", "ab3x9k", "r2d7b", "QD-77F3", "Zorblax"]


def test_a_bare_code_finds_the_chinese_clause_that_writes_it(tmp_path: Path) -> None:
    """An English-looking token over Chinese laws: BM25 finds the one clause writing it, and the
    cross-lingual lists (the encoder reads the token as noise) must not push it down."""
    laws = ["会计法(2024-06-28).md", "国务院组织法(2024-03-11).md",
            "废旧金属收购业治安管理办法(2023-07-20).md",
            "最高人民法院关于设立国际商事法庭若干问题的规定(2023-12-18).md"]
    docs = {name: (LAWS / name).read_text(encoding="utf-8") for name in laws}
    lines = docs[laws[0]].split("\n")
    clauses = [i for i, line in enumerate(lines) if line.startswith("第") and "条" in line[:8]]
    for n, code in enumerate(CODES):
        lines[clauses[3 + n * 3]] += f"（备案编号 {code}）"
    docs[laws[0]] = "\n".join(lines)
    settings = Settings(data_dir=tmp_path / "data")
    assert ingest(settings, tree(tmp_path / "docs", docs)).failures == []
    with Searcher(settings) as searcher:
        for code in CODES:
            response = searcher.search(code, tenant_id="default", groups=["all-staff"],
                                       as_of=date(2026, 1, 1), k=5)
            assert response.results, code
            assert code in response.results[0].text, (code, response.results[0].clause_no)


def law_texts() -> list[str]:
    """Real clauses and their sentences: several of the encoder's slices."""
    clauses = [line for path in sorted(LAWS.glob("*.md"))
               for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("第")]
    return clauses + [s for c in clauses for s in sentences(c)]


def test_the_encoder_workers_give_the_vectors_of_one_process() -> None:
    """Issue #43: the cross-lingual encoder's large calls run on every core. Whichever process
    encodes a slice, every vector is the one this process alone computes, to the bit; a small
    call starts no worker; a worker killed mid-run costs only time."""
    texts = law_texts()
    assert len(texts) > 4 * use_pool.SLICE
    use_pool.encode(texts[:100])
    assert use_pool.worker_pids() == []  # below the characters that pay for a start-up
    alone = use_pool.encode(texts, workers=0)
    try:
        assert np.array_equal(use_pool.encode(texts, workers=1), alone)
        assert np.array_equal(UseEncoder().encode(texts), alone)  # the started worker is used
        (pid,) = use_pool.worker_pids()
        os.kill(pid, signal.SIGKILL)
        assert np.array_equal(use_pool.encode(texts), alone)
        assert use_pool.worker_pids() == []  # dropped; a later large call starts another
    finally:
        use_pool.shutdown()


def test_an_ingest_on_the_workers_stores_the_same_vectors_and_counts(tmp_path: Path) -> None:
    """The same laws ingested by one process and with a worker beside it: the same cross-lingual
    vectors of chunks and sentences in the cache, the same counts of texts and sentences
    encoded (identical sentences once), and the workers stopped when the index closes."""
    root = tree(tmp_path / "docs", {name: (LAWS / name).read_text(encoding="utf-8")
                                    for name in ["会计法(2024-06-28).md",
                                                 "国务院组织法(2024-03-11).md"]})
    alone = Settings(data_dir=tmp_path / "alone")
    alone_summary = ingest(alone, root)
    use_pool.encode(law_texts(), workers=1)  # started: every call of two slices or more uses it
    pid = use_pool.worker_pids()[0]
    pooled = Settings(data_dir=tmp_path / "pooled")
    pooled_summary = ingest(pooled, root)
    assert use_pool.worker_pids() == [] and not Path(f"/proc/{pid}").exists()
    assert alone_summary.failures == pooled_summary.failures == []
    counts = {k: n for k, n in pooled_summary.encoded.items() if k.startswith(USE_MODEL)}
    assert counts == {k: n for k, n in alone_summary.encoded.items() if k.startswith(USE_MODEL)}
    assert counts[f"{USE_MODEL} sentences"] > use_pool.SLICE
    assert cached_use_vectors(pooled) == cached_use_vectors(alone)


def cached_use_vectors(settings: Settings) -> dict[str, set[tuple[str, bytes]]]:
    with sqlite3.connect(settings.vector_cache_path) as db:
        return {table: set(db.execute(f"SELECT content_hash, {column} FROM {table} "
                                      "WHERE model=?", (USE_MODEL,)).fetchall())
                for table, column in (("vectors", "vector"), ("sentences", "vectors"))}
