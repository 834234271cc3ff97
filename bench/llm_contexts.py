"""Situating contexts from the real local LLM: Recall@5 and MRR per tag with and without them.

    .venv/bin/python -m bench.llm_contexts [--docs leave_policy.md ...] [--results]

A subset of sample_docs (by default three documents: Markdown, Markdown and a scanned PDF)
is ingested twice into fresh data directories, once plain and once with
KBFLOW_LLM_BACKEND=local (situating contexts on, triples from the rules either way), and the
sample eval cases whose gold clauses all lie in that subset are run against both with
`kbflow eval --retriever final`. The subset keeps the LLM's cost to minutes; its recall is not
comparable with the full sample eval's (fewer documents compete), only the two columns are.
`--seed-cache DATA/llm_cache.db` starts the situated run from the LLM cache of an earlier
ingest of the same documents (the replies are the ones it got; only the time is saved).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import write_section

HERE = Path(__file__).parent
ROOT = HERE.parent
RESULTS = HERE / "RESULTS.md"
SECTION = "## Situating contexts from the local LLM"
DEFAULT_DOCS = ["leave_policy.md", "remote_work_policy.md", "seal_policy_scanned.pdf"]


def kbflow(data: Path, *args: str, **env: str) -> str:
    done = subprocess.run([sys.executable, "-m", "flows.cli", "--data-dir", str(data), *args],
                          cwd=ROOT, env=os.environ | env, capture_output=True, text=True,
                          check=True)
    return done.stdout


def subset(work: Path, names: list[str]) -> tuple[Path, Path, int]:
    """The documents (with their sidecars) in a folder, the cases they answer, and how many."""
    docs = work / "docs"
    docs.mkdir()
    doc_ids = set()
    for name in names:
        shutil.copy(ROOT / "sample_docs" / name, docs / name)
        sidecar = ROOT / "sample_docs" / f"{name}.meta.yaml"
        if sidecar.exists():
            shutil.copy(sidecar, docs / sidecar.name)
            doc_ids.add(sidecar.read_text().split("doc_id:", 1)[1].split()[0])
        else:
            doc_ids.add(Path(name).stem)
    kept = []
    for line in (ROOT / "eval" / "sample_cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        gold = {g["doc_id"] for g in case.get("expected", [])}
        if gold and gold <= doc_ids:
            kept.append(line)
    cases = work / "cases.jsonl"
    cases.write_text("\n".join(kept) + "\n")
    return docs, cases, len(kept)


def measure(docs: Path, cases: Path, data: Path, **env: str) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    kbflow(data, "ingest", str(docs), **env)
    seconds = time.perf_counter() - started
    report = json.loads(kbflow(data, "eval", str(cases), "--retriever", "final", "--json",
                               **env))
    return report["retrievers"]["final"], seconds


def table(names: list[str], n_cases: int, plain: dict[str, Any], situated: dict[str, Any],
          seconds: tuple[float, float], seeded: bool) -> str:
    lines = [SECTION, "",
             f"`python -m bench.llm_contexts`: {', '.join(names)}; {n_cases} sample eval cases "
             f"whose gold lies in them; final retriever, k=5; load average "
             f"{os.getloadavg()[0]:.1f}. Ingest took {seconds[0]:.0f} s plain and "
             f"{seconds[1]:.0f} s with contexts{' (from a seeded cache)' if seeded else ''}.",
             "",
             "| tag | cases | Recall@5 without → with | MRR without → with |",
             "|---|---|---|---|"]
    rows = [("overall", plain["overall"], situated["overall"])]
    rows += [(tag, plain["per_tag"][tag], situated["per_tag"][tag])
             for tag in sorted(plain["per_tag"])]
    for tag, a, b in rows:
        lines.append(f"| {tag} | {a['cases']} | {a['recall']:.2f} → {b['recall']:.2f} | "
                     f"{a['mrr']:.2f} → {b['mrr']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", nargs="*", default=DEFAULT_DOCS)
    parser.add_argument("--seed-cache", type=Path)
    parser.add_argument("--results", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbflow-contexts-") as tmp:
        work = Path(tmp)
        docs, cases, n_cases = subset(work, args.docs)
        plain, plain_s = measure(docs, cases, work / "plain")
        if args.seed_cache:
            (work / "situated").mkdir()
            shutil.copy(args.seed_cache, work / "situated" / "llm_cache.db")
        situated, situated_s = measure(docs, cases, work / "situated",
                                       KBFLOW_LLM_BACKEND="local")
    text = table(args.docs, n_cases, plain, situated, (plain_s, situated_s),
                 args.seed_cache is not None)
    print(text)
    if args.results:
        write_section(RESULTS, SECTION, text)


if __name__ == "__main__":
    main()
