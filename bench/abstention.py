"""Abstention on real no-answer questions (issue #24, item 3), fitted with cross-validation.

    .venv/bin/python -m bench.abstention [--stard DATA_DIR] [--eval CASES=DATA_DIR ...]

A no-answer question is one whose answer is not in the index. Real ones are made from STARD:
the law files holding a gold article (the `--gold-files-only` index of bench/realworld.py) are
split in two halves by a hash of their path; each half is deleted (`kbflow delete`, tombstones)
from its own copy of the index. A question whose gold articles all lie in one half is answerable
on the copy keeping that half and unanswerable on the other, which still holds a hundred laws on
near topics: the same real question appears once with each label, so nothing in its wording can
tell them apart. Questions with gold articles in both halves are left out.

`kbflow eval`'s own gold sets join with `--eval cases.jsonl=DATA_DIR` (their no-answer cases).

Collecting asks every question of each index through a warm Searcher (k=10, as served) and keeps
each search's result signals in bench/realworld_results/abstention-signals.json.gz; with neither
option the kept signals are reused. Then `kbflow search`'s rule (ingest/search/confidence.py)
is scored per source beside logistic models over the same signals, fitted with 5-fold
cross-validation (grouped by question, each floor chosen on the training folds for at most 5 %
false abstentions), and each signal's AUC; the section "Abstention on real no-answer
questions" of bench/RESULTS.md is rewritten.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import zlib
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from bench import write_section
from bench.realworld import HERE, REPO, SHARED, load_cases, log
from ingest.config import Settings
from ingest.evaluate import EvalCase
from ingest.evaluate import load_cases as load_eval_cases
from ingest.search import Searcher
from ingest.search.confidence import Signals, abstains

SIGNALS = HERE / "realworld_results" / "abstention-signals.json.gz"
SECTION = "## Abstention on real no-answer questions"
FEATURES = ("sentence", "cosine", "margin", "term cover", "rare cover", "both paths", "exact",
            "amount")
FOLDS, MAX_FALSE, K = 5, 0.05, 10


def answer_features(signals: Sequence[Signals], top: int = 5) -> list[float]:
    """What a whole search says about whether it answers (its top results' signals, best
    first): the best sentence cosine, the first result's chunk cosine and how far the best
    stands above the rest (a real answer stands out; a near topic gives a flat list), the
    best (rarity-weighted) share of the query's terms, path agreement, identifiers and
    amounts."""
    if not signals:
        return [0.0] * 8
    head = list(signals[:top])
    cosines = [s.cosine for s in signals]
    rest = cosines[top:] or cosines[1:] or cosines
    return [max(s.sentence for s in head), cosines[0], max(cosines[:top]) - sum(rest) / len(rest),
            max(s.term_cover for s in head), max(s.rare_cover for s in head),
            sum(s.both_paths for s in head) / len(head), float(any(s.exact for s in head)),
            float(any(s.amount for s in head))]


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray, steps: int = 3000,
                 l2: float = 0.01) -> np.ndarray:
    """Weighted logistic regression by gradient descent (the features are cosines and shares,
    all on one scale); returns [bias, *weights]."""
    design = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(design.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-design @ w))
        w -= 0.5 * (design.T @ (weight * (p - y)) / weight.sum() + l2 * np.r_[0, w[1:]])
    return w


def half(path: str) -> int:
    """Which half a law file falls in: stable across runs and machines."""
    return zlib.crc32(path.encode()) % 2


def fold_copies(data: Path) -> dict[int, Path]:
    """Per half, a copy of the index with that half's laws deleted (made once)."""
    copies = {}
    for removed in (0, 1):
        copy = data.with_name(f"{data.name}-without-{removed}")
        if not (copy / "manifest.db").exists():
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(data, copy)
            cli = [sys.executable, "-m", "flows.cli", "--data-dir", str(copy)]
            status = json.loads(subprocess.run([*cli, "status", "--json"], cwd=REPO, check=True,
                                               capture_output=True, text=True).stdout)
            gone = sorted({d["doc_id"] for d in status["documents"]
                           if half(_relative(d)) == removed})
            log(f"deleting {len(gone)} laws from {copy.name} …")
            subprocess.run([*cli, "delete", *gone], cwd=REPO, check=True, capture_output=True)
        copies[removed] = copy
    return copies


def _relative(document: dict[str, Any]) -> str:
    return str(Path(document["source_path"]).relative_to(document["source_root"]))


def ask(settings: Settings, cases: Sequence[tuple[EvalCase, bool]]) -> list[dict[str, Any]]:
    """Each case's result signals as `kbflow search` computes them."""
    rows = []
    with Searcher(settings) as searcher:
        for case, no_answer in cases:
            response = searcher.search(
                case.question, tenant_id=case.tenant or settings.default_tenant,
                groups=case.groups or settings.default_acl, as_of=case.as_of or date.today(),
                k=K)
            rows.append({"id": case.id, "no_answer": no_answer, "signals": [
                {k: round(v, 4) if isinstance(v, float) else v
                 for k, v in r.signals.model_dump().items()}
                for r in response.results if r.signals is not None]})
    return rows


def collect(data: Path | None, questions: Path, evals: list[str]
            ) -> dict[str, list[dict[str, Any]]]:
    """Ask STARD's questions of the two halved copies of `data` (when given) and each
    `cases=data_dir` gold set; what was collected before for other sources is kept."""
    collected: dict[str, list[dict[str, Any]]] = (
        json.loads(gzip.decompress(SIGNALS.read_bytes())) if SIGNALS.exists() else {})
    if data is not None:
        with questions.open(encoding="utf-8") as lines:
            golds = {str(row["id"]): {half(g["file"]) for g in row["gold"]}
                     for row in map(json.loads, filter(str.strip, lines))}
        one_half = [c for c in load_cases(questions, None) if len(golds[c.id]) == 1]
        collected["stard"] = []
        for removed, copy in fold_copies(data).items():
            log(f"STARD on the index without half {removed}: {len(one_half)} questions …")
            collected["stard"] += ask(Settings(data_dir=copy),
                                      [(c, removed in golds[c.id]) for c in one_half])
    for spec in evals:
        cases_file, data_dir = spec.split("=", 1)
        log(f"{cases_file} on {data_dir} …")
        cases = load_eval_cases(Path(cases_file))
        collected[Path(cases_file).stem] = ask(Settings(data_dir=Path(data_dir)),
                                               [(c, c.no_answer) for c in cases])
    SIGNALS.parent.mkdir(exist_ok=True)
    SIGNALS.write_bytes(gzip.compress(json.dumps(collected, separators=(",", ":")).encode(),
                                      mtime=0))
    return collected


def rates(said: np.ndarray, no_answer: np.ndarray) -> tuple[float, float]:
    """(share of no-answer cases abstained on, share of answerable ones wrongly abstained on)."""
    return (float(said[no_answer].mean()) if no_answer.any() else 0.0,
            float(said[~no_answer].mean()) if (~no_answer).any() else 0.0)


def floor_for(p: np.ndarray, no_answer: np.ndarray, source: np.ndarray) -> float:
    """The highest answer-probability floor (abstain below it) wrongly abstaining on at most
    MAX_FALSE of the answerable cases of every source."""
    floor = 1.0
    for name in set(source):
        answerable = np.sort(p[~no_answer & (source == name)])
        allowed = int(MAX_FALSE * len(answerable))
        floor = min(floor, float(answerable[allowed]) if allowed < len(answerable) else 1.0)
    return floor


def cross_validated(x: np.ndarray, y: np.ndarray, source: np.ndarray, fold: np.ndarray
                    ) -> np.ndarray:
    """Each fold's abstentions by a model and floor fitted on the other folds, every source
    weighing the same (STARD's 2,028 searches would drown the gold sets' 200)."""
    balance = np.array([1.0 / (source == s).sum() for s in source])
    said = np.zeros(len(y), dtype=bool)
    for f in range(FOLDS):
        train = fold != f
        weights = fit_logistic(x[train], (~y[train]).astype(float), balance[train])
        p_train = _probability(weights, x[train])
        said[~train] = (_probability(weights, x[~train])
                        < floor_for(p_train, y[train], source[train]))
    return said


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """How often an answerable search's feature exceeds a no-answer one's (ties: half)."""
    above = (positive[:, None] > negative[None, :]).mean()
    return float(above + 0.5 * (positive[:, None] == negative[None, :]).mean())


def evaluate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    signals = [[Signals(**s) for s in r["signals"]] for r in rows]
    x = np.array([answer_features(s) for s in signals])
    y = np.array([r["no_answer"] for r in rows])
    source = np.array([r["source"] for r in rows])
    fold = np.array([zlib.crc32(f"{r['source']}:{r['id']}".encode()) % FOLDS for r in rows])
    said = {"rule": np.array([not s or abstains(s) for s in signals]),
            "fit: sentence, cosine, margin": cross_validated(x[:, :3], y, source, fold),
            "fit: all eight": cross_validated(x, y, source, fold)}
    result: dict[str, Any] = {"sources": {}}
    for name in sorted(set(source)):
        mine = source == name
        result["sources"][name] = {
            "answerable": int((~y[mine]).sum()), "no_answer": int(y[mine].sum()),
            "auc": {f: round(auc(x[mine & ~y, i], x[mine & y, i]), 3)
                    for i, f in enumerate(FEATURES)},
            "rates": {how: rates(s[mine], y[mine]) for how, s in said.items()}}
    return result


def report(result: dict[str, Any]) -> str:
    lines = [SECTION, "", f"Generated by `python -m bench.abstention` on {date.today()}. "
             "A no-answer question's answer is not in the index. STARD: each public question "
             "whose gold articles lie in one half of the 117 gold law files, asked of the "
             "index without that half (no answer; a hundred laws on near topics remain) and of "
             "the index without the other half (answerable): the same real question once with "
             "each label. Gold sets: their `no_answer` cases. Cells: no-answer abstained / "
             "answerable wrongly abstained. `rule`: what `kbflow search` does (no result "
             "carries the query's code or clause number and no sentence of the top 10 reaches "
             "ANSWERABLE_FROM); `fit`: a logistic model over the top results' signals, 5-fold "
             "cross-validated (grouped by question; floor for ≤ 5 % false abstentions in every "
             "source, fitted on the training folds).", "",
             "| source | answerable / no answer | " + " | ".join(
                 next(iter(result["sources"].values()))["rates"]) + " |",
             "|---" * (2 + len(next(iter(result["sources"].values()))["rates"])) + "|"]
    for name, row in result["sources"].items():
        lines.append(f"| {name} | {row['answerable']} / {row['no_answer']} | " + " | ".join(
            f"{a:.0%} / {f:.1%}" for a, f in row["rates"].values()) + " |")
    lines += ["", "Feature AUC (answerable above no-answer; 0.5 = no signal):", "",
              "| source | " + " | ".join(FEATURES) + " |", "|---" * (len(FEATURES) + 1) + "|"]
    for name, row in result["sources"].items():
        lines.append(f"| {name} | " + " | ".join(f"{v:.2f}" for v in row["auc"].values())
                     + " |")
    return "\n".join(lines) + "\n"


def _probability(weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.asarray(1 / (1 + np.exp(-(weights[0] + x @ weights[1:]))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stard", type=Path, metavar="DATA_DIR", help="collect STARD's "
                        "signals from this index (bench/realworld.py --gold-files-only's, "
                        "~/.cache/kbflow/realworld/gold-data)")
    parser.add_argument("--questions", type=Path, default=SHARED / "stard_public.jsonl")
    parser.add_argument("--eval", action="append", default=[], metavar="CASES=DATA_DIR")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    collected = (collect(args.stard and args.stard.resolve(), args.questions, args.eval)
                 if args.stard or args.eval else json.loads(gzip.decompress(SIGNALS.read_bytes())))
    rows = [r | {"source": name} for name, source_rows in collected.items() for r in source_rows]
    text = report(evaluate(rows))
    write_section(args.out, SECTION, text)
    print(text)


if __name__ == "__main__":
    main()
