"""Batched reads by key from kbflow's SQLite caches (vectors, situating contexts, LLM triples)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

BATCH = 500  # keys per IN (…) list, below SQLite's bound-parameter limit


def lookup(db: sqlite3.Connection, select: str, keys: Iterable[str],
           *params: Any) -> Iterator[Any]:
    """The rows of `select` for the distinct `keys`: its `{keys}` is the IN list of one batch,
    and `params` bind the placeholders before it."""
    ordered = sorted(set(keys))
    for start in range(0, len(ordered), BATCH):
        part = ordered[start : start + BATCH]
        yield from db.execute(select.format(keys=",".join("?" * len(part))), [*params, *part])
