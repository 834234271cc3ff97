"""Embedded vectors: rows in SQLite, searched exactly in memory with numpy.

Why not Milvus Lite, the embedded default before: Milvus Lite 3 is pure Python and walks every
row on every search and query (about 70 ms at 100,000 rows whatever the filter or index, see
bench/RESULTS.md "Scale"), and it admits one process per data directory, so kbflow had to run it
as a shared server process. Here a write is one SQLite transaction (WAL: readers never wait for
it). Each reader keeps the rows in memory and, before each search, reads only what changed since
the last one: rows added (ids only grow) and the ids a trigger logged as removed. A search is one
matrix-vector product over unit float32 rows (about 9 ms at 100,000 rows of 512 dimensions) with
the query contract's filters as numpy masks; it is exact, so no index can miss a row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ingest.embed import Embedding
from ingest.models import OPEN_END, OPEN_START, Chunk, Hit, SearchFilter, day_number
from ingest.stores.protocols import EmbeddingMismatchError
from ingest.stores.sqlite_file import connect, is_read_only, point_alias, writing

_META = np.dtype([("alive", "?"), ("tenant", "i4"), ("version", "i4"), ("eff_from", "i8"),
                  ("eff_to", "i8"), ("coverage", "f4")])


class _Codes(dict[str, int]):
    """Strings (tenants, version keys, groups) as small ints, so filters compare arrays."""

    def code(self, value: str) -> int:
        return self.setdefault(value, len(self))


def _grown(array: np.ndarray, need: int) -> np.ndarray:
    """`array`, or a copy with room for `need` rows (doubling, so appends stay cheap)."""
    if need <= len(array):
        return array
    bigger = np.zeros((max(need, 2 * len(array), 1024), *array.shape[1:]), array.dtype)
    bigger[: len(array)] = array
    return bigger


class SqliteVectorStore:
    def __init__(self, path: Path, dimension: int, model: str, generation: str = "g1",
                 alias: str = "kbflow_chunks") -> None:
        self._db = connect(path)
        self._dimension = dimension
        self._alias = alias
        self._t = table = f"{alias}_{generation}"
        if not is_read_only(self._db):
            self._create(model, dimension)
        recorded = self._db.execute("SELECT model, dimension FROM kbflow_models WHERE name=?",
                                    (table,)).fetchone()
        if tuple(recorded) != (model, dimension):
            self._db.close()
            raise EmbeddingMismatchError(
                f"vectors {table} hold {recorded[0]} vectors (dim {recorded[1]}), not {model} "
                f"(dim {dimension}); run a full rebuild for a new model"
            )
        self._forget()

    def _create(self, model: str, dimension: int) -> None:
        """The generation's tables, recording the model they are made for (if none was)."""
        table = self._t
        with writing(self._db):
            for statement in (
                """CREATE TABLE IF NOT EXISTS kbflow_models (
                    name TEXT PRIMARY KEY, model TEXT NOT NULL, dimension INTEGER NOT NULL)""",
                f"""CREATE TABLE IF NOT EXISTS {table} (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id TEXT UNIQUE NOT NULL,
                    version_key TEXT NOT NULL, tenant_id TEXT NOT NULL, acl TEXT NOT NULL,
                    eff_from INTEGER NOT NULL, eff_to INTEGER NOT NULL, coverage REAL NOT NULL,
                    vector BLOB NOT NULL)""",
                f"CREATE INDEX IF NOT EXISTS {table}_version ON {table} (version_key)",
                f"""CREATE TABLE IF NOT EXISTS {table}_removed (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT, id INTEGER NOT NULL)""",
                f"""CREATE TRIGGER IF NOT EXISTS {table}_log AFTER DELETE ON {table}
                    BEGIN INSERT INTO {table}_removed (id) VALUES (old.id); END""",
            ):
                self._db.execute(statement)
            self._db.execute("INSERT OR IGNORE INTO kbflow_models VALUES (?, ?, ?)",
                             (table, model, dimension))

    def _forget(self) -> None:
        """Empty the in-memory copy; the next search reads every row."""
        self._n = 0  # rows in the arrays, dead ones included
        self._pairs = 0  # (row, group) pairs in use
        self._last_id = 0
        self._last_seq: int | None = None
        self._ids = np.zeros(0, np.int64)
        self._chunk_ids: list[str] = []
        self._meta = np.zeros(0, _META)
        self._matrix = np.zeros((0, self._dimension), np.float32)
        self._pair_row = np.zeros(0, np.int64)
        self._pair_group = np.zeros(0, np.int32)
        self._tenants, self._versions, self._groups = _Codes(), _Codes(), _Codes()

    def close(self) -> None:
        self._db.close()

    def activate(self) -> None:
        point_alias(self._db, self._alias, self._t)

    def drop(self) -> None:
        with writing(self._db):
            self._db.execute(f"DROP TABLE IF EXISTS {self._t}")
            self._db.execute(f"DROP TABLE IF EXISTS {self._t}_removed")
            self._db.execute("DELETE FROM kbflow_models WHERE name=?", (self._t,))
        self._forget()

    def upsert(self, chunks: Sequence[Chunk], vectors: Mapping[str, Embedding]) -> None:
        """Replace rows by chunk_id in one transaction, vectors scaled to unit length."""
        rows = [
            (c.chunk_id, c.version_key, c.tenant_id, json.dumps(c.acl),
             day_number(c.effective_from, OPEN_START), day_number(c.effective_to, OPEN_END),
             vectors[c.chunk_id].coverage, self._unit(vectors[c.chunk_id].values).tobytes())
            for c in chunks
        ]
        with writing(self._db):
            self._db.executemany(f"DELETE FROM {self._t} WHERE chunk_id=?",
                                 [(r[0],) for r in rows])
            self._db.executemany(
                f"""INSERT INTO {self._t} (chunk_id, version_key, tenant_id, acl, eff_from,
                    eff_to, coverage, vector) VALUES (?,?,?,?,?,?,?,?)""", rows)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        with writing(self._db):
            self._db.executemany(f"DELETE FROM {self._t} WHERE chunk_id=?",
                                 [(c,) for c in chunk_ids])

    def _unit(self, values: Sequence[float]) -> np.ndarray:
        vector = np.asarray(values, dtype=np.float32)
        if vector.shape != (self._dimension,):
            raise ValueError(f"a vector of {vector.size} dimensions, not {self._dimension}")
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def search(self, vector: Sequence[float], flt: SearchFilter, k: int,
               min_coverage: float) -> list[Hit]:
        query = self._unit(vector)
        if not flt.groups:
            return []
        self._refresh()
        tenants = [self._tenants[t] for t in flt.tenants if t in self._tenants]
        if not tenants:
            return []
        n, meta = self._n, self._meta[: self._n]
        day = day_number(flt.as_of, OPEN_END)
        visible = (meta["alive"] & np.isin(meta["tenant"], tenants) & (meta["eff_from"] <= day)
                   & (meta["eff_to"] >= day) & (meta["coverage"] >= min_coverage))
        hidden = [self._versions[key] for key in flt.hidden_keys if key in self._versions]
        if hidden:
            visible &= ~np.isin(meta["version"], hidden)
        groups = [self._groups[g] for g in flt.groups if g in self._groups]
        allowed = np.zeros(n, bool)
        pairs = slice(0, self._pairs)
        allowed[self._pair_row[pairs][np.isin(self._pair_group[pairs], groups)]] = True
        rows = np.flatnonzero(visible & allowed)
        scores = self._matrix[:n] @ query
        if len(rows) > k:
            rows = rows[np.argpartition(-scores[rows], k - 1)[:k]]
        best = sorted(rows.tolist(), key=lambda r: (-scores[r], self._chunk_ids[r]))
        return [Hit(chunk_id=self._chunk_ids[r], score=float(scores[r])) for r in best]

    def _refresh(self) -> None:
        """Bring the in-memory rows up to date: new rows, then rows removed since the last read
        (one snapshot for both; on the first read every row present is current)."""
        self._db.execute("BEGIN")
        try:
            if self._last_seq is None:
                self._last_seq = self._db.execute(
                    f"SELECT coalesce(max(seq), 0) FROM {self._t}_removed").fetchone()[0]
            added = self._db.execute(
                f"""SELECT id, chunk_id, version_key, tenant_id, acl, eff_from, eff_to, coverage,
                    vector FROM {self._t} WHERE id > ? ORDER BY id""", (self._last_id,)).fetchall()
            removed = self._db.execute(
                f"SELECT seq, id FROM {self._t}_removed WHERE seq > ? ORDER BY seq",
                (self._last_seq,)).fetchall()
        finally:
            self._db.execute("COMMIT")
        if added:
            self._append(added)
        if removed:
            self._last_seq = removed[-1][0]
            ids = np.array([r[1] for r in removed], np.int64)
            at = np.searchsorted(self._ids[: self._n], ids)
            found = at < self._n
            at = at[found][self._ids[at[found]] == ids[found]]
            self._meta["alive"][at] = False
            if self._n - int(self._meta["alive"][: self._n].sum()) > max(1024, self._n // 2):
                self._compact()

    def _append(self, rows: list[tuple[Any, ...]]) -> None:
        start, end = self._n, self._n + len(rows)
        ids, chunk_ids, versions, tenants, acls, eff_from, eff_to, coverage, blobs = zip(
            *rows, strict=True)
        self._ids = _grown(self._ids, end)
        self._meta = _grown(self._meta, end)
        self._matrix = _grown(self._matrix, end)
        self._ids[start:end] = ids
        self._chunk_ids.extend(chunk_ids)
        meta = self._meta[start:end]
        meta["alive"] = True
        meta["tenant"] = [self._tenants.code(t) for t in tenants]
        meta["version"] = [self._versions.code(v) for v in versions]
        meta["eff_from"], meta["eff_to"], meta["coverage"] = eff_from, eff_to, coverage
        self._matrix[start:end] = np.frombuffer(b"".join(blobs), np.float32).reshape(
            len(rows), self._dimension)
        pairs = [(at, self._groups.code(group))
                 for at, acl in enumerate(acls, start=start) for group in json.loads(acl)]
        if pairs:
            used, self._pairs = self._pairs, self._pairs + len(pairs)
            self._pair_row = _grown(self._pair_row, self._pairs)
            self._pair_group = _grown(self._pair_group, self._pairs)
            self._pair_row[used : self._pairs], self._pair_group[used : self._pairs] = zip(
                *pairs, strict=True)
        self._n = end
        self._last_id = ids[-1]

    def _compact(self) -> None:
        """Drop removed rows from memory once they are half of it (a long-lived reader of a
        store that is rewritten every day would otherwise grow without end)."""
        keep = np.flatnonzero(self._meta["alive"][: self._n])
        position = np.full(self._n, -1, np.int64)
        position[keep] = np.arange(len(keep))
        pairs = slice(0, self._pairs)
        kept_pairs = position[self._pair_row[pairs]] >= 0
        self._pair_row = position[self._pair_row[pairs][kept_pairs]]
        self._pair_group = self._pair_group[pairs][kept_pairs]
        self._pairs = len(self._pair_row)
        self._ids, self._meta = self._ids[keep], self._meta[keep]
        self._matrix = self._matrix[keep]
        self._chunk_ids = [self._chunk_ids[r] for r in keep.tolist()]
        self._n = len(keep)

    def chunk_ids(self, version_key: str) -> set[str]:
        rows = self._db.execute(f"SELECT chunk_id FROM {self._t} WHERE version_key=?",
                                (version_key,))
        return {r[0] for r in rows}

    def chunk_ids_of(self, version_keys: Sequence[str]) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {key: set() for key in version_keys}
        for key in found:
            found[key] = self.chunk_ids(key)
        return found

    def count(self) -> int:
        return int(self._db.execute(f"SELECT count(*) FROM {self._t}").fetchone()[0])
