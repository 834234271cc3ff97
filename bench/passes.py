"""Which ingest-time model passes earn their place (issue #43): final search with the vectors of
one pass left out, asked of one index that holds them all.

    .venv/bin/python -m bench.passes [CASES=DATA_DIR ...] [--stard DATA_DIR] [--limit N]

Each pass, and how a search does without it:
- bge sentence vectors: `SearchOptions(sentences=False)` leaves the best-sentence list out of the
  fusion (the confidence signals of the top ten still read sentences: see README);
- the cross-lingual encoder's sentence vectors: `KBFLOW_CROSSLINGUAL_SENTENCES=false` scores a
  chunk of that index by its whole text alone;
- the cross-lingual index itself: `SearchOptions(crosslingual=False)`.
Gold sets (`kbflow eval` cases over their ingested data dir): Recall@5 / MRR per tag, then
no-answer cases abstained and answerable ones wrongly abstained, as `kbflow eval` scores them.
STARD (`--stard`: a `bench.realworld --gold-files-only` data dir): Recall@5, Recall@100 and MRR
at k=100 without confidence signals, as bench.realworld ranks. `--cost DATA_DIR N`: what each
pass costs, in seconds and as a multiple of the chunk vectors' pass, on N of that index's
chunks (each pass as the embed stage runs it: distinct sentences, batched), the passes taken
in turn, three rounds, in this process. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.realworld import DEPTH, SHARED, macro, score_question
from bench.realworld import load_cases as stard_cases
from ingest.config import Settings
from ingest.embed.encoders import USE_MODEL, open_encoder
from ingest.evaluate import EvalCase, evaluate, hits_of, load_cases, retriever_fns
from ingest.manifest import ManifestStore
from ingest.models import ChunkKind
from ingest.search import SearchOptions
from ingest.text import sentences

# name → (settings changed, search options changed)
VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "all passes": ({}, {}),
    "−bge sentences": ({}, {"sentences": False}),
    "−USE sentences": ({"crosslingual_sentences": False}, {}),
    "−both sentence passes": ({"crosslingual_sentences": False}, {"sentences": False}),
    "−cross-lingual": ({}, {"crosslingual": False}),
}


def each_variant(data_dir: Path, base: dict[str, Any],
                 ask: Callable[[Callable[..., Any]], Any],
                 variants: Sequence[str] = tuple(VARIANTS)) -> dict[str, Any]:
    """`ask(search_fn)` per variant; variants with the same settings share one open index."""
    out: dict[str, Any] = {}
    changes: tuple[dict[str, Any], ...] = ({}, {"crosslingual_sentences": False})
    for changed in changes:
        names = {n: SearchOptions(**base, **opts) for n, (s, opts) in VARIANTS.items()
                 if s == changed and n in variants}
        if not names:
            continue
        with retriever_fns(Settings(data_dir=data_dir, **changed), modes=names) as fns:
            for name, fn in fns.items():
                started = time.perf_counter()
                out[name] = ask(fn)
                print(f"{data_dir.name} {name}: {time.perf_counter() - started:.0f} s",
                      flush=True)
    return {name: out[name] for name in VARIANTS if name in out}


def gold_set(cases_file: Path, data_dir: Path) -> list[str]:
    cases = load_cases(cases_file)
    reports = each_variant(data_dir, {}, lambda fn: evaluate(cases, fn, 5))
    base = reports["all passes"]
    lines = [f"`{cases_file}` ({len(cases)} cases): Recall@5 / MRR, bold where it differs from "
             "all passes", "", "| tag | " + " | ".join(VARIANTS) + " |",
             "|---" * (len(VARIANTS) + 1) + "|"]
    for tag in ["(all)", *base.per_tag]:
        cells = []
        for report in reports.values():
            m, b = ((report.overall, base.overall) if tag == "(all)"
                    else (report.per_tag[tag], base.per_tag[tag]))
            cell = f"{m.recall:.2f} / {m.mrr:.2f}"
            cells.append(cell if (m.recall, m.mrr) == (b.recall, b.mrr) else f"**{cell}**")
        lines.append(f"| {tag} | " + " | ".join(cells) + " |")
    lines.append("| no-answer abstained / answerable wrongly abstained | " + " | ".join(
        f"{r.overall.no_answer_abstained}/{r.overall.no_answer_cases} / "
        f"{r.overall.false_abstain_rate:.1%}" for r in reports.values()) + " |")
    return [*lines, ""]


def stard(data_dir: Path, limit: int | None, variants: Sequence[str]) -> list[str]:
    cases: Sequence[EvalCase] = stard_cases(SHARED / "stard_public.jsonl", limit)

    def ask(fn: Callable[..., Any]) -> dict[str, float]:
        rows, across = [], 0
        for case in cases:
            hits = hits_of(fn(case.question, None, None, None, DEPTH))
            rows.append(score_question(case, hits))
            across += any(getattr(h, "crosslingual_rank", None) for h in hits)
        return macro(rows) | {"cross-lingual lists joined": across}

    metrics = each_variant(data_dir, {"signal_depth": 0}, ask, variants)
    lines = [f"STARD ({len(cases)} questions, `{data_dir}`)", "",
             "| | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
    for name in ("recall@5", "recall@100", "mrr", "cross-lingual lists joined"):
        lines.append(f"| {name} | " + " | ".join(f"{m[name]:.3f}".removesuffix(".000")
                                                 for m in metrics.values()) + " |")
    return [*lines, ""]


def costs(data_dir: Path, n: int) -> list[str]:
    """Seconds per pass over the first `n` embedded chunks of the index, best of three rounds
    (the passes interleaved, so a load swing touches them all)."""
    settings = Settings(data_dir=data_dir)
    manifest = ManifestStore(settings.manifest)
    try:
        chunks = [c for r in manifest.documents()
                  for c in manifest.version_chunks(r.doc_id, r.version_id)
                  if c.kind != ChunkKind.PARENT][:n]
    finally:
        manifest.close()
    said = list(dict.fromkeys(s for c in chunks for s in sentences(c.text)))
    bge, use = open_encoder(settings.embedding_model), open_encoder(USE_MODEL)
    passes = {"bge chunk vectors (prefix + text)": (bge, [c.embed_text for c in chunks]),
              "bge sentence vectors": (bge, said),
              "USE chunk vectors (text)": (use, [c.text for c in chunks]),
              "USE sentence vectors": (use, said)}
    for encoder, texts in passes.values():
        encoder.encode_passages(texts[:8])  # the first run allocates its buffers
    best = dict.fromkeys(passes, float("inf"))
    for _ in range(3):
        for name, (encoder, texts) in passes.items():
            started = time.perf_counter()
            encoder.encode_passages(texts)
            best[name] = min(best[name], time.perf_counter() - started)
    floor = best["bge chunk vectors (prefix + text)"]
    return [f"Cost per pass, {len(chunks)} chunks of `{data_dir}` ({len(said)} distinct "
            "sentences), best of three rounds", "", "| pass | texts | s | × chunk pass |",
            "|---|---:|---:|---:|"] + [
        f"| {name} | {len(texts)} | {best[name]:.1f} | {best[name] / floor:.2f} |"
        for name, (_, texts) in passes.items()] + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="*", metavar="CASES=DATA_DIR")
    parser.add_argument("--stard", type=Path, metavar="DATA_DIR")
    parser.add_argument("--limit", type=int, help="STARD: the first N questions only")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS),
                        help="STARD: ask only these (each costs a search per question)")
    parser.add_argument("--cost", nargs=2, metavar=("DATA_DIR", "N"))
    args = parser.parse_args()
    lines: list[str] = costs(Path(args.cost[0]), int(args.cost[1])) if args.cost else []
    for spec in args.sets:
        cases_file, data_dir = spec.split("=", 1)
        lines += gold_set(Path(cases_file), Path(data_dir))
    if args.stard:
        lines += stard(args.stard, args.limit, args.variants)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
