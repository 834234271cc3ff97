"""What one write group costs the LadybugDB graph, in an empty file and in a big one (issue #43).

    .venv/bin/python -m bench.graph_writes --graph DATA/graph/g1.lbug [--versions 50]
        [--chunks 50]

Writes one group like the pipeline's (`--versions` versions of `--chunks` linked clause chunks,
a citation triple on every fourth chunk) into an empty graph file and into a copy of `--graph`
(for example the whole laws folder's, `bench.ingest_real`'s data dir), then writes it again (all
rows stored: the merge path) and deletes a fifth of its chunks. Reports CPU seconds of this
process (what the other processes on a shared machine do not change much) and wall seconds.
A write whose cost grows with the file shows here as the big file's figure above the empty one's.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import date
from pathlib import Path

from ingest.models import Chunk, ChunkKind, Triple
from ingest.stores.ladybug_graph import LadybugGraphStore


def group(versions: int, per: int) -> tuple[list[Chunk], list[Triple]]:
    """`versions` new versions of `per` chunks each, linked in order, with some citations."""
    tag = uuid.uuid4().hex[:8]
    chunks, triples = [], []
    for v in range(versions):
        doc = f"bench-{tag}-{v}"
        ids = [f"{doc}-{i}" for i in range(per)]
        for i, chunk_id in enumerate(ids):
            chunks.append(Chunk(
                doc_id=doc, version_id="1", chunk_id=chunk_id, kind=ChunkKind.CLAUSE,
                text=f"第{i + 1}条 条文", prefix=f"《{doc}》", clause_no=f"第{i + 1}条",
                structural_path=f"第{i + 1}条", page_start=1, page_end=1, char_start=0,
                char_end=8, tenant_id="t1", acl=["staff"], source_uri="file:///bench",
                effective_from=date(2025, 1, 1), parser_version="p", chunker_version="c",
                content_hash=chunk_id, prev_chunk_id=ids[i - 1] if i else None,
                next_chunk_id=ids[i + 1] if i + 1 < per else None))
            if i % 4 == 0:
                triples.append(Triple(
                    subject=f"《{doc}》第{i + 1}条", predicate="引用",
                    object=f"《法{(v * 7 + i) % 300}》第{i % 50 + 1}条", subject_type="Clause",
                    object_type="Clause", source_chunk_id=chunk_id, doc_id=doc, version_id="1",
                    extractor="rules@bench", confidence=0.9))
    return chunks, triples


def timed(action: Callable[[], None]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    action()
    return time.process_time() - cpu, time.perf_counter() - wall


def measure(source: Path | None, versions: int, per: int) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if source is not None:
            shutil.copy(source, folder / "g1.lbug")
        store = LadybugGraphStore(folder)
        try:
            chunks, triples = group(versions, per)
            return {
                "write": timed(lambda: store.upsert(chunks, triples)),
                "write again": timed(lambda: store.upsert(chunks, triples)),
                "delete a fifth": timed(lambda: store.delete_chunks(
                    [c.chunk_id for c in chunks[: len(chunks) // 5]])),
            }
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", type=Path, required=True, help="a big graph file to copy")
    parser.add_argument("--versions", type=int, default=50)
    parser.add_argument("--chunks", type=int, default=50, help="chunks per version")
    args = parser.parse_args()
    print(f"one group: {args.versions} versions x {args.chunks} chunks; CPU s (wall s)")
    for name, source in (("empty file", None), (args.graph.name, args.graph)):
        figures = measure(source, args.versions, args.chunks)
        print(f"{name:>12}: " + ", ".join(
            f"{step} {cpu:.3f} ({wall:.3f})" for step, (cpu, wall) in figures.items())
            + f"; write per version {figures['write'][0] / args.versions * 1000:.1f} ms CPU")


if __name__ == "__main__":
    main()
