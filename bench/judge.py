"""The local LLM as judge of the verdict and as teacher of the reader (issue #45).

    .venv/bin/python -m bench.judge [--questions 60] [--minutes 60] [--out FILE]

Questions: STARD's held-out 20 % (heldout.json of the reader's training run, which never saw
them) whose gold articles all lie in one half of the gold law files, in a seeded order. Each is
asked twice, as in bench/reader.py's no-answer construction: of the articles of its gold half
(answerable) and of the other half (no answer: laws on near topics). Candidates: the fused order
of bench/reader.py (RRF of BM25 and bge-small-zh over whole articles). The judge
(bench/llm_judge.py, Qwen2.5-Coder-1.5B through llama.cpp in-process) reads each side's top
3, and, for the teacher measure, the gold article when it is not among them.

- Verdict: each search's best judge probability in its top 3 against the reader's and the
  bi-encoder's best on the same passages; abstention at ≤ 5 % false abstentions (floor
  cross-validated, bench/reader.py) and AUC.
- Reranker: the answerable side's top 3 reordered by the judge (then the reader); Recall@1, MRR.
- Cost: seconds and prompt tokens per pair and per search, with the load average.
- Teacher: the judge's yes (p ≥ 0.5) and its probability against the gold labels of the pairs
  (gold article 1, every other candidate 0), beside the shipped reader on the same pairs.

Judgements are kept in data/judge/judgements.jsonl (keyed by prompt version, question and
passage), so a run stopped by --minutes resumes where it stopped; the figures cover the questions
finished.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from bench import write_section
from bench.abstention import half
from bench.llm_judge import BUDGET, JUDGE_TOP, PROMPT_VERSION, judge
from bench.reader import HeldOutStard, abstention, auc, fuse
from bench.realworld import (
    HERE,
    log,
    macro,
    score_question,
)
from ingest.config import Settings
from ingest.evaluate import score_case
from ingest.llm import LLMClient
from ingest.rerank import MODEL_DIR, Reader

SECTION = "## The LLM as judge and teacher (bench/judge.py)"
DEPTH, SEED = 100, 45
DATA = Path("data/judge")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--minutes", type=float, default=60.0, help="ask nothing new after "
                        "this (0: report on the judgements kept)")
    parser.add_argument("--threads", type=int, default=2, help="the local LLM's CPU threads")
    parser.add_argument("--out", type=Path, help="the figures as JSON")
    parser.add_argument("--no-results", action="store_true", help="leave RESULTS.md alone")
    args = parser.parse_args()
    stard = HeldOutStard.load(MODEL_DIR / "heldout.json", DATA)
    sides = {str(r["id"]): {half(g["file"]) for g in r["gold"]} for r in stard.rows}
    cases = [c for c in stard.cases if len(sides[c.id]) == 1]
    random.Random(SEED).shuffle(cases)
    cases = cases[:args.questions]
    articles, titles, bm25, dense = stard.articles, stard.titles, stard.bm25, stard.dense
    reader = Reader()
    client = LLMClient.from_settings(Settings(llm_backend="local", llm_local_threads=args.threads,
                                              data_dir=DATA))
    assert client is not None
    store = DATA / "judgements.jsonl"
    kept = {(r["version"], r["question"], r["passage"]): r for r in map(
        json.loads, store.read_text(encoding="utf-8").splitlines())} if store.exists() else {}
    log(f"{len(cases)} questions, {len(articles)} articles, {len(kept)} judgements kept")
    started, results = time.monotonic(), []

    def judged(question: str, ids: Sequence[int]) -> list[dict[str, Any]]:
        out = []
        for i in ids:
            key = (PROMPT_VERSION, question, articles[i].chunk_id)
            if key not in kept:
                if time.monotonic() - started > 60 * args.minutes:
                    raise TimeoutError
                load, before = os.getloadavg()[0], time.perf_counter()
                (verdict,) = judge(client, question, [(titles.get(articles[i].doc_id, ""),
                                                       articles[i].text)])
                kept[key] = {"version": PROMPT_VERSION, "question": question,
                             "passage": articles[i].chunk_id, "p": verdict.probability,
                             "how": verdict.how, "prompt_tokens": verdict.prompt_tokens,
                             "seconds": round(time.perf_counter() - before, 2),
                             "load": round(load, 1)}
                with store.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(kept[key], ensure_ascii=False) + "\n")
            out.append(kept[key] | {"id": i})
        return out

    def ask(case: Any) -> dict[str, Any]:
        """A question's record: both sides' top 3 judged, and its gold pair."""
        vector = dense._encoder.encode([case.question], query=True)[0].astype(np.float32)
        cosines = dense._matrix @ vector
        fused = fuse(bm25.search(case.question, DEPTH), dense.search(case.question, DEPTH))
        (side,) = sides[case.id]
        gold = [i for i, a in enumerate(articles) if any(e.matches(a) for e in case.expected)]
        record: dict[str, Any] = {"id": case.id}
        for answerable, keep in ((True, side), (False, 1 - side)):
            inside = [i for i in fused if half(articles[i].doc_id) == keep]
            head = inside[:JUDGE_TOP]
            pairs = judged(case.question, head)
            probs = reader.score(case.question, [(titles.get(articles[i].doc_id, ""),
                                                  articles[i].text) for i in head])
            for pair, p in zip(pairs, probs, strict=True):
                pair.update(reader=float(p), cosine=float(cosines[pair["id"]]),
                            gold=pair["id"] in gold)
            record["answerable" if answerable else "no_answer"] = pairs
            if answerable:
                record["order"] = inside[:DEPTH]
                missing = [i for i in gold if i not in head][:1]
                extra = judged(case.question, missing)
                probs = reader.score(case.question, [(titles.get(articles[i].doc_id, ""),
                                                      articles[i].text) for i in missing])
                record["gold_pairs"] = [pair | {"reader": float(p), "gold": True}
                                        for pair, p in zip(extra, probs, strict=True)]
        return record

    for n, case in enumerate(cases, start=1):
        try:
            results.append((case, ask(case)))
        except TimeoutError:
            log(f"--minutes reached: {n - 1} questions finished")
            break
        if n % 5 == 0:
            log(f"{n}/{len(cases)} questions, {len(kept)} judgements")
    result = figures(results, articles, reader)
    print(json.dumps(result, ensure_ascii=False, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    if not args.no_results:
        write_section(HERE / "RESULTS.md", SECTION, report(result))


def figures(results: Sequence[tuple[Any, dict[str, Any]]], articles: Sequence[Any],
            reader: Reader) -> dict[str, Any]:
    """The four measures over the finished questions."""
    signals: dict[str, list[tuple[str, bool, float]]] = {}
    for case, record in results:
        for answerable in (True, False):
            pairs = record["answerable" if answerable else "no_answer"]
            known = [p["p"] for p in pairs if p["p"] is not None]
            # unknown everywhere: the judge says nothing, the verdict stands (not abstained)
            signals.setdefault("judge best probability", []).append(
                (case.id, answerable, max(known, default=1.0)))
            signals.setdefault("reader best probability", []).append(
                (case.id, answerable, max(p["reader"] for p in pairs)))
            signals.setdefault("bi-encoder best cosine", []).append(
                (case.id, answerable, max(p["cosine"] for p in pairs)))
    ranking: dict[str, list[dict[str, float]]] = {}
    for case, record in results:
        order, pairs = record["order"], record["answerable"]
        head = [p["id"] for p in pairs]
        for name, key in (("fused", None), ("judge top 3", "p"), ("reader top 3", "reader")):
            if key is None:
                ranked = order
            else:  # unknown judgements keep the middle of the scale
                score = {p["id"]: (p[key] if p[key] is not None else 0.5) for p in pairs}
                ranked = sorted(head, key=lambda i: -score[i]) + order[len(head):]
            hits = [articles[i] for i in ranked]
            ranking.setdefault(name, []).append(
                score_question(case, hits) | {"recall@1": score_case(case, hits, 1).recall})
    pairs = [p for _, r in results for p in r["answerable"] + r["no_answer"] + r["gold_pairs"]]
    searches = [r[side] for _, r in results for side in ("answerable", "no_answer")]
    fresh = [p for p in pairs if p.get("seconds")]
    return {
        "questions": len(results), "reader": reader.card["model_sha256"][:12],
        "verdict": {name: abstention(rows) for name, rows in signals.items()},
        "rerank": {name: {k: m[k] for k in ("recall@1", "recall@5", "mrr")}
                   for name, m in ((n, macro(rows)) for n, rows in ranking.items())},
        "cost": cost(fresh, searches),
        "teacher": teacher(pairs),
    }


def cost(fresh: Sequence[dict[str, Any]], searches: Sequence[Sequence[dict[str, Any]]]
         ) -> dict[str, Any]:
    seconds = np.array([p["seconds"] for p in fresh]) if fresh else np.zeros(1)
    per_search = [sum(p["seconds"] for p in s) for s in searches
                  if all(p.get("seconds") for p in s)]
    return {"pairs_timed": len(fresh), "budget_chars": BUDGET,
            "seconds_per_pair_mean": round(float(seconds.mean()), 2),
            "seconds_per_pair_p50": round(float(np.median(seconds)), 2),
            "seconds_per_search_p50": round(float(np.median(per_search)), 1) if per_search
            else None,
            "prompt_tokens_per_pair": round(float(np.mean([p["prompt_tokens"] for p in fresh])))
            if fresh else None,
            "load_average_1min": [round(float(np.min([p["load"] for p in fresh])), 1),
                                  round(float(np.max([p["load"] for p in fresh])), 1)]
            if fresh else None,
            "pairs_per_hour": round(3600 / float(seconds.mean())) if fresh else None,
            "unknown": sum(p["p"] is None for s in searches for p in s)}


def teacher(pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Agreement with the gold labels on distinct pairs: the judge at 0.5, and both AUCs."""
    unique = {(p["question"], p["passage"]): p for p in pairs}.values()
    gold = np.array([p["gold"] for p in unique], dtype=bool)
    judge_p = np.array([p["p"] if p["p"] is not None else 0.0 for p in unique])
    reader_p = np.array([p["reader"] for p in unique])
    said = judge_p >= 0.5
    return {"pairs": len(gold), "gold": int(gold.sum()),
            "judge_accuracy": round(float((said == gold).mean()), 3),
            "judge_yes_precision": round(float(gold[said].mean()), 3) if said.any() else None,
            "judge_yes_recall": round(float(said[gold].mean()), 3) if gold.any() else None,
            "reader_accuracy": round(float(((reader_p >= 0.5) == gold).mean()), 3),
            "judge_auc": round(auc(judge_p[gold], judge_p[~gold]), 3),
            "reader_auc": round(auc(reader_p[gold], reader_p[~gold]), 3)}


def report(result: dict[str, Any]) -> str:
    c, t = result["cost"], result["teacher"]
    lines = [SECTION, "", f"{date.today()}, `.venv/bin/python -m bench.judge`: "
             f"{result['questions']} held-out STARD questions (never seen by the reader "
             f"{result['reader']}), each asked of its gold half (answerable) and of the other "
             "half (no answer); the judge (bench/llm_judge.py, Qwen2.5-Coder-1.5B Q4_K_M "
             "in-process, one reply token, P(yes) from its log-probabilities) reads the top "
             f"{JUDGE_TOP} of the fused order, each cut to {c['budget_chars']} characters.", "",
             "Verdict (best of the top 3; floor cross-validated for ≤ 5 % false abstentions):",
             "", "| signal | no-answer abstained | false abstentions | AUC | questions |",
             "|---|---:|---:|---:|---:|"]
    for name, m in result["verdict"].items():
        lines.append(f"| {name} | {m['no_answer_abstained']:.3f} | "
                     f"{m['false_abstentions']:.3f} | {m['auc']:.3f} | {m['questions']} |")
    lines += ["", "Reranking the top 3 of the answerable side:", "",
              "| order | recall@1 | recall@5 | mrr |", "|---|---:|---:|---:|"]
    for name, m in result["rerank"].items():
        lines.append(f"| {name} | {m['recall@1']:.3f} | {m['recall@5']:.3f} | {m['mrr']:.3f} |")
    lines += ["", f"Cost ({c['pairs_timed']} pairs timed, nice 10, 1-minute load average "
              f"{c['load_average_1min']} on 2 cores): {c['seconds_per_pair_p50']} s per pair "
              f"(p50; mean {c['seconds_per_pair_mean']}), {c['seconds_per_search_p50']} s per "
              f"search of 3, {c['prompt_tokens_per_pair']} prompt tokens per pair (llama.cpp "
              f"reuses the cached system prompt and question); {c['pairs_per_hour']} pairs "
              "per hour in the background; "
              f"{c['unknown']} unknown judgements.", "",
              f"Teacher ({t['pairs']} distinct pairs, {t['gold']} gold): the judge's yes agrees "
              f"with the gold label on {t['judge_accuracy']:.1%} (yes precision "
              f"{t['judge_yes_precision']}, recall {t['judge_yes_recall']}), AUC "
              f"{t['judge_auc']:.3f}; the shipped reader on the same pairs: accuracy at 0.5 "
              f"{t['reader_accuracy']:.1%}, AUC {t['reader_auc']:.3f}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
