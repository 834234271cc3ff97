"""Embedding: offline model, cache by (model, content_hash), and the model's language coverage."""

from __future__ import annotations

import math

from test_store_contract import make_chunk

from ingest.embed import Embedder


def test_packaged_model_loads_offline(embedder: Embedder) -> None:
    assert embedder.dimension == 384
    [vector] = embedder.encode(["Employees may work remotely with manager approval."])
    assert len(vector.values) == 384
    assert math.isclose(sum(v * v for v in vector.values), 1.0, rel_tol=1e-3)


def test_cache_embeds_unchanged_text_once(embedder: Embedder) -> None:
    chunks = [make_chunk(i, text=f"Clause {i} covers travel expenses in city {i}.")
              for i in range(1, 4)]
    chunks = [c.model_copy(update={"content_hash": f"cache-test-{c.chunk_id}"}) for c in chunks]
    first, computed = embedder.embed_chunks(chunks)
    again, computed_again = embedder.embed_chunks(chunks)
    assert computed == 3 and computed_again == 0
    assert first == again
    renamed = chunks[0].model_copy(update={"chunk_id": "moved"})
    _, computed_moved = embedder.embed_chunks([renamed])
    assert computed_moved == 0  # same text under another id: still a cache hit


def test_coverage_tells_the_model_cannot_read_chinese(embedder: Embedder) -> None:
    english, chinese = embedder.coverage(
        ["Reimbursement of home internet costs", "出差打车超标了还能报吗"]
    )
    assert english > 0.9
    assert chinese < 0.5
