"""Fit the search confidence (ingest/search/confidence.py) on gold cases and report abstention.

Runs every case through `kbflow search`'s ranking, labels each of the top K results relevant (it
matches an expectation) or not (no-answer cases: all not), fits a logistic model of relevance on
the results' signals, chooses the abstain threshold on the best result's confidence (the highest
that wrongly abstains on at most 5 % of answerable cases) and reports the share of no-answer
cases that abstain. Paste the printed WEIGHTS, BIAS and ABSTAIN_BELOW into confidence.py.
Leave-one-out figures show how far the fit carries to questions it has not seen.

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

REPO = Path(__file__).resolve().parents[1]


def fit(x: np.ndarray, y: np.ndarray, steps: int = 4000, l2: float = 0.01) -> np.ndarray:
    """Logistic regression by gradient descent; returns [bias, *weights]."""
    design = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(design.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-design @ w))
        w -= 0.5 * (design.T @ (p - y) / len(y) + l2 * np.r_[0, w[1:]])
    return w


def top_confidence(x: np.ndarray, w: np.ndarray) -> float:
    return float((1 / (1 + np.exp(-(w[0] + x @ w[1:])))).max()) if len(x) else 0.0


def rates(tops: list[tuple[bool, float]], threshold: float) -> tuple[float, float]:
    """(abstain rate on no-answer cases, false-abstain rate on answerable ones)."""
    no_answer = [top < threshold for na, top in tops if na]
    answerable = [top < threshold for na, top in tops if not na]
    return float(np.mean(no_answer)), float(np.mean(answerable))


def choose(tops: list[tuple[bool, float]], max_false: float = 0.05) -> float:
    """The highest threshold whose false-abstain rate stays within `max_false`."""
    candidates = sorted({round(t, 3) for _, t in tops})
    return max((t for t in candidates if rates(tops, t)[1] <= max_false), default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=Path, default=REPO / "eval" / "sample_cases.jsonl")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    settings = Settings()
    per_case: list[tuple[bool, np.ndarray, np.ndarray]] = []
    with Searcher(settings) as searcher:
        for case in load_cases(args.cases):
            response = searcher.search(
                case.question, tenant_id=case.tenant or settings.default_tenant,
                groups=case.groups or settings.default_acl, as_of=case.as_of or date.today(),
                k=args.k)
            x = np.array([r.signals.features() for r in response.results]).reshape(-1, 5)
            y = np.array([float(not case.no_answer and any(e.matches(r) for e in case.expected))
                          for r in response.results])
            per_case.append((case.no_answer, x, y))
    x = np.vstack([c[1] for c in per_case])
    y = np.concatenate([c[2] for c in per_case])
    w = fit(x, y)
    tops = [(na, top_confidence(xs, w)) for na, xs, _ in per_case]
    threshold = choose(tops)
    abstain, false_abstain = rates(tops, threshold)
    print(f"WEIGHTS = {[round(float(v), 3) for v in w[1:]]}\nBIAS = {round(float(w[0]), 3)}\n"
          f"ABSTAIN_BELOW = {threshold}\n"
          f"fitted: no-answer abstained {abstain:.0%}, answerable wrongly abstained "
          f"{false_abstain:.0%}")
    held_out = []  # leave one case out: fit weights and threshold on the others, judge it
    for i, (na, xs, _) in enumerate(per_case):
        rest = [c for j, c in enumerate(per_case) if j != i]
        wi = fit(np.vstack([c[1] for c in rest]), np.concatenate([c[2] for c in rest]), 1500)
        ti = choose([(n, top_confidence(c, wi)) for n, c, _ in rest])
        held_out.append((na, top_confidence(xs, wi) < ti))
    print(f"leave-one-out: no-answer abstained "
          f"{np.mean([a for na, a in held_out if na]):.0%}, answerable wrongly abstained "
          f"{np.mean([a for na, a in held_out if not na]):.0%}")


if __name__ == "__main__":
    main()
