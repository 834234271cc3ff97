"""What an ACL's width costs now that it is capped (MAX_ACL_GROUPS = 256): the same few files
ingested once with a 1-group and once with a 256-group folder ACL (each chunk carries its ACL
into every store), then searched by a reader of one of those groups.

    python -m bench.acl_width [--searches 30]

Each width is a fresh `kbflow ingest` in its own data directory (embedded profile): its peak
RSS (wait4), its wall time and the data directory's size; then warm searches in this process,
p50/p95. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import date
from pathlib import Path

from ingest.config import Settings
from ingest.parse.metadata import MAX_ACL_GROUPS
from ingest.search import Searcher

REPO = Path(__file__).resolve().parents[1]
FILES = ("leave_policy.md", "remote_work_policy.md", "travel_expense_2026.docx")
QUESTIONS = ("婚假有几天", "远程办公需要谁审批", "出差住宿标准是多少", "年假怎么申请", "病假工资")


def ingest(width: int, root: Path) -> dict[str, float]:
    docs, data = root / f"docs-{width}", root / f"data-{width}"
    docs.mkdir()
    for name in FILES:
        shutil.copy(REPO / "sample_docs" / name, docs)
    groups = ", ".join(f"team-{n:04d}" for n in range(width))
    (docs / "_meta.yaml").write_text(f"acl: [{groups}]\n", encoding="utf-8")
    env = os.environ | {"KBFLOW_DATA_DIR": str(data)}
    started = time.perf_counter()
    child = subprocess.Popen([str(REPO / ".venv/bin/kbflow"), "ingest", str(docs), "--json"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"ingest of width {width} failed"
    size = sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
    return {"rss_mb": usage.ru_maxrss / 1024, "ingest_s": time.perf_counter() - started,
            "data_mb": size / 1024 / 1024}


def search(width: int, root: Path, searches: int) -> dict[str, float]:
    settings = Settings(data_dir=root / f"data-{width}")
    seconds = []
    with Searcher(settings) as searcher:
        searcher.search("热身", tenant_id="default", groups=["team-0000"], as_of=date.today(), k=5)
        for n in range(searches):
            started = time.perf_counter()
            found = searcher.search(QUESTIONS[n % len(QUESTIONS)], tenant_id="default",
                                    groups=["team-0000"], as_of=date.today(), k=5)
            seconds.append(time.perf_counter() - started)
            assert found.results, "the reader of team-0000 finds nothing"
    cuts = statistics.quantiles(seconds, n=20)
    return {"p50_ms": statistics.median(seconds) * 1000, "p95_ms": cuts[18] * 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--searches", type=int, default=30)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for width in (1, MAX_ACL_GROUPS):
            rows.append((width, ingest(width, root) | search(width, root, args.searches)))
    print(f"load average {os.getloadavg()[0]:.1f}; files: {', '.join(FILES)}\n")
    print("| groups | ingest peak RSS MB | ingest s | data dir MB | search p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|")
    for width, row in rows:
        print(f"| {width} | {row['rss_mb']:.0f} | {row['ingest_s']:.1f} | {row['data_mb']:.1f} "
              f"| {row['p50_ms']:.0f} | {row['p95_ms']:.0f} |")


if __name__ == "__main__":
    main()
