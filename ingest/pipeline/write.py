"""From planned versions to published ones: each store role in ROLE_STEPS order, one batched
write per role and group, each version's state advanced after each role.

Every role's write first collects the version's rows that are not in its new chunk set (left by
earlier content of the same version, or by a run killed half-way) and deletes them, so a run
killed anywhere and started again converges to the same stores as an uninterrupted run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from ingest.embed import Embedding
from ingest.graph.normalize import canonical
from ingest.models import ROLE_STEPS, Chunk, ChunkKind, StoreRole
from ingest.pipeline.context import RunContext
from ingest.pipeline.failures import Failure
from ingest.pipeline.job import Planned, Written
from ingest.stores import Stores

WRITE_GROUP = 50  # versions per batched store write

RoleWriter = Callable[[Stores, Sequence[Planned], Mapping[str, Embedding]], None]


def _ids(chunks: Iterable[Chunk]) -> set[str]:
    return {c.chunk_id for c in chunks}


def _indexed(chunks: Iterable[Chunk]) -> list[Chunk]:
    """The chunks that are searched (parents are only read for context)."""
    return [c for c in chunks if c.kind != ChunkKind.PARENT]


def _writes(group: Sequence[Planned]) -> list[Chunk]:
    return [c for p in group for c in p.diff.writes]


def _stale(group: Sequence[Planned], stored: Callable[[list[str]], Mapping[str, set[str]]],
           keep: Callable[[Planned], set[str]]) -> set[str]:
    """Each version's rows that are not in its new chunk set. The ids the manifest knows are
    taken from it; the store is asked only about versions whose last attempt was cut short or
    failed (Milvus Lite read every row for a `version_key` query: 1.3 s of a one-file
    incremental run at 100,000 versions, bench/scale.py; Milvus proper still pays a strong
    read per call)."""
    unknown = [p.version_key for p in group if p.stored is None]
    found = stored(unknown) if unknown else {}
    stale: set[str] = set()
    for p in group:
        stale |= (found[p.version_key] if p.stored is None else p.stored) - keep(p)
    return stale


def write_vectors(stores: Stores, group: Sequence[Planned],
                  vectors: Mapping[str, Embedding]) -> None:
    """The dense vectors, then the cross-lingual index (which embeds its chunks itself). The
    stored ids the manifest does not know are read in one query: one per version scanned the
    collection each time (77 of 79 s of the vectors stage for 1,000 notices)."""
    def keep(p: Planned) -> set[str]:
        return _ids(_indexed(p.job.chunks))

    stale = _stale(group, stores.vectors.chunk_ids_of, keep)
    stores.vectors.upsert(_indexed(_writes(group)), vectors)
    stores.vectors.delete(sorted(stale))
    if stores.crosslingual is not None:  # its own stale rows: a run may stop between the two
        stale = _stale(group, stores.crosslingual.chunk_ids_of, keep)
        stores.crosslingual.upsert(_indexed(_writes(group)))
        stores.crosslingual.delete(sorted(stale))


def _one_by_one(chunk_ids: Callable[[str], set[str]]
                ) -> Callable[[list[str]], Mapping[str, set[str]]]:
    return lambda keys: {key: chunk_ids(key) for key in keys}


def write_lexical(stores: Stores, group: Sequence[Planned],
                  vectors: Mapping[str, Embedding]) -> None:
    stale = _stale(group, _one_by_one(stores.lexical.chunk_ids), lambda p: _ids(p.job.chunks))
    stores.lexical.upsert(_writes(group))
    stores.lexical.delete(sorted(stale))


def write_graph(stores: Stores, group: Sequence[Planned],
                vectors: Mapping[str, Embedding]) -> None:
    """Changed chunks are removed first too: their old triples go with them."""
    stale = _stale(group, _one_by_one(stores.graph.chunk_ids), lambda p: _ids(p.job.chunks))
    for p in group:
        stale |= _ids(p.diff.changed)
    stores.graph.delete_chunks(sorted(stale))
    # titles as relations name them (canonical: NFKC), so a cited clause finds its chunks
    stores.graph.upsert(_writes(group), [t for p in group for t in p.triples],
                        {p.version_key: canonical(p.job.meta.title) for p in group
                         if p.job.meta.title})


ROLE_WRITERS: dict[StoreRole, RoleWriter] = {
    "vectors": write_vectors, "lexical": write_lexical, "graph": write_graph,
}
assert set(ROLE_WRITERS) == {role for role, _ in ROLE_STEPS}, "a store role without a writer"


def write_role(role: StoreRole, stores: Stores, group: Sequence[Planned],
               vectors: Mapping[str, Embedding]) -> None:
    ROLE_WRITERS[role](stores, group, vectors)


def write(ctx: RunContext, stores: Stores, planned: Sequence[Planned],
          vectors: Mapping[str, Embedding]) -> list[Written]:
    """Write versions through the stores in groups. A group whose write fails is written again
    one version at a time, so a bad document fails alone. Returns the published versions."""
    written: list[Written] = []
    for start in range(0, len(planned), WRITE_GROUP):
        group = planned[start : start + WRITE_GROUP]
        try:
            written += write_group(ctx, stores, group, vectors)
            continue
        except Exception as exc:  # noqa: BLE001 - narrowed down below, one version at a time
            if len(group) == 1:
                ctx.fail(_failure(group[0], exc))
                continue
        for p in group:
            try:
                written += write_group(ctx, stores, [p], vectors)
            except Exception as exc:  # noqa: BLE001 - the version stays unpublished
                ctx.fail(_failure(p, exc))
    return written


def write_group(ctx: RunContext, stores: Stores, group: Sequence[Planned],
                vectors: Mapping[str, Embedding]) -> list[Written]:
    """One batched write per role (ROLE_STEPS), each followed by every version's next state."""
    manifest, run_id = ctx.manifest, ctx.run_id
    with ctx.clock.stage("manifest"):
        group = [replace(p, stored=manifest.begin(
            p.job.meta, run_id, p.job.chunker_version, ctx.settings.embedding_model,
            source_root=p.job.source_root, parser_version=p.job.parser_version,
            parse_report=p.job.parse_report)) for p in group]
    for role, state in ROLE_STEPS:
        with ctx.clock.stage(role):
            ctx.steps.write(role, stores, group, vectors)
        with ctx.clock.stage("manifest"):
            for p in group:
                manifest.advance(p.key[0], p.key[1], state, run_id)
    with ctx.clock.stage("manifest"):
        for p in group:
            manifest.publish(*p.key, p.job.chunks, run_id, p.job.effective_to)
    return [Written(p) for p in group]


def _failure(planned: Planned, exc: Exception) -> Failure:
    return Failure.raised("write", exc, planned.job.meta.source_path, planned.key)
