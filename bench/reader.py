"""The reader on STARD questions it never saw (issue #45).

    .venv/bin/python -m bench.reader --model DIR [--heldout FILE] [--depth 20,30] [--out FILE]

Candidates: the articles of the law files holding a STARD gold article (the corpus of
`bench.realworld --gold-files-only`, 10,194 articles), ranked by a hybrid a user of kbflow's
fusion would get: reciprocal-rank fusion (k 60) of jieba BM25 and bge-small-zh cosine over
whole articles (bench/realworld.py's baselines). Questions: the fixed seeded 20 % of the public
split the reader was not trained on (heldout.json of the training run). For each question the
fused top N is rescored by the reader, either alone or fused again with the first order; Recall@5,
Recall@10, Recall@100 and MRR are compared with the fused order.

No-answer: STARD's construction of bench/abstention.py at article level. The gold files are split
in two halves by a hash of their path; a question whose gold articles all lie in one half is
asked of the articles of that half (answerable) and of the other (no answer: laws on near
topics). The signal is the reader's best probability in the top N (against the bi-encoder's best
cosine); the floor is fitted with 5-fold cross-validation grouped by question for at most 5 %
false abstentions on the training folds, and the share of no-answer questions abstained on the
held-out folds is reported.
"""

from __future__ import annotations

import argparse
import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from bench import write_section
from bench.abstention import half
from bench.realworld import (
    HERE,
    SHARED,
    Article,
    ArticleBM25,
    ArticleDense,
    load_articles,
    load_cases,
    log,
    macro,
    score_question,
)
from ingest.config import Settings
from ingest.evaluate import EvalCase
from ingest.rerank import Reader
from scripts.train_reader.data import law_titles

RRF_K, DEPTH, FOLDS, MAX_FALSE = 60, 100, 5, 0.05
SECTION = "## The reader on held-out STARD questions (bench/reader.py)"


def fuse(*orders: Sequence[int]) -> list[int]:
    scores: dict[int, float] = {}
    for order in orders:
        for rank, i in enumerate(order):
            scores[i] = scores.get(i, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores, key=lambda i: (-scores[i], i))


def floor_for(answerable: np.ndarray) -> float:
    """The highest floor leaving at most MAX_FALSE of answerable questions below it."""
    ordered = np.sort(answerable)
    return float(ordered[int(np.floor(MAX_FALSE * len(ordered)))]) if len(ordered) else 0.0


def abstention(rows: Sequence[tuple[str, bool, float]]) -> dict[str, float]:
    """rows: (question id, answerable, signal). Cross-validated share abstained."""
    fold = np.array([zlib.crc32(q.encode()) % FOLDS for q, _, _ in rows])
    answerable = np.array([a for _, a, _ in rows])
    signal = np.array([s for _, _, s in rows])
    abstained = np.zeros(len(rows), dtype=bool)
    for f in range(FOLDS):
        train = (fold != f) & answerable
        abstained[fold == f] = signal[fold == f] < floor_for(signal[train])
    return {"no_answer_abstained": round(float(abstained[~answerable].mean()), 3),
            "false_abstentions": round(float(abstained[answerable].mean()), 3),
            "questions": len(set(q for q, _, _ in rows)),
            "auc": round(auc(signal[answerable], signal[~answerable]), 3)}


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    if not len(positive) or not len(negative):
        return float("nan")
    return float((positive[:, None] > negative[None, :]).mean()
                  + 0.5 * (positive[:, None] == negative[None, :]).mean())


@dataclass
class HeldOutStard:
    """STARD's held-out questions and the articles of the gold law files, indexed by BM25 and
    bge cosine: the candidates bench.reader and bench.judge both rescore."""

    rows: list[dict[str, Any]]  # every public question (their gold files decide the corpus)
    cases: list[EvalCase]  # the held-out ones
    articles: list[Article]
    titles: dict[str, str]
    bm25: ArticleBM25
    dense: ArticleDense

    @classmethod
    def load(cls, heldout: Path, data_dir: Path) -> HeldOutStard:
        held = set(json.loads(heldout.read_text())["ids"])
        stard = SHARED / "stard_public.jsonl"
        rows = [json.loads(line) for line in stard.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        files = {g["file"] for r in rows for g in r["gold"]}
        cases = [c for c in load_cases(stard, None) if int(c.id) in held]
        articles = [a for a in load_articles(SHARED / "laws") if a.doc_id in files]
        log(f"{len(cases)} held-out questions, {len(articles)} articles; indexing …")
        texts = [a.text for a in articles]
        return cls(rows, cases, articles, law_titles(SHARED / "laws"), ArticleBM25(texts),
                    ArticleDense(texts, Settings(data_dir=data_dir)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="the reader's folder")
    parser.add_argument("--heldout", type=Path, help="heldout.json (default: the model's run)")
    parser.add_argument("--depth", default="20,30")
    parser.add_argument("--data-dir", type=Path, default=Path("data/reader"))
    parser.add_argument("--limit", type=int, help="only the first N held-out questions")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    stard = HeldOutStard.load(args.heldout or args.model / "heldout.json", args.data_dir)
    gold_files = {str(r["id"]): {g["file"] for g in r["gold"]} for r in stard.rows}
    cases = stard.cases[:args.limit]
    articles, titles, bm25, dense = stard.articles, stard.titles, stard.bm25, stard.dense
    reader = Reader(args.model)
    depths = [int(d) for d in args.depth.split(",")]
    per: dict[str, list[dict[str, float]]] = {"fused": []}
    signals: dict[str, list[tuple[str, bool, float]]] = {}
    pairs, seconds = 0, 0.0

    memo: dict[tuple[str, int], float] = {}  # (question, article): the reader's probability

    def score(question: str, ids: Sequence[int]) -> np.ndarray:
        nonlocal pairs, seconds
        new = [i for i in dict.fromkeys(ids) if (question, i) not in memo]
        if new:
            before = time.perf_counter()
            probs = reader.score(question, [(titles.get(articles[i].doc_id, ""),
                                             articles[i].text) for i in new])
            seconds += time.perf_counter() - before
            pairs += len(new)
            memo.update({(question, i): float(p) for i, p in zip(new, probs, strict=True)})
        return np.array([memo[question, i] for i in ids], dtype=np.float32)

    def ranked(ids: Sequence[int]) -> list[Article]:
        return [articles[i] for i in ids]

    for n, case in enumerate(cases, start=1):
        vector = dense._encoder.encode([case.question], query=True)[0].astype(np.float32)
        cosines = dense._matrix @ vector
        fused = fuse(bm25.search(case.question, DEPTH), dense.search(case.question, DEPTH))
        fused = fused[:DEPTH]
        per["fused"].append(score_question(case, ranked(fused)))
        deepest = max(depths)
        probs = score(case.question, fused[:deepest])
        for depth in depths:
            head = fused[:depth]
            by_reader = [head[i] for i in np.argsort(-probs[:depth], kind="stable")]
            per.setdefault(f"reader@{depth}", []).append(
                score_question(case, ranked(by_reader + fused[depth:])))
            per.setdefault(f"reader+fused@{depth}", []).append(
                score_question(case, ranked(fuse(by_reader, head) + fused[depth:])))
        golds = gold_files[case.id]
        sides = {half(f) for f in golds}
        if len(sides) == 1:
            (side,) = sides
            for answerable, keep in ((True, side), (False, 1 - side)):
                inside = [i for i in fused if half(articles[i].doc_id) == keep][:deepest]
                p = score(case.question, inside) if inside else np.zeros(1)
                best_cos = max((float(cosines[i]) for i in inside), default=0.0)
                signals.setdefault("reader best probability", []).append(
                    (case.id, answerable, float(p.max())))
                signals.setdefault("bi-encoder best cosine", []).append(
                    (case.id, answerable, best_cos))
        if n % 20 == 0:
            log(f"{n}/{len(cases)} questions, reader {1000 * seconds / max(pairs, 1):.1f} ms/pair")
    result = {"questions": len(cases), "articles": len(articles),
              "retrieval": {name: macro(rows) for name, rows in per.items()},
              "no_answer": {name: abstention(rows) for name, rows in signals.items()},
              "reader_ms_per_pair": round(1000 * seconds / max(pairs, 1), 1),
              "reader_card": reader.card}
    print(json.dumps(result, ensure_ascii=False, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    if args.limit is None:
        write_section(HERE / "RESULTS.md", SECTION, report(result, args.model))


def report(result: dict[str, Any], model: Path) -> str:
    names = ("recall@5", "recall@10", "recall@100", "mrr")
    card = result["reader_card"]
    lines = [SECTION, "", f"{date.today()}, `.venv/bin/python -m bench.reader --model {model}`: "
             f"{result['questions']} held-out STARD questions (seed {card['seed']}, never "
             f"trained on) over {result['articles']} articles of the gold law files; the "
             f"reader: {card['steps']} steps of {card['groups_per_step']} groups × "
             f"{card['group']} pairs, max_len {card['max_len']}, int8 "
             f"{card['model_bytes'] / 1e6:.1f} MB, {result['reader_ms_per_pair']} ms per pair "
             "on the loaded 2-core machine.", "",
             "| order | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for name, m in result["retrieval"].items():
        lines.append(f"| {name} | " + " | ".join(f"{m[k]:.3f}" for k in names) + " |")
    lines += ["", "No-answer (STARD's construction at article level, floor cross-validated for "
              "≤ 5 % false abstentions):", "",
              "| signal | no-answer abstained | false abstentions | AUC | questions |",
              "|---|---:|---:|---:|---:|"]
    for name, m in result["no_answer"].items():
        lines.append(f"| {name} | {m['no_answer_abstained']:.3f} | "
                     f"{m['false_abstentions']:.3f} | {m['auc']:.3f} | {m['questions']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
