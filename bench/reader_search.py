"""The reader model inside kbflow's search, judged per tag on gold cases (issue #45).

    .venv/bin/python -m bench.reader_search --cases eval/fresh_cases.jsonl=DATA_DIR [...]
        [--model DIR] [--depths 20,30,50] [--write-floor] [--out bench/RESULTS.md]

Each case is searched once as `kbflow eval` asks it (final, k=5: 50 candidates per path), with
the ranker step recording what it is given: the fused order, and the reader model's probability
for the fused top max(depths). From that one pass every variant is scored, so they all see the
same candidates: the fused order (the reader model off), and for each depth N the top N
reordered by the reader model alone (`reader`) or by its rank fused with the fused rank
(`fused`), exact code/clause matches first as in search. Recall@5, Hit@1 and MRR (over the
whole fused list) per tag, by ingest.evaluate's rules. No-answer: a case's signal is the best
probability in the top N (a result carrying the query's code or clause number answers); the
floor is fitted with 5-fold cross-validation (folds by a hash of set and id) for at most 5 %
false abstentions on the other folds' answerable cases, and the held-out folds' abstentions are
reported; `--write-floor` stores the floor fitted on every case as `answer_floor` in the
model's reader.json.
"""

from __future__ import annotations

import argparse
import json
import math
import zlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

import numpy as np

from bench import write_section
from ingest.config import Settings
from ingest.evaluate import EvalCase, load_cases, score_case
from ingest.models import Chunk
from ingest.parse.metadata import unscoped_doc_id
from ingest.rerank import CARD, MODEL_DIR
from ingest.search import Searcher, SearchOptions
from ingest.search.ranker import RRF_K, Ranker, Reranked

HERE = Path(__file__).resolve().parent
SECTION = "## The reader model in search (bench/reader_search.py)"
FOLDS, MAX_FALSE, K = 5, 0.05, 5


@dataclass
class Hit:
    """What ingest.evaluate scores of a result."""

    chunk_id: str
    doc_id: str
    version_id: str
    clause_no: str | None
    text: str


@dataclass
class Seen:
    case: EvalCase
    set_name: str
    order: list[Hit]  # the fused order
    probability: dict[str, float]
    exact: dict[str, int]


class Recording(Ranker):
    """The ranker step, keeping what it was given and what the model said."""

    last: tuple[list[str], Mapping[str, Chunk], Mapping[str, int], Reranked] | None = None

    def run(self, query: str, order: list[str], chunks: Mapping[str, Chunk],
            exact: Mapping[str, int]) -> Reranked:
        reranked = super().run(query, order, chunks, exact)
        self.last = (order, chunks, exact, reranked)
        return reranked


def ask(cases_file: Path, data: Path, model: Path, depth: int) -> list[Seen]:
    settings = Settings(data_dir=data, reader_dir=model)
    seen = []
    with Searcher(settings) as searcher:
        ranker = Recording(model, depth=depth)
        searcher.ranker = ranker
        for case in load_cases(cases_file):
            ranker.last = None
            searcher.search(case.question, tenant_id=case.tenant or settings.default_tenant,
                            groups=case.groups or settings.default_acl,
                            as_of=case.as_of or date.today(), k=K,
                            options=SearchOptions(rerank=True, signal_depth=0))
            if ranker.problem:
                raise SystemExit(f"the reader model is unavailable: {ranker.problem}")
            if ranker.last is None:
                continue  # nothing published for this reader
            order, chunks, exact, reranked = ranker.last
            seen.append(Seen(case, cases_file.stem, [
                Hit(c, unscoped_doc_id(chunks[c].doc_id), chunks[c].version_id,
                    chunks[c].clause_no, chunks[c].text) for c in order],
                reranked.probability, dict(exact)))
    return seen


def reordered(seen: Seen, depth: int, blend: Literal["reader", "fused"]) -> list[Hit]:
    head, rest = seen.order[:depth], seen.order[depth:]
    prob = {h.chunk_id: seen.probability[h.chunk_id] for h in head}
    by_reader = {h.chunk_id: r for r, h in enumerate(
        sorted(head, key=lambda h: -prob[h.chunk_id]), start=1)}

    def key(item: tuple[int, Hit]) -> tuple[int, float, int]:
        fused, hit = item
        mine = by_reader[hit.chunk_id]
        blended = (-1.0 / mine if blend == "reader"
                   else -(1.0 / (RRF_K + mine) + 1.0 / (RRF_K + fused)))
        return (-seen.exact.get(hit.chunk_id, 0), blended, fused)

    return [h for _, h in sorted(enumerate(head, start=1), key=key)] + rest


def scores(seen: Sequence[Seen], orders: Sequence[list[Hit]]) -> dict[str, dict[str, float]]:
    """Per tag (and "(all)"): cases, Recall@5, Hit@1, MRR over the answerable cases."""
    rows: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for s, order in zip(seen, orders, strict=True):
        if s.case.no_answer:
            continue
        at_k, at_1 = score_case(s.case, order, K), score_case(s.case, order, 1)
        rr = score_case(s.case, order, len(order)).reciprocal_rank
        for tag in ["(all)", *s.case.tags]:
            rows[tag].append((at_k.recall, float(at_1.hit), rr))
    return {tag: {"cases": len(r), "recall@5": float(np.mean([x[0] for x in r])),
                  "hit@1": float(np.mean([x[1] for x in r])),
                  "mrr": float(np.mean([x[2] for x in r]))} for tag, r in rows.items()}


def signal(s: Seen, depth: int) -> float:
    head = [h.chunk_id for h in s.order[:depth]]
    if any(s.exact.get(c, 0) for c in head):
        return math.inf
    return max((s.probability[c] for c in head), default=0.0)


def floor_for(answerable: np.ndarray) -> float:
    ordered = np.sort(answerable[np.isfinite(answerable)])
    allowed = math.floor(MAX_FALSE * len(answerable))
    return float(ordered[allowed]) if allowed < len(ordered) else 1.0


def abstention(seen: Sequence[Seen], depth: int) -> tuple[dict[str, str], float]:
    """Per set "no-answer abstained / answerable wrongly abstained" (cross-validated), and
    the floor fitted on every case."""
    silent = np.array([s.case.no_answer for s in seen])
    value = np.array([signal(s, depth) for s in seen])
    fold = np.array([zlib.crc32(f"{s.set_name}/{s.case.id}".encode()) % FOLDS for s in seen])
    abstained = np.zeros(len(seen), dtype=bool)
    for f in range(FOLDS):
        abstained[fold == f] = value[fold == f] < floor_for(value[(fold != f) & ~silent])
    per = {}
    for name in sorted({s.set_name for s in seen}):
        here = np.array([s.set_name == name for s in seen])
        per[name] = (f"{abstained[here & silent].sum()}/{(here & silent).sum()} / "
                     f"{abstained[here & ~silent].sum()}/{(here & ~silent).sum()}")
    return per, round(floor_for(value[~silent]), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="append", required=True, metavar="CASES=DATA_DIR")
    parser.add_argument("--model", type=Path, default=MODEL_DIR)
    parser.add_argument("--depths", default="20,30,50")
    parser.add_argument("--write-floor", action="store_true")
    parser.add_argument("--out", type=Path, help="write the section into this file")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    seen: list[Seen] = []
    for given in args.cases:
        cases_file, _, data = given.partition("=")
        seen += ask(Path(cases_file), Path(data or "data"), args.model, max(depths))
    variants = {"fused order (reader model off)": [s.order for s in seen]}
    for depth in depths:
        for blend in ("fused", "reader"):
            variants[f"top {depth}, blend {blend}"] = [reordered(s, depth, blend)
                                                      for s in seen]
    lines = [SECTION, "", f"`python -m bench.reader_search {' '.join(args.cases)} --model "
             f"{args.model}`: Recall@5 / Hit@1 / MRR per tag (answerable cases).", ""]
    table = {name: scores(seen, orders) for name, orders in variants.items()}
    tags = list(table["fused order (reader model off)"])
    lines += ["| order | " + " | ".join(f"{t} ({table[next(iter(table))][t]['cases']})"
                                       for t in tags) + " |", "|---" * (len(tags) + 1) + "|"]
    for name, per_tag in table.items():
        lines.append(f"| {name} | " + " | ".join(
            f"{per_tag[t]['recall@5']:.2f} / {per_tag[t]['hit@1']:.2f} / {per_tag[t]['mrr']:.2f}"
            for t in tags) + " |")
    lines += ["", "No-answer at the reader model's floor (cross-validated; no-answer abstained / "
              "answerable wrongly abstained):", ""]
    floor = 0.0
    for depth in depths:
        per, floor = abstention(seen, depth)
        lines.append(f"- top {depth}: " + "; ".join(f"{n} {v}" for n, v in per.items())
                     + f"; floor fitted on every case {floor}")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        write_section(args.out, SECTION, text)
    if args.write_floor:
        card_file = args.model / CARD
        card = json.loads(card_file.read_text(encoding="utf-8"))
        card["answer_floor"] = floor
        card_file.write_text(json.dumps(card, ensure_ascii=False, indent=1) + "\n",
                             encoding="utf-8")
        print(f"answer_floor {floor} (top {depths[-1]}) written to {card_file}")


if __name__ == "__main__":
    main()
