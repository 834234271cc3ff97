"""Real-corpus ingest: the LawRefBook laws, cold, against the encoder's floor (issue #43).

    .venv/bin/python -m bench.ingest_real [--gold-files-only] [--limit N] [--laws DIR]
        [--data-dir DIR] [--label L] [--before LABEL] [--vector-cache FILE] [--rerun]
        [--no-floor]

Copies the chosen law files (all of them, or those holding a STARD gold article as
`bench.realworld --gold-files-only` picks them, or the first N of either by path) next to a cold
data dir, runs `kbflow ingest --json` on them in its own process (embedded profile: wall time,
stage seconds, peak RSS of its process tree), then reads what the run left: chunk and sentence
vectors per model in the vector cache, rows in the vector stores. Last, in this process, the
raw encode floor: the same chunk texts (what the embed stage encodes: prefix and text) through
the project's ONNX encoder alone, no cache, no stores. On a shared machine absolute seconds say
little; the ratio wall / floor, both measured in the same run, is the figure to compare.

`--rerun` then runs `kbflow ingest` again over the unchanged copy (what a nightly re-scan of an
unchanged folder costs: wall, stage seconds, files skipped, peak RSS). `--vector-cache` seeds
the cold data dir's vector cache with an earlier run's (vector_cache.db): the embed stage reads
instead of encoding, so the run measures everything but the models (memory, writes, re-runs)
in minutes; its wall / floor means nothing then, and `--no-floor` skips the floor.

Writes bench/ingest_results/<label>.json and prints a Markdown table (with `--before`, beside
an earlier run's).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.realworld import SHARED, ingest, run_ingest
from ingest.config import Settings
from ingest.embed.encoders import open_encoder
from ingest.manifest import ManifestStore
from ingest.models import ChunkKind

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "ingest_results"


def pick_files(laws: Path, questions: Path, gold_only: bool, limit: int | None) -> list[Path]:
    """The law files to ingest, by relative path: the gold ones (those a STARD question's gold
    article is in) or all, the first `limit` of them."""
    if gold_only:
        names = sorted({g["file"] for line in questions.read_text(encoding="utf-8").splitlines()
                        if line.strip() for g in json.loads(line)["gold"]})
    else:
        names = sorted(str(p.relative_to(laws)) for p in laws.rglob("*.md"))
    return [Path(n) for n in names[:limit]]


def copy_files(laws: Path, names: list[Path], target: Path) -> int:
    """The chosen files under `target` (a fresh copy: the data dir is cold, so is the corpus)."""
    shutil.rmtree(target, ignore_errors=True)
    size = 0
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(laws / name, target / name)
        size += (laws / name).stat().st_size
    return size


def cache_counts(settings: Settings) -> dict[str, dict[str, int]]:
    """Per model, what the vector cache holds after the run: chunk vectors, texts with sentence
    vectors, and those sentence vectors (half precision, so bytes / 2 / dimension)."""
    with sqlite3.connect(settings.vector_cache_path) as db:
        out: dict[str, dict[str, int]] = {}
        for model, rows in db.execute("SELECT model, count(*) FROM vectors GROUP BY model"):
            out.setdefault(model, {})["chunk_vectors"] = rows
        dims = {m: len(v) // 4 for m, v in db.execute(
            "SELECT model, vector FROM vectors GROUP BY model")}
        for model, texts, size in db.execute(
                "SELECT model, count(*), sum(length(vectors)) FROM sentences GROUP BY model"):
            counts = out.setdefault(model, {})
            counts["sentence_texts"] = texts
            counts["sentence_vectors"] = size // 2 // dims[model] if model in dims else 0
    return out


def store_rows(settings: Settings) -> dict[str, int]:
    """Rows in the embedded vector stores' tables (the dense path's and the cross-lingual one)."""
    with sqlite3.connect(settings.vectors_path) as db:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables
                if not t.startswith("sqlite_")}


def chunk_texts(settings: Settings) -> list[str]:
    """What the embed stage encodes for the indexed chunks: their prefixed text (parents are
    not embedded)."""
    manifest = ManifestStore(settings.manifest)
    try:
        return [c.embed_text for r in manifest.documents()
                for c in manifest.version_chunks(r.doc_id, r.version_id)
                if c.kind != ChunkKind.PARENT]
    finally:
        manifest.close()


def encode_floor(settings: Settings, texts: list[str]) -> dict[str, float]:
    """Seconds to encode `texts` with the project's encoder alone (model load apart)."""
    encoder = open_encoder(settings.embedding_model, settings.embedding_batch_size)
    encoder.encode_passages(texts[:8])  # the session's first run allocates its buffers
    load = os.getloadavg()[0]
    started = time.perf_counter()
    encoder.encode_passages(texts)
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 1), "texts": len(texts),
            "texts_per_second": round(len(texts) / seconds, 1), "load": load}


def run(args: argparse.Namespace) -> dict[str, Any]:
    names = pick_files(args.laws, args.questions, args.gold_files_only, args.limit)
    data = args.data_dir.resolve()
    shutil.rmtree(data, ignore_errors=True)
    corpus = data.with_name(f"{data.name}-laws")
    size = copy_files(args.laws, names, corpus)
    print(f"ingesting {len(names)} files ({size / 1e6:.1f} MB) into {data} …", flush=True)
    settings = Settings(data_dir=data)
    if args.vector_cache:
        data.mkdir(parents=True)
        shutil.copy2(args.vector_cache, settings.vector_cache_path)
        record = run_ingest(corpus, data, "ingest-real-cold.json")
    else:
        record = ingest(corpus, data)
    rerun = (rerun_figures(run_ingest(corpus, data, "ingest-real-rerun.json")) if args.rerun
             else None)
    floor = None if args.no_floor else encode_floor(settings, chunk_texts(settings))
    summary = record["summary"]
    return {
        "label": args.label, "finished": f"{datetime.now(UTC):%Y-%m-%d %H:%M}",
        "corpus": {"gold_files_only": args.gold_files_only, "limit": args.limit,
                   "files": len(names), "bytes": size},
        "wall_seconds": record["wall_seconds"], "peak_rss_mib": record["peak_rss_mib"],
        "load": [record["load_before"], record["load_after"], floor and floor["load"]],
        "stage_seconds": summary["seconds"], "chunks": summary["chunks"]["added"],
        "embedded": summary["embedded"], "encoded": summary.get("encoded", {}),
        "cache": cache_counts(settings), "store_rows": store_rows(settings), "floor": floor,
        "wall_over_floor": floor and round(record["wall_seconds"] / floor["seconds"], 2),
        "failures": len(summary["failures"]), "seeded_cache": args.vector_cache is not None,
        "rerun": rerun,
    }


def rerun_figures(record: dict[str, Any]) -> dict[str, Any]:
    """What the unchanged re-run cost: `total` is the pipeline's own seconds (the rest of the
    wall is the process and Prefect starting)."""
    summary = record["summary"]
    return {"wall_seconds": record["wall_seconds"], "peak_rss_mib": record["peak_rss_mib"],
            "load": [record["load_before"], record["load_after"]],
            "skipped": summary["skipped_unchanged"], "written": summary["written"],
            "total_seconds": summary["total_seconds"], "stage_seconds": summary["seconds"]}


RERUN_ROWS: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("wall s", lambda r: r["wall_seconds"]),
    ("pipeline s (wall less process and Prefect start)", lambda r: r["total_seconds"]),
    ("files skipped", lambda r: r["skipped"]),
    ("peak RSS MiB", lambda r: r["peak_rss_mib"]),
    ("load avg (start, end)", lambda r: ", ".join(f"{x:.1f}" for x in r["load"]))]


def report(result: dict[str, Any], before: dict[str, Any] | None) -> str:
    runs = [r for r in (before, result) if r is not None]
    rows = [("files", lambda r: r["corpus"]["files"]),
            ("chunks written", lambda r: r["chunks"]),
            ("wall s", lambda r: r["wall_seconds"]),
            ("raw encode floor s (same chunk texts)",
             lambda r: r["floor"]["seconds"] if r["floor"] else "–"),
            ("**wall / floor**", lambda r: r["wall_over_floor"] or "–"),
            ("load avg (start, end, floor)",
             lambda r: ", ".join(f"{x:.1f}" for x in r["load"] if x is not None)),
            ("peak RSS MiB", lambda r: r["peak_rss_mib"]),
            ("vector cache seeded", lambda r: "yes" if r.get("seeded_cache") else "no")]
    rows += [(f"unchanged re-run {name}", lambda r, get=get: get(r["rerun"]) if r.get("rerun")
              else "–") for name, get in RERUN_ROWS]
    rows += [(f"stage {s} s", lambda r, s=s: r["stage_seconds"].get(s, 0.0))
             for s in ("parse", "chunk", "embed", "vectors", "lexical", "graph", "manifest")]
    models = sorted({m for r in runs for m in r["cache"]})
    for model in models:
        for kind in ("chunk_vectors", "sentence_vectors"):
            rows.append((f"{model} {kind.replace('_', ' ')} stored",
                         lambda r, m=model, k=kind: r["cache"].get(m, {}).get(k, 0)))
    encoded = sorted({k for r in runs for k in r.get("encoded", {})})
    rows += [(f"encoded {k}", lambda r, k=k: r.get("encoded", {}).get(k, "–")) for k in encoded]
    lines = ["| | " + " | ".join(r["label"] for r in runs) + " |",
             "|---|" + "---:|" * len(runs)]
    lines += [f"| {name} | " + " | ".join(str(get(r)) for r in runs) + " |" for name, get in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--laws", type=Path, default=SHARED / "laws")
    parser.add_argument("--questions", type=Path, default=SHARED / "stard_public.jsonl")
    parser.add_argument("--gold-files-only", action="store_true",
                        help="only the files holding a STARD gold article")
    parser.add_argument("--limit", type=int, help="the first N files (by path)")
    parser.add_argument("--data-dir", type=Path,
                        default=Path.home() / ".cache" / "kbflow" / "ingest-real" / "data",
                        help="removed first: the run is cold")
    parser.add_argument("--label", default=f"{datetime.now(UTC):%Y%m%dT%H%M}")
    parser.add_argument("--before", metavar="LABEL", help="show this earlier run beside")
    parser.add_argument("--vector-cache", type=Path, metavar="FILE",
                        help="an earlier run's vector_cache.db to seed the cold data dir with")
    parser.add_argument("--rerun", action="store_true",
                        help="then ingest the unchanged copy again, and report that run too")
    parser.add_argument("--no-floor", action="store_true", help="skip the raw encode floor")
    args = parser.parse_args()
    result = run(args)
    before = (json.loads((RESULTS / f"{args.before}.json").read_text(encoding="utf-8"))
              if args.before else None)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.label}.json").write_text(
        json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(report(result, before))


if __name__ == "__main__":
    main()
