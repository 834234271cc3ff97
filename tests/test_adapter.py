"""The query adapter (ingest.search.adapter) and `kbflow tune` (ingest.evaluate.tune): a file is
checked before a search uses it; fitting learns a map that carries to questions it never saw;
on the sample index, tune cross-validates through real search and keeps the adapter only when
final search gains; a kept adapter reorders the dense path while the confidence signals stay
the raw query's."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from ingest.config import Settings
from ingest.evaluate import load_cases
from ingest.evaluate.tune import examples, tune
from ingest.search import Searcher, SearchOptions
from ingest.search.adapter import ADAPTER_FILE, RANK, QueryAdapter, fit

CASES = Path(__file__).resolve().parent.parent / "eval" / "sample_cases.jsonl"


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def test_adapter_file_is_checked_before_use(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    adapter = QueryAdapter("bge", rng.normal(size=(96, 8)).astype(np.float32),
                           rng.normal(size=(96, 8)).astype(np.float32))
    path = tmp_path / ADAPTER_FILE
    adapter.save(path)
    loaded = QueryAdapter.load(path, "bge", 96)
    assert loaded is not None and np.array_equal(loaded.down, adapter.down)
    moved = loaded.apply(unit(rng.normal(size=96)))
    assert abs(float(np.linalg.norm(moved)) - 1) < 1e-5
    assert QueryAdapter.load(path, "another-model", 96) is None
    assert QueryAdapter.load(path, "bge", 512) is None
    assert QueryAdapter.load(tmp_path / "none.npz", "bge", 96) is None
    QueryAdapter("bge", np.full((96, 8), np.nan, np.float32), adapter.up).save(path)
    assert QueryAdapter.load(path, "bge", 96) is None
    path.write_bytes(b"PK\x03\x04 not a numpy archive")
    assert QueryAdapter.load(path, "bge", 96) is None
    # an object array would need pickle to load: refused, never unpickled
    np.savez(path, model=np.array("bge"), down=np.array([object()]), up=adapter.up)
    assert QueryAdapter.load(path, "bge", 96) is None


def test_fit_learns_a_map_that_carries_to_unseen_questions() -> None:
    """Questions are their answer chunk seen through a fixed distortion (people word things
    their own way): fitted on 240 of them, the adapter finds the answers of 60 others."""
    rng = np.random.default_rng(0)
    dimension = 96
    chunks = unit(rng.normal(size=(400, dimension)))
    distortion = np.eye(dimension) + 2.5 * rng.normal(size=(dimension, dimension)) / np.sqrt(
        dimension)
    answer = rng.integers(0, len(chunks), size=300)
    questions = unit(chunks[answer] @ distortion.T + 0.1 * rng.normal(size=(300, dimension)))
    adapter = fit("m", questions[:240], [[int(a)] for a in answer[:240]], chunks)
    assert adapter.down.shape == (dimension, RANK)

    def top1(vectors: np.ndarray) -> float:
        return float(np.mean((vectors @ chunks.T).argmax(axis=1) == answer[240:]))

    held_out = questions[240:]
    moved = np.stack([adapter.apply(v) for v in held_out])
    assert top1(held_out) < 0.6 and top1(moved) > top1(held_out) + 0.3  # 0.52 → 0.95 here


def test_tune_cross_validates_and_keeps_only_a_gain(ingested, tmp_path: Path) -> None:
    _, shared = ingested
    settings = Settings(data_dir=tmp_path / "data")
    shutil.copytree(shared.data_dir, settings.data_dir)  # the shared index stays as it is
    cases = load_cases(CASES)
    data = examples(settings, cases)
    answerable = [c for c in cases if not c.no_answer]
    assert sum(bool(a) for a in data.answers) >= 0.95 * len(answerable)
    assert not any(a for a, c in zip(data.answers, cases, strict=True) if c.no_answer)

    # a kept adapter (fitted on every case here) reorders the dense path, and only the ranking:
    # the signals the abstention floors were set on stay the raw query's
    kept = settings.data_dir / ADAPTER_FILE
    fitted = fit(data.model, data.questions, data.answers, data.chunks)
    question = "出差住宿报销标准是多少？"
    with Searcher(settings) as searcher:
        assert searcher.adapter is None
        fitted.save(kept)  # as `kbflow tune` keeps one while the warm API has the index open
        searcher.refresh_adapter()
        assert searcher.adapter is not None and np.array_equal(searcher.adapter.up, fitted.up)

        def ask(mode: str) -> list:
            return searcher.search(question, tenant_id="default", groups=["all-staff"],
                                   as_of=date(2026, 6, 1), k=20, mode=mode,  # type: ignore[arg-type]
                                   options=SearchOptions(signal_depth=20)).results

        adapted_dense, adapted = ask("dense"), {r.chunk_id: r for r in ask("final")}
        kept.unlink()
        searcher.refresh_adapter()
        assert searcher.adapter is None
        raw_dense, raw = ask("dense"), {r.chunk_id: r for r in ask("final")}
        fitted.save(kept)
    assert [r.chunk_id for r in adapted_dense] != [r.chunk_id for r in raw_dense]
    shared_ids = [c for c in adapted if c in raw and adapted[c].signals and raw[c].signals]
    assert shared_ids
    for chunk_id in shared_ids:
        assert adapted[chunk_id].signals == raw[chunk_id].signals

    report = tune(settings, cases)
    assert report.cases == sum(bool(a) for a in data.answers) and report.folds == 5
    assert set(report.before) == set(report.after) == {"dense", "final"}
    gained = ((report.after["final"].recall, report.after["final"].mrr)
              > (report.before["final"].recall, report.before["final"].mrr))
    assert report.kept == gained
    assert (settings.data_dir / ADAPTER_FILE).exists() == gained  # the old file is gone too
    with pytest.raises(ValueError, match="tuning needs"):
        tune(settings, cases[:10])
