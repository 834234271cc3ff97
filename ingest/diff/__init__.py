"""Diff stage: a version's new chunks against the chunk records last published for it.

Each chunk_id falls in one of five groups: added, changed (its content hash differs: new text or
prefix, so new vectors), updated (same content, other fields differ: neighbour links, pages,
offsets, ACL, dates; rewritten in the stores, never re-embedded), unchanged, removed. Whether a
vector is computed is decided separately, by content_hash through the vector cache.
"""

from __future__ import annotations

from typing import NamedTuple

import xxhash
from pydantic import BaseModel

from ingest.models import Chunk


class Published(NamedTuple):
    content_hash: str
    fingerprint: str


class ChunkDiff(BaseModel):
    added: list[Chunk]
    changed: list[Chunk]
    updated: list[Chunk]
    unchanged: list[Chunk]
    removed: list[str]

    @property
    def writes(self) -> list[Chunk]:
        """Every chunk whose store rows must be (re)written."""
        return self.added + self.changed + self.updated


def fingerprint(chunk: Chunk) -> str:
    """A hash of the whole record: any difference means the stores' rows are stale."""
    record = chunk.model_dump_json(exclude={"created_at"})
    return xxhash.xxh64_hexdigest(record.encode("utf-8"))


def published(chunks: list[Chunk]) -> dict[str, Published]:
    return {c.chunk_id: Published(c.content_hash, fingerprint(c)) for c in chunks}


def diff_chunks(new: list[Chunk], before: dict[str, Published]) -> ChunkDiff:
    """`before` maps chunk_id to the published version's (content_hash, fingerprint)."""
    added, changed, updated, unchanged = [], [], [], []
    for chunk in new:
        old = before.get(chunk.chunk_id)
        if old is None:
            added.append(chunk)
        elif old.content_hash != chunk.content_hash:
            changed.append(chunk)
        elif old.fingerprint != fingerprint(chunk):
            updated.append(chunk)
        else:
            unchanged.append(chunk)
    current = {c.chunk_id for c in new}
    removed = sorted(cid for cid in before if cid not in current)
    return ChunkDiff(added=added, changed=changed, updated=updated, unchanged=unchanged,
                     removed=removed)
