"""Search cost when the corpus shares the query's words (issue #27).

    python -m bench.common_words --base DATA_DIR [--sizes 100,3000] [--work DIR]

DATA_DIR holds sample_docs ingested (`kbflow --data-dir DATA_DIR ingest sample_docs`). For each
size, a copy of it gets that many synthetic one-clause documents (bench/scale.py's
add_synthetic, nothing embedded) written only from the content words of the English eval
questions, so every English question's words are in every synthetic row and BM25 matches
them all. Then in one process, one warm `Searcher` per size: 40 English searches (the
english-tagged questions in turn) per size, the sizes taking turns for --rounds rounds, and per
size the median round; and the eval (`final` and `bm25`, Recall@5 per tag) on each index, to
show what the ranking costs in quality.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from bench import write_section
from bench.latency import percentile
from bench.scale import add_synthetic, groups_of

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "eval/sample_cases.jsonl"
SECTION = "## Common query words (bench/common_words.py)"
SEARCHES = 40


def english_questions() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in CASES.open(encoding="utf-8")]
    return [r for r in rows if "english" in r.get("tags", [])]


def shared_text_of(words: list[str]) -> Any:
    def text_of(rng: random.Random, i: int) -> str:
        return f"Notice {i}: " + " ".join(rng.choices(words, k=rng.randint(12, 40))) + "."
    return text_of


def timed(datas: dict[int, Path], rounds: int) -> dict[int, dict[str, Any]]:
    """40 English searches per size, the sizes taking turns for `rounds` rounds in one process
    (a shared machine's load drifts in minutes: sizes timed minutes apart are not comparable);
    per size the median round and the latencies of all rounds."""
    from contextlib import ExitStack

    from ingest.config import Settings
    from ingest.search import Searcher

    asked = english_questions()
    with ExitStack() as stack:
        settings = {n: Settings(data_dir=d) for n, d in datas.items()}
        groups = {n: groups_of(s) for n, s in settings.items()}
        searchers = {n: stack.enter_context(Searcher(s)) for n, s in settings.items()}

        def ask(n: int, row: dict[str, Any]) -> float:
            started = time.perf_counter()
            searchers[n].search(row["question"], tenant_id=settings[n].default_tenant,
                                groups=groups[n],
                                as_of=date.fromisoformat(row.get("as_of") or "2026-06-01"))
            return time.perf_counter() - started

        for n in datas:
            ask(n, asked[0])  # warm-up
        totals: dict[int, list[float]] = {n: [] for n in datas}
        each: dict[int, list[float]] = {n: [] for n in datas}
        for _ in range(rounds):
            for n in datas:
                times = [ask(n, asked[i % len(asked)]) for i in range(SEARCHES)]
                totals[n].append(sum(times))
                each[n] += times
    return {n: {"seconds": round(statistics.median(totals[n]), 3),
                "rounds": [round(t, 2) for t in totals[n]],
                "p50_ms": round(1000 * statistics.median(each[n]), 1),
                "p95_ms": round(1000 * percentile(each[n], 0.95), 1)} for n in datas}


def quality(data: Path) -> dict[str, dict[str, float]]:
    """Recall@5 per tag of `final` and `bm25` on this index."""
    from ingest.config import Settings
    from ingest.evaluate import compare_retrievers, load_cases

    reports = compare_retrievers(load_cases(CASES), Settings(data_dir=data), 5, ["bm25", "final"])
    return {mode: {"(all)": round(r.overall.recall, 3)}
            | {tag: round(m.recall, 3) for tag, m in r.per_tag.items()}
            for mode, r in reports.retrievers.items()}


def lexical_alone(sizes: list[int], words: list[str]) -> dict[int, dict[str, float]]:
    """The BM25 store alone, in this process: ms per English search over `size` rows made of
    the questions' words, through `search` and through the full FTS5 ranking it replaces
    (`_ranked`, still its fallback), taking turns so both see the same load."""
    import tempfile

    from ingest.models import Chunk, ChunkKind, SearchFilter
    from ingest.stores.sqlite_lexical import SqliteLexicalStore, _or
    from ingest.stores.tokens import query_tokens

    questions = [r["question"] for r in english_questions()]
    flt = SearchFilter(tenant_id="default", groups=["all-staff"], as_of=date(2026, 6, 1),
                       hidden_keys=[])
    text_of, out = shared_text_of(words), {}
    for size in sizes:
        rng = random.Random(size)
        store = SqliteLexicalStore(Path(tempfile.mkdtemp(prefix="kbflow-bm25-")) / "l.db")
        store.upsert([Chunk(
            doc_id=f"d{i}", version_id="1", chunk_id=f"c{i:07d}", kind=ChunkKind.CLAUSE,
            text=(text := text_of(rng, i)), prefix="《Notice》", clause_no="1",
            structural_path="1", page_start=1, page_end=1, char_start=0, char_end=len(text),
            tenant_id="default", acl=["all-staff"], source_uri="x", parser_version="p",
            chunker_version="c", content_hash=str(i)) for i in range(size)])
        times: dict[str, list[float]] = {"search": [], "full ranking": []}
        for _ in range(5):
            for i in range(SEARCHES):
                question = questions[i % len(questions)]
                started = time.perf_counter()
                store.search(question, flt, 50)
                times["search"].append(time.perf_counter() - started)
                started = time.perf_counter()
                store._db.execute("BEGIN")
                store._ranked(_or(query_tokens(question)), flt, 50)
                store._db.execute("COMMIT")
                times["full ranking"].append(time.perf_counter() - started)
        store.close()
        out[size] = {k: round(1000 * statistics.median(v), 2) for k, v in times.items()}
    return out


def report(results: dict[int, dict[str, Any]], label: str, load: tuple[float, float]) -> str:
    small, large = min(results), max(results)
    ratio = results[large]["seconds"] / results[small]["seconds"]
    lines = [SECTION, "",
             f"Generated by `python -m bench.common_words` ({label}) on "
             f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, embedded profile, 2 cores. Load average "
             f"(1 min) {load[0]:.2f} before, {load[1]:.2f} after. sample_docs plus N synthetic "
             "one-clause documents made only of the English eval questions' words; "
             f"{SEARCHES} English searches per round in one warm process, the sizes taking "
             "turns; the median round.", "",
             "| synthetic docs | 40 searches s (rounds) | p50 / p95 ms | Recall@5 final "
             "(all / english) | Recall@5 bm25 (all / english) |", "|---|---|---|---|---|"]
    for size, r in sorted(results.items()):
        final, bm25 = r.get("recall", {}).get("final", {}), r.get("recall", {}).get("bm25", {})
        lines.append(f"| {size:,} | {r['seconds']:.2f} ({', '.join(map(str, r['rounds']))}) | "
                     f"{r['p50_ms']} / {r['p95_ms']} | {final.get('(all)')} / "
                     f"{final.get('english')} | {bm25.get('(all)')} / {bm25.get('english')} |")
    lines += ["", f"- {large:,} / {small:,}: **{ratio:.2f}×** (goal ≤ 1.25×)."]
    before, after = (results[n].get("recall", {}).get("final", {}) for n in (small, large))
    changed = [f"{t} {before.get(t)} → {after.get(t)}" for t in sorted(set(before) | set(after))
               if before.get(t) != after.get(t)]
    if before:
        lines.append(f"- final Recall@5 per tag, {small:,} → {large:,}: "
                     + ("; ".join(changed) if changed else "no tag changed") + ".")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--sizes", default="100,3000")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--label", default="current")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-eval", action="store_true", help="time the searches only")
    parser.add_argument("--out", type=Path, default=None, help="write the section into this file")
    args = parser.parse_args()
    from ingest.config import Settings
    from ingest.stores.tokens import query_tokens

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    words = sorted({t for r in english_questions() for t in query_tokens(r["question"])})
    work = args.work or Path(tempfile.mkdtemp(prefix="kbflow-common-"))
    load_before = os.getloadavg()[0]
    datas = {}
    for size in (int(s) for s in args.sizes.split(",")):
        datas[size] = data = work / f"n{size}"
        if not (data / "manifest.db").exists():  # a kept --work is reused as it is
            shutil.copytree(args.base, data)
            add_synthetic(Settings(data_dir=data), 0, size, shared_text_of(words))
    results = timed(datas, args.rounds)
    for size, data in datas.items():
        if not args.no_eval:
            results[size]["recall"] = quality(data)
        print(json.dumps({size: results[size]}), flush=True)
    text = report(results, args.label, (load_before, os.getloadavg()[0]))
    alone = lexical_alone(sorted({*datas, 30000}), words)
    text += ("- The BM25 store alone (`lexical_alone`: rows of these words only, k = 50, "
             "median ms per search), `search` / the full FTS5 ranking it replaces: "
             + "; ".join(f"{n:,} rows {v['search']} / {v['full ranking']}"
                         for n, v in alone.items()) + ".\n")
    print(text)
    if args.out:
        write_section(args.out, SECTION, text)


if __name__ == "__main__":
    main()
