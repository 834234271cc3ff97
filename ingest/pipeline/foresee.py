"""The titles a run's later windows will bring, read before they come (issue #43).

A window resolves its citations through the titles the corpus has then. A law that a later
window brings would be resolved only by the end-of-run relink, which reads each earlier
version's chunks again and extracts its rules again (about 1 s a version under load). So once a
window has something to write, the titles of the files after it are read ahead, as their parse
will find them: the sidecar's title, else, for Markdown and text files, the title
`complete_meta` finds in the first blocks of the text (the parse's own functions on its first
HEAD_CHARS characters). A format whose title only its parse reads (PDF metadata, a title slide)
is not read ahead. A title read ahead is a hint, not a fact: the run compares each window's
titles with those it holds at the end, and the relink resolves again what a wrong or missing
hint left (graph/relink.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ingest.models import Block
from ingest.parse.encoding import decode
from ingest.parse.markdown_text import parse_markdown, parse_text
from ingest.parse.metadata import complete_meta
from ingest.pipeline.context import RunContext
from ingest.pipeline.prepare import Places, read_at

HEAD_CHARS = 4_000  # the title is among the first blocks; a law's first line is its title
_TEXT: dict[str, Callable[[str], list[Block]]] = {
    ".md": parse_markdown, ".markdown": parse_markdown, ".txt": parse_text}


def foresee(ctx: RunContext, places: Places, files: Sequence[tuple[Path, Path]],
            start: int) -> list[tuple[int, str]]:
    """The titles of `files[start:]` that can be read without a parse: (index, title). A file
    that cannot be read is left to its window, which fails it with its reason."""
    found = []
    with ctx.clock.stage("parse"):
        for i in range(start, len(files)):
            path, folder = files[i]
            try:
                meta, data = read_at(ctx.settings, ctx.scopes, path, places.of(path, folder))
                if not meta.title and (parse := _TEXT.get(path.suffix.lower())):
                    meta = complete_meta(meta, parse(_head(decode(data).text)))[0]
            except Exception:  # noqa: BLE001 - a hint only; its window reads the file
                continue
            if meta.title:
                found.append((i, meta.title))
    return found


def _head(text: str) -> str:
    """The first HEAD_CHARS characters, cut at a line's end (a cut line is no block)."""
    if len(text) <= HEAD_CHARS:
        return text
    cut = text.rfind("\n", 0, HEAD_CHARS)
    return text[:cut] if cut > 0 else text[:HEAD_CHARS]
