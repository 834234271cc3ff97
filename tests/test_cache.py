"""The batched key lookup the SQLite caches share (vectors, situating contexts, LLM triples)."""

from __future__ import annotations

import sqlite3

from ingest.cache import BATCH, lookup


def test_lookup_reads_every_batch_and_binds_params_before_the_keys() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (model TEXT, key TEXT, value INTEGER)")
    count = 2 * BATCH + 7  # three batches, the last one short
    db.executemany("INSERT INTO t VALUES (?,?,?)",
                   [(m, f"k{i}", i) for m in ("a", "b") for i in range(count)])
    keys = [f"k{i}" for i in range(count)] + ["k0", "k1", "missing"]  # repeats and a miss
    rows = list(lookup(db, "SELECT key, value FROM t WHERE model=? AND key IN ({keys})",
                       keys, "b"))
    assert len(rows) == count  # each key once, only model b's rows
    assert dict(rows) == {f"k{i}": i for i in range(count)}
    assert list(lookup(db, "SELECT key FROM t WHERE key IN ({keys})", [])) == []
