"""Fit the search confidence (ingest/search/confidence.py) on gold cases and report abstention.

Runs every case through `kbflow search`'s ranking and labels each of the results whose signals
the search computes (the top `signal_depth`) relevant (it matches an expectation) or not
(no-answer cases: all not).
- Confidence: a logistic model of relevance on the results' signals.
- Abstention: the highest `ANSWERABLE_FROM` (best sentence cosine over the results) that wrongly
  abstains on at most 5 % of the answerable cases of all sets together; then
  `CROSSLINGUAL_ANSWERABLE_FROM` (the cross-lingual index's score, which only results of its lists
  carry), halfway between the best no-answer case's and the next answerable case's that the
  sentence floor abstains on (the sentence floor is chosen with the cross-lingual one that goes
  with it). The report gives, per set, the share of no-answer cases that abstain
  and of answerable ones wrongly, on the fit and leave-one-out (both floors chosen without the
  case they judge).
Fit on several sets, each asked of its own index (`CASES=DATA_DIR`; without `=`, the configured
data dir): a floor fitted on one set's wording does not carry over to another's (the blind
eval/fresh_cases.jsonl wrongly abstained on 28 % at the floor fitted on sample_cases alone).
Paste the printed WEIGHTS, BIAS and the two floors into confidence.py.

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
from ingest.search.confidence import Signals

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


class Floors:
    """What each case's results offer the two floors, as arrays: a case abstains at (floor,
    across) when its best sentence is below `floor` and its best cross-lingual score below
    `across` (a result carrying the query's code or clause number never abstains)."""

    def __init__(self, cases: list[Case]) -> None:
        self.no_answer = np.array([na for na, _, _ in cases], bool)
        self.sentence = np.array([-math.inf if not signals else math.inf
                                  if any(s.exact for s in signals)
                                  else max(s.sentence for s in signals)
                                  for _, signals, _ in cases])
        self.across = np.array([max((s.crosslingual for s in signals), default=0.0)
                                for _, signals, _ in cases])

    def abstain(self, floor: float, across: float) -> np.ndarray:
        return (self.sentence < floor) & (self.across < across)

    def rates(self, floor: float, across: float) -> tuple[float, float]:
        """(abstain rate on no-answer cases, false-abstain rate on answerable ones)."""
        said = self.abstain(floor, across)
        return float(said[self.no_answer].mean()), float(said[~self.no_answer].mean())

    def across_for(self, floor: float) -> float:
        """Halfway between the best cross-lingual score of a no-answer case and the lowest one
        above it of an answerable case that `floor` alone abstains on (none: just above)."""
        worst = float(self.across[self.no_answer].max(initial=0.0))
        rescued = self.across[~self.no_answer & (self.sentence < floor) & (self.across > worst)]
        return round((worst + float(rescued.min())) / 2 if rescued.size else worst + 0.0001, 4)

    def choose(self, max_false: float = 0.05) -> tuple[float, float]:
        """The highest sentence floor whose false-abstain rate, with the cross-lingual floor
        that goes with it, stays within `max_false`; and that cross-lingual floor."""
        answerable = self.sentence[~self.no_answer]
        for floor in sorted({round(float(t) + 0.0001, 4) for t in answerable
                             if math.isfinite(t)}, reverse=True):
            across = self.across_for(floor)
            if self.abstain(floor, across)[~self.no_answer].mean() <= max_false:
                return floor, across
        return 0.0, self.across_for(0.0)


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
    floors = Floors(cases)
    floor, across = floors.choose()
    print(f"WEIGHTS = {[round(float(v), 3) for v in w[1:]]}\nBIAS = {round(float(w[0]), 3)}\n"
          f"ANSWERABLE_FROM = {floor}\nCROSSLINGUAL_ANSWERABLE_FROM = {across}")
    for name, asked in [*sets.items(), ("all", cases)]:
        abstain, false_abstain = Floors(asked).rates(floor, across)
        print(f"{name}: no-answer abstained {abstain:.0%}, answerable wrongly abstained "
              f"{false_abstain:.1%}")
    held_out = []
    for i in range(len(cases)):
        chosen = Floors(cases[:i] + cases[i + 1:]).choose()
        held_out.append(bool(floors.abstain(*chosen)[i]))
    said = np.array(held_out)
    print(f"leave-one-out, all: no-answer abstained {said[floors.no_answer].mean():.0%}, "
          f"answerable wrongly abstained {said[~floors.no_answer].mean():.1%}")


if __name__ == "__main__":
    main()
