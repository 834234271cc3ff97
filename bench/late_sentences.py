"""Late-pooled bge sentence vectors (issue #43): each sentence's vector pooled from the token
states of its chunk's own pass, instead of a second model pass over the sentences.

    .venv/bin/python -m bench.late_sentences --pool DATA_DIR OUT.npz
    .venv/bin/python -m bench.late_sentences --probe DATA_DIR OUT.npz [--limit N]
    .venv/bin/python -m bench.late_sentences --replace DATA_DIR OUT.npz --pooling NAME
    .venv/bin/python -m bench.late_sentences --cost DATA_DIR N
    .venv/bin/python -m bench.late_sentences --stard-part DATA_DIR I N OUT.json  (I = 0..N-1)
    .venv/bin/python -m bench.late_sentences --merge OUT.json ...

`--pool` runs the chunk pass once over an index's embedded chunks and saves every pooling's
sentence vectors. `--probe` compares them with the sentence vectors the index holds (encoded a
sentence at a time), cheaply, on STARD over a `bench.realworld --gold-files-only` index: its
chunks ranked by their best sentence alone, and fused (RRF) with the chunk vectors' ranking;
Recall@5 per gold article and MRR at 100. `--replace` overwrites a COPY's sentence vectors with
one pooling's (then `bench.passes` searches it as served). `--cost`: the chunk pass alone
against the chunk pass with the pooling and the sentences' own pass, on N chunks, best of three
rounds (interleaved). `--stard-part` searches every N-th STARD question as `bench.passes
--stard` does (parts in processes of their own, over copies of the index); `--merge` scores
the parts together.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.realworld import DEPTH, SHARED, macro, score_question
from bench.realworld import load_cases as stard_cases
from ingest.config import Settings
from ingest.embed import SENTENCE_DTYPE
from ingest.embed.encoders import OnnxEncoder, open_encoder
from ingest.evaluate import hits_of, normalised, retriever_fns
from ingest.manifest import ManifestStore
from ingest.models import Chunk, ChunkKind
from ingest.search import SearchOptions
from ingest.text import sentences

if TYPE_CHECKING:
    from tokenizers import Encoding


def _unit(v: np.ndarray) -> np.ndarray:
    unit: np.ndarray = v / np.linalg.norm(v, axis=-1, keepdims=True)
    return unit


# name → (token states of one text, its CLS at row 0) and a span's token rows → a vector
POOLINGS: dict[str, Callable[[np.ndarray, list[int]], np.ndarray]] = {
    "span mean": lambda states, rows: _unit(states[rows].mean(axis=0)),
    "span mean + chunk CLS": lambda states, rows: _unit(
        _unit(states[rows].mean(axis=0)) + _unit(states[0])),
    "span mean + half chunk CLS": lambda states, rows: _unit(
        _unit(states[rows].mean(axis=0)) + 0.5 * _unit(states[0])),
}



def best_of_three(runs: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Each run's best wall time of three rounds, the runs interleaved within a round (so a
    change in load falls on all of them)."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(3):
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - started)
    return best

def embedded_chunks(data_dir: Path) -> list[Chunk]:
    """The index's embedded chunks, one per content hash (the vector cache's key)."""
    manifest = ManifestStore(Settings(data_dir=data_dir).manifest)
    try:
        chunks = {c.content_hash: c for r in manifest.documents()
                  for c in manifest.version_chunks(r.doc_id, r.version_id)
                  if c.kind != ChunkKind.PARENT}
    finally:
        manifest.close()
    return list(chunks.values())


def sentence_spans(chunk: Chunk) -> list[tuple[int, int]]:
    """Where each of `sentences(chunk.text)` lies in the text the chunk pass encodes."""
    text, at, spans = chunk.text, 0, []
    offset = len(chunk.embed_text) - len(text)  # the text comes last (models.embed_text)
    for said in sentences(text):
        start = text.index(said, at)
        spans.append((offset + start, offset + start + len(said)))
        at = start + len(said)
    return spans


def token_states(encoder: OnnxEncoder, encodings: list[Encoding]
                 ) -> Iterator[tuple[list[int], np.ndarray]]:
    """OnnxEncoder's length-sorted, padded batches, each with its rows' indices and their last
    hidden states: every token's, where the encoder keeps only the CLS vector's."""
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
    for start in range(0, len(order), encoder._batch_size):
        rows = order[start : start + encoder._batch_size]
        ids = np.zeros((len(rows), max(len(encodings[i].ids) for i in rows)), dtype=np.int64)
        mask = np.zeros_like(ids)
        for r, i in enumerate(rows):
            ids[r, : len(encodings[i].ids)] = encodings[i].ids
            mask[r, : len(encodings[i].ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in encoder._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        yield rows, encoder._session.run(None, feeds)[0]


def late_vectors(encoder: OnnxEncoder, chunks: Sequence[Chunk],
                 poolings: Sequence[str]) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """Per chunk index, each pooling's sentence matrix; a sentence the input limit cut off is
    encoded alone (as before)."""
    encodings = encoder._tokenizer.encode_batch([c.embed_text for c in chunks])
    for rows, states in token_states(encoder, encodings):
        for r, i in enumerate(rows):
            enc, spans = encodings[i], sentence_spans(chunks[i])
            tokens = [[t for t, (a, b) in enumerate(enc.offsets)
                       if not enc.special_tokens_mask[t] and a < end and b > start]
                      for start, end in spans]
            out = {}
            for name in poolings:
                out[name] = np.stack([
                    POOLINGS[name](states[r], toks) if toks else encoder.encode(
                        [chunks[i].embed_text[s:e]])[0]
                    for toks, (s, e) in zip(tokens, spans, strict=True)])
            yield i, out


def pool(data_dir: Path, out: Path) -> None:
    """Every pooling's sentence vectors of every embedded chunk, in one model pass, saved."""
    chunks = embedded_chunks(data_dir)
    encoder = open_encoder(Settings(data_dir=data_dir).embedding_model)
    assert isinstance(encoder, OnnxEncoder)
    started = time.perf_counter()
    matrices: dict[str, list[np.ndarray]] = {n: [np.empty(0)] * len(chunks) for n in POOLINGS}
    for i, pooled in late_vectors(encoder, chunks, list(POOLINGS)):
        for name, m in pooled.items():
            matrices[name][i] = m
    print(f"pooled {len(chunks)} chunks in {time.perf_counter() - started:.0f} s", flush=True)
    arrays: dict[str, Any] = {name: np.concatenate(m).astype(SENTENCE_DTYPE)
                              for name, m in matrices.items()}
    np.savez(out, hashes=np.array([c.content_hash for c in chunks]),
             counts=np.array([m.shape[0] for m in matrices["span mean"]]), **arrays)


def load_pooled(path: Path) -> tuple[list[str], dict[str, list[np.ndarray]]]:
    """`pool`'s file: the content hashes and, per pooling, their sentence matrices."""
    saved = np.load(path)
    cuts = np.cumsum(saved["counts"])[:-1]
    return saved["hashes"].tolist(), {name: np.split(saved[name].astype(np.float32), cuts)
                                      for name in POOLINGS}


def probe(data_dir: Path, pooled: Path, limit: int | None) -> list[str]:
    hashes, matrices = load_pooled(pooled)
    return probe_matrices(data_dir, hashes, matrices, limit)


def probe_matrices(data_dir: Path, hashes: list[str], matrices: dict[str, list[np.ndarray]],
                   limit: int | None) -> list[str]:
    """`--probe` over any sentence matrices (name → one per content hash of `hashes`), beside
    the ones the index holds."""
    by_hash = {c.content_hash: c for c in embedded_chunks(data_dir)}
    chunks = [by_hash[h] for h in hashes]
    encoder = open_encoder(Settings(data_dir=data_dir).embedding_model)
    cache = sqlite3.connect(Settings(data_dir=data_dir).vector_cache_path)
    held = dict(cache.execute("SELECT content_hash, vectors FROM sentences WHERE model=?",
                              (encoder.name,)))
    chunk_vectors = dict(cache.execute("SELECT content_hash, vector FROM vectors WHERE model=?",
                                       (encoder.name,)))
    dense = np.stack([np.frombuffer(chunk_vectors[h], np.float32) for h in hashes])
    matrices["held (sentences encoded alone)"] = [
        np.frombuffer(held[h], SENTENCE_DTYPE).reshape(-1, encoder.dimension).astype(np.float32)
        for h in hashes]
    cases = stard_cases(SHARED / "stard_public.jsonl", limit)
    queries = encoder.encode([c.question for c in cases], query=True)
    texts = [normalised(c.text) for c in chunks]
    golds = [[{i for i, t in enumerate(texts) if normalised(e.text or "") in t}
              for e in case.expected] for case in cases]
    dense_rank = _ranks(queries @ dense.T)
    lines = [f"STARD probe ({len(cases)} questions, {len(chunks)} chunks of `{data_dir}`): "
             "Recall@5 / MRR@100", "", "| sentence vectors | best sentence alone | "
             "RRF with chunk vectors |", "|---|---|---|",
             f"| (chunk vectors alone) | {_score(dense_rank, golds)} | |"]
    for name, mats in matrices.items():
        starts = np.r_[0, np.cumsum([m.shape[0] for m in mats])[:-1]]
        ranks = _ranks(np.maximum.reduceat(queries @ np.concatenate(mats).T, starts, axis=1))
        fused = _ranks(1 / (60 + ranks) + 1 / (60 + dense_rank))
        lines.append(f"| {name} | {_score(ranks, golds)} | {_score(fused, golds)} |")
    return [*lines, ""]


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Per query row, each column's rank (1 = best)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, scores.shape[1] + 1)[None, :], axis=1)
    return ranks


def _score(ranks: np.ndarray, golds: list[list[set[int]]]) -> str:
    recall, mrr = [], []
    for row, expected in zip(ranks, golds, strict=True):
        best = [min((row[i] for i in g), default=10**9) for g in expected]
        recall.append(sum(b <= 5 for b in best) / len(best))
        first = min(best)
        mrr.append(1 / first if first <= 100 else 0.0)
    return f"{np.mean(recall):.3f} / {np.mean(mrr):.3f}"


def replace(data_dir: Path, pooled: Path, pooling: str) -> None:
    """A copy's bge sentence vectors, replaced by `pooling`'s from `pool`'s file."""
    settings = Settings(data_dir=data_dir)
    hashes, matrices = load_pooled(pooled)
    rows = [(settings.embedding_model, h, m.astype(SENTENCE_DTYPE).tobytes())
            for h, m in zip(hashes, matrices[pooling], strict=True)]
    with sqlite3.connect(settings.vector_cache_path) as cache:
        held = cache.execute("SELECT count(*) FROM sentences WHERE model=?",
                             (settings.embedding_model,)).fetchone()[0]
        cache.execute("DELETE FROM sentences WHERE model=?", (settings.embedding_model,))
        cache.executemany("INSERT INTO sentences VALUES (?,?,?)", rows)
    print(f"{len(rows)} chunks' sentence vectors ({held} held) replaced by {pooling!r}")


def stard_part(data_dir: Path, part: int, parts: int, out: Path) -> None:
    """Every `parts`-th STARD question from `part`, searched as `bench.passes --stard` asks
    (final search, no confidence signals), each question's scores saved: parts run as
    processes of their own over copies of one index, and `--merge` averages them."""
    cases = stard_cases(SHARED / "stard_public.jsonl", None)[part::parts]
    options = {"final": SearchOptions(signal_depth=0)}
    with retriever_fns(Settings(data_dir=data_dir), modes=options) as fns:
        rows = [score_question(c, hits_of(fns["final"](c.question, None, None, None, DEPTH)))
                for c in cases]
    out.write_text(json.dumps(rows))


def merge(files: Sequence[Path]) -> list[str]:
    rows = [row for f in files for row in json.loads(f.read_text())]
    scores = macro(rows)
    return [f"STARD ({len(rows)} questions): " + ", ".join(
        f"{name} {scores[name]:.3f}" for name in ("recall@5", "recall@100", "mrr")), ""]


def cost(data_dir: Path, n: int) -> list[str]:
    chunks = embedded_chunks(data_dir)[:n]
    encoder = open_encoder(Settings(data_dir=data_dir).embedding_model)
    assert isinstance(encoder, OnnxEncoder)
    said = list(dict.fromkeys(s for c in chunks for s in sentences(c.text)))
    runs: dict[str, Callable[[], object]] = {
        "bge chunk vectors": lambda: encoder.encode_passages([c.embed_text for c in chunks]),
        "bge chunk vectors + late sentence pooling": lambda: list(
            late_vectors(encoder, chunks, ["span mean + chunk CLS"])),
        "bge sentence vectors (a pass of their own)": lambda: encoder.encode_passages(said),
    }
    best = best_of_three(runs)
    floor = best["bge chunk vectors"]
    return [f"Cost, {len(chunks)} chunks of `{data_dir}`, best of three rounds", "",
            "| pass | s | × chunk pass |", "|---|---:|---:|"] + [
        f"| {name} | {s:.1f} | {s / floor:.2f} |" for name, s in best.items()] + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pool", nargs=2, type=Path, metavar=("DATA_DIR", "OUT_NPZ"))
    parser.add_argument("--probe", nargs=2, type=Path, metavar=("DATA_DIR", "POOLED_NPZ"))
    parser.add_argument("--limit", type=int, help="probe: the first N STARD questions only")
    parser.add_argument("--replace", nargs=2, type=Path, metavar=("DATA_DIR", "POOLED_NPZ"))
    parser.add_argument("--pooling", choices=list(POOLINGS), default="span mean")
    parser.add_argument("--cost", nargs=2, metavar=("DATA_DIR", "N"))
    parser.add_argument("--stard-part", nargs=4, metavar=("DATA_DIR", "PART", "PARTS", "OUT"))
    parser.add_argument("--merge", nargs="+", type=Path, metavar="PART_JSON")
    args = parser.parse_args()
    if args.stard_part:
        data_dir, part, parts, out = args.stard_part
        stard_part(Path(data_dir), int(part), int(parts), Path(out))
    if args.pool:
        pool(*args.pool)
    if args.replace:
        replace(args.replace[0], args.replace[1], args.pooling)
    lines = cost(Path(args.cost[0]), int(args.cost[1])) if args.cost else []
    if args.probe:
        lines += probe(args.probe[0], args.probe[1], args.limit)
    if args.merge:
        lines += merge(args.merge)
    print("\n".join(lines))

if __name__ == "__main__":
    main()
