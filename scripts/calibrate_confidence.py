"""Fit the search confidence (ingest/search/confidence.py) on gold cases and report abstention.

Runs every case through `kbflow search`'s ranking and labels each of the results whose signals
the search computes (the top `signal_depth`) relevant (it matches an expectation) or not
(no-answer cases: all not).
- Confidence: a logistic model of relevance on the results' signals.
- Abstention: the highest `ANSWERABLE_FROM` (best sentence cosine over the results) that wrongly
  abstains on at most 5 % of the answerable cases of all sets together; the report gives, per
  set, the share of no-answer cases that abstain and of answerable ones wrongly, on the fit and
  leave-one-out (the threshold chosen without the case it judges).
Fit on several sets, each asked of its own index (`CASES=DATA_DIR`; without `=`, the configured
data dir): a floor fitted on one set's wording does not carry over to another's (the blind
eval/fresh_cases.jsonl wrongly abstained on 28 % at the floor fitted on sample_cases alone).
Paste the printed WEIGHTS, BIAS and ANSWERABLE_FROM into confidence.py.

    .venv/bin/python scripts/calibrate_confidence.py \
        --cases eval/sample_cases.jsonl=data/sample --cases eval/fresh_cases.jsonl=data/fresh
"""

from __future__ import annotations

import argparse
import math
from datetime import date
from pathlib import Path

import numpy as np

from ingest.config import Settings
from ingest.evaluate import load_cases
from ingest.search import Searcher, SearchOptions
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


def answerable_below(signals: list[Signals]) -> float:
    """The floor above which `abstains` says no answer for these results: their best sentence
    cosine, or never when one carries the query's code or clause number."""
    if not signals or any(s.exact for s in signals):
        return math.inf if signals else -math.inf
    return max(s.sentence for s in signals)


def rates(cases: list[Case], floor: float) -> tuple[float, float]:
    """(abstain rate on no-answer cases, false-abstain rate on answerable ones)."""
    said = [(na, abstains(signals, floor)) for na, signals, _ in cases]
    return (float(np.mean([a for na, a in said if na])),
            float(np.mean([a for na, a in said if not na])))


def choose(cases: list[Case], max_false: float = 0.05) -> float:
    """The highest floor whose false-abstain rate stays within `max_false`."""
    answerable = np.array([answerable_below(signals) for na, signals, _ in cases if not na])
    candidates = sorted({round(float(t) + 0.0001, 4) for t in answerable if math.isfinite(t)})
    return max((f for f in candidates if np.mean(answerable < f) <= max_false), default=0.0)


def ask(cases_file: Path, settings: Settings) -> list[Case]:
    """Every case of one file, asked of one index as `kbflow search` asks it."""
    depth = SearchOptions().signal_depth
    asked: list[Case] = []
    with Searcher(settings) as searcher:
        for case in load_cases(cases_file):
            response = searcher.search(
                case.question, tenant_id=case.tenant or settings.default_tenant,
                groups=case.groups or settings.default_acl, as_of=case.as_of or date.today(),
                k=depth)
            results = [r for r in response.results if r.signals is not None][:depth]
            relevant = [float(not case.no_answer and any(e.matches(r) for e in case.expected))
                        for r in results]
            signals = [r.signals for r in results if r.signals is not None]
            asked.append((case.no_answer, signals, relevant))
    return asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", action="append", metavar="CASES[=DATA_DIR]",
                        help="a gold set and the index it is asked of (repeatable)")
    args = parser.parse_args()
    sets: dict[str, list[Case]] = {}
    for given in args.cases or [str(REPO / "eval" / "sample_cases.jsonl")]:
        path, _, data_dir = given.partition("=")
        settings = Settings(data_dir=Path(data_dir)) if data_dir else Settings()
        sets[Path(path).stem] = ask(Path(path), settings)
    cases = [case for asked in sets.values() for case in asked]
    x = np.array([s.features() for _, signals, _ in cases for s in signals])
    w = fit(x, np.array([y for *_, relevant in cases for y in relevant]))
    floor = choose(cases)
    print(f"WEIGHTS = {[round(float(v), 3) for v in w[1:]]}\nBIAS = {round(float(w[0]), 3)}\n"
          f"ANSWERABLE_FROM = {floor}")
    for name, asked in [*sets.items(), ("all", cases)]:
        abstain, false_abstain = rates(asked, floor)
        print(f"{name}: no-answer abstained {abstain:.0%}, answerable wrongly abstained "
              f"{false_abstain:.1%}")
    held_out = [(na, abstains(signals, choose(cases[:i] + cases[i + 1:])))
                for i, (na, signals, _) in enumerate(cases)]
    print(f"leave-one-out, all: no-answer abstained "
          f"{np.mean([a for na, a in held_out if na]):.0%}, answerable wrongly abstained "
          f"{np.mean([a for na, a in held_out if not na]):.1%}")


if __name__ == "__main__":
    main()
