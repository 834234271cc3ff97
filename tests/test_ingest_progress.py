"""The CLI's ingest progress (flows/progress.py): bars that reach their totals on a terminal,
nothing at all when the output is not one."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from tests_support import ingest, tree

from flows.progress import ingest_progress
from ingest.config import Settings

LAWS = {f"law{i}.md": f"# 第{i}号办法\n\n## 第一章\n\n第一条 本办法适用于第{i}分公司的员工。\n\n"
        f"第二条 出差住宿费每晚不超过{i}00元。市内交通凭票报销。\n" for i in range(1, 4)}


def test_bars_reach_the_totals_on_a_terminal_and_stay_silent_elsewhere(tmp_path: Path) -> None:
    root = tree(tmp_path / "docs", LAWS)
    terminal = Console(file=io.StringIO(), force_terminal=True, width=120)
    piped = Console(file=io.StringIO())
    with ingest_progress(terminal) as shown, ingest_progress(piped) as hidden:
        summary = ingest(Settings(data_dir=tmp_path / "data"), root)
    assert summary.failures == [] and summary.embedded > 0
    documents, chunks = shown.tasks
    assert documents.total == documents.completed == summary.files == len(LAWS)
    assert chunks.total == chunks.completed >= summary.embedded
    assert "chunks encoded" in terminal.file.getvalue()  # type: ignore[attr-defined]
    assert hidden.disable and piped.file.getvalue() == ""  # type: ignore[attr-defined]
