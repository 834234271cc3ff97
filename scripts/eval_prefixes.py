"""Recall@K and MRR of hybrid search on sample_docs, with and without the deterministic prefix.

Ingests sample_docs twice with the Prefect flow into temporary data directories
(KBFLOW_CHUNK_PREFIXES=true, then false) and runs eval/sample_cases.jsonl against each. The
LLM-written situating context is not measured: that needs a real model behind
KBFLOW_LLM_BASE_URL, and a fake one would only measure the fake.

    .venv/bin/python scripts/eval_prefixes.py [--k 5] [--cases eval/sample_cases.jsonl]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def run(prefixes: bool, cases_path: Path, k: int, workdir: Path):
    from flows.ingest import ingest_flow
    from ingest.config import Settings
    from ingest.evaluate import evaluate, hybrid_search_fn, load_cases

    os.environ["KBFLOW_CHUNK_PREFIXES"] = str(prefixes).lower()
    data = workdir / ("with-prefix" if prefixes else "no-prefix")
    summary = ingest_flow(str(REPO / "sample_docs"), str(data))
    if summary.failures:
        print(f"  ({len(summary.failures)} document(s) failed: "
              f"{', '.join(f.doc_id for f in summary.failures)})")
    with hybrid_search_fn(Settings(data_dir=data)) as search:
        return evaluate(load_cases(cases_path), search, k=k)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--cases", type=Path, default=REPO / "eval" / "sample_cases.jsonl")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbflow-eval-") as tmp:
        # A private Prefect home: the temporary API server shares no database with other runs.
        os.environ["PREFECT_HOME"] = str(Path(tmp) / "prefect")
        os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
        from flows.quiet import quiet

        quiet()
        reports = {name: run(prefixes, args.cases, args.k, Path(tmp))
                   for name, prefixes in (("with prefix", True), ("no prefix", False))}
    k = args.k
    print(f"\n{'':28} {'cases':>5} {f'Recall@{k}':>9} {'MRR':>6} {f'nDCG@{k}':>7} "
          f"{f'Hit@{k}':>6} {'forbidden':>9} {'no-answer ok':>12}")
    for name, report in reports.items():
        for tag, m in [("all", report.overall), *report.per_tag.items()]:
            label = f"{name} / {tag}"
            print(f"{label:28} {m.cases:>5} {m.recall:>9.3f} {m.mrr:>6.3f} {m.ndcg:>7.3f} "
                  f"{m.hit:>6.3f} {m.forbidden_rate:>9.3f} "
                  f"{m.no_answer_passed:>5}/{m.no_answer_cases:<6}")
    misses = {name: [c.id for c in r.cases if not c.passed] for name, r in reports.items()}
    for name, ids in misses.items():
        print(f"not passed ({name}): {', '.join(ids) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
