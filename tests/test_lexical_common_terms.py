"""The embedded BM25 (SQLite FTS5) does not score every row that holds a common term (issue
#27): a query with a rare term ranks exactly as the full ranking would, and a query of common
words alone reads a capped set of the newest rows, not the whole table."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_store_contract import flt, make_chunk

from ingest.stores.sqlite_lexical import CANDIDATE_CAP, SqliteLexicalStore, _or
from ingest.stores.tokens import query_tokens

COMMON = ["travel", "expense", "hotel", "approval", "manager", "invoice"]


@pytest.fixture
def store(tmp_path: Path):
    """1,500 rows of common words, then 40 rows holding a rare word (`zebra`) as well."""
    rng = random.Random(5)
    store = SqliteLexicalStore(tmp_path / "lexical.db")
    rows = [make_chunk(n, text=" ".join(rng.choices(COMMON, k=rng.randint(4, 30))))
            for n in range(1500)]
    rows += [make_chunk(n, doc="rare", text=" ".join(
        rng.choices(COMMON, k=rng.randint(2, 30)) + ["zebra"] * rng.randint(1, 3)))
        for n in range(40)]
    store.upsert(rows)
    store.rows = rows  # type: ignore[attr-defined]  # in insertion order, for the tests
    yield store
    store.close()


def full_ranking(store: SqliteLexicalStore, query: str, k: int) -> list[tuple[str, float]]:
    store._db.execute("BEGIN")
    try:
        hits = store._ranked(_or(query_tokens(query)), flt(), k)
    finally:
        store._db.execute("COMMIT")
    return [(h.chunk_id, round(h.score, 6)) for h in hits]


@pytest.mark.parametrize("query", ["zebra hotel", "zebra travel expense approval",
                                   "zebra", "hotel invoice zebra manager"])
@pytest.mark.parametrize("k", [1, 5, 30])
def test_a_rare_term_ranks_exactly_as_the_full_ranking(store, query: str, k: int) -> None:
    hits = [(h.chunk_id, round(h.score, 6)) for h in store.search(query, flt(), k)]
    assert hits == full_ranking(store, query, k)


@pytest.mark.parametrize(("k", "candidates"), [(10, CANDIDATE_CAP), (100, 400)])
def test_common_words_alone_score_only_the_newest_rows(store, k: int, candidates: int) -> None:
    """The best k of the newest CANDIDATE_CAP matching rows (4 × k for a deeper ask), in the
    full ranking's order: not the best of the ~1,500 rows that hold these words."""
    hits = [(h.chunk_id, round(h.score, 6)) for h in store.search("hotel travel expense", flt(),
                                                                  k)]
    words = {"hotel", "travel", "expense"}
    matching = [r.chunk_id for r in store.rows if words & set(r.text.split())]
    newest = set(matching[-candidates:])  # rows are inserted in this order
    best = [h for h in full_ranking(store, "hotel travel expense", 2000) if h[0] in newest][:k]
    assert hits == best
    assert hits != full_ranking(store, "hotel travel expense", k)  # an older row was better


def test_common_words_rank_the_newest_rows_the_reader_can_see(tmp_path: Path) -> None:
    """The newest rows belong to another tenant: this reader's own rows are still found."""
    store = SqliteLexicalStore(tmp_path / "lexical.db")
    store.upsert([make_chunk(n, doc="mine", tenant="t1", text="hotel expense") for n in range(5)])
    store.upsert([make_chunk(n, doc="other", tenant="t2", text="hotel expense")
                  for n in range(3 * CANDIDATE_CAP)])
    hits = store.search("hotel expense", flt(), 5)
    assert sorted(h.chunk_id for h in hits) == [f"mine-1-{n}" for n in range(5)]
    store.close()


def test_a_readers_term_counts_stop_at_the_cap_and_never_count_hidden_words(
        tmp_path: Path) -> None:
    """Exact below the cap; past it, the corpus's count, without reading every visible row;
    a word only another tenant uses stays 0."""
    store = SqliteLexicalStore(tmp_path / "lexical.db")
    store.upsert([make_chunk(n, doc="mine", text="hotel expense") for n in range(3 * CANDIDATE_CAP)]
                 + [make_chunk(n, doc="few", text="hotel visa") for n in range(7)]
                 + [make_chunk(n, doc="other", tenant="t2", text="hotel secretword")
                    for n in range(CANDIDATE_CAP)])
    executed: list[str] = []
    store._db.set_trace_callback(executed.append)
    counts = store.term_counts(["hotel", "expense", "visa", "secretword"], flt())
    assert counts == {"hotel": 4 * CANDIDATE_CAP + 7, "expense": 3 * CANDIDATE_CAP,
                      "visa": 7, "secretword": 0}
    assert sum(f"LIMIT {CANDIDATE_CAP}" in sql for sql in executed) == 4  # each count capped
    assert store.term_counts(["visa"], flt(tenant_id="t2")) == {"visa": 0}
    store.close()


def test_a_readers_term_counts_are_kept_until_the_index_changes(tmp_path: Path) -> None:
    """The next search asks for the same words: counted once per reader's view, counted again
    after a write through this store or by another process's connection."""
    store = SqliteLexicalStore(tmp_path / "lexical.db")
    store.upsert([make_chunk(n, doc="mine", text="hotel visa") for n in range(3)])
    executed: list[str] = []
    store._db.set_trace_callback(executed.append)

    def counted(**view) -> tuple[dict[str, int], int]:
        executed.clear()
        counts = store.term_counts(["hotel", "visa"], flt(**view))
        return counts, sum("count(*)" in sql for sql in executed)

    assert counted() == ({"hotel": 3, "visa": 3}, 2)
    assert counted() == ({"hotel": 3, "visa": 3}, 0)  # kept
    assert counted(groups=["other"]) == ({"hotel": 0, "visa": 0}, 2)  # another reader's view
    store.upsert([make_chunk(9, doc="mine", text="hotel")])
    assert counted() == ({"hotel": 4, "visa": 3}, 2)
    writer = SqliteLexicalStore(tmp_path / "lexical.db")  # another connection, as an ingest
    writer.upsert([make_chunk(10, doc="mine", text="visa")])
    writer.close()
    assert counted() == ({"hotel": 4, "visa": 4}, 2)
    store.close()


def test_a_terms_corpus_count_is_kept_until_another_connection_writes(tmp_path: Path) -> None:
    """A search reads each query term's row count (fts5vocab walks its doclist) once, and
    again after a write: the new rows are found."""
    store = SqliteLexicalStore(tmp_path / "lexical.db")
    store.upsert([make_chunk(n, doc="mine", text="hotel visa") for n in range(3)])
    executed: list[str] = []
    store._db.set_trace_callback(executed.append)

    def searched() -> tuple[int, int]:
        executed.clear()
        hits = store.search("hotel visa", flt(), 10)
        return len(hits), sum("_vocab WHERE term" in sql for sql in executed)

    assert searched() == (3, 2)
    assert searched() == (3, 0)  # kept
    writer = SqliteLexicalStore(tmp_path / "lexical.db")
    writer.upsert([make_chunk(10, doc="mine", text="visa")])
    writer.close()
    assert searched() == (4, 2)
    store.close()
