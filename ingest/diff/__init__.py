"""Diff stage: a version's new chunks against the chunk records last published for it.

The comparison is by chunk_id and a fingerprint of the whole record (text, prefix, links,
metadata), so a metadata-only change (ACL, effective dates, neighbour links) is rewritten in
the stores too. Re-embedding is decided separately, by content_hash through the vector cache.
"""

from __future__ import annotations

import xxhash
from pydantic import BaseModel

from ingest.models import Chunk


class ChunkDiff(BaseModel):
    added: list[Chunk]
    changed: list[Chunk]
    unchanged: list[Chunk]
    removed: list[str]

    @property
    def writes(self) -> list[Chunk]:
        return self.added + self.changed


def fingerprint(chunk: Chunk) -> str:
    record = chunk.model_dump_json(exclude={"created_at"})
    return xxhash.xxh64_hexdigest(record.encode("utf-8"))


def diff_chunks(new: list[Chunk], published: dict[str, str]) -> ChunkDiff:
    """`published` maps chunk_id to fingerprint for the version's current manifest records."""
    added, changed, unchanged = [], [], []
    for chunk in new:
        before = published.get(chunk.chunk_id)
        if before is None:
            added.append(chunk)
        elif before != fingerprint(chunk):
            changed.append(chunk)
        else:
            unchanged.append(chunk)
    current = {c.chunk_id for c in new}
    removed = sorted(cid for cid in published if cid not in current)
    return ChunkDiff(added=added, changed=changed, unchanged=unchanged, removed=removed)
