"""Fit the search confidence (ingest/search/confidence.py) on gold cases and report abstention.

Runs every case through `kbflow search`'s ranking and labels each of the top K results relevant
(it matches an expectation) or not (no-answer cases: all not).
- Confidence: a logistic model of relevance on the results' signals.
- Abstention: the highest `ANSWERABLE_FROM` (best sentence cosine over the results) that wrongly
  abstains on at most 5 % of answerable cases; the report gives the share of no-answer cases that
  abstain, on the fit and leave-one-out (the threshold chosen without the case it judges).
Paste the printed WEIGHTS, BIAS and ANSWERABLE_FROM into confidence.py.

    .venv/bin/python scripts/calibrate_confidence.py [--cases eval/sample_cases.jsonl] [--k 5]
"""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path

import numpy as np

from ingest.config import Settings
from ingest.evaluate import load_cases
from ingest.search import Searcher
from ingest.search.confidence import Signals, abstains

REPO = Path(__file__).resolve().parents[1]
Case = tuple[bool, list[Signals], list[float]]  # no-answer?, each result's signals, relevance


def fit(x: np.ndarray, y: np.ndarray, steps: int = 4000, l2: float = 0.01) -> np.ndarray:
    """Logistic regression by gradient descent; returns [bias, *weights]."""
    design = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(design.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-design @ w))
        w -= 0.5 * (design.T @ (p - y) / len(y) + l2 * np.r_[0, w[1:]])
    return w


def rates(cases: list[Case], floor: float) -> tuple[float, float]:
    """(abstain rate on no-answer cases, false-abstain rate on answerable ones)."""
    said = [(na, abstains(signals, floor)) for na, signals, _ in cases]
    return (float(np.mean([a for na, a in said if na])),
            float(np.mean([a for na, a in said if not na])))


def choose(cases: list[Case], max_false: float = 0.05) -> float:
    """The highest floor whose false-abstain rate stays within `max_false`."""
    candidates = sorted({round(s.sentence + 0.0001, 4) for _, signals, _ in cases
                         for s in signals})
    return max((f for f in candidates if rates(cases, f)[1] <= max_false), default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=Path, default=REPO / "eval" / "sample_cases.jsonl")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    settings = Settings()
    cases: list[Case] = []
    with Searcher(settings) as searcher:
        for case in load_cases(args.cases):
            response = searcher.search(
                case.question, tenant_id=case.tenant or settings.default_tenant,
                groups=case.groups or settings.default_acl, as_of=case.as_of or date.today(),
                k=args.k)
            relevant = [float(not case.no_answer and any(e.matches(r) for e in case.expected))
                        for r in response.results]
            cases.append((case.no_answer, [r.signals for r in response.results], relevant))
    x = np.array([s.features() for _, signals, _ in cases for s in signals])
    w = fit(x, np.array([y for *_, relevant in cases for y in relevant]))
    floor = choose(cases)
    abstain, false_abstain = rates(cases, floor)
    print(f"WEIGHTS = {[round(float(v), 3) for v in w[1:]]}\nBIAS = {round(float(w[0]), 3)}\n"
          f"ANSWERABLE_FROM = {floor}\n"
          f"fitted: no-answer abstained {abstain:.0%}, answerable wrongly abstained "
          f"{false_abstain:.1%}")
    held_out = [(na, abstains(signals, choose(cases[:i] + cases[i + 1:])))
                for i, (na, signals, _) in enumerate(cases)]
    print(f"leave-one-out: no-answer abstained "
          f"{np.mean([a for na, a in held_out if na]):.0%}, answerable wrongly abstained "
          f"{np.mean([a for na, a in held_out if not na]):.1%}")


if __name__ == "__main__":
    main()
