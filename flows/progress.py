"""The CLI's ingest progress: documents read and chunks encoded, each with its rate and the
time left. Shown on a terminal only: piped or logged output stays the summary alone."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

from ingest.pipeline import ENCODING, progress_to


@contextmanager
def ingest_progress(console: Console, quiet: bool = False) -> Iterator[Progress]:
    """Two bars fed by the runs started inside the block (ingest.pipeline.progress_to):
    documents (the file being read as its description) and chunks encoded."""
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
                        console=console, transient=True,
                        disable=quiet or not console.is_terminal)
    with progress:
        documents = progress.add_task("looking for changes", total=None, rate="")
        chunks = progress.add_task(ENCODING, total=None, visible=False, rate="")

        def show(done: int, total: int, what: str) -> None:
            bar = chunks if what == ENCODING else documents
            progress.update(bar, completed=done, total=total, visible=True,
                            description=what if bar == chunks else f"documents: {what}")
            speed = progress.tasks[bar].speed
            progress.update(bar, rate=f"{speed:.1f}/s" if speed else "")

        with progress_to(show):
            yield progress
