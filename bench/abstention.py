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
each search's result signals in bench/realworld_results/abstention-signals.json; with neither
option the kept signals are reused. Then the abstention model (ingest/search/confidence.py: a
logistic model over what the top results share with the question) is fitted with 5-fold
cross-validation, grouped by question, its floor chosen on the training folds for at most 5 %
false abstentions; the held-out folds' rates are the figures reported, per source, beside the
current rule's.
"""

from __future__ import annotations

import argparse
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

from bench.realworld import HERE, REPO, SHARED, load_cases, log
from ingest.config import Settings
from ingest.evaluate import EvalCase
from ingest.evaluate import load_cases as load_eval_cases
from ingest.search import Searcher
from ingest.search.confidence import Signals, abstains, answer_features, fit_logistic

SIGNALS = HERE / "realworld_results" / "abstention-signals.json"
FOLDS, MAX_FALSE, K = 5, 0.05, 10


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
            rows.append({"id": case.id, "no_answer": no_answer,
                         "signals": [r.signals.model_dump() for r in response.results
                                     if r.signals is not None]})
    return rows


def collect(data: Path | None, questions: Path, evals: list[str]
            ) -> dict[str, list[dict[str, Any]]]:
    """Ask STARD's questions of the two halved copies of `data` (when given) and each
    `cases=data_dir` gold set; what was collected before for other sources is kept."""
    collected: dict[str, list[dict[str, Any]]] = (
        json.loads(SIGNALS.read_text(encoding="utf-8")) if SIGNALS.exists() else {})
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
    SIGNALS.write_text(json.dumps(collected, ensure_ascii=False) + "\n", encoding="utf-8")
    return collected


def rates(said: Sequence[bool], no_answer: Sequence[bool]) -> tuple[float, float]:
    """(share of no-answer cases abstained on, share of answerable ones wrongly abstained on)."""
    s, n = np.asarray(said), np.asarray(no_answer)
    return float(s[n].mean()) if n.any() else 0.0, float(s[~n].mean()) if (~n).any() else 0.0


def floor_for(p: np.ndarray, no_answer: np.ndarray) -> float:
    """The highest answer-probability floor (abstain below it) wrongly abstaining on at most
    MAX_FALSE of the answerable cases."""
    answerable = np.sort(p[~no_answer])
    allowed = int(MAX_FALSE * len(answerable))
    return float(answerable[allowed]) if allowed < len(answerable) else 1.0


def cross_validate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """5 folds grouped by question id; each fold's model and floor fitted on the other four."""
    x = np.array([answer_features([Signals(**s) for s in r["signals"]]) for r in rows])
    y = np.array([r["no_answer"] for r in rows])
    source = np.array([r["source"] for r in rows])
    fold = np.array([zlib.crc32(f"{r['source']}:{r['id']}".encode()) % FOLDS for r in rows])
    said = np.zeros(len(rows), dtype=bool)
    for f in range(FOLDS):
        train = fold != f
        weights = fit_logistic(x[train], (~y[train]).astype(float))
        p_train = _probability(weights, x[train])
        floor = floor_for(p_train, y[train])
        said[~train] = _probability(weights, x[~train]) < floor
    weights = fit_logistic(x, (~y).astype(float))
    result: dict[str, Any] = {
        "weights": [round(float(v), 4) for v in weights],
        "floor": round(floor_for(_probability(weights, x), y), 4), "per_source": {}}
    for name in sorted(set(source)):
        mine = source == name
        rule = [abstains([Signals(**s) for s in r["signals"]]) for r, m in zip(rows, mine,
                                                                               strict=True) if m]
        result["per_source"][name] = {
            "answerable": int((~y[mine]).sum()), "no_answer": int(y[mine].sum()),
            "cv": rates(said[mine], y[mine]), "current_rule": rates(rule, y[mine])}
    result["cv_all"] = rates(said, y)
    return result


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
    args = parser.parse_args()
    collected = (collect(args.stard and args.stard.resolve(), args.questions, args.eval)
                 if args.stard or args.eval else json.loads(SIGNALS.read_text(encoding="utf-8")))
    rows = [r | {"source": name} for name, source_rows in collected.items() for r in source_rows]
    print(json.dumps(cross_validate(rows), indent=1))


if __name__ == "__main__":
    main()
