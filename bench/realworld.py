"""Real-world retrieval: STARD's public questions over 1,424 Chinese laws (issue #24).

    .venv/bin/python -m bench.realworld [--laws DIR] [--questions FILE] [--gold-files-only]
        [--data-dir DIR] [--limit N] [--skip-ingest] [--rules] [--tune FOLDS] [--label L]
        [--before LABEL] [--report-only] [--out FILE] [--reader] [--heldout FILE]
        [--no-baselines]

Ingests the laws with `kbflow ingest --json` in a subprocess (wall time, stage seconds, chunks,
failures, peak RSS), then asks every question of one warm Searcher at k=100 and scores what
`kbflow search` returns (final), each retriever `kbflow eval` compares (BM25, dense, graph alone;
plain RRF of BM25 and dense), and two baselines a user would try first over whole articles:
jieba BM25 and bge-small-zh cosine. A gold article is answered by a hit whose text contains its
phrase, both NFKC-normalised without whitespace: the dataset's rule (shared/realworld/README.md),
which is also `kbflow eval`'s text expectation, so its `score_case` scores every ranking here.

kbflow's rankings are taken with `SearchOptions(signal_depth=0)`: without the per-result
confidence signals, which order nothing and cost most of a deep search; the first questions are
then timed as `kbflow search` serves them (signals on the top 10), and their rankings compared.
`--rules` also scores final search with each of its rules switched off; `--tune 5` also scores
final search and the dense path with the query adapter of `kbflow tune`, each question asked with
the adapter fitted on the other four folds' questions (ingest/evaluate/tune.py).
`--reader` also scores final search with the reader model reranking, and `--heldout
DIR/heldout.json` asks only the questions that model never saw in training.
`--gold-files-only` ingests only the law files holding a gold article: the whole folder takes
hours to embed on a busy 2-core machine.

Writes bench/realworld_results/<label>.json and prints a Markdown table; a run over every question
(no --limit) also replaces the "Real-world retrieval" section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import Any

import jieba
import numpy as np

from bench import write_section
from bench.latency import percentile
from ingest.config import Settings
from ingest.embed.encoders import open_encoder
from ingest.evaluate import (
    EvalCase,
    Expectation,
    Retrieved,
    hits_of,
    retriever_fns,
    score_case,
    searcher_fn,
)
from ingest.evaluate.tune import cross_fitted, examples
from ingest.search import Searcher, SearchOptions

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared" / "realworld"
SECTION = "## Real-world retrieval (STARD public split)"
DEPTH = 100
CUTOFFS = (5, 10, 20, 100)
MODES = ("final", "hybrid", "bm25", "dense", "graph")  # kbflow's retrievers (ingest.search)
LATENCY_K, LATENCY_QUESTIONS = 10, 50  # what a caller usually asks for, timed apart
ARTICLE = re.compile(r"第[零〇一二两三四五六七八九十百千\d]+条(?:之[一二三四五六七八九十]+)?")
ASKED_K10 = "final@k10"  # final as a caller asking for 10 gets it: fewer candidates per path
SERVED = "served"  # final as `kbflow search` serves it (signals included): timed, not scored
# final search's rules (ingest.search.SearchOptions), each switched off alone with --rules
RULES = {"final-typos": "typo_correction", "final-synonyms": "synonyms",
         "final-language": "language_weights", "final-exact": "exact_first",
         "final-graph": "graph", "final-sentences": "sentences",
         "final-crosslingual": "crosslingual"}
# final search and the dense path with `kbflow tune`'s query adapter, cross-validated (--tune)
TUNED = {"final+adapter": "final", "dense+adapter": "dense"}
READER = "final+reader"  # final with the reader model reranking its top N (--reader)
RECORD = "realworld-ingest.json"  # the ingest's figures, kept in the data dir for --skip-ingest


@dataclass
class Article:
    """One article of a law file, in the shape `kbflow eval` scores (ingest.evaluate.Retrieved)."""

    chunk_id: str  # file#n, the dataset's corpus_id
    doc_id: str
    version_id: str
    clause_no: str | None
    text: str


def normalise(text: str) -> str:
    """The dataset's matching form, as `kbflow eval` compares a text expectation."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def split_articles(file: str, markdown: str) -> list[Article]:
    """A line starting with 第…条 and the lines after it, up to the next article or heading:
    the dataset's articles, numbered from 0 in file order as its corpus_id counts them."""
    found: list[tuple[str, list[str]]] = []  # (article number, its lines)
    lines: list[str] | None = None
    for raw in markdown.splitlines():
        line = raw.strip()
        number = ARTICLE.match(line)
        if number:
            lines = [line]
            found.append((number.group(0), lines))
        elif line.startswith("#"):
            lines = None
        elif lines is not None and line:
            lines.append(line)
    return [Article(f"{file}#{i}", file, "1", number, "\n".join(body))
            for i, (number, body) in enumerate(found)]


def load_articles(laws: Path) -> list[Article]:
    return [a for path in sorted(laws.rglob("*.md"))
            for a in split_articles(path.relative_to(laws).as_posix(),
                                    path.read_text(encoding="utf-8"))]


def load_cases(questions: Path, limit: int | None) -> list[EvalCase]:
    """STARD questions as `kbflow eval` cases: each gold article is a text expectation."""
    cases = []
    for line in questions.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            cases.append(EvalCase(id=str(row["id"]), question=row["question"],
                                  expected=[Expectation(text=g["phrase"]) for g in row["gold"]]))
    return cases[:limit]


def score_question(case: EvalCase, hits: Sequence[Retrieved]) -> dict[str, float]:
    """Recall@K per cut-off, Hit@5 and the reciprocal rank of the first answer in the top 100."""
    scores = {f"recall@{k}": score_case(case, hits, k).recall for k in CUTOFFS}
    scores["hit@5"] = score_case(case, hits, 5).hit
    scores["mrr"] = score_case(case, hits, DEPTH).reciprocal_rank
    return scores


def macro(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """Each metric's mean over questions (every question weighs the same, whatever its golds)."""
    return {name: round(sum(r[name] for r in rows) / len(rows), 4) for name in rows[0]}


def words(tokenizer: jieba.Tokenizer, text: str) -> list[str]:
    return [t for t in tokenizer.lcut(text) if any(ch.isalnum() for ch in t)]


def top(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k best scores, best first (ties by index)."""
    k = min(k, len(scores))
    best = np.argpartition(-scores, k - 1)[:k]
    return sorted(best.tolist(), key=lambda i: (-scores[i], i))


class ArticleBM25:
    """Okapi BM25 (k1 1.5, b 0.75, idf ln(1 + (N - df + 0.5) / (df + 0.5))) over plain jieba
    words, punctuation dropped: what a user writes first. Its own jieba Tokenizer, so the words
    kbflow adds to jieba's default one (its glossary) do not reach the baseline."""

    def __init__(self, texts: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self._tokenizer = jieba.Tokenizer()
        postings: dict[str, dict[int, int]] = {}
        lengths = np.zeros(len(texts))
        for i, text in enumerate(texts):
            tokens = words(self._tokenizer, text)
            lengths[i] = len(tokens)
            for token, count in Counter(tokens).items():
                postings.setdefault(token, {})[i] = count
        norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1.0))
        self._n = len(texts)
        # Per term, the articles holding it and each one's whole BM25 term score.
        self._index: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for token, docs in postings.items():
            ids = np.fromiter(docs, dtype=np.int64, count=len(docs))
            tf = np.fromiter(docs.values(), dtype=np.float64, count=len(docs))
            idf = math.log(1 + (self._n - len(docs) + 0.5) / (len(docs) + 0.5))
            self._index[token] = ids, idf * tf * (k1 + 1) / (tf + norm[ids])

    def search(self, query: str, k: int) -> list[int]:
        scores = np.zeros(self._n)
        for token in words(self._tokenizer, query):
            if token in self._index:
                ids, weights = self._index[token]
                scores[ids] += weights
        return [i for i in top(scores, k) if scores[i] > 0]


class ArticleDense:
    """bge-small-zh cosine over whole articles (truncated to the model's input), with kbflow's
    own encoder and its query instruction; the vectors are kept in the data dir for reruns."""

    def __init__(self, texts: Sequence[str], settings: Settings) -> None:
        self._encoder = open_encoder(settings.embedding_model)
        digest = sha256("\n\0".join([settings.embedding_model, *texts]).encode()).hexdigest()
        saved = settings.data_dir / f"realworld-articles-{digest[:16]}.npy"
        if saved.exists():
            self._matrix = np.load(saved)
            return
        parts, step, started = [], 2048, time.perf_counter()
        for start in range(0, len(texts), step):
            parts.append(self._encoder.encode_passages(texts[start:start + step])[0])
            log(f"baseline vectors {start + len(parts[-1])}/{len(texts)} "
                f"({time.perf_counter() - started:.0f} s)")
        self._matrix = np.concatenate(parts).astype(np.float32)
        np.save(saved, self._matrix)

    def search(self, query: str, k: int) -> list[int]:
        vector = self._encoder.encode([query], query=True)[0].astype(np.float32)
        return top(self._matrix @ vector, k)


def log(message: str) -> None:
    print(f"{datetime.now(UTC):%H:%M:%S} {message}", file=sys.stderr, flush=True)


def ingest(laws: Path, data: Path) -> dict[str, Any]:
    """`kbflow ingest --json` in its own process: its summary, wall time and peak RSS (wait4
    returns the child's rusage: the largest resident set in its process tree, parse workers
    included)."""
    if data.exists() and any(data.iterdir()):
        raise SystemExit(f"{data} is not empty: pass --skip-ingest to reuse it, or remove it")
    data.mkdir(parents=True, exist_ok=True)
    return run_ingest(laws, data, RECORD)


def run_ingest(laws: Path, data: Path, record_name: str) -> dict[str, Any]:
    """`kbflow ingest --json` of `laws` into `data` as it is (cold or not), its record written
    to `data / record_name`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "KBFLOW_"))}
    command = [sys.executable, "-m", "flows.cli", "--data-dir", str(data), "ingest", str(laws),
               "--json"]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with (data / "realworld-ingest.out").open("w+") as out, \
            (data / "realworld-ingest.err").open("w") as err:
        process = subprocess.Popen(command, cwd=REPO, env=env | {"HF_HUB_OFFLINE": "1"},
                                   stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"kbflow ingest failed: see {data / 'realworld-ingest.err'}")
        out.seek(0)
        summary = json.loads(out.read())
    record = {"command": " ".join(command[1:]), "wall_seconds": round(wall, 1),
              "peak_rss_mib": round(usage.ru_maxrss / 1024),  # Linux reports KiB
              "load_before": load_before, "load_after": os.getloadavg()[0], "summary": summary}
    (data / record_name).write_text(json.dumps(record, ensure_ascii=False, indent=1))
    return record


def indexed_texts(settings: Settings) -> list[str]:
    """Every chunk text the index serves, parents included (BM25 may return them)."""
    from ingest.manifest import ManifestStore

    manifest = ManifestStore(settings.manifest)
    try:
        return [c.text for r in manifest.documents()
                for c in manifest.version_chunks(r.doc_id, r.version_id)]
    finally:
        manifest.close()


def ingest_figures(record: dict[str, Any]) -> dict[str, Any]:
    summary = record["summary"]
    return {"wall_seconds": record["wall_seconds"], "peak_rss_mib": record["peak_rss_mib"],
            "load_before": record["load_before"], "load_after": record["load_after"],
            "files": summary["files"], "documents": summary["documents"],
            "chunks_added": summary["chunks"]["added"], "embedded": summary["embedded"],
            "triples": summary["triples"], "stage_seconds": summary["seconds"],
            "kbflow_total_seconds": summary["total_seconds"],
            "failures": dict(Counter(f"{f['stage']}/{f['kind']}" for f in summary["failures"]))}


def ask_kbflow(cases: Sequence[EvalCase], settings: Settings, rules: bool = False,
               reader: bool = False) -> tuple[dict[str, list[dict[str, float]]], dict[str, Any]]:
    """Per retriever (and, with `rules`, final with each rule off), each question's scores;
    then the latency of kbflow's final search as it is served (confidence signals on its top
    results) on the first questions. One warm Searcher for all, as `kbflow serve` keeps one.
    With `reader`, final is also scored with the reader model reranking (final+reader) and
    final itself without it, whatever KBFLOW_RERANK says."""
    ranked: dict[str, list[str]] = {}  # final's chunk ids for the timed questions
    timed = cases[:LATENCY_QUESTIONS]
    short: list[str] = []  # questions whose final search returned fewer than 100 hits
    # the rankings, without the confidence signals
    ranking = SearchOptions(signal_depth=0, rerank=False if reader else None)
    asked_for = {mode: ranking for mode in MODES} | (
        {READER: SearchOptions(signal_depth=0, rerank=True)} if reader else {}) | {
        name: SearchOptions(signal_depth=0, **{rule: False}) for name, rule in RULES.items()
        if rules} | {SERVED: SearchOptions()}
    per: dict[str, list[dict[str, float]]] = {
        name: [] for name in [*asked_for, ASKED_K10] if name != SERVED}
    seconds = {name: 0.0 for name in asked_for if name != SERVED}
    with retriever_fns(settings, modes=asked_for) as fns:
        started = time.perf_counter()
        for n, case in enumerate(cases, start=1):
            for mode, fn in fns.items():
                if mode == SERVED:
                    continue
                before = time.perf_counter()
                hits = hits_of(fn(case.question, None, None, None, DEPTH))
                seconds[mode] += time.perf_counter() - before
                per[mode].append(score_question(case, hits))
                if mode == "final" and len(hits) < DEPTH:
                    short.append(case.id)
                if mode == "final" and n <= len(timed):
                    ranked[case.id] = [h.chunk_id for h in hits]
            asked = hits_of(fns["final"](case.question, None, None, None, LATENCY_K))
            per[ASKED_K10].append({name: value for name, value in
                                   score_question(case, asked).items()
                                   if name not in ("recall@20", "recall@100")})
            if n % 50 == 0 or n == len(cases):
                log(f"kbflow: {n}/{len(cases)} questions, "
                    f"{time.perf_counter() - started:.0f} s")
        latency: dict[str, Any] = {"mode_seconds": {m: round(s, 1) for m, s in seconds.items()},
                                   "final_short_of_k": short}
        # At k=100 the signals must change nothing; at k=10 the candidate depth (4k per path,
        # at least 50)
        # makes a search rank from fewer candidates.
        for k in (DEPTH, LATENCY_K):
            took, differ = [], 0
            for case in timed:
                before = time.perf_counter()
                hits = hits_of(fns[SERVED](case.question, None, None, None, k))
                took.append(time.perf_counter() - before)
                differ += [h.chunk_id for h in hits] != ranked[case.id][:k]
            latency[f"k{k}"] = {"seconds": took, "top_differs_from_k100": differ}
            log(f"latency at k={k}: {ms(took)}")
    return per, latency


def ask_tuned(cases: Sequence[EvalCase], settings: Settings, folds: int
              ) -> dict[str, list[dict[str, float]]]:
    """Final search and the dense path with the query adapter `kbflow tune` fits, cross-
    validated: each question asked with the adapter fitted on the other folds' questions."""
    data = examples(settings, cases)
    per: dict[str, list[dict[str, float]]] = {name: [{}] * len(cases) for name in TUNED}
    ranking = SearchOptions(signal_depth=0)
    with Searcher(settings) as searcher:
        asked = set()
        for part, adapter in cross_fitted(data, folds):
            log(f"adapter fitted without {len(part)} questions; asking them …")
            searcher.adapter = adapter
            for name, mode in TUNED.items():
                fn = searcher_fn(searcher, settings, mode, ranking)
                for i in part:
                    per[name][i] = score_question(cases[i], hits_of(
                        fn(cases[i].question, None, None, None, DEPTH)))
            asked |= set(part)
        searcher.adapter = None  # a question without an answer in the index teaches nothing
        for name, mode in TUNED.items():
            fn = searcher_fn(searcher, settings, mode, ranking)
            for i in sorted(set(range(len(cases))) - asked):
                per[name][i] = score_question(cases[i], hits_of(
                    fn(cases[i].question, None, None, None, DEPTH)))
    return per


def ask_baselines(cases: Sequence[EvalCase], articles: Sequence[Article], settings: Settings
                  ) -> dict[str, list[dict[str, float]]]:
    texts = [a.text for a in articles]
    log("baseline BM25 index …")
    bm25 = ArticleBM25(texts)
    log("baseline dense vectors …")
    dense = ArticleDense(texts, settings)
    per = {}
    for name, search in (("jieba BM25 (articles)", bm25.search),
                         ("bge-small-zh cosine (articles)", dense.search)):
        per[name] = [score_question(case, [articles[i] for i in search(case.question, DEPTH)])
                     for case in cases]
        log(f"{name}: done")
    return per


ROWS = {"final": "kbflow final (`kbflow search`)",
        "final+adapter": "kbflow final with `kbflow tune`'s query adapter (cross-validated)",
        "dense+adapter": "kbflow dense path with the query adapter (cross-validated)",
        READER: "kbflow final with the reader model reranking (`--reader`)",
        ASKED_K10: "kbflow final asked for k=10 (MRR@10)",
        "hybrid": "kbflow hybrid RRF (BM25 + dense, no rules)",
        "bm25": "kbflow BM25 path alone", "dense": "kbflow dense path alone",
        "graph": "kbflow graph path alone",
        "final-typos": "final without typo correction",
        "final-synonyms": "final without synonym expansion",
        "final-language": "final without language weights",
        "final-exact": "final without exact identifiers first",
        "final-graph": "final without the graph list",
        "final-sentences": "final without the best-sentence list",
        "final-crosslingual": "final without the cross-lingual lists"}


def table(metrics: dict[str, dict[str, float]]) -> list[str]:
    names = [f"Recall@{k}" for k in CUTOFFS] + ["Hit@5", "MRR"]
    lines = ["| retriever | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for system, m in metrics.items():
        lines.append(f"| {ROWS.get(system, system)} | "
                     + " | ".join(f"{m[key]:.3f}" if key in m else "—" for key in
                                  [f"recall@{k}" for k in CUTOFFS] + ["hit@5", "mrr"]) + " |")
    return lines


def ms(values: Sequence[float]) -> str:
    if not values:
        return "no samples"
    return (f"p50 {percentile(list(values), 0.5) * 1000:.0f} ms, p95 "
            f"{percentile(list(values), 0.95) * 1000:.0f} ms (n={len(values)})")


def report(result: dict[str, Any], before: dict[str, Any] | None = None) -> str:
    """The section for bench/RESULTS.md; `before`, an earlier run's result, adds its rows."""
    ing, lat, corpus = result["ingest"], result["latency"], result["corpus"]
    timed = lat[f"k{DEPTH}"]["seconds"]
    scope = (f"the {corpus['files']} files of `{corpus['laws']}` that hold a gold article "
             "(`--gold-files-only`; fewer distractors than the whole folder, so every figure is "
             "higher than it would be there)" if corpus.get("gold_files_only")
             else f"`{corpus['laws']}`, {corpus['files']} law files")
    stages = ", ".join(f"{k} {v:.0f}" for k, v in ing["stage_seconds"].items())
    states = ", ".join(f"{n} {s}" for s, n in ing["documents"].items())
    failures = ", ".join(f"{n} {kind}" for kind, n in ing["failures"].items()) or "none"
    load = result["load"]
    return "\n".join([
        SECTION, "",
        f"Generated by `python -m bench.realworld` (bench/realworld.py) on {result['finished']} "
        f"UTC, {os.cpu_count()} cores, embedding model `{result['model']}`, embedded stores. "
        f"Corpus: {scope}, {corpus['articles']:,} articles; {corpus['questions']:,} STARD "
        f"public questions with {corpus['golds']:,} gold articles, of which "
        f"{corpus['gold_in_corpus']:.2%} have their phrase in an article of the corpus (the "
        f"baselines' ceiling) and {corpus['gold_in_chunks']:.2%} inside one chunk of kbflow's "
        "index (kbflow's: a long article is split). A hit answers a gold article when it "
        "contains the article's phrase (NFKC, whitespace removed); Recall@K is per gold "
        "article, averaged per question then over questions; Hit@5 = a gold article in the top "
        "5; MRR = 1 / rank of the first answer in the top 100. For scale, STARD's paper: best "
        "published method Recall@100 = 0.907, on its own (non-public) corpus of 55,348 "
        "articles.", "",
        *table(result["metrics"]), "",
        *([f"Before (run `{before['label']}`, {before['finished']} UTC, same questions and "
           "corpus):", "", *table({s: m for s, m in before["metrics"].items() if s in ROWS}), ""]
          if before else []),
        "- kbflow rows: one warm `Searcher` (as `kbflow serve` keeps it) at k=100; the paths "
        "alone and plain RRF are the retrievers `kbflow eval` compares (`mode=` of the "
        "Searcher). Baselines: over the same articles split from the law files (a line "
        "starting 第…条 up to the next article or heading), top 100 by Okapi BM25 (k1 1.5, "
        "b 0.75) on plain jieba words, or by cosine of kbflow's own bge-small-zh vectors "
        "(query instruction, whole article truncated to 512 tokens). \"Asked for k=10\": "
        "the final search a caller asking for 10 results gets (each path ranks 4k candidates, at "
        "least 50, "
        "so its top 10 can differ from the top 10 of a k=100 search).",
        f"- Ingest (`kbflow ingest --json`, one process, embedded stores, cold): "
        f"{ing['wall_seconds']:,.0f} s wall, peak RSS {ing['peak_rss_mib']:,} MiB (largest "
        f"process of its tree); {ing['files']} files, versions {states}; "
        f"{ing['chunks_added']:,} chunks (parents included), {ing['embedded']:,} embedded, "
        f"{ing['triples']:,} triples; failures: {failures}. Stage seconds: {stages}. Load "
        f"average (1 min) {ing['load_before']:.1f} before, {ing['load_after']:.1f} after.",
        f"- Search latency of kbflow final at this size (warm Searcher, in process, the first "
        f"{len(timed)} questions, every result signal computed): k=100 {ms(timed)}; "
        f"k={LATENCY_K} {ms(lat[f'k{LATENCY_K}']['seconds'])}. The scored rankings were taken "
        "without the sentence and term-cover signals (they order nothing): on these questions "
        f"they differ from the full k=100 search in {lat[f'k{DEPTH}']['top_differs_from_k100']}"
        f"; a k={LATENCY_K} search's top {LATENCY_K} differs from the k=100 search's in "
        f"{lat[f'k{LATENCY_K}']['top_differs_from_k100']} (each path's candidate depth is 4k, "
        "at least 50). "
        f"Final searches returning fewer than 100 hits: {len(lat['final_short_of_k'])}. "
        "Seconds per retriever over all questions, without those signals: "
        + ", ".join(f"{m} {v:,.0f}" for m, v in lat["mode_seconds"].items()) + ".",
        f"- Load average (1 min) {load[0]:.1f} when the questions started, {load[1]:.1f} at the "
        "end: on 2 cores anything above 2 means other work shared the machine; the scores do "
        "not depend on it, the seconds do.",
        "- Rerun: `.venv/bin/python -m bench.realworld [--gold-files-only] --label L` (ingests "
        "into `~/.cache/kbflow/realworld/data`, or `gold-data`, which must be empty; "
        "`--skip-ingest` reuses it and its recorded ingest figures; `--limit N` asks the first "
        "N questions and leaves this file alone; `--report-only` rewrites this section from the "
        f"JSON). Numbers: `bench/realworld_results/{result['label']}.json`.", ""])


def gold_files(laws: Path, questions: Path, target: Path) -> Path:
    """A copy of the law files that hold a gold article, under their own names: every answer,
    fewer distractors, and an ingest a busy 2-core machine finishes in half an hour (the whole
    folder takes hours there)."""
    wanted = {g["file"] for line in questions.read_text(encoding="utf-8").splitlines()
              if line.strip() for g in json.loads(line)["gold"]}
    for name in sorted(wanted):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(laws / name, target / name)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--laws", type=Path, default=SHARED / "laws")
    parser.add_argument("--questions", type=Path, default=SHARED / "stard_public.jsonl")
    parser.add_argument("--gold-files-only", action="store_true",
                        help="ingest and search only the law files holding a gold article")
    parser.add_argument("--data-dir", type=Path, help="default ~/.cache/kbflow/realworld/data "
                        "(gold-data with --gold-files-only)")
    parser.add_argument("--limit", type=int, help="ask only the first N questions")
    parser.add_argument("--rules", action="store_true",
                        help="also score final search with each of its rules switched off")
    parser.add_argument("--tune", type=int, metavar="FOLDS", default=0,
                        help="also score final search and the dense path with kbflow tune's "
                        "query adapter, cross-validated over FOLDS folds of the questions")
    parser.add_argument("--reader", action="store_true",
                        help="also score final search with the reader model reranking "
                        "(KBFLOW_READER_DIR: which model), final itself without it")
    parser.add_argument("--no-baselines", action="store_true",
                        help="kbflow's rows only (the baselines embed every article once)")
    parser.add_argument("--heldout", type=Path, metavar="FILE",
                        help="ask only the questions whose ids a reader model's heldout.json "
                        "lists (the ones it never saw in training)")
    parser.add_argument("--skip-ingest", action="store_true",
                        help="reuse the data dir and the ingest figures recorded in it")
    parser.add_argument("--label", default=f"{datetime.now(UTC):%Y%m%dT%H%M}")
    parser.add_argument("--report-only", action="store_true",
                        help="only rewrite --out from bench/realworld_results/<label>.json")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--before", metavar="LABEL",
                        help="also show kbflow's rows of this earlier run")
    args = parser.parse_args()
    saved = HERE / "realworld_results" / f"{args.label}.json"
    before = (json.loads((saved.parent / f"{args.before}.json").read_text(encoding="utf-8"))
              if args.before else None)
    if args.report_only:
        write_section(args.out, SECTION,
                      report(json.loads(saved.read_text(encoding="utf-8")), before))
        return
    data = (args.data_dir or Path.home() / ".cache" / "kbflow" / "realworld"
            / ("gold-data" if args.gold_files_only else "data")).resolve()
    laws = args.laws.resolve()
    if args.gold_files_only:
        laws = gold_files(laws, args.questions, data.with_name(f"{data.name}-laws"))
    if args.skip_ingest:
        record = json.loads((data / RECORD).read_text(encoding="utf-8"))
    else:
        log(f"ingesting {laws} into {data} …")
        record = ingest(laws, data)
    settings = Settings(data_dir=data)
    articles = load_articles(laws)
    cases = load_cases(args.questions, None)
    if args.heldout:
        held = {str(i) for i in json.loads(args.heldout.read_text(encoding="utf-8"))["ids"]}
        cases = [c for c in cases if c.id in held]
    cases = cases[:args.limit]
    golds = [normalise(e.text or "") for c in cases for e in c.expected]

    def inside_one(texts: Sequence[str]) -> float:
        """Share of gold phrases inside one of the texts (a phrase has no whitespace left, so it
        cannot match across the newline joining two texts)."""
        joined = "\n".join(normalise(t) for t in texts)
        return sum(g in joined for g in golds) / len(golds)

    load_start = os.getloadavg()[0]
    per = ({} if args.no_baselines  # first: its vectors are kept for a rerun
           else ask_baselines(cases, articles, settings))
    kbflow, latency = ask_kbflow(cases, settings, args.rules, args.reader)
    per = kbflow | (ask_tuned(cases, settings, args.tune) if args.tune else {}) | per
    result = {
        "label": args.label, "finished": f"{datetime.now(UTC):%Y-%m-%d %H:%M}",
        "model": settings.embedding_model, "load": [load_start, os.getloadavg()[0]],
        "corpus": {"laws": str(args.laws), "gold_files_only": args.gold_files_only,
                   "files": len({a.doc_id for a in articles}), "articles": len(articles),
                   "questions": len(cases), "golds": len(golds),
                   "gold_in_corpus": inside_one([a.text for a in articles]),
                   "gold_in_chunks": inside_one(indexed_texts(settings))},
        "ingest": ingest_figures(record), "latency": latency,
        "metrics": {system: macro(rows) for system, rows in per.items()},
        "per_question_rr": {system: [round(r["mrr"], 4) for r in rows]
                            for system, rows in per.items()},
        "question_ids": [c.id for c in cases],
    }
    saved.parent.mkdir(exist_ok=True)
    saved.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    text = report(result, before)
    if args.limit is None and args.heldout is None:  # a subset does not replace the section
        write_section(args.out, SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
