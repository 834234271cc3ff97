"""Embedding: the packaged Chinese model fetched at install time, offline encoding, the query
instruction, the cache by (model, content_hash), and each model's language coverage."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from test_store_contract import make_chunk

from ingest.embed import Embedder
from ingest.embed.encoders import MINILM, open_encoder
from ingest.embed.fetch import (
    BGE_INSTRUCTION,
    ONNX_MODELS,
    ChecksumMismatch,
    ModelMissing,
    fetch,
    installed_files,
)
from ingest.text import sentences

INT8 = ONNX_MODELS["bge-small-zh-v1.5-q"]  # the smaller jar (16 MB) for the fetch tests


def test_fetch_installs_checked_files_once(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KBFLOW_MODEL_CACHE", str(tmp_path / "models"))
    with pytest.raises(ModelMissing, match=r"kbflow fetch-model bge-small-zh-v1\.5-q"):
        installed_files(INT8)
    folder = fetch(INT8)
    onnx, tokenizer = installed_files(INT8)
    assert onnx.parent == tokenizer.parent == folder
    assert onnx.stat().st_size > 20_000_000
    assert INT8.jar_sha256 in (folder / "VERIFIED").read_text()
    stamp = onnx.stat().st_mtime_ns
    fetch(INT8)  # a second install changes nothing
    assert onnx.stat().st_mtime_ns == stamp


def test_fetch_refuses_a_jar_whose_checksum_differs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KBFLOW_MODEL_CACHE", str(tmp_path / "models"))
    tampered = dataclasses.replace(INT8, jar_sha256="0" * 64)
    with pytest.raises(ChecksumMismatch, match="refusing to install"):
        fetch(tampered)
    with pytest.raises(ModelMissing):  # nothing was unpacked
        installed_files(tampered)


def test_default_model_reads_chinese(embedder: Embedder) -> None:
    assert embedder.dimension == 512
    [vector] = embedder.encode(["出差期间市内交通费每人每天不超过150元。"])
    assert len(vector.values) == 512
    assert math.isclose(sum(v * v for v in vector.values), 1.0, rel_tol=1e-3)
    assert embedder.coverage(["出差打车超标了还能报吗", "remote work approval"]) == [1.0, 1.0]


def test_the_model_keeps_the_cores_and_numpy_multiplies_on_one_thread(embedder: Embedder) -> None:
    """OpenBLAS's own pool spun on the cores ONNX needs after every vector-store product: a
    search over 3,000 more rows cost 2.3x instead of 1.1x."""
    from threadpoolctl import threadpool_info

    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(pool["num_threads"] == 1 for pool in blas)


def test_queries_take_the_instruction_and_passages_do_not(embedder: Embedder) -> None:
    text = "住宿费标准是多少"
    query = np.array(embedder.encode_query(text).values)
    [passage] = embedder.encode([text])
    [instructed] = embedder.encode([BGE_INSTRUCTION + text])
    assert not np.allclose(query, passage.values, atol=1e-3)
    assert np.allclose(query, instructed.values, atol=1e-5)


def test_batching_does_not_change_vectors(embedder: Embedder) -> None:
    """Length-sorted batches padded to their longest text give each text its own vector (up to
    the int8 model's dynamic quantisation, whose scale depends on the batch: cosine ≥ 0.98)."""
    texts = ["年假", "出差期间市内交通费每人每天不超过150元，凭发票实报实销。" * 3, "用印审批"]
    alone = np.array([embedder.encoder.encode([t])[0] for t in texts])
    together = embedder.encoder.encode(texts)
    assert ((alone * together).sum(axis=1) > 0.98).all()
    reversed_order = embedder.encoder.encode(texts[::-1])[::-1]
    assert np.allclose(together, reversed_order, atol=1e-6)  # same batches, same vectors


def test_long_texts_go_fewer_to_a_batch(embedder: Embedder, monkeypatch) -> None:
    """A batch holds at most TOKENS_PER_BATCH padded tokens (onnxruntime keeps the memory of
    the largest batch it ran: 32 texts of 512 tokens left 1.7 GB resident), short texts still
    go 32 to a batch, and every text keeps its vector."""
    from ingest.embed.encoders import TOKENS_PER_BATCH

    encoder = embedder.encoder
    shapes: list[tuple[int, ...]] = []
    run = encoder._session.run
    monkeypatch.setattr(encoder._session, "run", lambda out, feeds: shapes.append(
        feeds["input_ids"].shape) or run(out, feeds))
    short = [f"第{i}条 年假" for i in range(40)]
    long = [f"第{i}条 " + "出差期间市内交通费每人每天不超过一百五十元，凭发票实报实销。" * 20
            for i in range(12)]
    vectors = encoder.encode(short + long)
    assert max(rows * width for rows, width in shapes) <= TOKENS_PER_BATCH
    assert shapes[0][0] == 32 and shapes[-1][1] == encoder.max_tokens
    alone = np.array([encoder.encode([t])[0] for t in long[:3]])
    assert ((alone * vectors[40:43]).sum(axis=1) > 0.98).all()


def test_passage_coverage_from_the_encoding_pass_matches_its_own_pass(embedder: Embedder) -> None:
    """Coverage taken from the tokens that are embedded (less [CLS]/[SEP]) is the coverage of
    the text, also where truncation at the input limit cut different tokens in the two passes."""
    texts = ["a " * 510 + "☃ ☃", "报销 [SEP] abc ☃", "remote work", "☃", "", "出差" * 300]
    vectors, coverage = embedder.encoder.encode_passages(texts)
    assert coverage == embedder.coverage(texts)
    assert coverage[0] < 1.0 and coverage[1] == 0.8 and coverage[3] == coverage[4] == 0.0
    assert np.array_equal(vectors, embedder.encoder.encode(texts))


def test_dense_similarity_finds_the_chinese_paraphrase(embedder: Embedder) -> None:
    passages = ["出差期间市内交通费每人每天不超过150元，凭发票实报实销。",
                "员工每年享有带薪年休假，工龄满十年的为十天。",
                "公司印章由行政部统一保管，用印需经部门负责人审批。"]
    queries = ["在外地坐出租车的费用能报多少", "休假有几天", "谁管公章"]
    p = np.array([e.values for e in embedder.encode(passages)])
    q = np.array([embedder.encode_query(t).values for t in queries])
    assert list((q @ p.T).argmax(axis=1)) == [0, 1, 2]


def test_cache_embeds_unchanged_text_once(embedder: Embedder) -> None:
    chunks = [make_chunk(i, text=f"第{i}条 出差到城市{i}的住宿费标准。") for i in range(1, 4)]
    chunks = [c.model_copy(update={"content_hash": f"cache-test-{c.chunk_id}"}) for c in chunks]
    first, computed = embedder.embed_chunks(chunks)
    again, computed_again = embedder.embed_chunks(chunks)
    assert computed == 3 and computed_again == 0
    assert first == again
    renamed = chunks[0].model_copy(update={"chunk_id": "moved"})
    _, computed_moved = embedder.embed_chunks([renamed])
    assert computed_moved == 0  # same text under another id: still a cache hit


def test_sentence_vectors_are_kept_at_ingest_and_read_without_the_model(
        embedder: Embedder, tmp_path: Path) -> None:
    """embed_chunks keeps each chunk's sentence vectors, so a search reads them and never
    encodes; a text indexed before they were kept is encoded alone, on demand."""
    texts = ["第一条 差旅费实行总额控制。住宿费每晚不超过600元；市内交通凭票报销。",
             "第二条 员工每年享有带薪年休假。工龄满十年的为十天。"]
    chunks = [make_chunk(i, text=t).model_copy(update={"content_hash": f"sentences-{i}"})
              for i, t in enumerate(texts, start=1)]
    cache = tmp_path / "vectors.db"
    ingesting = Embedder(embedder.name, cache)
    ingesting._encoder = embedder.encoder  # the loaded model, not a second load
    ingesting.embed_chunks(chunks)
    ingesting.close()
    searching = Embedder(embedder.name, cache)
    kept = searching.sentence_vectors({c.content_hash: c.text for c in chunks})
    assert searching._encoder is None  # read, not encoded
    assert [len(kept[c.content_hash]) for c in chunks] == [3, 2]
    for chunk in chunks:
        alone = embedder.encoder.encode(sentences(chunk.text))
        assert ((kept[chunk.content_hash] * alone).sum(axis=1) > 0.98).all()
    searching._encoder = embedder.encoder
    late = "第三条 公司印章由行政部保管。用印需经部门负责人审批。"
    found = searching.sentence_vectors({"not-kept": late})["not-kept"]
    assert np.array_equal(found, embedder.encoder.encode(sentences(late)))
    searching.close()


def test_an_english_only_model_is_judged_by_its_own_vocabulary() -> None:
    """all-MiniLM (sentence-transformers backend) sees Chinese as [UNK]: the coverage gate keeps
    its noise out of Chinese searches."""
    minilm = open_encoder(MINILM)
    english, chinese = minilm.coverage(["Reimbursement of home internet costs",
                                        "出差打车超标了还能报吗"])
    assert english > 0.9
    assert chinese < 0.5
    assert minilm.dimension == 384


@pytest.mark.parametrize("prefixed", [True, False])
def test_a_sentence_is_encoded_once_and_an_unprefixed_one_sentence_chunk_reuses_its_vector(
        embedder: Embedder, tmp_path: Path, prefixed: bool) -> None:
    """Sentences shared by chunks are encoded once; a chunk of one sentence (no stop after it)
    encoded without a prefix (the cross-lingual index's way) keeps its chunk vector as that
    sentence's, one with a prefix has its sentence encoded (issue #43: the laws' ingest encoded
    every chunk twice)."""
    texts = ["第一条 本办法由财务部负责解释",
             "第二条 差旅费实行总额控制。本办法自发布之日起施行。",
             "第三条 员工每年享有带薪年休假。本办法自发布之日起施行。"]
    chunks = [make_chunk(i, text=t).model_copy(update={"content_hash": f"once-{i}"})
              for i, t in enumerate(texts, start=1)]
    ingesting = Embedder(embedder.name, tmp_path / "vectors.db", prefixed=prefixed)
    ingesting._encoder = embedder.encoder
    vectors, computed = ingesting.embed_chunks(chunks)
    assert computed == 3
    # four sentences in the two-sentence chunks, one of them shared; the first chunk's own
    assert ingesting.encoded == {"texts": 3, "sentences": 3 if not prefixed else 4}
    kept = ingesting.sentence_vectors({c.content_hash: c.text for c in chunks})
    assert [len(kept[c.content_hash]) for c in chunks] == [1, 2, 2]
    whole = np.asarray(vectors[chunks[0].chunk_id].values)
    alone = embedder.encoder.encode(sentences(texts[0]))[0]
    assert float(kept["once-1"][0] @ alone) > 0.98
    # kept in half precision: the chunk's own vector, or not it
    assert np.allclose(kept["once-1"][0], whole, atol=2e-3) is not prefixed
    assert np.array_equal(kept["once-2"][1], kept["once-3"][1])
    shared = embedder.encoder.encode(["本办法自发布之日起施行"])[0]
    assert float(kept["once-2"][1] @ shared) > 0.98
    ingesting.embed_chunks(chunks)
    assert sum(ingesting.encoded.values()) == 6 if not prefixed else 7  # a rerun encodes none
    ingesting.close()


def test_an_embedder_without_its_sentence_pass_encodes_and_keeps_chunk_vectors_only(
        embedder: Embedder, tmp_path: Path) -> None:
    """`sentences=False` (the cross-lingual index with KBFLOW_CROSSLINGUAL_SENTENCES=false):
    no sentence is encoded or stored, the chunk vectors are the same as with the pass on."""
    chunks = [make_chunk(i, text=t).model_copy(update={"content_hash": f"lean-{i}"})
              for i, t in enumerate(["第一条 差旅费实行总额控制。住宿费每晚不超过600元。",
                                     "第二条 员工每年享有带薪年休假。"], start=1)]
    lean = Embedder(embedder.name, tmp_path / "lean.db", sentences=False)
    lean._encoder = embedder.encoder
    vectors, computed = lean.embed_chunks(chunks)
    assert computed == 2 and lean.encoded == {"texts": 2}
    assert lean._cache.execute("SELECT count(*) FROM sentences").fetchone()[0] == 0
    full = Embedder(embedder.name, tmp_path / "full.db")
    full._encoder = embedder.encoder
    assert full.embed_chunks(chunks)[0] == vectors and full.encoded["sentences"] == 3
    lean.close()
    full.close()
